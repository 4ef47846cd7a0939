//! LLM backfill on the local executor: idle GPUs get a real serving
//! process; research reclaims them within the grace; backfill comes back
//! when research ends; maintenance reclaims it all.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::TestApp;

const SERVE: &str = r#"exec python3 -m http.server "$JPU_BACKFILL_PORT" --bind 127.0.0.1"#;
const HOLD: &str = r#"until [ -e "$JOB_OUTPUT_DIR/release" ]; do sleep 0.05; done"#;

async fn backfill(app: &TestApp, token: &str) -> Value {
    let resp = app.get(Some(token), "/v1/backfill").await;
    assert_eq!(resp.status(), StatusCode::OK);
    resp.json().await.unwrap()
}

async fn wait_instances(app: &TestApp, token: &str, n: usize) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let view = backfill(app, token).await;
        let instances = view["instances"].as_array().unwrap();
        // an instance is listed from before its start; its endpoint comes once the executor started it
        if instances.len() == n && instances.iter().all(|i| i["endpoint"].is_string()) {
            return view;
        }
        assert!(Instant::now() < deadline, "never {n} instances: {view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn idle_gpus_serve_backfill_until_research_needs_them() {
    let app = TestApp::spawn_local_with(|s| {
        s.backfill.enabled = true;
        s.backfill.min_idle_seconds = 0;
        s.backfill.gpus_per_instance = 1;
        s.backfill.command = SERVE.into();
    })
    .await;
    let admin = app.admin_token().await;
    let token = app.demo_token().await;

    // every idle GPU gets an instance that really serves
    let view = wait_instances(&app, &token, 4).await;
    for instance in view["instances"].as_array().unwrap() {
        let endpoint = instance["endpoint"].as_str().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match app.client.get(endpoint).send().await {
                Ok(r) if r.status().is_success() => break,
                _ => assert!(Instant::now() < deadline, "{endpoint} never answered"),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // every GPU on backfill (an instance that exits by itself — its port
    // taken meanwhile by another process of a loaded test run, seen once —
    // is deployed again at the next cycle)
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let placements: Value = app.get(Some(&token), "/v1/placements").await.json().await.unwrap();
        let all = placements.as_array().unwrap();
        if all.iter().all(|p| (p["backfill"].as_u64(), p["idle"].as_u64()) == (Some(2), Some(0))) {
            break;
        }
        assert!(Instant::now() < deadline, "never every GPU on backfill: {placements}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // research takes two of them back within the grace (2 s) + 5 s
    let asked = Instant::now();
    let id = app.submit_ok(&token, json!({"name": "research", "command": HOLD, "num_gpus": 2})).await["id"]
        .as_i64()
        .unwrap();
    let running = app.wait_state(&token, id, "RUNNING").await;
    assert!(asked.elapsed() < Duration::from_secs(7), "took {:?}", asked.elapsed());
    let view = backfill(&app, &token).await;
    let left: Vec<&Value> = view["instances"].as_array().unwrap().iter().collect();
    assert_eq!(left.len(), 2, "{view}");
    assert!(left.iter().all(|i| i["node"] != running["node"]), "no backfill left on the job's GPUs: {view}");

    // when research ends, backfill comes back
    std::fs::write(app.output_dir(id).join("release"), "").unwrap();
    app.wait_state(&token, id, "COMPLETED").await;
    let view = wait_instances(&app, &token, 4).await;
    assert!(view["served_gpu_hours"].as_f64().unwrap() > 0.0, "{view}");

    // maintenance reclaims all of it before operators get the cluster
    start_maintenance_and_wait_active(&app, &admin).await;
    assert!(backfill(&app, &token).await["instances"].as_array().unwrap().is_empty());
    app.post(Some(&admin), "/v1/admin/maintenance", json!({"action": "end"})).await;
    wait_instances(&app, &token, 4).await;
    // leave no serving processes behind
    start_maintenance_and_wait_active(&app, &admin).await;
}

async fn start_maintenance_and_wait_active(app: &TestApp, admin: &str) {
    let resp = app.post(Some(admin), "/v1/admin/maintenance", json!({"action": "start", "message": "x"})).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status: Value = app.maintenance_status().await.json().await.unwrap();
        if status["phase"] == "ACTIVE" {
            return;
        }
        assert!(Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn admins_switch_backfill_at_runtime_and_the_change_outlives_a_restart() {
    use reqwest::Method;
    let app = TestApp::spawn_local().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let view = backfill(&app, &admin).await;
    assert_eq!(
        (view["enabled"].as_bool(), view["min_idle_seconds"].as_u64()),
        (Some(false), Some(60)),
        "the file's defaults: {view}"
    );

    // on without a command is refused, naming the field
    let resp = app.send(Method::PATCH, &admin, "/v1/admin/backfill", Some(json!({"enabled": true}))).await;
    let msg = crate::helpers::assert_error(resp, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert!(msg.starts_with("command"), "{msg}");
    let resp = app.send(Method::PATCH, &demo, "/v1/admin/backfill", Some(json!({"enabled": false}))).await;
    crate::helpers::assert_error(resp, StatusCode::FORBIDDEN, "FORBIDDEN").await;

    // switched on: the idle GPUs get instances at the next cycles
    let change = json!({"enabled": true, "command": SERVE, "min_idle_seconds": 0, "gpus_per_instance": 2});
    let resp = app.send(Method::PATCH, &admin, "/v1/admin/backfill", Some(change)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let view = wait_instances(&app, &demo, 2).await;
    assert!(
        view["instances"].as_array().unwrap().iter().all(|i| i["gpu_indices"].as_array().unwrap().len() == 2),
        "{view}"
    );
    assert!(view.get("command").is_none(), "researchers do not see the command: {view}");
    assert_eq!(backfill(&app, &admin).await["command"], SERVE);

    // switched off: everything is reclaimed
    let resp = app.send(Method::PATCH, &admin, "/v1/admin/backfill", Some(json!({"enabled": false}))).await;
    assert_eq!(resp.status(), StatusCode::OK);
    wait_instances(&app, &demo, 0).await;
    let audit: Value = app.audit(&admin).await.json().await.unwrap();
    let updates = audit["entries"].as_array().unwrap().iter().filter(|e| e["action"] == "backfill.update").count();
    assert_eq!(updates, 2, "{audit}");

    // a restart keeps the admin's settings over the file's
    let dir = app.stop().await;
    let settings = crate::helpers::test_settings(dir.path());
    let app = TestApp::spawn_with(dir, settings).await;
    let admin = app.admin_token().await;
    let view = backfill(&app, &admin).await;
    assert_eq!(view["enabled"], false);
    assert_eq!(view["min_idle_seconds"], 0);
    assert_eq!(view["gpus_per_instance"], 2);
    assert_eq!(view["command"], SERVE);
}
