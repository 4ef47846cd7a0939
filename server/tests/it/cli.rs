//! The `jpu` command-line client against the real server (local
//! executor): sign-in, submit, follow logs, cancel, queue, usage,
//! maintenance, and the exit codes scripts rely on.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

use crate::helpers::{TestApp, ADMIN_PASSWORD, DEMO_PASSWORD};

pub(crate) struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub(crate) async fn jpu(config: &Path, args: &[&str], password: Option<&str>) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu"));
    command.args(args).env("JPU_CONFIG_DIR", config).env_remove("JPU_SERVER").env_remove("JPU_PASSWORD");
    if let Some(p) = password {
        command.env("JPU_PASSWORD", p);
    }
    let out = command.output().await.expect("jpu runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[tokio::test]
async fn a_researcher_drives_a_job_from_the_command_line() {
    let app = TestApp::spawn_local().await;
    let config = tempfile::tempdir().unwrap();
    let cfg = config.path();

    let nope = jpu(cfg, &["jobs"], None).await;
    assert_eq!(nope.code, 3, "not signed in: {}", nope.stderr);
    assert!(nope.stderr.contains("jpu login"), "{}", nope.stderr);
    let wrong = jpu(cfg, &["login", "--server", &app.base, "-u", "demo"], Some("wrong")).await;
    assert_eq!(wrong.code, 3);
    assert!(wrong.stderr.contains("UNAUTHENTICATED: wrong username or password"), "{}", wrong.stderr);

    let login = jpu(cfg, &["login", "--server", &app.base, "-u", "demo"], Some(DEMO_PASSWORD)).await;
    assert_eq!(login.code, 0, "{}", login.stderr);
    let mode = std::fs::metadata(cfg.join("config.json")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the token file is private");

    let script = cfg.join("train.sh");
    std::fs::write(&script, "echo \"lr=$LR\"\nsleep 1\necho epoch-done\n").unwrap();
    let submitted = jpu(
        cfg,
        &["--json", "submit", script.to_str().unwrap(), "--gpus", "1", "--env", "LR=0.1", "--time", "10"],
        None,
    )
    .await;
    assert_eq!(submitted.code, 0, "{}", submitted.stderr);
    let job: Value = serde_json::from_str(&submitted.stdout).unwrap();
    let id = job["id"].as_i64().unwrap();
    assert_eq!(job["name"], "train.sh");
    assert_eq!(job["time_limit_minutes"], 10);

    // -f follows the output until the job ends
    let logs = jpu(cfg, &["logs", &id.to_string(), "-f"], None).await;
    assert_eq!(logs.code, 0, "{}", logs.stderr);
    assert!(logs.stdout.contains("lr=0.1") && logs.stdout.contains("epoch-done"), "{}", logs.stdout);

    let show = jpu(cfg, &["show", &id.to_string()], None).await;
    assert!(show.stdout.contains("COMPLETED") && show.stdout.contains("attempts:"), "{}", show.stdout);
    // the end reason points to where the site explains it
    assert!(show.stdout.contains(&format!("COMPLETED: {}/policy#reasons", app.base)), "{}", show.stdout);
    let jobs = jpu(cfg, &["jobs", "--state", "COMPLETED"], None).await;
    assert!(jobs.stdout.starts_with("ID") && jobs.stdout.contains("train.sh"), "{}", jobs.stdout);
    let again = jpu(cfg, &["cancel", &id.to_string()], None).await;
    assert_eq!(again.code, 1, "cancelling an ended job is refused");
    assert!(again.stderr.contains("CONFLICT"), "{}", again.stderr);

    let too_big = jpu(cfg, &["submit", script.to_str().unwrap(), "--gpus", "9"], None).await;
    assert_eq!(too_big.code, 1);
    assert!(too_big.stderr.contains("VALIDATION") && too_big.stderr.contains("num_gpus"), "{}", too_big.stderr);
    let no_ws = jpu(cfg, &["submit", script.to_str().unwrap(), "--workspace", "missing"], None).await;
    assert_eq!(no_ws.code, 1);
    assert!(
        no_ws.stderr.contains("workspace") && no_ws.stderr.contains("missing"),
        "the workspace reaches the API: {}",
        no_ws.stderr
    );
    let vram = jpu(cfg, &["submit", script.to_str().unwrap(), "--min-vram", "25"], None).await;
    assert_eq!(vram.code, 1);
    assert!(vram.stderr.contains("NO_FIT_PLACEMENT") && vram.stderr.contains("25 GB"), "{}", vram.stderr);
    let queue = jpu(cfg, &["queue"], None).await;
    assert_eq!(queue.code, 0);
    assert!(queue.stdout.contains("EXPECTED START"), "{}", queue.stdout);
    let usage = jpu(cfg, &["usage"], None).await;
    assert!(usage.stdout.contains("demo-lab"), "{}", usage.stdout);
    let forbidden = jpu(cfg, &["maintenance", "start", "--message", "x"], None).await;
    assert_eq!(forbidden.code, 1);
    assert!(forbidden.stderr.contains("FORBIDDEN"), "{}", forbidden.stderr);
    assert_eq!(jpu(cfg, &["bogus"], None).await.code, 2, "usage errors exit 2");

    let logout = jpu(cfg, &["logout"], None).await;
    assert_eq!(logout.code, 0);
    assert_eq!(jpu(cfg, &["jobs"], None).await.code, 3);
}

#[tokio::test]
async fn an_admin_runs_maintenance_from_the_command_line() {
    let app = TestApp::spawn_scheduling().await;
    let config = tempfile::tempdir().unwrap();
    let cfg = config.path();
    assert_eq!(jpu(cfg, &["login", "--server", &app.base, "-u", "admin"], Some(ADMIN_PASSWORD)).await.code, 0);
    let started = jpu(cfg, &["maintenance", "start", "--message", "kernel update"], None).await;
    assert_eq!(started.code, 0, "{}", started.stderr);
    assert!(started.stdout.starts_with("DRAINING") && started.stdout.contains("kernel update"), "{}", started.stdout);
    let status = jpu(cfg, &["--json", "maintenance", "status"], None).await;
    let status: Value = serde_json::from_str(&status.stdout).unwrap();
    assert_ne!(status["phase"], "NORMAL");
    assert_eq!(jpu(cfg, &["maintenance", "end"], None).await.code, 0);

    // a server that is not there
    let gone = tempfile::tempdir().unwrap();
    let down = jpu(gone.path(), &["login", "--server", "http://127.0.0.1:9", "-u", "admin"], Some("x")).await;
    assert_eq!(down.code, 4, "{}", down.stderr);
}

#[tokio::test]
async fn a_pipeline_and_an_array_from_the_command_line() {
    let app = TestApp::spawn_local().await;
    let config = tempfile::tempdir().unwrap();
    let cfg = config.path();
    assert_eq!(jpu(cfg, &["login", "--server", &app.base, "-u", "demo"], Some(DEMO_PASSWORD)).await.code, 0);
    let train = cfg.join("train.sh");
    std::fs::write(&train, "echo trained > \"$JOB_OUTPUT_DIR/model\"\n").unwrap();
    let first = jpu(cfg, &["--json", "submit", train.to_str().unwrap()], None).await;
    let first: Value = serde_json::from_str(&first.stdout).unwrap();
    let first = first["id"].as_i64().unwrap();
    let eval = cfg.join("eval.sh");
    std::fs::write(&eval, "echo evaluated\n").unwrap();
    let after = format!("ok:{first},any:{first}");
    let twice = jpu(cfg, &["submit", eval.to_str().unwrap(), "--after", &after], None).await;
    assert_eq!(twice.code, 1, "the API's refusal reaches the user");
    assert!(twice.stderr.contains("listed twice"), "{}", twice.stderr);
    let bad = jpu(cfg, &["submit", eval.to_str().unwrap(), "--after", "soon:1"], None).await;
    assert_eq!(bad.code, 2, "a malformed --after is a usage error");
    let after = format!("ok:{first}");
    let second = jpu(cfg, &["--json", "submit", eval.to_str().unwrap(), "--after", &after], None).await;
    assert_eq!(second.code, 0, "{}", second.stderr);
    let second: Value = serde_json::from_str(&second.stdout).unwrap();
    assert_eq!(second["dependencies"][0]["job"], first);
    let done = app.wait_state(&app.demo_token().await, second["id"].as_i64().unwrap(), "COMPLETED").await;
    let show = jpu(cfg, &["show", &done["id"].to_string()], None).await;
    assert!(show.stdout.contains(&format!("runs afterok job {first} (now COMPLETED)")), "{}", show.stdout);

    let sleeper = cfg.join("sweep.sh");
    std::fs::write(&sleeper, "sleep 600\n").unwrap();
    let array = jpu(cfg, &["submit", sleeper.to_str().unwrap(), "--array", "0-5%1"], None).await;
    assert_eq!(array.code, 0, "{}", array.stderr);
    assert!(array.stdout.starts_with("submitted array ") && array.stdout.contains("6 jobs"), "{}", array.stdout);
    let array_id: String = array.stdout["submitted array ".len()..].chars().take_while(char::is_ascii_digit).collect();
    let listed = jpu(cfg, &["--json", "jobs", "--array", &array_id], None).await;
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 6);
    let table = jpu(cfg, &["jobs", "--array", &array_id], None).await;
    assert!(table.stdout.contains("ARRAY_LIMIT"), "why elements wait: {}", table.stdout);
    let cancelled = jpu(cfg, &["cancel", "--array", &array_id], None).await;
    assert_eq!(cancelled.code, 0, "{}", cancelled.stderr);
    assert!(cancelled.stdout.contains("cancelled"), "{}", cancelled.stdout);
    let again = jpu(cfg, &["cancel", "--array", &array_id], None).await;
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("CONFLICT"), "{}", again.stderr);
}

#[tokio::test]
async fn reports_and_notifications_from_the_command_line() {
    let app = TestApp::spawn_local().await;
    let config = tempfile::tempdir().unwrap();
    let cfg = config.path();
    assert_eq!(jpu(cfg, &["login", "--server", &app.base, "-u", "demo"], Some(DEMO_PASSWORD)).await.code, 0);
    let receiver = crate::notifications::Receiver::start().await;
    let refused = jpu(cfg, &["notify", "--webhook", "http://169.254.169.254/latest"], None).await;
    assert_eq!(refused.code, 1);
    assert!(refused.stderr.contains("VALIDATION") && refused.stderr.contains("link-local"), "{}", refused.stderr);
    let set = jpu(cfg, &["notify", "--webhook", &receiver.url, "--events", "ended"], None).await;
    assert_eq!(set.code, 0, "{}", set.stderr);
    assert!(set.stdout.contains("signing secret") && set.stdout.contains("events:  ended"), "{}", set.stdout);
    let shown = jpu(cfg, &["notify"], None).await;
    assert!(shown.stdout.contains(&receiver.url) && !shown.stdout.contains("secret"), "{}", shown.stdout);

    let id = app.run_job(&app.demo_token().await, "counted", "true").await;
    app.wait_until("the webhook", || async { !receiver.accepted().is_empty() }).await;
    // the receiver has the request before the server has its answer written down
    let listed = |stdout: &str| stdout.contains("DELIVERED") && stdout.contains(&format!(" {id} "));
    app.wait_until("the delivery listed as delivered", || async {
        listed(&jpu(cfg, &["notify", "deliveries"], None).await.stdout)
    })
    .await;

    let report = jpu(cfg, &["report", "--by", "user"], None).await;
    assert_eq!(report.code, 0, "{}", report.stderr);
    assert!(report.stdout.contains("USER") && report.stdout.contains("demo"), "{}", report.stdout);
    let csv = jpu(cfg, &["report", "--by", "user", "--csv"], None).await;
    assert!(csv.stdout.starts_with("user,jobs,gpu_hours,tflop_s\ndemo,1,"), "{}", csv.stdout);
    assert_eq!(jpu(cfg, &["report", "--month", "2026-13"], None).await.code, 2, "a bad month is a usage error");
    let both = jpu(cfg, &["report", "--month", "2026-12", "--from", "2026-12-01"], None).await;
    assert_eq!(both.code, 2);
}

/// `jpu` with standard input (for `login --token`).
async fn jpu_with_input(config: &Path, args: &[&str], input: &str) -> Run {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu"))
        .args(args)
        .env("JPU_CONFIG_DIR", config)
        .env_remove("JPU_SERVER")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("jpu runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.expect("jpu ends");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[tokio::test]
async fn personal_tokens_from_the_command_line_and_a_sign_in_with_one() {
    let app = TestApp::spawn().await;
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let login = jpu(first.path(), &["login", "--server", &app.base, "-u", "demo"], Some(DEMO_PASSWORD)).await;
    assert_eq!(login.code, 0, "{}", login.stderr);
    let made = jpu(first.path(), &["--json", "tokens", "create", "ci-runner", "--days", "30"], None).await;
    assert_eq!(made.code, 0, "{}", made.stderr);
    let made: Value = serde_json::from_str(&made.stdout).unwrap();
    let secret = made["token"].as_str().unwrap();
    let too_long = jpu(first.path(), &["tokens", "create", "x", "--days", "366"], None).await;
    assert_eq!(too_long.code, 1, "refused by the server");
    assert!(too_long.stderr.contains("expires_in_days"), "{}", too_long.stderr);

    // a second machine signs in with it from standard input
    let empty = jpu_with_input(second.path(), &["login", "--server", &app.base, "--token"], "\n").await;
    assert_eq!(empty.code, 2, "{}", empty.stderr);
    let bad = jpu_with_input(second.path(), &["login", "--server", &app.base, "--token"], "jpu_not-a-token\n").await;
    assert_eq!(bad.code, 3, "{}", bad.stderr);
    assert!(!second.path().join("config.json").exists(), "a refused token is not kept");
    let ok = jpu_with_input(second.path(), &["login", "--server", &app.base, "--token"], &format!("{secret}\n")).await;
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stdout.contains("as demo"), "{}", ok.stdout);
    let list = jpu(second.path(), &["tokens"], None).await;
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert!(list.stdout.contains("ci-runner") && !list.stdout.contains(secret), "{}", list.stdout);

    // revoked from the first machine, the second is signed out
    let id = made["id"].as_i64().unwrap().to_string();
    let revoked = jpu(first.path(), &["tokens", "revoke", &id], None).await;
    assert_eq!(revoked.code, 0, "{}", revoked.stderr);
    let after = jpu(second.path(), &["jobs"], None).await;
    assert_eq!(after.code, 3, "{}", after.stderr);
}

/// #43: `jpu files` puts a file in the home, lists it, gets it back byte
/// for byte, makes a folder and removes both; `jpu datasets` and `jpu
/// data-request` show and ask; a dataset is read-only and a path without
/// a place is a usage error.
#[tokio::test]
async fn files_and_datasets_from_the_command_line() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let app = TestApp::spawn_local_with(|s| s.executor.uid_range = "3102600-3102699".into()).await;
    let config = tempfile::tempdir().unwrap();
    let cfg = config.path();
    let login = jpu(cfg, &["login", "--server", &app.base, "-u", "demo"], Some(DEMO_PASSWORD)).await;
    assert_eq!(login.code, 0, "{}", login.stderr);
    let local = cfg.join("weights.bin");
    let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&local, &bytes).unwrap();

    let put = jpu(cfg, &["files", "put", local.to_str().unwrap(), "home:"], None).await;
    assert_eq!(put.code, 0, "{}", put.stderr);
    assert!(put.stdout.contains("300000 bytes → home:weights.bin"), "{}", put.stdout);
    let made = jpu(cfg, &["files", "mkdir", "home:runs"], None).await;
    assert_eq!(made.code, 0, "{}", made.stderr);
    let ls = jpu(cfg, &["files", "ls", "home:"], None).await;
    assert!(ls.stdout.contains("weights.bin") && ls.stdout.contains("runs/"), "{}", ls.stdout);
    let back = cfg.join("back.bin");
    let got = jpu(cfg, &["files", "get", "home:weights.bin", back.to_str().unwrap()], None).await;
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(std::fs::read(&back).unwrap(), bytes, "byte for byte");
    let missing = jpu(cfg, &["files", "get", "home:nope.bin", back.to_str().unwrap()], None).await;
    assert_eq!(missing.code, 1);
    assert!(missing.stderr.contains("NOT_FOUND"), "{}", missing.stderr);
    for path in ["home:runs", "home:weights.bin"] {
        let rm = jpu(cfg, &["files", "rm", path], None).await;
        assert_eq!(rm.code, 0, "{}", rm.stderr);
    }
    let placeless = jpu(cfg, &["files", "ls", "weights.bin"], None).await;
    assert_eq!(placeless.code, 2, "{}", placeless.stderr);
    let read_only = jpu(cfg, &["files", "put", local.to_str().unwrap(), "datasets:x/"], None).await;
    assert_eq!(read_only.code, 2, "{}", read_only.stderr);

    let asked = jpu(
        cfg,
        &["data-request", "https://data.example.org/set.tar", "--name", "set", "--reason", "replication"],
        None,
    )
    .await;
    assert_eq!(asked.code, 0, "{}", asked.stderr);
    assert!(asked.stdout.contains("is OPEN"), "{}", asked.stdout);
    let listed = jpu(cfg, &["datasets"], None).await;
    assert!(listed.stdout.contains("set") && listed.stdout.contains("OPEN"), "{}", listed.stdout);
}
