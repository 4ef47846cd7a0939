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
