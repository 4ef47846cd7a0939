//! GPUs confined to the job's own (#44): `CUDA_VISIBLE_DEVICES` is advice,
//! and device nodes are usually 0666, so a job must be refused every other
//! GPU's node by the kernel. Without a GPU here, the nodes are character
//! devices of NVIDIA's major number (195) made for the test: opening one
//! the job may use reaches the (absent) driver, `ENXIO`; one it may not is
//! refused, `EPERM`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use crate::helpers::TestApp;

/// Opens each named node and prints `open NAME: opened|ERRNO`.
fn probe(dir: &Path, names: &[&str]) -> String {
    let list = names.iter().map(|n| format!("'{}/{n}'", dir.display())).collect::<Vec<_>>().join(", ");
    format!(
        "echo \"gpus=$JPU_GPU_INDICES cuda=$CUDA_VISIBLE_DEVICES\"\npython3 - <<'EOF'\nimport errno, os\nfor path in [{list}]:\n    try:\n        os.close(os.open(path, os.O_RDONLY))\n        result = 'opened'\n    except OSError as e:\n        result = errno.errorcode[e.errno]\n    print('open %s: %s' % (os.path.basename(path), result))\nEOF\n"
    )
}

fn result<'a>(log: &'a str, name: &str) -> &'a str {
    let prefix = format!("open {name}: ");
    log.lines().find_map(|l| l.strip_prefix(prefix.as_str())).unwrap_or("(not probed)")
}

fn mknod(path: &Path, minor: u64) -> bool {
    use nix::sys::stat::{makedev, mknod, Mode, SFlag};
    mknod(path, SFlag::S_IFCHR, Mode::from_bits_truncate(0o666), makedev(195, minor)).is_ok()
        && std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).is_ok()
}

#[tokio::test]
async fn a_local_job_opens_its_own_gpu_and_is_refused_the_others() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let nodes = crate::helpers::shared_tempdir();
    std::fs::set_permissions(nodes.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let made = [("nvidia0", 0), ("nvidia1", 1), ("nvidiactl", 255)]
        .iter()
        .all(|(name, minor)| mknod(&nodes.path().join(name), *minor));
    assert!(made, "root makes character devices here");
    let pattern = format!("{}/nvidia{{index}}", nodes.path().display());
    let control = nodes.path().join("nvidiactl");
    let app = TestApp::spawn_local_with(|s| {
        s.executor.uid_range = "3102000-3102099".into();
        s.executor.gpu_devices = pattern;
        s.executor.gpu_control_devices = vec![control];
    })
    .await;
    let token = app.demo_token().await;
    let script = probe(nodes.path(), &["nvidia0", "nvidia1", "nvidiactl"]);

    let one =
        app.submit_ok(&token, json!({"name": "one", "command": script, "num_gpus": 1})).await["id"].as_i64().unwrap();
    app.wait_state(&token, one, "COMPLETED").await;
    let log = std::fs::read_to_string(app.log_path(one)).unwrap();
    assert!(log.contains("only this job's own may be opened"), "the log says how: {log}");
    let own = log.lines().find_map(|l| l.strip_prefix("gpus=")).expect("JPU_GPU_INDICES");
    // confined, CUDA sees only its own GPU, numbered 0 (as with Slurm's
    // ConstrainDevices); the host's index is in JPU_GPU_INDICES
    let (mine, other) = match own {
        "0 cuda=0" => ("nvidia0", "nvidia1"),
        "1 cuda=0" => ("nvidia1", "nvidia0"),
        got => panic!("one GPU, not {got}: {log}"),
    };
    assert_eq!(result(&log, mine), "ENXIO", "its own GPU reaches the driver: {log}");
    assert_eq!(result(&log, other), "EPERM", "another GPU is refused: {log}");
    assert_eq!(result(&log, "nvidiactl"), "ENXIO", "the control node stays open: {log}");

    // the CUDA variable changes nothing: the cgroup decides
    let lying = format!("export CUDA_VISIBLE_DEVICES=0,1\n{script}");
    let liar =
        app.submit_ok(&token, json!({"name": "liar", "command": lying, "num_gpus": 1})).await["id"].as_i64().unwrap();
    app.wait_state(&token, liar, "COMPLETED").await;
    let log = std::fs::read_to_string(app.log_path(liar)).unwrap();
    let refused = ["nvidia0", "nvidia1"].iter().filter(|n| result(&log, n) == "EPERM").count();
    assert_eq!(refused, 1, "one of the two stays refused: {log}");

    let two =
        app.submit_ok(&token, json!({"name": "two", "command": script, "num_gpus": 2})).await["id"].as_i64().unwrap();
    app.wait_state(&token, two, "COMPLETED").await;
    let log = std::fs::read_to_string(app.log_path(two)).unwrap();
    for name in ["nvidia0", "nvidia1", "nvidiactl"] {
        assert_eq!(result(&log, name), "ENXIO", "a two-GPU job opens both: {log}");
    }
    assert!(log.contains("gpus=0,1 cuda=0,1"), "{log}");
}

#[tokio::test]
async fn a_slurm_job_opens_its_own_gpu_and_is_refused_the_others() {
    let _cluster = crate::slurm::CLUSTER.lock().await;
    let Some(app) = TestApp::spawn_slurm().await else { return };
    // the cluster's gres.conf names these (`.ci/slurm-cluster`), with
    // ConstrainDevices=yes in its cgroup.conf
    let base = std::env::var("JPU_SLURM_BASE").unwrap_or_else(|_| "/tmp/jpu-slurm".into());
    let dev = Path::new(&base).join("dev");
    assert!(dev.join("gpu0").exists(), "the cluster's GPU nodes are character devices");
    let token = app.demo_token().await;
    let script = probe(&dev, &["gpu0", "gpu1"]);
    let id =
        app.submit_ok(&token, json!({"name": "one", "command": script, "num_gpus": 1})).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "COMPLETED").await;
    let log = std::fs::read_to_string(app.log_path(id)).unwrap();
    let mut results = [result(&log, "gpu0"), result(&log, "gpu1")];
    results.sort();
    assert_eq!(results, ["ENXIO", "EPERM"], "its own GPU opens, the other is refused: {log}");
}

#[tokio::test]
async fn a_gpu_device_pattern_without_an_index_stops_start_up_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = crate::helpers::test_settings(dir.path());
    settings.executor.gpu_devices = "/dev/nvidia0".into();
    let err = jpu_share::startup::Application::build(settings, Default::default()).await.err().expect("refused");
    assert!(err.to_string().contains("executor.gpu_devices") && err.to_string().contains("{index}"), "{err}");
}
