//! Reading a job trace (the Philly format of `shared/traces/README.md`):
//! `job_id,submit_time_s,duration_s,num_gpus,user,group,gpu_type`.
//! `group` is the lab; an empty `user` means one user per lab.

use std::io::Read;

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq)]
pub struct TraceJob {
    /// The trace's id (e.g. `philly-31397`).
    pub name: String,
    /// Numeric part of the id: ties at one timestamp order by it.
    pub number: i64,
    pub submit_ms: i64,
    pub duration_ms: i64,
    pub num_gpus: u32,
    pub lab: String,
    /// Empty when the trace has no users.
    pub user: String,
}

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("line {line}: {message}")]
    Row { line: u64, message: String },
    #[error("cannot read the trace: {0}")]
    Csv(#[from] csv::Error),
}

#[derive(Deserialize)]
struct Row {
    job_id: String,
    submit_time_s: f64,
    duration_s: f64,
    num_gpus: i64,
    #[serde(default)]
    user: String,
    group: String,
}

fn number_of(id: &str) -> Option<i64> {
    let digits: String =
        id.chars().rev().take_while(char::is_ascii_digit).collect::<Vec<_>>().into_iter().rev().collect();
    digits.parse().ok()
}

/// All rows, in file order. Bad rows are errors naming their line.
pub fn read(input: impl Read) -> Result<Vec<TraceJob>, TraceError> {
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(input);
    let mut jobs = Vec::new();
    for (i, row) in reader.deserialize::<Row>().enumerate() {
        let line = i as u64 + 2;
        let row = row.map_err(|e| TraceError::Row { line, message: e.to_string() })?;
        let bad = |message: &str| TraceError::Row { line, message: message.to_string() };
        if !(row.submit_time_s.is_finite() && row.submit_time_s >= 0.0) {
            return Err(bad("submit_time_s must be a non-negative number"));
        }
        if !(row.duration_s.is_finite() && row.duration_s >= 0.0) {
            return Err(bad("duration_s must be a non-negative number"));
        }
        if row.num_gpus < 1 {
            return Err(bad("num_gpus must be at least 1"));
        }
        if row.group.is_empty() {
            return Err(bad("group (the lab) is empty"));
        }
        jobs.push(TraceJob {
            number: number_of(&row.job_id).unwrap_or(i as i64),
            name: row.job_id,
            submit_ms: (row.submit_time_s * 1000.0).round() as i64,
            duration_ms: (row.duration_s * 1000.0).round() as i64,
            num_gpus: row.num_gpus.min(i64::from(u32::MAX)) as u32,
            lab: row.group,
            user: row.user,
        });
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_philly_format() {
        let csv = "job_id,submit_time_s,duration_s,num_gpus,user,group,gpu_type\n\
                   philly-31397,0,30,1,,vc_6214e9,\n\
                   philly-31396,70,61,8,alice,vc_11cb48,\n";
        let jobs = read(csv.as_bytes()).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].number, 31397);
        assert_eq!((jobs[1].submit_ms, jobs[1].duration_ms, jobs[1].num_gpus), (70_000, 61_000, 8));
        assert_eq!((jobs[1].lab.as_str(), jobs[1].user.as_str()), ("vc_11cb48", "alice"));
        assert_eq!(jobs[0].user, "");
    }

    #[test]
    fn bad_rows_name_their_line() {
        let csv = "job_id,submit_time_s,duration_s,num_gpus,user,group,gpu_type\np-1,0,30,1,,a,\np-2,5,-1,1,,a,\n";
        let err = read(csv.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("line 3") && err.contains("duration_s"), "{err}");
        let csv = "job_id,submit_time_s,duration_s,num_gpus,user,group,gpu_type\np-1,0,30,zero,,a,\n";
        assert!(read(csv.as_bytes()).unwrap_err().to_string().contains("line 2"));
    }
}
