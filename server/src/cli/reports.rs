//! `jpu report`: a usage report (`GET /v1/reports/usage`), as a table, the
//! API's JSON or its CSV file.

use super::client::{exit, CliError, Client};
use super::render::{print, table, text};

pub struct ReportArgs {
    pub month: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub by: String,
    pub csv: bool,
}

pub async fn report(json: bool, args: ReportArgs) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let (from, to) = match (&args.month, args.from, args.to) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err(CliError::new(exit::USAGE, "give --month or --from/--to, not both"))
        }
        (Some(month), _, _) => month_days(month)?,
        (None, from, to) => (from, to),
    };
    let mut path = format!("/v1/reports/usage?by={}", args.by);
    for (name, value) in [("from", from), ("to", to)] {
        if let Some(v) = value {
            path.push_str(&format!("&{name}={v}"));
        }
    }
    if args.csv {
        let answer = client.get(&format!("{path}&format=csv")).await?;
        print!("{}", answer.as_str().unwrap_or_default());
        return Ok(());
    }
    let report = client.get(&path).await?;
    print(json, &report, |r| {
        let rows: Vec<Vec<String>> = r["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|row| {
                let hours = row["gpu_hours"].as_f64().unwrap_or(0.0);
                vec![text(&row["group"]), text(&row["jobs"]), format!("{hours:.2}"), text(&row["tflop_s"])]
            })
            .collect();
        let by = r["by"].as_str().unwrap_or("group").to_uppercase();
        format!(
            "{} to {} (raw usage, not decayed)\n{}",
            text(&r["from"]),
            text(&r["to"]),
            table(&[&by, "JOBS", "GPU-HOURS", "TFLOP·S"], &rows)
        )
    });
    Ok(())
}

/// `2026-12` as its first and last day.
fn month_days(month: &str) -> Result<(Option<String>, Option<String>), CliError> {
    let bad = || CliError::new(exit::USAGE, format!("--month {month}: write YYYY-MM"));
    let (y, m) = month.split_once('-').ok_or_else(bad)?;
    let (year, month_no): (i32, u8) = (y.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    let month_of = time::Month::try_from(month_no).map_err(|_| bad())?;
    let last = month_of.length(year);
    Ok((Some(format!("{year:04}-{month_no:02}-01")), Some(format!("{year:04}-{month_no:02}-{last:02}"))))
}
