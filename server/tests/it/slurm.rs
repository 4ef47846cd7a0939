//! The Slurm executor against a real Slurm cluster on this host (munged,
//! slurmctld, three slurmd with fake GPUs; `.ci/slurm-cluster`, started by
//! `make test`): placement, env, GPU-OOM retry, cancel with grace and
//! `kill -9` of the server. These tests run one at a time (they share the
//! cluster's six GPUs).

use serde_json::{json, Value};
use tokio::sync::Mutex;

use crate::helpers::TestApp;
use crate::process::ServerProcess;

/// The cluster is shared: one Slurm test at a time.
pub static CLUSTER: Mutex<()> = Mutex::const_new(());

const HOLD: &str = r#"echo holding; until [ -e "$JOB_OUTPUT_DIR/release" ]; do sleep 0.1; done"#;

fn job(name: &str, gpus: u32, command: &str) -> Value {
    json!({"name": name, "command": command, "num_gpus": gpus})
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test]
async fn jobs_run_in_slurm_on_the_chosen_node_with_their_env() {
    let _cluster = CLUSTER.lock().await;
    let Some(app) = TestApp::spawn_slurm().await else { return };
    let token = app.demo_token().await;
    let script = r#"echo "slurm_node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES id=$JOB_ID attempt=$JOB_ATTEMPT tier=$JPU_TIER"
echo done > "$JOB_OUTPUT_DIR/out.txt"
echo "checkpoint of $JOB_ID" > "$HOME/ckpt" && echo "home=$HOME""#;
    let id = app.submit_ok(&token, job("in-slurm", 2, script)).await["id"].as_i64().unwrap();
    let done = app.wait_state(&token, id, "COMPLETED").await;
    let node = done["node"].as_str().unwrap();
    assert!(node.starts_with('s'), "placed on a Slurm node, not a demo node: {done}");
    let log = read(&app.log_path(id));
    let line = format!("slurm_node={node} gpus=0,1 id={id} attempt=1 tier={}", done["tier"].as_str().unwrap());
    assert!(log.contains(&line), "log lacks `{line}`:\n{log}");
    assert_eq!(read(&app.output_dir(id).join("out.txt")).trim(), "done");
    // #43: the home is the same on every node (the cluster shares this
    // host's file system), the person's own, and the next job finds its
    // checkpoint there
    let home = crate::helpers::storage_root_for(app.dir.path()).join("home/demo");
    assert!(log.contains(&format!("home={}", home.display())), "{log}");
    let next = app.submit_ok(&token, job("resume", 1, r#"cat "$HOME/ckpt""#)).await["id"].as_i64().unwrap();
    app.wait_state(&token, next, "COMPLETED").await;
    assert!(read(&app.log_path(next)).contains(&format!("checkpoint of {id}")));
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&home).unwrap().uid(), 3901, "demo's Slurm uid owns it");
    // the nodes came from Slurm
    let placements: Value = app.get(Some(&token), "/v1/placements").await.json().await.unwrap();
    let names: Vec<&str> = placements.as_array().unwrap().iter().map(|p| p["node"].as_str().unwrap()).collect();
    for expected in ["s3080-1", "s4090-1", "s4090-2"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    // and only from Slurm: the embedded default's demo nodes would stand
    // DOWN beside them on the admin page and the dashboard
    let admin = app.admin_token().await;
    let nodes: Value = app.get(Some(&admin), "/v1/admin/nodes").await.json().await.unwrap();
    let all: Vec<&str> = nodes.as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert!(!all.is_empty() && all.iter().all(|n| n.starts_with('s')), "the demo's nodes were seeded: {all:?}");
}

#[tokio::test]
async fn a_cuda_oom_on_the_12gb_tier_is_retried_on_the_24gb_tier_in_slurm() {
    let _cluster = CLUSTER.lock().await;
    let Some(app) = TestApp::spawn_slurm().await else { return };
    let admin = app.admin_token().await;
    let token = app.demo_token().await;
    let holds = [
        app.submit_ok(&admin, job("hold-1", 2, HOLD)).await["id"].as_i64().unwrap(),
        app.submit_ok(&admin, job("hold-2", 2, HOLD)).await["id"].as_i64().unwrap(),
    ];
    for h in holds {
        let held = app.wait_state(&admin, h, "RUNNING").await;
        assert_eq!(held["tier"], "rtx4090");
    }
    let script = r#"echo "attempt $JOB_ATTEMPT on $JPU_TIER"
if [ "$JPU_TIER" = rtx3080ti ]; then echo "torch.OutOfMemoryError: CUDA out of memory." >&2; exit 1; fi"#;
    let id = app.submit_ok(&token, job("big", 1, script)).await["id"].as_i64().unwrap();
    app.wait_job(&token, id, "attempt 2", |j| j["attempt"] == 2).await;
    std::fs::write(app.output_dir(holds[0]).join("release"), "").unwrap();
    let done = app.wait_state(&token, id, "COMPLETED").await;
    let tiers: Vec<&str> = done["attempts"].as_array().unwrap().iter().map(|a| a["tier"].as_str().unwrap()).collect();
    assert_eq!(tiers, ["rtx3080ti", "rtx4090"]);
    let log = read(&app.log_path(id));
    assert!(log.contains("attempt 2 on rtx4090"), "{log}");
    // each attempt's output is offered beside the job's files
    let file = |n: u32| {
        let path = format!("/v1/jobs/{id}/files/jpu-attempt-{n}.log");
        let (app, token) = (&app, &token);
        async move { app.get(Some(token), &path).await }
    };
    let first = file(1).await.text().await.unwrap();
    assert!(
        first.contains("attempt 1 on rtx3080ti")
            && first.contains("CUDA out of memory")
            && !first.contains("attempt 2 on"),
        "{first}"
    );
    assert!(file(2).await.text().await.unwrap().contains("attempt 2 on rtx4090"));
    std::fs::write(app.output_dir(holds[1]).join("release"), "").unwrap();
    app.wait_state(&admin, holds[1], "COMPLETED").await;
}

#[tokio::test]
async fn cancel_in_slurm_gives_the_job_its_grace_to_checkpoint() {
    let _cluster = CLUSTER.lock().await;
    let Some(app) = TestApp::spawn_slurm().await else { return };
    let token = app.demo_token().await;
    let script = r#"trap 'echo "epoch 3" > "$JOB_OUTPUT_DIR/checkpoint"; exit 0' TERM
echo ready; sleep 300 & wait"#;
    let id = app.submit_ok(&token, job("polite", 1, script)).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "RUNNING").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !read(&app.log_path(id)).contains("ready") {
        assert!(std::time::Instant::now() < deadline, "the job never printed ready");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(app.cancel(&token, id).await.status(), 202);
    let ended = app.wait_state(&token, id, "CANCELLED").await;
    assert_eq!(ended["end_reason"], "CANCELLED");
    assert_eq!(read(&app.output_dir(id).join("checkpoint")).trim(), "epoch 3");
}

/// The server dies after `sbatch` but before recording the confirmation,
/// and again while the job runs: the attempt is adopted by its Slurm job
/// name, never submitted twice, and charged once.
#[tokio::test]
async fn kill_9_during_and_after_a_slurm_dispatch_submits_nothing_twice() {
    let _cluster = CLUSTER.lock().await;
    if std::env::var_os("SLURM_CONF").is_none() {
        assert!(std::env::var_os("JPU_TEST_SLURM").is_none(), "JPU_TEST_SLURM is set but SLURM_CONF is not");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let slurm = [("JPU__EXECUTOR__KIND", "slurm")];
    let server = ServerProcess::start(dir.path(), &[slurm[0], ("JPU_FAILPOINT", "before-confirm")]).await;
    let app = TestApp::attach(server.base.clone(), dir);
    app.give_slurm_uids().await;
    let token = app.demo_token().await;
    let id = app.submit_ok(&token, job("across-crashes", 1, HOLD)).await["id"].as_i64().unwrap();
    server.wait_exit().await;
    let dir = app.stop().await;

    let server = ServerProcess::start(dir.path(), &slurm).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    app.wait_state(&token, id, "RUNNING").await;
    server.kill9().await;
    let dir = app.stop().await;

    let server = ServerProcess::start(dir.path(), &slurm).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    std::fs::write(app.output_dir(id).join("release"), "").unwrap();
    let done = app.wait_state(&token, id, "COMPLETED").await;
    assert_eq!(done["attempts"].as_array().unwrap().len(), 1, "{done}");
    let log = read(&app.log_path(id));
    assert_eq!(log.matches("holding").count(), 1, "submitted twice:\n{log}");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", app.db_path().display())).await.unwrap();
    let charges: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM usage_charges WHERE job_id = ? AND kind = 'run'")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(charges, 1);
    server.kill9().await;
}

/// Every GPU runs backfill (in Slurm's preemptible partition); a research
/// job still starts within the grace (the cluster's KillWait, 5 s) + 5 s.
#[tokio::test]
async fn research_takes_gpus_back_from_slurm_backfill_within_the_grace() {
    let _cluster = CLUSTER.lock().await;
    let Some(app) = TestApp::spawn_slurm_with(|s| {
        s.backfill.enabled = true;
        s.backfill.min_idle_seconds = 0;
        s.backfill.command = "trap 'exit 0' TERM; sleep 600 & wait".into();
        s.cancel.grace_seconds = 5;
    })
    .await
    else {
        return;
    };
    let admin = app.admin_token().await;
    let token = app.demo_token().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let view: Value = app.get(Some(&token), "/v1/backfill").await.json().await.unwrap();
        if view["instances"].as_array().unwrap().len() == 6 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "backfill never filled the cluster: {view}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let asked = std::time::Instant::now();
    let id = app.submit_ok(&token, job("research", 2, "echo research")).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "RUNNING").await;
    let took = asked.elapsed();
    assert!(took < std::time::Duration::from_secs(10), "research started after {took:?}");
    app.wait_state(&token, id, "COMPLETED").await;
    // hand the cluster back clean: maintenance reclaims every instance
    let resp = app.post(Some(&admin), "/v1/admin/maintenance", json!({"action": "start"})).await;
    assert_eq!(resp.status(), 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let status: Value = app.maintenance_status().await.json().await.unwrap();
        if status["phase"] == "ACTIVE" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    eprintln!("research start with every GPU on backfill: {took:?}");
}

/// Slurm cannot be reached (here: its commands are missing): /healthz
/// says so, the server keeps working and jobs stay queued with the error.
#[tokio::test]
async fn an_unreachable_slurm_is_reported_and_jobs_stay_queued() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path(), &[("JPU__EXECUTOR__KIND", "slurm"), ("PATH", "/nonexistent")]).await;
    let app = TestApp::attach(server.base.clone(), dir);
    app.give_slurm_uids().await;
    // a node Slurm reported before it went away (no demo nodes are seeded
    // under Slurm: without any node a submit fits nowhere, 422)
    let admin = app.admin_token().await;
    let node = json!({"name": "s4090-1", "gpus": [{"tier": "rtx4090", "count": 2}]});
    assert_eq!(app.post(Some(&admin), "/v1/admin/nodes", node).await.status(), reqwest::StatusCode::CREATED);
    let token = app.demo_token().await;
    let id = app.submit_ok(&token, job("patient", 1, "true")).await["id"].as_i64().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let health = loop {
        let health: Value = app.healthz().await.json().await.unwrap();
        if health["status"] == "degraded" {
            break health;
        }
        assert!(std::time::Instant::now() < deadline, "{health}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(health["executor"]["kind"], "slurm");
    assert!(health["executor"]["message"].as_str().unwrap().contains("scontrol"), "{health}");
    let job: Value = app.job(&token, id).await.json().await.unwrap();
    assert_eq!(job["state"], "GLOBAL_QUEUE_WAIT", "{job}");
    server.kill9().await;
}

/// Policy §8 on Slurm: every job runs as its user's configured uid (never
/// root; a user without one is refused at submit), its batch file (env and
/// script) is root's alone, and Slurm's cgroups hold it to its memory: an
/// overrun ends `HOST_OOM`.
#[tokio::test]
async fn slurm_runs_jobs_as_their_users_uid_with_private_files_and_enforced_memory() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let _cluster = CLUSTER.lock().await;
    let Some(app) = TestApp::spawn_slurm().await else { return };
    let admin = app.admin_token().await;
    let nobody = app.researcher(&admin, "no-uid", "lab-n").await;
    let message = crate::helpers::assert_error(
        app.submit(&nobody, job("as-root?", 1, "id")).await,
        reqwest::StatusCode::FORBIDDEN,
        "FORBIDDEN",
    )
    .await;
    assert!(message.contains("no unix uid"), "{message}");

    let token = app.demo_token().await;
    let body = json!({"name": "mine", "command": "echo \"uid=$(id -u)\"", "num_gpus": 1, "env": {"API_KEY": "s3cret"}});
    let id = app.submit_ok(&token, body).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "COMPLETED").await;
    assert!(read(&app.log_path(id)).contains("uid=3901\n"), "{}", read(&app.log_path(id)));
    let attempt = jpu_share::executor::layout::Layout::new(&app.dir.path().join("jobs")).attempt_dir(id, 1);
    let batch = attempt.join("batch.sh");
    assert!(read(&batch).contains("s3cret"), "the env is in the batch file");
    assert_eq!(std::fs::metadata(&batch).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(&batch).unwrap().uid(), 0);
    assert_eq!(std::fs::metadata(&attempt).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(std::fs::metadata(app.output_dir(id)).unwrap().uid(), 3901);

    app.small_memory(&admin).await;
    let hog = "python3 -c 'b = bytearray(3 << 30); print(len(b))'; echo after";
    let id = app.submit_ok(&token, job("hog", 1, hog)).await["id"].as_i64().unwrap();
    let done = app.wait_job(&token, id, "its end", |j| j["ended_at"].is_string()).await;
    assert_eq!(done["state"], "FAILED", "{done}");
    assert_eq!(done["end_reason"], "HOST_OOM", "{done}");
}

#[tokio::test]
async fn a_two_gpu_job_meets_itself_over_loopback_in_slurm() {
    let _cluster = CLUSTER.lock().await;
    let Some(app) = TestApp::spawn_slurm().await else { return };
    let token = app.demo_token().await;
    // (Slurm jobs run in their node's network, the cluster's policy: only
    // the rendezvous is asserted here)
    let script = format!("python3 - 9 <<'EOF'\n{}\nEOF", crate::isolation::RENDEZVOUS);
    let id = app.submit_ok(&token, job("rendezvous", 2, &script)).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "COMPLETED").await;
    let log = read(&app.log_path(id));
    assert!(log.contains("rank0 got hello from rank1"), "{log}");
}
