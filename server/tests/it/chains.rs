//! Job dependencies and job arrays (api.md "Jobs") against the real
//! server: who waits for what, what never runs, `%N` held by the loop,
//! the array's own environment in a real process, and the limits at
//! their edges.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

fn timed(name: &str, seconds: &str, exit: &str) -> Value {
    json!({"name": name, "command": "python step.py", "num_gpus": 1,
           "env": {"JPU_SIM_SECONDS": seconds, "JPU_SIM_EXIT": exit}})
}

fn after(mut job: Value, deps: &[(&str, i64)]) -> Value {
    job["dependencies"] = deps.iter().map(|(kind, id)| json!({"type": kind, "job": id})).collect();
    job
}

fn id(job: &Value) -> i64 {
    job["id"].as_i64().expect("job id")
}

#[tokio::test]
async fn a_pipeline_runs_in_order_and_a_branch_that_cannot_run_ends_cancelled() {
    let app = TestApp::spawn_scheduling().await;
    let demo = app.demo_token().await;
    // train runs 2 s and completes; its dependants wait without a slot
    let train = id(&app.submit_ok(&demo, timed("train", "2", "0")).await);
    let evaluate = app.submit_ok(&demo, after(timed("evaluate", "0.2", "0"), &[("afterok", train)])).await;
    assert_eq!(evaluate["state"], "USER_QUEUE_WAIT");
    assert_eq!(evaluate["pending_reason"], "DEPENDENCY");
    assert_eq!(evaluate["dependencies"][0]["type"], "afterok");
    assert_eq!(evaluate["dependencies"][0]["job"], train);
    let on_failure = id(&app.submit_ok(&demo, after(timed("alert", "0.2", "0"), &[("afternotok", train)])).await);
    let cleanup = id(&app.submit_ok(&demo, after(timed("cleanup", "0.2", "0"), &[("afterany", id(&evaluate))])).await);
    // demo may hold 2 slots: train has one; a plain job submitted after
    // the dependants still gets the other at once
    let plain = id(&app.submit_ok(&demo, timed("plain", "0.2", "0")).await);
    app.wait_state(&demo, plain, "COMPLETED").await;
    let waiting: Value = app.job(&demo, id(&evaluate)).await.json().await.unwrap();
    assert_eq!(waiting["pending_reason"], "DEPENDENCY", "still waiting on train: {waiting}");

    let evaluated = app.wait_state(&demo, id(&evaluate), "COMPLETED").await;
    let trained: Value = app.job(&demo, train).await.json().await.unwrap();
    assert!(evaluated["started_at"].as_str() >= trained["ended_at"].as_str(), "evaluate ran after train ended");
    let never = app.wait_state(&demo, on_failure, "CANCELLED").await;
    assert_eq!(never["end_reason"], "DEPENDENCY_NEVER_SATISFIED");
    assert!(never["attempts"].as_array().unwrap().is_empty(), "it never ran");
    app.wait_state(&demo, cleanup, "COMPLETED").await;
}

#[tokio::test]
async fn a_failure_cancels_the_whole_chain_behind_it_and_afternotok_runs() {
    let app = TestApp::spawn_scheduling().await;
    let demo = app.demo_token().await;
    let step1 = id(&app.submit_ok(&demo, timed("step1", "0.3", "3")).await);
    let step2 = id(&app.submit_ok(&demo, after(timed("step2", "0.1", "0"), &[("afterok", step1)])).await);
    let step3 = id(&app.submit_ok(&demo, after(timed("step3", "0.1", "0"), &[("afterok", step2)])).await);
    let report = id(&app.submit_ok(&demo, after(timed("report", "0.1", "0"), &[("afternotok", step1)])).await);
    app.wait_state(&demo, step1, "FAILED").await;
    for dependant in [step2, step3] {
        let job = app.wait_state(&demo, dependant, "CANCELLED").await;
        assert_eq!(job["end_reason"], "DEPENDENCY_NEVER_SATISFIED", "{job}");
    }
    app.wait_state(&demo, report, "COMPLETED").await;
}

#[tokio::test]
async fn dependencies_must_name_live_jobs_of_the_callers_own_lab() {
    let app = TestApp::spawn_scheduling().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let stranger = app.researcher(&admin, "stranger", "other-lab").await;
    let done = id(&app.submit_ok(&demo, timed("done", "0.05", "0")).await);
    app.wait_state(&demo, done, "COMPLETED").await;
    let theirs = id(&app.submit_ok(&stranger, timed("theirs", "600", "0")).await);

    let refused = [
        (&demo, after(timed("x", "1", "0"), &[("afterok", 999_999)]), StatusCode::NOT_FOUND, "NOT_FOUND", "no job"),
        (&demo, after(timed("x", "1", "0"), &[("afterok", theirs)]), StatusCode::NOT_FOUND, "NOT_FOUND", "no job"),
        (
            &admin,
            after(timed("x", "1", "0"), &[("afterok", theirs)]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
            "another lab",
        ),
        (
            &demo,
            after(timed("x", "1", "0"), &[("afternotok", done)]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
            "can never be met",
        ),
        (
            &demo,
            after(timed("x", "1", "0"), &[("afterok", done), ("afterany", done)]),
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
            "twice",
        ),
        (
            &demo,
            json!({"name": "x", "command": "true", "num_gpus": 1, "dependencies": [{"type": "before", "job": done}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
            "dependencies",
        ),
    ];
    for (token, body, status, code, says) in refused {
        let message = assert_error(app.submit(token, body.clone()).await, status, code).await;
        assert!(message.contains(says), "{body}: {message}");
    }
    // a job's own id does not exist yet when it is submitted, so no chain
    // can loop back: the next id is as unknown as any other
    let next = done + 100;
    assert_error(
        app.submit(&demo, after(timed("loop", "1", "0"), &[("afterok", next)])).await,
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
    )
    .await;
    // one already met is fine: the job runs at once
    let fine = id(&app.submit_ok(&demo, after(timed("fine", "0.05", "0"), &[("afterok", done)])).await);
    app.wait_state(&demo, fine, "COMPLETED").await;
}

#[tokio::test]
async fn an_array_never_holds_more_than_its_limit_and_cancels_as_one() {
    let app = TestApp::spawn_scheduling().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let resp = app.patch(&admin, "/v1/admin/users/demo", json!({"max_concurrent": 4})).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let mut body = timed("sweep", "600", "0");
    body["array"] = json!("0-3,8,10-11%2");
    let submitted = app.submit_ok(&demo, body).await;
    let array = submitted["array_id"].as_i64().expect("array id");
    let elements = submitted["jobs"].as_array().unwrap().clone();
    let indices: Vec<i64> = elements.iter().map(|j| j["array"]["index"].as_i64().unwrap()).collect();
    assert_eq!(indices, [0, 1, 2, 3, 8, 10, 11]);
    assert!(elements.iter().all(|j| j["array"]["id"] == array));
    assert_eq!(elements[2]["pending_reason"], "ARRAY_LIMIT (2 of the array may hold slots at once)");

    let path = format!("/v1/jobs?array={array}&limit=200");
    let list = |app| list_jobs(app, &demo, &path);
    let running = |jobs: &[Value]| jobs.iter().filter(|j| j["state"] == "RUNNING").count();
    app.wait_until("two elements running", || async { running(&list(&app).await) == 2 }).await;
    // the owner has 4 slots, the array allows 2: a plain job takes a third
    let plain = id(&app.submit_ok(&demo, timed("plain", "600", "0")).await);
    app.wait_state(&demo, plain, "RUNNING").await;
    let jobs = list(&app).await;
    assert_eq!(jobs.len(), 7, "GET /v1/jobs?array lists every element");
    assert_eq!(running(&jobs), 2, "still two: {jobs:?}");
    let held =
        jobs.iter().filter(|j| j["pending_reason"].as_str().is_some_and(|r| r.starts_with("ARRAY_LIMIT"))).count();
    assert_eq!(held, 5);

    // one element cancelled frees its place for the next
    let first = jobs.iter().find(|j| j["state"] == "RUNNING").unwrap();
    assert_eq!(app.cancel(&demo, id(first)).await.status(), StatusCode::ACCEPTED);
    app.wait_until("the next element running", || async {
        let jobs = list(&app).await;
        running(&jobs) == 2 && jobs.iter().filter(|j| j["state"] == "USER_QUEUE_WAIT").count() == 4
    })
    .await;

    let resp = app.post(Some(&demo), &format!("/v1/arrays/{array}/cancel"), json!({})).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let cancelled: Value = resp.json().await.unwrap();
    assert_eq!(cancelled["array_id"], array);
    let states: Vec<&str> =
        cancelled["jobs"].as_array().unwrap().iter().map(|j| j["state"].as_str().unwrap()).collect();
    assert!(states.iter().all(|s| *s == "CANCELLED" || *s == "CANCELLING"), "{states:?}");
    assert_eq!(states.iter().filter(|s| **s == "CANCELLED").count(), 5, "the queued ones end at once");
    let plain_now: Value = app.job(&demo, plain).await.json().await.unwrap();
    assert_eq!(plain_now["state"], "RUNNING", "the plain job is not part of the array");
    app.wait_until("every element ended", || async { list(&app).await.iter().all(|j| j["state"] == "CANCELLED") })
        .await;
    let again = app.post(Some(&demo), &format!("/v1/arrays/{array}/cancel"), json!({})).await;
    assert_error(again, StatusCode::CONFLICT, "CONFLICT").await;
}

async fn list_jobs(app: &TestApp, token: &str, path: &str) -> Vec<Value> {
    let page: Value = app.get(Some(token), path).await.json().await.unwrap();
    page["jobs"].as_array().unwrap().clone()
}

#[tokio::test]
async fn each_element_sees_its_array_and_index_in_a_real_process() {
    let app = TestApp::spawn_local().await;
    let demo = app.demo_token().await;
    let body = json!({"name": "shard", "num_gpus": 1, "array": "3-5",
                      "command": "echo \"array=$JOB_ARRAY_ID index=$JOB_ARRAY_INDEX\""});
    let submitted = app.submit_ok(&demo, body).await;
    let array = submitted["array_id"].as_i64().unwrap();
    for (k, job) in submitted["jobs"].as_array().unwrap().iter().enumerate() {
        app.wait_state(&demo, id(job), "COMPLETED").await;
        let log: Value = app.get(Some(&demo), &format!("/v1/jobs/{}/logs", id(job))).await.json().await.unwrap();
        let line = format!("\narray={array} index={}\n", k + 3);
        assert!(log["data"].as_str().unwrap().contains(&line), "{log}");
    }
    // the platform's names cannot be set by hand
    let forged = json!({"name": "x", "command": "true", "num_gpus": 1, "env": {"JOB_ARRAY_INDEX": "7"}});
    assert_error(app.submit(&demo, forged).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
}

#[tokio::test]
async fn array_sizes_at_their_limits() {
    let app = TestApp::spawn().await; // no loop: everything stays queued
    let demo = app.demo_token().await;
    let array = |spec: &str| json!({"name": "a", "command": "true", "num_gpus": 1, "array": spec});
    // 100 unfinished jobs per user (policy §3): each element counts
    let message =
        assert_error(app.submit(&demo, array("0-100")).await, StatusCode::TOO_MANY_REQUESTS, "QUEUE_LIMIT").await;
    assert!(message.contains("101 more would pass the limit of 100"), "{message}");
    let full = app.submit_ok(&demo, array("0-99")).await;
    assert_eq!(full["jobs"].as_array().unwrap().len(), 100, "the limit itself is fine");
    assert_error(app.submit(&demo, array("0")).await, StatusCode::TOO_MANY_REQUESTS, "QUEUE_LIMIT").await;
    for (spec, says) in
        [("0-1000", "at most 1000"), ("9-2", "before it starts"), ("0-3%0", "at least 1"), ("x", "not an index")]
    {
        let message =
            assert_error(app.submit(&demo, array(spec)).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
        assert!(message.starts_with("array:") && message.contains(says), "{spec}: {message}");
    }
}

#[tokio::test]
async fn a_thousand_element_array_is_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = crate::helpers::test_settings(dir.path());
    settings.scheduler.max_unfinished_per_user = 1000;
    let app = TestApp::spawn_with(dir, settings).await;
    let demo = app.demo_token().await;
    let body = json!({"name": "big", "command": "true", "num_gpus": 1, "array": "0-999%10"});
    let submitted = app.submit_ok(&demo, body).await;
    let jobs = submitted["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1000);
    let ids: Vec<i64> = jobs.iter().map(id).collect();
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "one insert: consecutive ids");
    // and nothing more fits
    let one = json!({"name": "one", "command": "true", "num_gpus": 1});
    assert_error(app.submit(&demo, one).await, StatusCode::TOO_MANY_REQUESTS, "QUEUE_LIMIT").await;
}
