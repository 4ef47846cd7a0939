//! Running an attempt inside its workspace image (policy §8): one place
//! that says how Apptainer is invoked, used by the local wrapper and the
//! Slurm batch script alike. `--containall` gives the job its own file
//! system, PID and IPC namespaces and a clean environment; `--net
//! --network none` cuts the network; only the job's output directory is
//! bound in, as its working directory; `--nv` brings the GPUs.

use std::path::Path;

use super::slurm_cli::shell_quote;
use super::StartRequest;

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

/// The batch script's last lines: run the job's script, inside its
/// workspace image when it has one (the node must have Apptainer). The
/// script is in the batch script itself, on descriptor 3 (a here-document
/// whose delimiter it does not contain): no file of it is left where the
/// job's user, or anyone else, would need to reach it.
pub fn batch_run_lines(req: &StartRequest, apptainer: &str) -> String {
    let mut out = script_on_fd3(&req.command);
    let Some(image) = &req.image else {
        out.push_str("exec bash /dev/fd/3\n");
        return out;
    };
    out.push_str(&format!(
        "if ! command -v {} >/dev/null; then echo {}; exit 127; fi\n",
        shell_quote(apptainer),
        shell_quote(&missing_message("this Slurm node"))
    ));
    for (key, value) in passed_env(&req.env).iter().filter(|(k, _)| k != "APPTAINERENV_CUDA_VISIBLE_DEVICES") {
        out.push_str(&format!("export {key}={}\n", shell_quote(value)));
    }
    out.push_str("export APPTAINERENV_CUDA_VISIBLE_DEVICES=\"${CUDA_VISIBLE_DEVICES:-}\"\n");
    let prefix: Vec<String> = exec_prefix(apptainer, image, &req.output_dir).iter().map(|a| shell_quote(a)).collect();
    out.push_str(&format!("exec {} bash /dev/fd/3\n", prefix.join(" ")));
    out
}

/// `exec 3<<'DELIM'`, the script, `DELIM`: a quoted here-document, so
/// nothing in the script is expanded by the batch shell.
fn script_on_fd3(script: &str) -> String {
    let mut n: u64 = script.len() as u64;
    let delimiter = loop {
        let candidate = format!("JPU_SCRIPT_END_{n:x}");
        if !script.lines().any(|l| l == candidate) {
            break candidate;
        }
        n += 1;
    };
    let newline = if script.ends_with('\n') { "" } else { "\n" };
    format!("exec 3<<'{delimiter}'\n{script}{newline}{delimiter}\n")
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
            vec![
                ("APPTAINERENV_JOB_ID".to_string(), "7".to_string()),
                ("APPTAINERENV_LR".to_string(), "0.1".to_string())
            ]
        );
    }

    fn request(image: Option<&str>) -> StartRequest {
        StartRequest {
            job: 7,
            attempt: 1,
            node: "s4090-1".into(),
            tier: "rtx4090".into(),
            partition: "rtx4090".into(),
            gpus: vec![0],
            command: "nvidia-smi".into(),
            env: vec![("JOB_ID".into(), "7".into()), ("CUDA_VISIBLE_DEVICES".into(), "0".into())],
            time_limit: std::time::Duration::from_secs(60),
            cpus: 4,
            mem_gb: 16,
            unix_uid: None,
            uid_configured: false,
            unix_gid: None,
            groups: Vec::new(),
            output_dir: "/out/7".into(),
            image: image.map(Into::into),
            places: None,
            owner: String::new(),
        }
    }

    #[test]
    fn without_a_workspace_the_script_runs_on_the_node_from_the_batch_itself() {
        assert_eq!(
            batch_run_lines(&request(None), "apptainer"),
            "exec 3<<'JPU_SCRIPT_END_a'\nnvidia-smi\nJPU_SCRIPT_END_a\nexec bash /dev/fd/3\n"
        );
    }

    #[test]
    fn a_script_cannot_end_its_here_document_early() {
        // 35 bytes long: the first delimiter tried (its length in hex) is in it
        let script = "echo a\nJPU_SCRIPT_END_23\necho $(id)";
        assert_eq!(script.len(), 0x23);
        let lines = script_on_fd3(script);
        assert!(lines.starts_with("exec 3<<'JPU_SCRIPT_END_24'\n"), "{lines}");
        assert!(lines.ends_with("echo $(id)\nJPU_SCRIPT_END_24\n"), "{lines}");
    }

    #[test]
    fn with_a_workspace_the_script_runs_in_its_image_with_the_slurm_gpus() {
        let lines = batch_run_lines(&request(Some("/w/ws.sif")), "apptainer");
        assert!(lines.contains("\nif ! command -v 'apptainer'"), "{lines}");
        assert!(lines.contains("export APPTAINERENV_JOB_ID='7'\n"), "{lines}");
        assert!(lines.contains("export APPTAINERENV_CUDA_VISIBLE_DEVICES=\"${CUDA_VISIBLE_DEVICES:-}\"\n"), "{lines}");
        assert!(!lines.contains("APPTAINERENV_CUDA_VISIBLE_DEVICES='0'"), "Slurm's binding wins: {lines}");
        assert!(lines.ends_with("\nexec 'apptainer' 'exec' '--containall' '--nv' '--net' '--network' 'none' '--bind' '/out/7' '--pwd' '/out/7' '/w/ws.sif' bash /dev/fd/3\n"), "{lines}");
    }
}
