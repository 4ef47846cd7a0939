//! Who may do what: every /v1 endpoint (and the console's server functions
//! that show a job or act for admins) against anonymous, the job's owner,
//! a colleague in the owner's lab, a researcher of another lab and an
//! admin. A 409 or 422 for a role means it got past authorization.

use leptos::server_fn::ServerFn;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::TestApp;

/// A console server function's path, its form, and the expected status
/// for each role.
type FormRow<'a> = (&'a str, Vec<(&'a str, String)>, [u16; 5]);

#[tokio::test]
async fn every_endpoint_answers_each_role_as_documented() {
    let app = TestApp::spawn_local().await;
    let admin = app.admin_token().await;
    let owner = app.demo_token().await;
    let colleague = app.researcher(&admin, "colleague", "demo-lab").await;
    let stranger = app.researcher(&admin, "stranger", "other-lab").await;
    let script = r#"echo out > "$JOB_OUTPUT_DIR/out.txt""#;
    let id =
        app.submit_ok(&owner, json!({"name": "owned", "command": script, "num_gpus": 1})).await["id"].as_i64().unwrap();
    app.wait_state(&owner, id, "COMPLETED").await;
    let array =
        app.submit_ok(&owner, json!({"name": "owned-array", "command": "true", "num_gpus": 1, "array": "0-1"})).await;
    for element in array["jobs"].as_array().unwrap() {
        app.wait_state(&owner, element["id"].as_i64().unwrap(), "COMPLETED").await;
    }
    let array = array["array_id"].as_i64().unwrap();
    let ws = app.post(Some(&owner), "/v1/workspaces", json!({"name": "owned-ws", "base_image": "python:3.11"})).await;
    assert_eq!(ws.status(), 201);
    let roles: [Option<&str>; 5] = [None, Some(&owner), Some(&colleague), Some(&stranger), Some(&admin)];
    let names = ["anonymous", "owner", "colleague", "other lab", "admin"];

    let j = |p: &str| format!("/v1/jobs/{id}{p}");
    // (method, path, body, expected for anonymous/owner/colleague/other lab/admin)
    let everyone = [200, 200, 200, 200, 200];
    let signed_in = [401, 200, 200, 200, 200];
    let admins = [401, 403, 403, 403, 200];
    let rows: Vec<(Method, String, Option<Value>, [u16; 5])> = vec![
        (Method::GET, "/v1/maintenance/status".into(), None, everyone),
        // the Policy page and its server function: published to anyone
        (Method::GET, "/policy".into(), None, everyone),
        (Method::POST, app::api::PolicyFacts::PATH.into(), None, everyone),
        (Method::GET, "/v1/me".into(), None, signed_in),
        (Method::GET, "/v1/jobs".into(), None, signed_in),
        (Method::GET, j(""), None, [401, 200, 200, 404, 200]),
        (Method::GET, j("/logs"), None, [401, 200, 403, 404, 200]),
        (Method::GET, j("/logs/stream"), None, [401, 200, 403, 404, 200]),
        (Method::GET, j("/files"), None, [401, 200, 403, 404, 200]),
        (Method::GET, j("/files/out.txt"), None, [401, 200, 403, 404, 200]),
        (Method::POST, j("/cancel"), None, [401, 409, 403, 404, 409]),
        (Method::GET, format!("/v1/jobs?array={array}"), None, signed_in),
        (Method::POST, format!("/v1/arrays/{array}/cancel"), None, [401, 409, 403, 404, 409]),
        (
            Method::POST,
            "/v1/jobs".into(),
            Some(json!({"name": "n", "command": "true", "num_gpus": 1,
                        "dependencies": [{"type": "afternotok", "job": id}]})),
            [401, 422, 422, 404, 422],
        ),
        (Method::GET, "/v1/auth/tokens".into(), None, signed_in),
        (Method::GET, "/v1/me/storage".into(), None, signed_in),
        // files: each person their own home and lab share, nobody else's
        (Method::PUT, "/v1/files/home/matrix.txt".into(), Some(json!({"a": 1})), [401, 201, 201, 201, 201]),
        (Method::GET, "/v1/files/home/matrix.txt".into(), None, signed_in),
        (Method::GET, "/v1/files/home/".into(), None, signed_in),
        (Method::GET, "/v1/files/lab/".into(), None, signed_in),
        (Method::POST, "/v1/files/home/matrix-dir?mkdir".into(), None, [401, 201, 201, 201, 201]),
        (Method::DELETE, "/v1/files/home/matrix-dir".into(), None, [401, 204, 204, 204, 204]),
        (Method::DELETE, "/v1/files/home/matrix.txt".into(), None, [401, 204, 204, 204, 204]),
        // datasets: an admin's to register and change; read where open
        (Method::GET, "/v1/datasets".into(), None, signed_in),
        (
            Method::POST,
            "/v1/admin/datasets".into(),
            Some(json!({"name": "matrix-ds", "source": {"path": "/usr/share/doc"}})),
            [401, 403, 403, 403, 201],
        ),
        (Method::GET, "/v1/datasets/matrix-ds/files/".into(), None, signed_in),
        (Method::PATCH, "/v1/admin/datasets/matrix-ds".into(), Some(json!({"labs": ["demo-lab"]})), admins),
        (Method::GET, "/v1/datasets/matrix-ds/files/".into(), None, [401, 200, 200, 404, 200]),
        (
            Method::POST,
            "/v1/data-requests".into(),
            Some(json!({"name": "wanted", "url": "https://data.example.org/set.tar", "reason": "a paper"})),
            [401, 201, 201, 201, 201],
        ),
        (Method::GET, "/v1/data-requests".into(), None, signed_in),
        (Method::POST, "/v1/admin/data-requests/999999/approve".into(), Some(json!({})), [401, 403, 403, 403, 404]),
        (
            Method::POST,
            "/v1/admin/data-requests/999999/reject".into(),
            Some(json!({"reason": "no"})),
            [401, 403, 403, 403, 404],
        ),
        (Method::DELETE, "/v1/admin/datasets/matrix-ds".into(), None, [401, 403, 403, 403, 204]),
        // anonymous by design (the CLI has no token yet); this site has no
        // university sign-in, so nobody gets further than 404
        (Method::POST, "/v1/auth/device".into(), Some(json!({})), [404, 404, 404, 404, 404]),
        (Method::POST, "/v1/auth/device/token".into(), Some(json!({"device_code": "x"})), [404, 404, 404, 404, 404]),
        (Method::POST, "/v1/auth/tokens".into(), Some(json!({"name": "matrix"})), [401, 201, 201, 201, 201]),
        // nobody's token (ids of others' tokens: see auth::personal_tokens…)
        (Method::DELETE, "/v1/auth/tokens/999999".into(), None, [401, 404, 404, 404, 404]),
        (Method::GET, "/v1/admin/users/demo/tokens".into(), None, admins),
        (Method::DELETE, "/v1/admin/tokens/999999".into(), None, [401, 403, 403, 403, 404]),
        (Method::GET, "/v1/reports/usage".into(), None, signed_in),
        (Method::GET, "/v1/me/notifications".into(), None, signed_in),
        (Method::PUT, "/v1/me/notifications".into(), Some(json!({"events": ["ended"]})), signed_in),
        (Method::GET, "/v1/me/notifications/deliveries".into(), None, signed_in),
        (Method::GET, "/v1/reports/usage?format=csv&by=user".into(), None, signed_in),
        (Method::GET, "/v1/queue".into(), None, signed_in),
        (Method::GET, "/v1/labs".into(), None, signed_in),
        (Method::GET, "/v1/labs/demo-lab/usage".into(), None, signed_in),
        (Method::GET, "/v1/tiers".into(), None, signed_in),
        (Method::GET, "/v1/placements".into(), None, signed_in),
        (Method::GET, "/v1/backfill".into(), None, signed_in),
        (Method::GET, "/v1/admin/audit".into(), None, admins),
        (Method::GET, "/metrics".into(), None, admins),
        // anonymous by design: a load balancer asks which instance is ready
        (Method::GET, "/readyz".into(), None, [200, 200, 200, 200, 200]),
        (Method::POST, "/v1/admin/maintenance".into(), Some(json!({"action": "end"})), [401, 403, 403, 403, 409]),
        (Method::POST, "/v1/admin/labs".into(), Some(json!({"name": "lab-x"})), [401, 403, 403, 403, 201]),
        (
            Method::POST,
            "/v1/admin/users".into(),
            Some(json!({"username": "user-x", "password": "long-enough-pw", "lab": "demo-lab", "role": "researcher"})),
            [401, 403, 403, 403, 201],
        ),
        (
            Method::PATCH,
            "/v1/admin/users/colleague".into(),
            Some(json!({"max_concurrent": 3})),
            [401, 403, 403, 403, 200],
        ),
        (
            Method::POST,
            "/v1/admin/tiers".into(),
            Some(json!({"name": "h100", "vram_gb": 80, "tflops": 989.0, "sort_order": 30, "max_gpus": 8})),
            [401, 403, 403, 403, 201],
        ),
        (
            Method::PATCH,
            "/v1/admin/tiers/h100".into(),
            Some(json!({"display_name": "H100 SXM"})),
            [401, 403, 403, 403, 200],
        ),
        (
            Method::POST,
            "/v1/admin/nodes".into(),
            Some(json!({"name": "node-x", "gpus": [{"tier": "h100", "count": 2}]})),
            [401, 403, 403, 403, 201],
        ),
        (Method::GET, "/v1/admin/nodes".into(), None, admins),
        (Method::GET, "/v1/admin/users".into(), None, admins),
        (Method::POST, "/v1/admin/nodes/node-x/drain".into(), None, [401, 403, 403, 403, 200]),
        (Method::POST, "/v1/admin/nodes/node-x/resume".into(), None, [401, 403, 403, 403, 200]),
        (Method::DELETE, "/v1/admin/nodes/node-x".into(), None, [401, 403, 403, 403, 204]),
        (Method::GET, "/v1/admin/oom-patterns".into(), None, admins),
        (
            Method::PUT,
            "/v1/admin/oom-patterns".into(),
            Some(json!({"patterns": ["CUDA out of memory"]})),
            [401, 403, 403, 403, 200],
        ),
        (
            Method::POST,
            "/v1/jobs".into(),
            Some(json!({"name": "n", "command": "true", "num_gpus": 9})),
            [401, 422, 422, 422, 422],
        ),
        (Method::PATCH, "/v1/admin/backfill".into(), Some(json!({"min_idle_seconds": 30})), [401, 403, 403, 403, 200]),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({"app": "no-such-app", "num_gpus": 1})),
            [401, 422, 422, 422, 422],
        ),
        // the sessions' proxy: a batch job is no session, for anyone;
        // anonymous goes to sign in (a real session's owner-only rows are
        // in sessions.rs, with a running JupyterLab)
        (Method::GET, format!("/s/{id}/api/status"), None, [303, 404, 404, 404, 404]),
        (Method::POST, format!("/s/{id}/api/kernels"), None, [303, 404, 404, 404, 404]),
        (Method::GET, "/v1/workspaces".into(), None, signed_in),
        (Method::GET, "/v1/workspaces/owned-ws".into(), None, [401, 200, 200, 404, 200]),
        (
            Method::POST,
            "/v1/workspaces".into(),
            Some(json!({"name": "bad name", "base_image": "x"})),
            [401, 422, 422, 422, 422],
        ),
    ];
    let mut wrong = Vec::new();
    for (method, path, body, expected) in &rows {
        for (role, token) in roles.iter().enumerate() {
            let mut req = app.client.request(method.clone(), app.url(path));
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            if let Some(b) = body {
                req = req.json(b);
            }
            let resp = req.send().await.expect("request");
            let status = resp.status();
            if status.as_u16() != expected[role] {
                wrong.push(format!("{method} {path} as {}: {status}, expected {}", names[role], expected[role]));
            }
            if status.is_client_error() {
                let body: Value = resp.json().await.unwrap_or(Value::Null);
                assert!(body["error"]["code"].is_string(), "{method} {path} as {}: error body {body}", names[role]);
            }
        }
    }
    // the page a device sign-in sends the person to (HTML, not /v1): the
    // same for everyone, signed in or not — an unknown code is a 404
    for (role, token) in roles.iter().enumerate() {
        let mut req = app.client.get(app.url("/auth/device?user_code=NONE"));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.expect("request");
        if resp.status() != 404 {
            wrong.push(format!("GET /auth/device as {}: {}, expected 404", names[role], resp.status()));
        }
    }
    // its approval and denial: a form post no other site can make (403
    // without this site's Origin), an unknown code 404 for everyone
    for path in ["/auth/device/approve", "/auth/device/deny"] {
        for (role, token) in roles.iter().enumerate() {
            let mut req = app.client.post(app.url(path)).form(&[("user_code", "BCDF-GHJK")]);
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let expected = if token.is_some() { 404 } else { 403 };
            let resp = req.send().await.expect("request");
            if resp.status() != expected {
                wrong.push(format!("POST {path} as {}: {}, expected {expected}", names[role], resp.status()));
            }
        }
    }
    // the console's server functions that show a job or act for admins,
    // posted as the console posts them (a form); their refusals carry the
    // api.md code at the top of the body
    let console_rows: Vec<FormRow> = vec![
        (app::pages::jobs::JobPanel::PATH, vec![("id", id.to_string())], [401, 200, 200, 404, 200]),
        // each their own places, and nobody else's to ask for
        (app::api::MyStorage::PATH, vec![], [401, 200, 200, 200, 200]),
        // a folder of one's own home, and the datasets page: each their own
        (app::api::ListFolder::PATH, vec![("place", "home".into()), ("path", "".into())], [401, 200, 200, 200, 200]),
        (app::api::ListFolder::PATH, vec![("place", "attic".into()), ("path", "".into())], [401, 404, 404, 404, 404]),
        (app::api::DatasetsPage::PATH, vec![], [401, 200, 200, 200, 200]),
        (
            app::api::admin::AdminForm::PATH,
            vec![("form", "create_lab".into()), ("name", "matrix-lab".into())],
            [401, 403, 403, 403, 200],
        ),
    ];
    for (path, form, expected) in &console_rows {
        for (role, token) in roles.iter().enumerate() {
            let mut req = app.client.post(app.url(path)).form(form);
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let resp = req.send().await.expect("request");
            let status = resp.status();
            if status.as_u16() != expected[role] {
                wrong.push(format!("POST {path} as {}: {status}, expected {}", names[role], expected[role]));
            }
            if status.is_client_error() {
                let body: Value = resp.json().await.unwrap_or(Value::Null);
                assert!(body["code"].is_string(), "POST {path} as {}: error body {body}", names[role]);
            }
        }
    }
    assert!(wrong.is_empty(), "authorization mismatches:\n{}", wrong.join("\n"));
}
