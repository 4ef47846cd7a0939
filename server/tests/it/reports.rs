//! Usage reports against the real server: the report adds up to the
//! charge ledger by every grouping, researchers see their own lab only,
//! CSV is a real file a spreadsheet opens safely, and bad parameters are
//! named.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

fn timed(name: &str, gpus: u32, seconds: &str) -> Value {
    json!({"name": name, "command": "python train.py", "num_gpus": gpus, "env": {"JPU_SIM_SECONDS": seconds}})
}

fn total(report: &Value, field: &str) -> f64 {
    report["rows"].as_array().unwrap().iter().map(|r| r[field].as_f64().unwrap()).sum()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(1.0)
}

#[tokio::test]
async fn the_report_adds_up_to_the_ledger_and_stays_inside_the_lab() {
    let app = TestApp::spawn_scheduling().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let stranger = app.researcher(&admin, "stranger", "-other-lab").await;
    let mut jobs = Vec::new();
    for (token, name, gpus) in [(&demo, "a", 1), (&demo, "b", 2), (&stranger, "c", 1), (&admin, "d", 1)] {
        jobs.push((token, app.submit_ok(token, timed(name, gpus, "0.4")).await["id"].as_i64().unwrap()));
    }
    for (token, id) in &jobs {
        app.wait_state(token, *id, "COMPLETED").await;
    }
    let ledger_tflop_s = app.sql_number("SELECT SUM(amount) FROM usage_charges").await;
    let ledger_gpu_hours = app.sql_number("SELECT SUM(gpu_seconds) / 3600.0 FROM usage_charges").await;
    assert!(ledger_tflop_s > 0.0, "the jobs were charged");

    let today = time::OffsetDateTime::now_utc().date().to_string();
    for by in ["lab", "user", "tier", "month"] {
        let path = format!("/v1/reports/usage?from={today}&to={today}&by={by}");
        let report: Value = app.get(Some(&admin), &path).await.json().await.unwrap();
        assert!(close(total(&report, "tflop_s"), ledger_tflop_s), "by {by}: {report} vs {ledger_tflop_s}");
        assert!(close(total(&report, "gpu_hours"), ledger_gpu_hours), "by {by}: {report}");
        assert_eq!(total(&report, "jobs"), 4.0, "by {by}: each job in one group");
    }
    let by_user: Value = app.get(Some(&admin), "/v1/reports/usage?by=user").await.json().await.unwrap();
    let demo_row = by_user["rows"].as_array().unwrap().iter().find(|r| r["group"] == "demo").unwrap().clone();
    assert_eq!(demo_row["jobs"], 2);
    let demo_ledger = app
        .sql_number("SELECT SUM(c.gpu_seconds) FROM usage_charges c JOIN jobs j ON j.id = c.job_id JOIN users u ON u.id = j.user_id WHERE u.username = 'demo'")
        .await;
    assert!(close(demo_row["gpu_hours"].as_f64().unwrap() * 3600.0, demo_ledger), "{demo_row}");
    assert!(demo_ledger >= 3.0 * 0.4 * 0.99, "a 1-GPU and a 2-GPU job of 0.4 s: {demo_ledger}");

    // a researcher gets their own lab's rows only
    let mine: Value = app.get(Some(&demo), "/v1/reports/usage?by=lab").await.json().await.unwrap();
    let groups: Vec<&str> = mine["rows"].as_array().unwrap().iter().map(|r| r["group"].as_str().unwrap()).collect();
    assert_eq!(groups, ["demo-lab"]);
    let theirs: Value = app.get(Some(&demo), "/v1/reports/usage?by=user").await.json().await.unwrap();
    assert!(theirs["rows"].as_array().unwrap().iter().all(|r| r["group"] == "demo"), "{theirs}");

    // CSV: a file, same numbers, and a lab named like a formula stays text
    let resp = app.get(Some(&admin), "/v1/reports/usage?by=lab&format=csv").await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/csv; charset=utf-8");
    assert!(resp.headers()["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"usage-"));
    let text = resp.text().await.unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("lab,jobs,gpu_hours,tflop_s"));
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(str::to_string).collect()).collect();
    assert!(rows.iter().any(|r| r[0] == "'-other-lab"), "formula-like names are defused: {text}");
    let csv_sum: f64 = rows.iter().map(|r| r[3].parse::<f64>().unwrap()).sum();
    assert!((csv_sum - ledger_tflop_s).abs() < 0.01 * rows.len() as f64, "{csv_sum} vs {ledger_tflop_s}");

    // an empty window is an empty report, not an error
    let old: Value =
        app.get(Some(&admin), "/v1/reports/usage?from=2020-01-01&to=2020-01-31").await.json().await.unwrap();
    assert_eq!(old["rows"], json!([]));
}

#[tokio::test]
async fn report_parameters_are_checked() {
    let app = TestApp::spawn().await;
    let demo = app.demo_token().await;
    let table = [
        ("from=2026-02-30", "from"),
        ("to=yesterday", "to"),
        ("from=2026-12-02&to=2026-12-01", "after"),
        ("from=2000-01-01&to=2026-12-01", "at most 3660 days"),
        ("by=week", "by"),
        ("format=xml", "format"),
    ];
    for (query, says) in table {
        let message = assert_error(
            app.get(Some(&demo), &format!("/v1/reports/usage?{query}")).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
        )
        .await;
        assert!(message.contains(says), "{query}: {message}");
    }
    let report: Value = app.get(Some(&demo), "/v1/reports/usage").await.json().await.unwrap();
    assert!(report["from"].as_str().unwrap().ends_with("-01"), "defaults to this month: {report}");
    assert_eq!(report["by"], "lab");
}
