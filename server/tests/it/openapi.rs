//! The OpenAPI document at /v1/openapi.json: it is served anonymously,
//! covers every endpoint of api.md that exists, and says which need a
//! token and what their errors look like. (Its agreement with the real
//! responses is checked by schemathesis in `make test`.)

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::TestApp;

/// Every endpoint of api.md.
const CONTRACT: &[(&str, &str)] = &[
    ("post", "/v1/auth/token"),
    ("delete", "/v1/auth/token"),
    ("post", "/v1/auth/tokens"),
    ("get", "/v1/auth/tokens"),
    ("delete", "/v1/auth/tokens/{id}"),
    ("post", "/v1/auth/device"),
    ("post", "/v1/auth/device/token"),
    ("get", "/v1/me"),
    ("post", "/v1/jobs"),
    ("get", "/v1/jobs"),
    ("get", "/v1/jobs/{id}"),
    ("post", "/v1/jobs/{id}/cancel"),
    ("get", "/v1/jobs/{id}/logs"),
    ("get", "/v1/jobs/{id}/logs/stream"),
    ("get", "/v1/jobs/{id}/files"),
    ("get", "/v1/jobs/{id}/files/{path}"),
    ("get", "/v1/queue"),
    ("get", "/v1/labs"),
    ("get", "/v1/labs/{name}/usage"),
    ("get", "/v1/tiers"),
    ("get", "/v1/placements"),
    ("get", "/v1/backfill"),
    ("get", "/v1/maintenance/status"),
    ("post", "/v1/admin/maintenance"),
    ("post", "/v1/admin/labs"),
    ("post", "/v1/admin/users"),
    ("patch", "/v1/admin/users/{username}"),
    ("post", "/v1/admin/tiers"),
    ("patch", "/v1/admin/tiers/{name}"),
    ("post", "/v1/admin/nodes"),
    ("delete", "/v1/admin/nodes/{name}"),
    ("post", "/v1/admin/nodes/{name}/drain"),
    ("get", "/v1/admin/audit"),
    ("get", "/v1/admin/users"),
    ("get", "/v1/admin/nodes"),
    ("post", "/v1/admin/nodes/{name}/resume"),
    ("get", "/v1/admin/oom-patterns"),
    ("put", "/v1/admin/oom-patterns"),
    ("post", "/v1/sessions"),
    ("get", "/v1/workspaces"),
    ("post", "/v1/workspaces"),
    ("get", "/v1/workspaces/{name}"),
    ("post", "/v1/arrays/{id}/cancel"),
    ("get", "/v1/reports/usage"),
    ("get", "/v1/me/notifications"),
    ("put", "/v1/me/notifications"),
    ("get", "/v1/me/notifications/deliveries"),
    ("get", "/v1/me/storage"),
    ("get", "/v1/files/{place}/{path}"),
    ("put", "/v1/files/{place}/{path}"),
    ("post", "/v1/files/{place}/{path}"),
    ("delete", "/v1/files/{place}/{path}"),
    ("get", "/v1/datasets"),
    ("get", "/v1/datasets/{name}/files/{path}"),
    ("post", "/v1/data-requests"),
    ("get", "/v1/data-requests"),
    ("post", "/v1/admin/datasets"),
    ("patch", "/v1/admin/datasets/{name}"),
    ("delete", "/v1/admin/datasets/{name}"),
    ("post", "/v1/admin/data-requests/{id}/approve"),
    ("post", "/v1/admin/data-requests/{id}/reject"),
];

/// Endpoints of ours beyond api.md (it leaves the rest to us).
const EXTRAS: &[(&str, &str)] = &[
    ("patch", "/v1/admin/backfill"),
    // an admin's hand on anyone's tokens (#42 T1)
    ("get", "/v1/admin/users/{username}/tokens"),
    ("delete", "/v1/admin/tokens/{id}"),
];

#[tokio::test]
async fn the_document_covers_the_contract_and_its_errors() {
    let app = TestApp::spawn().await;
    let resp = app.get(None, "/v1/openapi.json").await;
    assert_eq!(resp.status(), StatusCode::OK, "served without a token");
    let doc: Value = resp.json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."), "OpenAPI 3");
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");

    let mut missing = Vec::new();
    for (method, path) in CONTRACT.iter().chain(EXTRAS) {
        let op = &doc["paths"][path][method];
        if op.is_null() {
            missing.push(format!("{method} {path}"));
            continue;
        }
        let anonymous = *path == "/v1/maintenance/status"
            || (*path == "/v1/auth/token" && *method == "post")
            || path.starts_with("/v1/auth/device");
        assert_eq!(op["security"].is_null(), anonymous, "{method} {path}: bearer needed unless anonymous");
        for (status, response) in op["responses"].as_object().unwrap() {
            if status.starts_with('4') {
                let schema = &response["content"]["application/json"]["schema"]["$ref"];
                assert_eq!(schema, "#/components/schemas/ErrorBody", "{method} {path} {status}");
            }
        }
        if !anonymous {
            assert!(op["responses"]["401"].is_object(), "{method} {path} documents 401");
        }
    }
    assert!(missing.is_empty(), "not in the document: {missing:?}");
    let documented: usize = doc["paths"].as_object().unwrap().values().map(|p| p.as_object().unwrap().len()).sum();
    assert_eq!(
        documented,
        CONTRACT.len() + EXTRAS.len(),
        "nothing documented beyond the contract's endpoints and our extras"
    );

    // the names api.md fixes are the document's
    let states = &doc["components"]["schemas"]["JobState"]["enum"];
    assert!(states.as_array().unwrap().iter().any(|s| s == "GLOBAL_QUEUE_WAIT"), "{states}");
    let job = &doc["components"]["schemas"]["JobView"]["properties"];
    for field in [
        "id",
        "rank",
        "pending_reason",
        "reservation",
        "attempts",
        "usage_tflop_s",
        "estimated_start",
        "dependencies",
        "array",
    ] {
        assert!(job[field].is_object(), "JobView.{field}");
    }
}
