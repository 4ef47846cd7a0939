//! Talking to Slurm through its commands (`sbatch`, `scontrol`,
//! `scancel`), each under a timeout because a stuck slurmctld must never
//! stall the scheduler loop, and reading their one-line-per-record
//! (`-o`) output.

use std::collections::HashMap;
use std::time::Duration;

use super::ExecutorError;
use crate::policy::oom::EndSignal;

#[derive(Debug, Clone)]
pub struct SlurmCli {
    pub timeout: Duration,
}

impl SlurmCli {
    /// Runs `program args…` and returns its stdout; a non-zero exit is
    /// `Refused` with its stderr, a missing binary or a timeout is
    /// `Unavailable`.
    pub async fn run(&self, program: &str, args: &[String]) -> Result<String, ExecutorError> {
        let mut command = tokio::process::Command::new(program);
        command.args(args).stdin(std::process::Stdio::null()).kill_on_drop(true);
        let output = match tokio::time::timeout(self.timeout, command.output()).await {
            Err(_) => {
                return Err(ExecutorError::Unavailable(format!("`{program}` did not answer within {:?}", self.timeout)))
            }
            Ok(Err(e)) => return Err(ExecutorError::Unavailable(format!("cannot run `{program}`: {e}"))),
            Ok(Ok(output)) => output,
        };
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
            let down = ["Unable to contact slurm controller", "Connection refused", "Socket timed out"];
            if down.iter().any(|d| stderr.contains(d)) {
                Err(ExecutorError::Unavailable(format!("Slurm is not reachable: {stderr}")))
            } else {
                Err(ExecutorError::Refused(format!("`{program}` failed: {stderr}")))
            }
        }
    }
}

impl SlurmCli {
    /// Runs `sbatch --parsable …` and returns the new job's id.
    pub async fn sbatch(&self, args: &[String]) -> Result<u64, ExecutorError> {
        let out = self.run("sbatch", args).await?;
        parse_submitted(&out)
    }
}

/// `sbatch --parsable` prints `id` or `id;cluster`.
fn parse_submitted(out: &str) -> Result<u64, ExecutorError> {
    out.trim()
        .split(';')
        .next()
        .and_then(|id| id.parse().ok())
        .ok_or_else(|| ExecutorError::Refused(format!("sbatch printed no job id: {out}")))
}

/// `Key=Value` fields of one `-o` line.
pub fn fields(line: &str) -> HashMap<&str, &str> {
    line.split_whitespace().filter_map(|kv| kv.split_once('=')).collect()
}

/// One job as `scontrol show job -o` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmJob {
    pub id: u64,
    pub name: String,
    pub state: String,
    /// `code:signal`
    pub exit_code: (i32, i32),
}

impl SlurmJob {
    /// `None` while it is pending, running or being cleaned up.
    pub fn end(&self) -> Option<EndSignal> {
        let (code, signal) = self.exit_code;
        match self.state.as_str() {
            "COMPLETED" => Some(EndSignal::Exited(0)),
            "FAILED" if signal > 0 => Some(EndSignal::Exited(128 + signal)),
            "FAILED" => Some(EndSignal::Exited(code)),
            "TIMEOUT" => Some(EndSignal::TimeLimit),
            "CANCELLED" => Some(EndSignal::Cancelled),
            "OUT_OF_MEMORY" => Some(EndSignal::HostOomKilled),
            "NODE_FAIL" | "BOOT_FAIL" | "DEADLINE" | "PREEMPTED" => Some(EndSignal::Lost),
            _ => None,
        }
    }
}

pub fn parse_jobs(text: &str) -> Vec<SlurmJob> {
    text.lines()
        .filter_map(|line| {
            let f = fields(line);
            let id = f.get("JobId")?.parse().ok()?;
            let (code, signal) = f.get("ExitCode").and_then(|e| e.split_once(':')).unwrap_or(("0", "0"));
            Some(SlurmJob {
                id,
                name: f.get("JobName").copied().unwrap_or_default().to_string(),
                // e.g. `CANCELLED` or `CANCELLED+` / `CANCELLED by 0` variants
                state: f.get("JobState").copied().unwrap_or_default().trim_end_matches('+').to_string(),
                exit_code: (code.parse().unwrap_or(0), signal.parse().unwrap_or(0)),
            })
        })
        .collect()
}

/// A node as `scontrol -d show node -o` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmNode {
    pub name: String,
    /// `(gpu type, count)` from `Gres=gpu:TYPE:N`.
    pub gpus: Vec<(String, u32)>,
    /// Neither down, drained nor failing.
    pub up: bool,
    /// `NodeAddr`: where the site reaches the node.
    pub addr: Option<String>,
}

pub fn parse_nodes(text: &str) -> Vec<SlurmNode> {
    text.lines()
        .filter_map(|line| {
            let f = fields(line);
            let name = f.get("NodeName")?.to_string();
            let gpus = f
                .get("Gres")
                .map(|g| {
                    g.split(',')
                        .filter_map(|entry| {
                            let entry = entry.split('(').next().unwrap_or(entry);
                            let mut parts = entry.split(':');
                            if parts.next()? != "gpu" {
                                return None;
                            }
                            let kind = parts.next()?.to_string();
                            let count = parts.next()?.parse().ok()?;
                            Some((kind, count))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let state = f.get("State").copied().unwrap_or_default();
            let up = !["DOWN", "DRAIN", "FAIL", "NOT_RESPONDING", "UNKNOWN"].iter().any(|bad| state.contains(bad));
            let addr = f.get("NodeAddr").filter(|a| !a.is_empty() && **a != "(null)").map(|a| a.to_string());
            Some(SlurmNode { name, gpus, up, addr })
        })
        .collect()
}

/// Single-quotes a value for the generated batch script.
pub fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r#"'\''"#))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_and_their_ends_are_read() {
        let text = "JobId=7 JobName=jpu-3-1 UserId=root(0) JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0 RunTime=00:00:01\n\
                    JobId=8 JobName=jpu-4-1 JobState=RUNNING Reason=None ExitCode=0:0\n\
                    JobId=9 JobName=jpu-5-2 JobState=FAILED Reason=JobLaunchFailure ExitCode=0:9\n\
                    JobId=10 JobName=jpu-6-1 JobState=TIMEOUT ExitCode=0:15\n\
                    JobId=11 JobName=x JobState=OUT_OF_MEMORY ExitCode=0:125\n\
                    JobId=12 JobName=y JobState=CANCELLED ExitCode=0:15\n";
        let jobs = parse_jobs(text);
        let ends: Vec<(u64, Option<EndSignal>)> = jobs.iter().map(|j| (j.id, j.end())).collect();
        assert_eq!(
            ends,
            [
                (7, Some(EndSignal::Exited(3))),
                (8, None),
                (9, Some(EndSignal::Exited(137))),
                (10, Some(EndSignal::TimeLimit)),
                (11, Some(EndSignal::HostOomKilled)),
                (12, Some(EndSignal::Cancelled)),
            ]
        );
        assert_eq!(jobs[0].name, "jpu-3-1");
    }

    #[test]
    fn nodes_with_their_gpus_and_health_are_read() {
        let text = "NodeName=s4090-1 Arch=x86_64 NodeAddr=10.0.0.41 Gres=gpu:rtx4090:2 GresUsed=gpu:rtx4090:1(IDX:0) State=MIXED\n\
                    NodeName=s3080-1 Gres=gpu:rtx3080ti:2(S:0) State=IDLE+DRAIN\n\
                    NodeName=cpu-1 Gres=(null) State=DOWN*\n";
        let nodes = parse_nodes(text);
        assert_eq!(
            nodes[0],
            SlurmNode {
                name: "s4090-1".into(),
                gpus: vec![("rtx4090".into(), 2)],
                up: true,
                addr: Some("10.0.0.41".into())
            }
        );
        assert_eq!(nodes[1].gpus, vec![("rtx3080ti".to_string(), 2)]);
        assert!(!nodes[1].up);
        assert!(nodes[2].gpus.is_empty() && !nodes[2].up);
        assert_eq!(nodes[1].addr, None);
    }

    #[test]
    fn submitted_ids_are_read_with_or_without_a_cluster() {
        assert_eq!(parse_submitted("42\n").unwrap(), 42);
        assert_eq!(parse_submitted("43;jpu\n").unwrap(), 43);
        assert!(parse_submitted("Submitted batch job x").is_err());
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("it's"), r#"'it'\''s'"#);
    }
}
