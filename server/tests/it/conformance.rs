//! Conformance with policy.md and api.md where users met gaps: admin
//! cancels audited, the admin lists and the way back from a drain, the
//! GPU-OOM signatures admins set, `min_vram_gb` at submit and the waiting
//! reason it gives, placements whose columns partition capacity, and
//! reservation cost booked on the tier it was held on.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

async fn body(resp: reqwest::Response) -> Value {
    resp.json().await.expect("json")
}

async fn audit_actions(app: &TestApp, admin: &str) -> Vec<Value> {
    body(app.audit(admin).await).await["entries"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn an_admins_cancel_of_someone_elses_job_is_audited_and_an_owners_is_not() {
    let app = TestApp::spawn().await;
    let (admin, demo) = (app.admin_token().await, app.demo_token().await);
    let theirs = app.submit_ok(&demo, json!({"name": "a", "command": "sleep 9", "num_gpus": 1})).await;
    let own = app.submit_ok(&demo, json!({"name": "b", "command": "sleep 9", "num_gpus": 1})).await;
    assert!(app.cancel(&admin, theirs["id"].as_i64().unwrap()).await.status().is_success());
    assert!(app.cancel(&demo, own["id"].as_i64().unwrap()).await.status().is_success());
    let cancels: Vec<Value> =
        audit_actions(&app, &admin).await.into_iter().filter(|e| e["action"] == "job.cancel").collect();
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(cancels[0]["actor"], "admin");
    assert_eq!(cancels[0]["target"], theirs["id"].to_string());
    assert_eq!(cancels[0]["detail"]["owner"], "demo");
}

#[tokio::test]
async fn admins_list_users_and_nodes_and_bring_a_drained_node_back() {
    let app = TestApp::spawn_local().await;
    let (admin, demo) = (app.admin_token().await, app.demo_token().await);
    let users = body(app.get(Some(&admin), "/v1/admin/users").await).await;
    let demo_user = users.as_array().unwrap().iter().find(|u| u["username"] == "demo").cloned().unwrap();
    assert_eq!((demo_user["lab"].as_str(), demo_user["disabled"].as_bool()), (Some("demo-lab"), Some(false)));
    let job = app.submit_ok(&demo, json!({"name": "holds", "command": "sleep 60", "num_gpus": 1})).await;
    let id = job["id"].as_i64().unwrap();
    let running = app.wait_state(&demo, id, "RUNNING").await;
    let node = running["node"].as_str().unwrap().to_string();

    let drained = app.post(Some(&admin), &format!("/v1/admin/nodes/{node}/drain"), json!({})).await;
    assert_eq!(drained.status(), StatusCode::OK);
    let drained = body(drained).await;
    assert_eq!(drained["state"], "DRAINING", "a job still runs there");
    let busy = drained["gpus"].as_array().unwrap().iter().filter(|g| g["used_by"] == "research").count();
    assert_eq!(busy, 1, "the drain answer shows the running job's GPU: {drained}");
    let placements = body(app.get(Some(&demo), "/v1/placements").await).await;
    let here: Vec<&Value> = placements.as_array().unwrap().iter().filter(|p| p["node"] == node.as_str()).collect();
    assert!(here.iter().all(|p| p["usable"] == false && p["available"] == 0), "{placements}");

    assert!(app.cancel(&demo, id).await.status().is_success());
    app.wait_state(&demo, id, "CANCELLED").await;
    let nodes = body(app.get(Some(&admin), "/v1/admin/nodes").await).await;
    let state = |name: &str| nodes.as_array().unwrap().iter().find(|n| n["name"] == name).unwrap()["state"].clone();
    assert_eq!(state(&node), "DRAINED", "nothing runs there any more");
    let other = if node == "node-4090" { "node-3080" } else { "node-4090" };
    assert_eq!(state(other), "UP");

    let resumed = app.post(Some(&admin), &format!("/v1/admin/nodes/{node}/resume"), json!({})).await;
    assert_eq!(body(resumed).await["state"], "UP");
    assert_error(
        app.post(Some(&admin), &format!("/v1/admin/nodes/{node}/resume"), json!({})).await,
        StatusCode::CONFLICT,
        "CONFLICT",
    )
    .await;
    assert_error(
        app.post(Some(&admin), "/v1/admin/nodes/nope/resume", json!({})).await,
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
    )
    .await;
    let actions: Vec<String> = audit_actions(&app, &admin)
        .await
        .iter()
        .map(|e| e["action"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(actions.contains(&"node.resume".to_string()), "{actions:?}");
}

#[tokio::test]
async fn placements_columns_partition_capacity() {
    let app = TestApp::spawn_local().await;
    let demo = app.demo_token().await;
    let job = app.submit_ok(&demo, json!({"name": "one", "command": "sleep 30", "num_gpus": 1})).await;
    let id = job["id"].as_i64().unwrap();
    app.wait_state(&demo, id, "RUNNING").await;
    let placements = body(app.get(Some(&demo), "/v1/placements").await).await;
    let mut research = 0;
    for p in placements.as_array().unwrap() {
        let sum: u64 = ["idle", "research", "backfill", "reserved"].iter().map(|c| p[c].as_u64().unwrap()).sum();
        assert_eq!(sum, p["capacity"].as_u64().unwrap(), "{p}");
        assert_eq!(p["available"], p["idle"].as_u64().unwrap() + p["backfill"].as_u64().unwrap(), "{p}");
        research += p["research"].as_u64().unwrap();
    }
    assert_eq!(research, 1);
    assert!(app.cancel(&demo, id).await.status().is_success());
}

#[tokio::test]
async fn gpu_oom_signatures_are_the_admins_to_set_and_apply_at_the_next_end() {
    let app = TestApp::spawn_local().await;
    let (admin, demo) = (app.admin_token().await, app.demo_token().await);
    let defaults = body(app.get(Some(&admin), "/v1/admin/oom-patterns").await).await;
    assert!(defaults["patterns"].as_array().unwrap().iter().any(|p| p == "CUDA out of memory"), "{defaults}");
    let too_long = json!({"patterns": ["x".repeat(201)]});
    assert_error(
        app.send(Method::PUT, &admin, "/v1/admin/oom-patterns", Some(too_long)).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;
    let set = app
        .send(Method::PUT, &admin, "/v1/admin/oom-patterns", Some(json!({"patterns": [" jax ran out of room "]})))
        .await;
    assert_eq!(body(set).await["patterns"], json!(["jax ran out of room"]));
    assert!(audit_actions(&app, &admin).await.iter().any(|e| e["action"] == "oom_patterns.set"));

    // the admins' signature (any case) is a GPU OOM: no tier is larger
    // than the 4090's 24 GB once it fails there, so it ends for that
    let script = "echo 'JAX RAN OUT OF ROOM'; exit 1";
    let oom = app.submit_ok(&demo, json!({"name": "oom", "command": script, "num_gpus": 1})).await;
    let ended = app.wait_job(&demo, oom["id"].as_i64().unwrap(), "an end", |j| j["ended_at"].is_string()).await;
    assert_eq!((ended["state"].as_str(), ended["end_reason"].as_str()), (Some("FAILED"), Some("OOM_NO_LARGER_TIER")));
    // the built-in signature is no longer one
    let cuda = "echo 'RuntimeError: CUDA out of memory.'; exit 1";
    let plain = app.submit_ok(&demo, json!({"name": "cuda", "command": cuda, "num_gpus": 1})).await;
    let ended = app.wait_job(&demo, plain["id"].as_i64().unwrap(), "an end", |j| j["ended_at"].is_string()).await;
    assert_eq!((ended["end_reason"].as_str(), ended["attempt"].as_i64()), (Some("NONZERO_EXIT"), Some(1)));
}

#[tokio::test]
async fn min_vram_keeps_a_job_off_smaller_tiers_from_its_first_attempt() {
    let app = TestApp::spawn_local().await;
    let demo = app.demo_token().await;
    // another researcher of the lab: the demo user's two slots hold the 4090s
    let other = app.researcher(&app.admin_token().await, "vram-user", "demo-lab").await;
    assert_error(
        app.submit(&demo, json!({"name": "big", "command": "true", "num_gpus": 1, "min_vram_gb": 25})).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "NO_FIT_PLACEMENT",
    )
    .await;
    assert_error(
        app.submit(&demo, json!({"name": "huge", "command": "true", "num_gpus": 1, "min_vram_gb": 4097})).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;
    // both 24 GB GPUs busy
    let mut holders = Vec::new();
    for n in 0..2 {
        let job = app
            .submit_ok(&demo, json!({"name": format!("h{n}"), "command": "sleep 60", "num_gpus": 1, "min_vram_gb": 24}))
            .await;
        holders.push(job["id"].as_i64().unwrap());
    }
    for id in &holders {
        assert_eq!(app.wait_state(&demo, *id, "RUNNING").await["tier"], "rtx4090");
    }
    let needs =
        app.submit_ok(&other, json!({"name": "needs20", "command": "sleep 1", "num_gpus": 1, "min_vram_gb": 20})).await;
    let needs = needs["id"].as_i64().unwrap();
    let waiting = app
        .wait_job(&other, needs, "a reason", |j| j["pending_reason"].is_string() || j["state"] != "GLOBAL_QUEUE_WAIT")
        .await;
    assert_eq!(waiting["pending_reason"], "NO_IDLE_GPU (needs ≥ 20 GB VRAM)");
    // a job without a floor takes an idle 12 GB GPU meanwhile
    let any = app.submit_ok(&other, json!({"name": "any", "command": "sleep 1", "num_gpus": 1})).await;
    assert_eq!(app.wait_state(&other, any["id"].as_i64().unwrap(), "RUNNING").await["tier"], "rtx3080ti");
    assert_eq!(app.job(&other, needs).await.json::<Value>().await.unwrap()["state"], "GLOBAL_QUEUE_WAIT");
    assert!(app.cancel(&demo, holders[0]).await.status().is_success());
    let started = app.wait_job(&other, needs, "a start", |j| j["tier"].is_string()).await;
    assert_eq!(started["tier"], "rtx4090");
    assert!(app.cancel(&demo, holders[1]).await.status().is_success());
}

#[tokio::test]
async fn reservation_cost_is_booked_on_the_tier_it_was_held_on_after_a_swap() {
    use jpu_share::db;
    use jpu_share::executor::Finished;
    use jpu_share::policy::oom::EndSignal;
    use jpu_share::policy::{Accrued, Dispatch, Plan};
    let app = TestApp::spawn().await; // no scheduler loop: this test is the cycle
    let demo = app.demo_token().await;
    let job = app.submit_ok(&demo, json!({"name": "swapped", "command": "true", "num_gpus": 2})).await;
    let id = job["id"].as_i64().unwrap();
    // it held the 4090 pair (15.8 s accrued there), then swapped to the 3080 pair
    let held = Accrued { gpu_seconds: 31.6, cost: 31.6 * 82.6 };
    let dispatch = Dispatch {
        job: id,
        rank: 1,
        node: "node-3080".into(),
        tier: "rtx3080ti".into(),
        gpus: vec![0, 1],
        reclaim_backfill: vec![],
        accrued: held,
        swapped_from: Some(("node-4090".into(), "rtx4090".into())),
    };
    let plan = Plan { dispatches: vec![dispatch], ..Default::default() };
    let pool = app.pool().await;
    let now = jpu_share::clock::now_ms();
    let mut tx = db::write_tx(&pool).await.unwrap();
    assert_eq!(db::scheduling::apply_plan(&mut tx, &plan, &Default::default(), now).await.unwrap(), vec![id]);
    db::jobs::confirm_start(&mut tx, id, now).await.unwrap();
    let end = Finished { job: id, attempt: 1, end: EndSignal::Exited(0), log_tail: String::new(), ended_ms: None };
    jpu_share::scheduler::ends::record_end(&mut tx, &end, &[], now + 10_000).await.unwrap();
    tx.commit().await.unwrap();
    let charges: Vec<(String, String, f64)> = match &pool {
        db::Pool::Sqlite(p) => {
            sqlx::query_as("SELECT kind, tier, amount FROM usage_charges WHERE job_id = ? ORDER BY kind")
                .bind(id)
                .fetch_all(p)
                .await
                .unwrap()
        }
        db::Pool::Postgres(p) => {
            sqlx::query_as("SELECT kind, tier, amount FROM usage_charges WHERE job_id = $1 ORDER BY kind")
                .bind(id)
                .fetch_all(p)
                .await
                .unwrap()
        }
    };
    assert_eq!(charges.len(), 2, "{charges:?}");
    assert_eq!((charges[0].0.as_str(), charges[0].1.as_str()), ("reservation", "rtx4090"));
    assert!((charges[0].2 - held.cost).abs() < 1e-6);
    assert_eq!((charges[1].0.as_str(), charges[1].1.as_str()), ("run", "rtx3080ti"));
    // the job view and the lab's series show the reservation part apart
    let viewed = body(app.job(&demo, id).await).await;
    let reserved = viewed["attempts"][0]["reserved_usage_tflop_s"].as_f64().unwrap();
    assert!((reserved - held.cost).abs() < 1e-6, "{viewed}");
    assert!(viewed["attempts"][0]["usage_tflop_s"].as_f64().unwrap() > reserved);
    let series = app.get(Some(&demo), "/v1/labs/demo-lab/usage?days=2").await.text().await.unwrap();
    assert!(!series.contains("-0.0"), "no negative zeros: {series}");
    let series: Value = serde_json::from_str(&series).unwrap();
    let today = series["days"].as_array().unwrap().last().cloned().unwrap();
    let tier = |name: &str| today["by_tier"].as_array().unwrap().iter().find(|t| t["tier"] == name).cloned().unwrap();
    assert!((tier("rtx4090")["reserved_tflop_s"].as_f64().unwrap() - held.cost).abs() < 1e-6, "{today}");
    assert_eq!(tier("rtx3080ti")["reserved_tflop_s"], 0.0);
}
