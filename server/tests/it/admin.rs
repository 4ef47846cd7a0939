//! Admin changes to tiers, nodes and users over /v1: what they change for
//! the scheduler and for the people affected, their errors, and the audit
//! trail they leave.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

const HOLD: &str = r#"echo holding; until [ -e "$JOB_OUTPUT_DIR/release" ]; do sleep 0.05; done"#;

impl TestApp {
    pub async fn send(&self, method: Method, token: &str, path: &str, body: Option<Value>) -> reqwest::Response {
        let mut req = self.client.request(method, self.url(path)).bearer_auth(token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        req.send().await.expect("request")
    }
}

async fn ok(resp: reqwest::Response, status: StatusCode) -> Value {
    assert_eq!(resp.status(), status, "{}", resp.url());
    if status == StatusCode::NO_CONTENT {
        return Value::Null;
    }
    resp.json().await.expect("json")
}

#[tokio::test]
async fn tiers_are_created_and_edited_with_their_limits_checked() {
    let app = TestApp::spawn().await;
    let admin = app.admin_token().await;
    let h100 = json!({"name": "h100", "display_name": "H100 80GB", "vram_gb": 80, "tflops": 989.0, "sort_order": 30, "max_gpus": 8});
    let made = ok(app.post(Some(&admin), "/v1/admin/tiers", h100.clone()).await, StatusCode::CREATED).await;
    assert_eq!(made["slurm_partition"], "h100", "the partition defaults to the name");
    assert_eq!(made["active"], true);
    let tiers = ok(app.get(Some(&admin), "/v1/tiers").await, StatusCode::OK).await;
    assert_eq!(tiers[0]["name"], "h100", "best tier first (sort_order 30)");

    assert_error(app.post(Some(&admin), "/v1/admin/tiers", h100).await, StatusCode::CONFLICT, "CONFLICT").await;
    for (bad, field) in [
        (json!({"name": "x", "vram_gb": 0, "tflops": 1.0, "sort_order": 1, "max_gpus": 1}), "vram_gb"),
        (json!({"name": "x", "vram_gb": 8, "tflops": -1.0, "sort_order": 1, "max_gpus": 1}), "tflops"),
        (json!({"name": "x", "vram_gb": 8, "tflops": 1.0, "sort_order": 1, "max_gpus": 9}), "max_gpus"),
        (json!({"name": "bad name", "vram_gb": 8, "tflops": 1.0, "sort_order": 1, "max_gpus": 1}), "name"),
    ] {
        let message = assert_error(
            app.post(Some(&admin), "/v1/admin/tiers", bad).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
        )
        .await;
        assert!(message.starts_with(field), "{field}: {message}");
    }

    // deactivated tiers take no jobs; the limits of the active ones apply to
    // submissions at once
    for tier in ["h100", "rtx4090"] {
        let off = ok(
            app.send(Method::PATCH, &admin, &format!("/v1/admin/tiers/{tier}"), Some(json!({"active": false}))).await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(off["active"], false);
    }
    let edited = ok(
        app.send(
            Method::PATCH,
            &admin,
            "/v1/admin/tiers/rtx3080ti",
            Some(json!({"tflops": 40.0, "max_time_limit_minutes": 60})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(edited["tflops"], 40.0);
    assert_eq!(edited["vram_gb"], 12, "untouched fields stay");
    let demo = app.demo_token().await;
    let long = json!({"name": "long", "command": "true", "num_gpus": 1, "time_limit_minutes": 120});
    let message = assert_error(app.submit(&demo, long).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert!(message.contains("time_limit_minutes") && message.contains("60"), "{message}");
    let short = json!({"name": "short", "command": "true", "num_gpus": 1, "time_limit_minutes": 30});
    assert_eq!(app.submit(&demo, short).await.status(), StatusCode::CREATED);

    assert_error(
        app.send(Method::PATCH, &admin, "/v1/admin/tiers/nope", Some(json!({"tflops": 1.0}))).await,
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
    )
    .await;
    let message = assert_error(
        app.send(Method::PATCH, &admin, "/v1/admin/tiers/h100", Some(json!({"max_gpus": 0}))).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;
    assert!(message.contains("max_gpus"), "{message}");
    let demo_patch = app.send(Method::PATCH, &demo, "/v1/admin/tiers/h100", Some(json!({"tflops": 1.0}))).await;
    assert_error(demo_patch, StatusCode::FORBIDDEN, "FORBIDDEN").await;

    let audit = ok(app.audit(&admin).await, StatusCode::OK).await.to_string();
    assert!(audit.contains("tier.create") && audit.contains("tier.update"), "{audit}");
}

#[tokio::test]
async fn a_drained_node_takes_no_jobs_and_a_new_node_does() {
    let app = TestApp::spawn_local().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    for node in ["node-4090", "node-3080"] {
        let drained =
            ok(app.post(Some(&admin), &format!("/v1/admin/nodes/{node}/drain"), json!({})).await, StatusCode::OK).await;
        // nothing runs there: drained at once
        assert_eq!(drained["state"], "DRAINED");
    }
    assert_error(
        app.post(Some(&admin), "/v1/admin/nodes/node-3080/drain", json!({})).await,
        StatusCode::CONFLICT,
        "CONFLICT",
    )
    .await;
    let id =
        app.submit_ok(&demo, json!({"name": "held", "command": HOLD, "num_gpus": 1})).await["id"].as_i64().unwrap();
    let waiting = app.wait_job(&demo, id, "a pending reason", |j| !j["pending_reason"].is_null()).await;
    assert_eq!(waiting["state"], "GLOBAL_QUEUE_WAIT", "no dispatch to drained nodes: {waiting}");

    let body =
        json!({"name": "node-new", "gpus": [{"tier": "rtx4090", "count": 1}, {"tier": "rtx3080ti", "count": 1}]});
    let node = ok(app.post(Some(&admin), "/v1/admin/nodes", body.clone()).await, StatusCode::CREATED).await;
    assert_eq!(node["state"], "UP");
    assert_eq!(node["gpus"].as_array().unwrap().len(), 2);
    let running = app.wait_state(&demo, id, "RUNNING").await;
    assert_eq!(running["node"], "node-new", "the new node took the job: {running}");
    assert_eq!(running["tier"], "rtx4090", "best tier first");

    assert_error(app.post(Some(&admin), "/v1/admin/nodes", body).await, StatusCode::CONFLICT, "CONFLICT").await;
    for (bad, field) in [
        (json!({"name": "n2", "gpus": []}), "gpus"),
        (json!({"name": "n2", "gpus": [{"tier": "tpu", "count": 1}]}), "gpus.tier"),
        (json!({"name": "n2", "gpus": [{"tier": "rtx4090", "count": 0}]}), "gpus.count"),
    ] {
        let message = assert_error(
            app.post(Some(&admin), "/v1/admin/nodes", bad).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
        )
        .await;
        assert!(message.starts_with(field), "{field}: {message}");
    }

    // a node cannot be removed under a running job
    let message = assert_error(
        app.send(Method::DELETE, &admin, "/v1/admin/nodes/node-new", None).await,
        StatusCode::CONFLICT,
        "CONFLICT",
    )
    .await;
    assert!(message.contains("drain"), "{message}");
    std::fs::write(app.output_dir(id).join("release"), "").unwrap();
    app.wait_state(&demo, id, "COMPLETED").await;
    ok(app.send(Method::DELETE, &admin, "/v1/admin/nodes/node-new", None).await, StatusCode::NO_CONTENT).await;
    let placements = ok(app.get(Some(&admin), "/v1/placements").await, StatusCode::OK).await;
    assert!(!placements.to_string().contains("node-new"), "{placements}");
    assert_error(
        app.send(Method::DELETE, &admin, "/v1/admin/nodes/node-new", None).await,
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
    )
    .await;

    let audit = ok(app.audit(&admin).await, StatusCode::OK).await.to_string();
    for action in ["node.drain", "node.create", "node.delete"] {
        assert!(audit.contains(action), "{action} in {audit}");
    }
}

#[tokio::test]
async fn users_are_edited_and_their_passwords_reset_by_admins() {
    let app = TestApp::spawn().await;
    let admin = app.admin_token().await;
    app.researcher(&admin, "rita", "vision-lab").await;
    let patch = json!({"lab": "vision-lab", "max_concurrent": 5, "unix_uid": 1500});
    let edited = ok(app.send(Method::PATCH, &admin, "/v1/admin/users/demo", Some(patch)).await, StatusCode::OK).await;
    assert_eq!(edited["lab"], "vision-lab");
    assert_eq!(edited["max_concurrent"], 5);
    let demo = app.demo_token().await;
    let me = ok(app.me(Some(&demo)).await, StatusCode::OK).await;
    assert_eq!((me["lab"].as_str(), me["max_concurrent"].as_i64()), (Some("vision-lab"), Some(5)));

    // reset a forgotten password: the old one stops working
    let reset = json!({"password": "a-brand-new-password"});
    ok(app.send(Method::PATCH, &admin, "/v1/admin/users/rita", Some(reset)).await, StatusCode::OK).await;
    assert_error(app.create_token("rita", "rita-password").await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
    assert_eq!(app.create_token("rita", "a-brand-new-password").await.status(), StatusCode::CREATED);

    // promoted to admin, rita reaches the admin endpoints
    ok(app.send(Method::PATCH, &admin, "/v1/admin/users/rita", Some(json!({"role": "admin"}))).await, StatusCode::OK)
        .await;
    let rita = app.token_for("rita", "a-brand-new-password").await;
    assert_eq!(app.audit(&rita).await.status(), StatusCode::OK);

    for (bad, field) in [
        (json!({"unix_uid": 5}), "unix_uid"),
        (json!({"max_concurrent": 65}), "max_concurrent"),
        (json!({"password": "short"}), "password"),
        (json!({"lab": "no-such-lab"}), "lab"),
    ] {
        let message = assert_error(
            app.send(Method::PATCH, &admin, "/v1/admin/users/demo", Some(bad)).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
        )
        .await;
        assert!(message.starts_with(field), "{field}: {message}");
    }
    let unknown = app.send(Method::PATCH, &admin, "/v1/admin/users/nobody", Some(json!({"max_concurrent": 1}))).await;
    assert_error(unknown, StatusCode::NOT_FOUND, "NOT_FOUND").await;
    let demote_self =
        app.send(Method::PATCH, &admin, "/v1/admin/users/admin", Some(json!({"role": "researcher"}))).await;
    assert_error(demote_self, StatusCode::CONFLICT, "CONFLICT").await;
    let by_researcher =
        app.send(Method::PATCH, &demo, "/v1/admin/users/demo", Some(json!({"max_concurrent": 64}))).await;
    assert_error(by_researcher, StatusCode::FORBIDDEN, "FORBIDDEN").await;

    // clearing the uid is an explicit null
    let cleared = app.send(Method::PATCH, &admin, "/v1/admin/users/demo", Some(json!({"unix_uid": null}))).await;
    assert_eq!(cleared.status(), StatusCode::OK);
    let audit = ok(app.audit(&admin).await, StatusCode::OK).await.to_string();
    assert!(audit.contains("user.update") && audit.contains("password_reset"), "{audit}");
    assert!(!audit.contains("a-brand-new-password"), "passwords never reach the audit log");
}

/// A disabled user's waiting jobs never start: they end CANCELLED with
/// `OWNER_DISABLED` in the same change; the running one goes on.
#[tokio::test]
async fn disabling_a_user_ends_their_waiting_jobs_and_lets_the_running_one_finish() {
    let app = TestApp::spawn_scheduling().await;
    let admin = app.admin_token().await;
    let kim = app.researcher(&admin, "kim", "kim-lab").await;
    let long = |name: &str, gpus: u32| json!({"name": name, "command": "python train.py", "num_gpus": gpus, "env": {"JPU_SIM_SECONDS": "600"}});
    let running = app.submit_ok(&kim, long("running", 1)).await["id"].as_i64().unwrap();
    app.wait_state(&kim, running, "RUNNING").await;
    // the admin takes every other GPU, so kim's next jobs wait
    for (name, gpus) in [("fill-a", 1), ("fill-b", 2)] {
        let id = app.submit_ok(&admin, long(name, gpus)).await["id"].as_i64().unwrap();
        app.wait_state(&admin, id, "RUNNING").await;
    }
    let mut waiting = Vec::new();
    for gpus in [1, 2] {
        waiting.push(app.submit_ok(&kim, long(&format!("waits-{gpus}"), gpus)).await["id"].as_i64().unwrap());
    }
    for id in &waiting {
        let job: Value = app.job(&kim, *id).await.json().await.unwrap();
        assert!(job["state"].as_str().unwrap().ends_with("QUEUE_WAIT"), "{job}");
    }
    ok(app.patch(&admin, "/v1/admin/users/kim", json!({"disabled": true})).await, StatusCode::OK).await;
    for id in &waiting {
        let job: Value = app.job(&admin, *id).await.json().await.unwrap();
        assert_eq!((job["state"].as_str(), job["end_reason"].as_str()), (Some("CANCELLED"), Some("OWNER_DISABLED")));
    }
    let job: Value = app.job(&admin, running).await.json().await.unwrap();
    assert_eq!(job["state"], "RUNNING", "running jobs go on: {job}");
    let audit = app.audit(&admin).await.text().await.unwrap();
    assert!(audit.contains("waiting_jobs_cancelled"), "{audit}");
    // re-enabling brings nothing back
    ok(app.patch(&admin, "/v1/admin/users/kim", json!({"disabled": false})).await, StatusCode::OK).await;
    let job: Value = app.job(&admin, waiting[0]).await.json().await.unwrap();
    assert_eq!(job["state"], "CANCELLED");
}
