//! The /v1 endpoints beyond submit/get/cancel: listing, logs (offsets and
//! SSE), output files, queue, labs, usage, tiers, placements, backfill and
//! admin actions, with who may see what.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

const HOLD: &str = r#"echo holding; until [ -e "$JOB_OUTPUT_DIR/release" ]; do sleep 0.05; done"#;

fn job(name: &str, gpus: u32, command: &str) -> Value {
    json!({"name": name, "command": command, "num_gpus": gpus})
}

async fn json_of(resp: reqwest::Response) -> Value {
    assert_eq!(resp.status(), StatusCode::OK, "{}", resp.url());
    resp.json().await.expect("json")
}

#[tokio::test]
async fn listing_filters_paginates_and_stays_inside_the_lab() {
    let app = TestApp::spawn().await; // no loop: jobs stay queued
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let mut mine = Vec::new();
    for i in 0..5 {
        let submitted = app.submit_ok(&demo, job(&format!("j{i}"), 1, "true")).await;
        let id = submitted["id"].as_i64().unwrap();
        // the submit answer is the job as it is stored (both queues)
        assert_eq!(submitted, json_of(app.job(&demo, id).await).await, "job {i}");
        mine.push(id);
    }
    let admins = app.submit_ok(&admin, job("ops", 1, "true")).await["id"].as_i64().unwrap();

    let page = json_of(app.get(Some(&demo), "/v1/jobs?limit=2").await).await;
    let ids: Vec<i64> = page["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [mine[4], mine[3]], "newest first, own lab only");
    let next = page["next"].as_i64().unwrap();
    let page = json_of(app.get(Some(&demo), &format!("/v1/jobs?limit=2&before={next}")).await).await;
    assert_eq!(page["jobs"][0]["id"], mine[2]);
    let all = json_of(app.get(Some(&demo), "/v1/jobs?limit=200").await).await;
    assert_eq!(all["jobs"].as_array().unwrap().len(), 5);
    assert!(all["next"].is_null());
    // another lab's jobs do not exist for a researcher
    let other = json_of(app.get(Some(&demo), "/v1/jobs?lab=admin").await).await;
    assert!(other["jobs"].as_array().unwrap().is_empty());
    let everything = json_of(app.get(Some(&admin), "/v1/jobs").await).await;
    assert_eq!(everything["jobs"][0]["id"], admins);
    assert_eq!(everything["jobs"].as_array().unwrap().len(), 6);
    let by_user =
        json_of(app.get(Some(&admin), "/v1/jobs?user=demo&state=GLOBAL_QUEUE_WAIT,USER_QUEUE_WAIT").await).await;
    assert_eq!(by_user["jobs"].as_array().unwrap().len(), 5);

    for bad in ["/v1/jobs?state=SLEEPING", "/v1/jobs?limit=0", "/v1/jobs?limit=201", "/v1/jobs?before=x"] {
        let message =
            assert_error(app.get(Some(&demo), bad).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
        assert!(
            message.contains("state") || message.contains("limit") || message.contains("before"),
            "{bad}: {message}"
        );
    }
    assert_error(app.get(None, "/v1/jobs").await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
}

#[tokio::test]
async fn logs_and_files_are_for_the_owner_and_admins_only() {
    let app = TestApp::spawn_local().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let colleague = app.researcher(&admin, "colleague", "demo-lab").await;
    let stranger = app.researcher(&admin, "stranger", "other-lab").await;
    let script = r#"printf 'héllo\n'; mkdir -p "$JOB_OUTPUT_DIR/ckpt"; echo w > "$JOB_OUTPUT_DIR/ckpt/model.bin"; ln -s /etc/passwd "$JOB_OUTPUT_DIR/leak""#;
    let id = app.submit_ok(&demo, job("writes", 1, script)).await["id"].as_i64().unwrap();
    app.wait_state(&demo, id, "COMPLETED").await;

    let first = json_of(app.get(Some(&demo), &format!("/v1/jobs/{id}/logs")).await).await;
    let data = first["data"].as_str().unwrap();
    assert!(data.contains("héllo\n"), "{data}");
    assert_eq!(first["offset"], 0);
    assert_eq!(first["eof"], true);
    let end = first["next_offset"].as_u64().unwrap();
    assert_eq!(end, std::fs::metadata(app.log_path(id)).unwrap().len());
    let rest = json_of(app.get(Some(&demo), &format!("/v1/jobs/{id}/logs?offset={end}")).await).await;
    assert_eq!(rest["data"], "");
    assert_error(
        app.get(Some(&demo), &format!("/v1/jobs/{id}/logs?offset={}", end + 1)).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;

    let files = json_of(app.get(Some(&demo), &format!("/v1/jobs/{id}/files")).await).await;
    let paths: Vec<&str> = files.as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["ckpt/model.bin", "jpu-attempt-1.log"], "symlinks are not listed; the attempt's output is");
    let bytes = app.get(Some(&demo), &format!("/v1/jobs/{id}/files/ckpt/model.bin")).await;
    assert_eq!(bytes.status(), StatusCode::OK);
    assert_eq!(bytes.text().await.unwrap(), "w\n");
    // a link out of the directory answers as a missing file
    assert_error(app.get(Some(&demo), &format!("/v1/jobs/{id}/files/leak")).await, StatusCode::NOT_FOUND, "NOT_FOUND")
        .await;
    assert_error(
        app.get(Some(&demo), &format!("/v1/jobs/{id}/files/ckpt/..%2F..%2F..%2Fjpu.db")).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;
    assert_error(
        app.get(Some(&demo), &format!("/v1/jobs/{id}/files/nothing")).await,
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
    )
    .await;

    // a lab colleague sees the job but not its output; another lab sees nothing
    assert_eq!(app.job(&colleague, id).await.status(), StatusCode::OK);
    for path in [
        format!("/v1/jobs/{id}/logs"),
        format!("/v1/jobs/{id}/files"),
        format!("/v1/jobs/{id}/files/ckpt/model.bin"),
        format!("/v1/jobs/{id}/logs/stream"),
    ] {
        assert_error(app.get(Some(&colleague), &path).await, StatusCode::FORBIDDEN, "FORBIDDEN").await;
        assert_error(app.get(Some(&stranger), &path).await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
        assert_eq!(app.get(Some(&admin), &path).await.status(), StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn the_log_stream_sends_output_as_it_comes_then_the_end() {
    let app = TestApp::spawn_local().await;
    let demo = app.demo_token().await;
    let script = r#"echo first; until [ -e "$JOB_OUTPUT_DIR/release" ]; do sleep 0.05; done; echo second"#;
    let id = app.submit_ok(&demo, job("streamed", 1, script)).await["id"].as_i64().unwrap();
    app.wait_state(&demo, id, "RUNNING").await;
    let mut resp = app.get(Some(&demo), &format!("/v1/jobs/{id}/logs/stream")).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    let mut released = false;
    while let Some(chunk) = resp.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if !released && seen.contains("data: first") {
            std::fs::write(app.output_dir(id).join("release"), "").unwrap();
            released = true;
        }
        if seen.contains("event: end") {
            break;
        }
    }
    assert!(released, "{seen}");
    assert!(seen.contains("data: second"), "{seen}");
    assert!(seen.contains("event: end\ndata: COMPLETED"), "{seen}");
}

#[tokio::test]
async fn queue_labs_usage_tiers_and_placements_show_the_cluster() {
    let app = TestApp::spawn_local().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let stranger = app.researcher(&admin, "stranger", "other-lab").await;
    // fill all four GPUs, then queue a 2-GPU job from each lab
    let holds: Vec<i64> = vec![
        app.submit_ok(&admin, job("hold-a", 2, HOLD)).await["id"].as_i64().unwrap(),
        app.submit_ok(&admin, job("hold-b", 2, HOLD)).await["id"].as_i64().unwrap(),
    ];
    for h in &holds {
        app.wait_state(&admin, *h, "RUNNING").await;
    }
    let waiting_demo = app.submit_ok(&demo, job("secret-name", 2, "true")).await["id"].as_i64().unwrap();
    let waiting_other = app.submit_ok(&stranger, job("theirs", 2, "true")).await["id"].as_i64().unwrap();
    app.wait_job(&demo, waiting_demo, "a rank", |j| !j["rank"].is_null()).await;
    app.wait_job(&stranger, waiting_other, "a rank", |j| !j["rank"].is_null()).await;

    let queue = json_of(app.get(Some(&stranger), "/v1/queue").await).await;
    let entries = queue["jobs"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    let ranks: Vec<u64> = entries.iter().map(|e| e["rank"].as_u64().unwrap()).collect();
    assert_eq!(ranks, [1, 2]);
    let demo_entry = entries.iter().find(|e| e["id"] == waiting_demo).unwrap();
    assert_eq!(demo_entry["lab"], "demo-lab");
    assert!(demo_entry["name"].is_null() && demo_entry["user"].is_null(), "other labs' names are hidden: {demo_entry}");
    assert!(demo_entry["pending_reason"].is_string());
    let own = entries.iter().find(|e| e["id"] == waiting_other).unwrap();
    assert_eq!(own["name"], "theirs");
    assert!(queue["user_queue"].as_array().unwrap().is_empty());

    let placements = json_of(app.get(Some(&demo), "/v1/placements").await).await;
    for p in placements.as_array().unwrap() {
        assert_eq!(p["research"], 2, "{p}");
        assert_eq!(p["idle"], 0, "{p}");
    }
    let tiers = json_of(app.get(Some(&demo), "/v1/tiers").await).await;
    assert!(tiers.as_array().unwrap().iter().any(|t| t["name"] == "rtx4090"));

    for h in &holds {
        std::fs::write(app.output_dir(*h).join("release"), "").unwrap();
        app.wait_state(&admin, *h, "COMPLETED").await;
    }
    let labs = json_of(app.get(Some(&demo), "/v1/labs").await).await;
    let admin_lab = labs
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["usage_tflop_s"].as_f64().unwrap() > 0.0)
        .expect("the admin's lab was charged");
    let name = admin_lab["name"].as_str().unwrap();
    let usage = json_of(app.get(Some(&demo), &format!("/v1/labs/{name}/usage?days=7")).await).await;
    let days = usage["days"].as_array().unwrap();
    assert_eq!(days.len(), 7);
    let today = &days[6];
    assert!(today["usage_tflop_s"].as_f64().unwrap() > 0.0, "{today}");
    assert!(!today["by_tier"].as_array().unwrap().is_empty());
    assert_error(app.get(Some(&demo), "/v1/labs/nope/usage").await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
    assert_error(
        app.get(Some(&demo), &format!("/v1/labs/{name}/usage?days=0")).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;
    let backfill = json_of(app.get(Some(&demo), "/v1/backfill").await).await;
    assert!(backfill["instances"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn admins_start_and_end_maintenance_and_every_action_is_audited() {
    let app = TestApp::spawn_scheduling().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let start = json!({"action": "start", "message": "driver upgrade"});
    assert_error(
        app.post(Some(&demo), "/v1/admin/maintenance", start.clone()).await,
        StatusCode::FORBIDDEN,
        "FORBIDDEN",
    )
    .await;
    assert_error(
        app.post(None, "/v1/admin/maintenance", start.clone()).await,
        StatusCode::UNAUTHORIZED,
        "UNAUTHENTICATED",
    )
    .await;
    let resp = app.post(Some(&admin), "/v1/admin/maintenance", start.clone()).await;
    assert_eq!(resp.status(), StatusCode::OK);
    // nothing runs, so it moves on to ACTIVE by itself
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let status: Value = app.maintenance_status().await.json().await.unwrap();
        if status["phase"] == "ACTIVE" {
            assert_eq!(status["message"], "driver upgrade");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_error(app.submit(&demo, job("x", 1, "true")).await, StatusCode::SERVICE_UNAVAILABLE, "SERVICE_MAINTENANCE")
        .await;
    assert_error(app.post(Some(&admin), "/v1/admin/maintenance", start).await, StatusCode::CONFLICT, "CONFLICT").await;
    assert_error(
        app.post(Some(&admin), "/v1/admin/maintenance", json!({"action": "reboot"})).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;
    assert_eq!(
        app.post(Some(&admin), "/v1/admin/maintenance", json!({"action": "end"})).await.status(),
        StatusCode::OK
    );
    assert_error(
        app.post(Some(&admin), "/v1/admin/maintenance", json!({"action": "end"})).await,
        StatusCode::CONFLICT,
        "CONFLICT",
    )
    .await;
    app.submit_ok(&demo, job("after", 1, "true")).await;

    let bad_user = json!({"username": "x", "password": "short", "lab": "demo-lab", "role": "researcher"});
    assert_error(
        app.post(Some(&admin), "/v1/admin/users", bad_user).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;
    let no_lab = json!({"username": "x", "password": "long-enough-pw", "lab": "ghost", "role": "researcher"});
    assert_error(
        app.post(Some(&admin), "/v1/admin/users", no_lab).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;
    app.researcher(&admin, "newbie", "new-lab").await;
    let dup = json!({"username": "newbie", "password": "long-enough-pw", "lab": "new-lab", "role": "researcher"});
    assert_error(app.post(Some(&admin), "/v1/admin/users", dup).await, StatusCode::CONFLICT, "CONFLICT").await;

    let audit: Value = app.audit(&admin).await.json().await.unwrap();
    let actions: Vec<&str> =
        audit["entries"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    for wanted in ["maintenance.start", "maintenance.end", "lab.create", "user.create"] {
        assert!(actions.contains(&wanted), "{wanted} not in {actions:?}");
    }
}
