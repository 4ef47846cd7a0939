//! Running an attempt inside its workspace image (policy §8): one place
//! that says how Apptainer is invoked, used by the local wrapper and the
//! Slurm batch script alike. `--containall` gives the job its own file
//! system, PID and IPC namespaces and a clean environment; `--net
//! --network none` cuts the network; only the job's output directory is
//! bound in, as its working directory; `--nv` brings the GPUs.

use std::path::Path;

/// `apptainer exec …flags… IMAGE`, to which the command is appended.
pub fn exec_prefix(apptainer: &str, image: &Path, output_dir: &Path) -> Vec<String> {
    let dir = output_dir.display().to_string();
    vec![
        apptainer.into(),
        "exec".into(),
        "--containall".into(),
        "--nv".into(),
        "--net".into(),
        "--network".into(),
        "none".into(),
        "--bind".into(),
        dir.clone(),
        "--pwd".into(),
        dir,
        image.display().to_string(),
    ]
}

/// A clean container environment keeps only variables named
/// `APPTAINERENV_<NAME>` (as `<NAME>`): the job's own env, passed that way.
pub fn passed_env(env: &[(String, String)]) -> Vec<(String, String)> {
    env.iter().map(|(k, v)| (format!("APPTAINERENV_{k}"), v.clone())).collect()
}

/// The line a job's log gets when its image cannot be used on the host
/// that should run it.
pub fn missing_message(host: &str) -> String {
    format!("[jpu-share] this job's workspace image needs Apptainer, which is not installed on {host}: the job does not run")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_contained_offline_in_their_output_dir() {
        let args = exec_prefix("apptainer", Path::new("/w/lab/ws.sif"), Path::new("/out/7"));
        assert_eq!(args[..3], ["apptainer", "exec", "--containall"]);
        let joined = args.join(" ");
        assert!(joined.contains("--net --network none"), "{joined}");
        assert!(joined.contains("--bind /out/7 --pwd /out/7"), "{joined}");
        assert_eq!(args.last().map(String::as_str), Some("/w/lab/ws.sif"));
    }

    #[test]
    fn env_reaches_a_clean_container() {
        let env = vec![("JOB_ID".to_string(), "7".to_string()), ("LR".to_string(), "0.1".to_string())];
        assert_eq!(
            passed_env(&env),
            vec![("APPTAINERENV_JOB_ID".to_string(), "7".to_string()), ("APPTAINERENV_LR".to_string(), "0.1".to_string())]
        );
    }
}
