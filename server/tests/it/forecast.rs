//! The start-time forecast (policy §11) on the real server: every waiting
//! job gets an `estimated_start` from the loop's forecast, in the queue
//! and in the job object, and running jobs never have one.

use serde_json::{json, Value};

use crate::helpers::TestApp;

fn ms(rfc3339: &str) -> i64 {
    let t = time::OffsetDateTime::parse(rfc3339, &time::format_description::well_known::Rfc3339).expect("RFC 3339");
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}

#[tokio::test]
async fn a_waiting_job_is_expected_when_the_first_running_job_reaches_its_limit() {
    let app = TestApp::spawn_scheduling().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let (second, third) =
        (app.researcher(&admin, "fc-two", "demo-lab").await, app.researcher(&admin, "fc-three", "demo-lab").await);
    // all four GPUs busy: limits of 10 and 20 minutes, running far longer
    let mut running = Vec::new();
    for (token, minutes) in [(&demo, 10), (&demo, 10), (&second, 20), (&second, 20)] {
        let body = json!({"name": "busy", "command": "x", "num_gpus": 1, "time_limit_minutes": minutes,
                          "env": {"JPU_SIM_SECONDS": "3600"}});
        running.push((token.clone(), app.submit_ok(token, body).await["id"].as_i64().unwrap()));
    }
    let mut first_end = i64::MAX;
    for (token, id) in &running {
        let job = app.wait_state(token, *id, "RUNNING").await;
        assert!(job["estimated_start"].is_null(), "a running job has no estimate: {job}");
        let ends = ms(job["started_at"].as_str().unwrap()) + job["time_limit_minutes"].as_i64().unwrap() * 60_000;
        first_end = first_end.min(ends);
    }
    let waiting = app.submit_ok(&third, json!({"name": "next", "command": "x", "num_gpus": 1})).await;
    let id = waiting["id"].as_i64().unwrap();
    let job = app.wait_job(&third, id, "an estimate", |j| j["estimated_start"].is_string()).await;
    assert_eq!(job["state"], "GLOBAL_QUEUE_WAIT");
    let estimate = ms(job["estimated_start"].as_str().unwrap());
    // no ends to learn from yet: the first limit end, later by the margin
    // (a share of how far ahead it was when forecast, after submission)
    let submitted = ms(waiting["submitted_at"].as_str().unwrap());
    let margin = ((first_end - submitted) as f64 * jpu_share::policy::forecast::ESTIMATE_MARGIN) as i64;
    assert!(
        estimate >= first_end - 1_000 && estimate <= first_end + margin + 1_000,
        "expected from {first_end} to {} ms later, estimated {estimate}",
        margin
    );
    let queue: Value = app.get(Some(&third), "/v1/queue").await.json().await.unwrap();
    let entry = queue["jobs"].as_array().unwrap().iter().find(|e| e["id"] == id).cloned().unwrap();
    assert_eq!(entry["estimated_start"], job["estimated_start"]);
}

#[tokio::test]
async fn the_planned_policy_plans_a_large_job_and_the_forecast_agrees() {
    let app = TestApp::spawn_scheduling_with(|s| s.scheduler.policy = jpu_share::config::PolicyName::Planned).await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let (second, third) =
        (app.researcher(&admin, "pl-two", "demo-lab").await, app.researcher(&admin, "pl-three", "demo-lab").await);
    let mut ends = Vec::new();
    for (token, minutes) in [(&demo, 10), (&demo, 10), (&second, 20), (&second, 20)] {
        let body = json!({"name": "busy", "command": "x", "num_gpus": 1, "time_limit_minutes": minutes,
                          "env": {"JPU_SIM_SECONDS": "3600"}});
        let id = app.submit_ok(token, body).await["id"].as_i64().unwrap();
        let job = app.wait_state(token, id, "RUNNING").await;
        let end = ms(job["started_at"].as_str().unwrap()) + minutes * 60_000;
        ends.push((job["tier"].as_str().unwrap().to_string(), end));
    }
    let big = app.submit_ok(&third, json!({"name": "big", "command": "x", "num_gpus": 2})).await;
    let id = big["id"].as_i64().unwrap();
    let job = app
        .wait_job(&third, id, "a plan and an estimate", |j| {
            j["pending_reason"].as_str().is_some_and(|r| r.starts_with("PLANNED")) && j["estimated_start"].is_string()
        })
        .await;
    let reason = job["pending_reason"].as_str().unwrap();
    // the 4090 pair frees first (10-minute limits), and is the better tier
    assert!(reason.starts_with("PLANNED (0/2 GPUs held on node-4090/rtx4090, start "), "{reason}");
    let pair_free = ends.iter().filter(|(tier, _)| tier == "rtx4090").map(|(_, end)| *end).max().unwrap();
    let estimate = ms(job["estimated_start"].as_str().unwrap());
    let ahead = pair_free - ms(big["submitted_at"].as_str().unwrap());
    let margin = (ahead as f64 * jpu_share::policy::forecast::ESTIMATE_MARGIN) as i64;
    assert!(
        estimate >= pair_free - 1_000 && estimate <= pair_free + margin + 1_000,
        "planned at {pair_free}, estimated {estimate} (margin up to {margin})"
    );
}

/// `planned` with drains charged: a 3080 Ti stands idle because the
/// 2-GPU job booked behind the other one's 30-minute limit (the 4090s
/// run for an hour); its lab is charged for it while it waits (a
/// reservation of no held GPU that accrues), and the charge lands on the
/// lab when the job is cancelled.
#[tokio::test]
async fn a_gpu_left_idle_for_a_planned_start_is_charged_to_the_lab_that_waits() {
    let app = TestApp::spawn_scheduling_with(|s| {
        s.scheduler.policy = jpu_share::config::PolicyName::Planned;
        s.scheduler.plan_charge_drains = true;
    })
    .await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let (second, other) =
        (app.researcher(&admin, "dr-one", "demo-lab").await, app.researcher(&admin, "dr-two", "demo-lab").await);
    // the better tier first: the 4090 pair for 60 minutes, then one 3080 Ti for 30
    for (token, minutes) in [(&demo, 60), (&demo, 60), (&second, 30)] {
        let body = json!({"name": "busy", "command": "x", "num_gpus": 1, "time_limit_minutes": minutes,
                          "env": {"JPU_SIM_SECONDS": "7200"}});
        let id = app.submit_ok(token, body).await["id"].as_i64().unwrap();
        let running = app.wait_state(token, id, "RUNNING").await;
        assert_eq!(running["tier"], if minutes == 60 { "rtx4090" } else { "rtx3080ti" });
    }
    let big = app.submit_ok(&other, json!({"name": "big", "command": "x", "num_gpus": 2})).await;
    let id = big["id"].as_i64().unwrap();
    let job = app
        .wait_job(&other, id, "its drain accruing", |j| {
            j["reservation"]["gpu_seconds"].as_f64().is_some_and(|s| s >= 1.0)
        })
        .await;
    let reason = job["pending_reason"].as_str().unwrap();
    assert!(reason.starts_with("PLANNED (0/2 GPUs held on node-3080/rtx3080ti"), "{reason}");
    assert_eq!(job["reservation"]["gpus"], 0, "nothing held: the start is 30 minutes away: {job}");
    assert_eq!(job["usage_tflop_s"], 0.0, "charged when it ends, not while it waits");
    let cancelled = app.post(Some(&other), &format!("/v1/jobs/{id}/cancel"), json!({})).await;
    assert_eq!(cancelled.status(), 202);
    let ended = app.wait_state(&other, id, "CANCELLED").await;
    let charged = ended["usage_tflop_s"].as_f64().unwrap();
    let seconds = job["reservation"]["gpu_seconds"].as_f64().unwrap();
    assert!(charged >= seconds * 34.1 - 1e-6, "the idle 3080 Ti's seconds at 34.1 TFLOPS: {charged} for {seconds} s");
}
