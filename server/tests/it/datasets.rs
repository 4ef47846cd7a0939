//! #43: datasets and data requests: a researcher asks for data by URL, an
//! admin approves, the platform fetches it from a real HTTP server on
//! loopback (the site lets fetches reach its own network here), checks
//! its checksum and unpacks a hostile archive without letting anything
//! out; the lab's jobs see it read-only, another lab's do not; the
//! requester hears of each step.

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use axum::response::IntoResponse;
use reqwest::StatusCode;
use serde_json::{json, Value};
use sha2::Digest;

use crate::helpers::{assert_error, storage_root_for, TestApp};

fn as_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A tar.gz with a good file, a climbing name and a link to a secret.
fn hostile_archive() -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    let mut add = |name: &[u8], kind: tar::EntryType, data: &[u8], link: Option<&str>| {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        h.set_entry_type(kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        if let Some(l) = link {
            h.set_link_name(l).unwrap();
        }
        h.set_cksum();
        builder.append(&h, data).unwrap();
    };
    add(b"good/data.txt", tar::EntryType::Regular, b"pixels", None);
    add(b"../escaped.txt", tar::EntryType::Regular, b"out", None);
    add(b"good/secret", tar::EntryType::Symlink, b"", Some("/etc/shadow"));
    builder.into_inner().unwrap().finish().unwrap()
}

type Heard = std::sync::Arc<std::sync::Mutex<Vec<Value>>>;

/// A real HTTP server on loopback: the archive, a redirect to it, and a
/// webhook receiver that keeps what it is sent.
async fn data_server(archive: Vec<u8>) -> (String, Heard) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let heard = Heard::default();
    let keep = heard.clone();
    let app = axum::Router::new()
        .route("/set.tar.gz", axum::routing::get(move || async move { archive.clone().into_response() }))
        .route("/moved", axum::routing::get(|| async { axum::response::Redirect::temporary("/set.tar.gz") }))
        .route(
            "/hook",
            axum::routing::post(move |axum::Json(body): axum::Json<Value>| async move {
                keep.lock().unwrap().push(body);
                StatusCode::NO_CONTENT
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, heard)
}

async fn request(app: &TestApp, token: &str, name: &str, url: &str, sha: Option<&str>) -> i64 {
    let resp = app
        .post(
            Some(token),
            "/v1/data-requests",
            json!({"name": name, "url": url, "sha256": sha, "reason": "for the paper"}),
        )
        .await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["state"], "OPEN");
    body["id"].as_i64().unwrap()
}

async fn request_state(app: &TestApp, token: &str, id: i64) -> Value {
    let all: Value = app.get(Some(token), "/v1/data-requests").await.json().await.unwrap();
    all["requests"].as_array().unwrap().iter().find(|r| r["id"] == id).cloned().unwrap_or(Value::Null)
}

async fn wait_request(app: &TestApp, token: &str, id: i64, state: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let r = request_state(app, token, id).await;
        if r["state"] == state {
            return r;
        }
        assert!(std::time::Instant::now() < deadline, "request {id} never {state}: {r}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_requested_archive_is_fetched_checked_unpacked_and_shown_only_to_its_lab() {
    if !as_root() {
        return;
    }
    let app = TestApp::spawn_local_with(|s| {
        s.executor.uid_range = "3102300-3102399".into();
        s.storage.fetch_private_addresses = true;
        s.notify.webhook_allow = vec!["127.0.0.1".into()];
    })
    .await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    assert_eq!(
        app.post(Some(&admin), "/v1/admin/labs", json!({"name": "other-lab"})).await.status(),
        StatusCode::CREATED
    );
    let stranger = app.researcher(&admin, "stranger", "other-lab").await;
    let archive = hostile_archive();
    let sha: String = sha2::Sha256::digest(&archive).iter().map(|b| format!("{b:02x}")).collect();
    let (server, heard) = data_server(archive).await;
    let hook = json!({"webhook_url": format!("{server}/hook")});
    let put = app.client.put(app.url("/v1/me/notifications")).bearer_auth(&demo).json(&hook);
    assert_eq!(put.send().await.unwrap().status(), StatusCode::OK);

    // asked for by URL (through a redirect), approved, fetched, unpacked
    let id = request(&app, &demo, "scans", &format!("{server}/moved"), Some(&sha)).await;
    assert_eq!(request_state(&app, &stranger, id).await, Value::Null, "another lab's request is not listed");
    for who in [&demo, &stranger] {
        let refused = app.post(Some(who), &format!("/v1/admin/data-requests/{id}/approve"), json!({})).await;
        assert_error(refused, StatusCode::FORBIDDEN, "FORBIDDEN").await;
    }
    let approved = app.post(Some(&admin), &format!("/v1/admin/data-requests/{id}/approve"), json!({})).await;
    assert_eq!(approved.status(), StatusCode::OK);
    let ready = wait_request(&app, &demo, id, "READY").await;
    assert_eq!(ready["decided_by"], "admin");
    let twice = app.post(Some(&admin), &format!("/v1/admin/data-requests/{id}/approve"), json!({})).await;
    assert_error(twice, StatusCode::CONFLICT, "CONFLICT").await;

    let mine: Value = app.get(Some(&demo), "/v1/datasets").await.json().await.unwrap();
    let scans = &mine["datasets"][0];
    assert_eq!((scans["name"].as_str(), scans["state"].as_str()), (Some("scans"), Some("READY")), "{mine}");
    assert_eq!(scans["labs"], json!(["demo-lab"]));
    assert_eq!(scans["sha256"], sha.as_str());
    assert!(scans.get("fetch_log").is_none(), "the log is the admins'");
    let theirs: Value = app.get(Some(&stranger), "/v1/datasets").await.json().await.unwrap();
    assert_eq!(theirs["datasets"], json!([]), "not open to another lab");
    let all: Value = app.get(Some(&admin), "/v1/datasets").await.json().await.unwrap();
    let log = all["datasets"][0]["fetch_log"].as_str().unwrap();
    assert!(log.contains("../escaped.txt") && log.contains("symbolic link"), "skips are named: {log}");

    let root = storage_root_for(app.dir.path());
    assert!(!root.join("escaped.txt").exists() && !root.join("datasets/escaped.txt").exists());
    let kept = root.join("datasets/.store/scans");
    assert!(std::fs::symlink_metadata(kept.join("good/secret")).is_err(), "no link made");
    let store = std::fs::metadata(root.join("datasets/.store")).unwrap();
    assert_eq!(store.mode() & 0o777, 0o711, "the store is passable, not listable");
    let folder = std::fs::metadata(&kept).unwrap();
    assert_eq!((folder.uid(), folder.mode() & 0o007), (0, 0), "nobody else reaches a dataset by guessing its name");
    let file = app.get(Some(&demo), "/v1/datasets/scans/files/good/data.txt").await;
    assert_eq!(file.text().await.unwrap(), "pixels");
    assert_error(
        app.get(Some(&stranger), "/v1/datasets/scans/files/good/data.txt").await,
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
    )
    .await;

    // jobs: the lab's reads it and cannot write; another lab's sees nothing
    let script = "cat \"$JPU_DATASETS/scans/good/data.txt\"; echo; touch \"$JPU_DATASETS/scans/new\" && echo WROTE; touch \"$JPU_DATASETS/new\" && echo WROTE-TOP; ls \"$JPU_DATASETS\"";
    let job = app.run_job(&demo, "reads-data", script).await;
    let out = std::fs::read_to_string(app.log_path(job)).unwrap();
    assert!(out.contains("pixels") && !out.contains("WROTE"), "read-only to its lab: {out}");
    let peek = format!(
        "ls \"$JPU_DATASETS\"; cat \"$JPU_DATASETS/scans/good/data.txt\" && echo SAW; cat {}/good/data.txt && echo SAW-HOST; true",
        kept.display()
    );
    let job = app.run_job(&stranger, "peeks", &peek).await;
    let out = std::fs::read_to_string(app.log_path(job)).unwrap();
    assert!(!out.contains("SAW") && !out.contains("pixels"), "another lab's job sees nothing: {out}");

    // a wrong checksum fails the fetch and says why; a rejection says why
    let bad = request(&app, &demo, "scans-bad", &format!("{server}/set.tar.gz"), Some(&"0".repeat(64))).await;
    app.post(Some(&admin), &format!("/v1/admin/data-requests/{bad}/approve"), json!({})).await;
    let failed = wait_request(&app, &demo, bad, "FAILED").await;
    assert!(failed["message"].as_str().unwrap().contains("SHA-256"), "{failed}");
    let no = request(&app, &demo, "not-this", &format!("{server}/set.tar.gz"), None).await;
    let rejected =
        app.post(Some(&admin), &format!("/v1/admin/data-requests/{no}/reject"), json!({"reason": "licence"})).await;
    assert_eq!(rejected.status(), StatusCode::OK);
    let rejected = request_state(&app, &demo, no).await;
    assert_eq!((rejected["state"].as_str(), rejected["decision_reason"].as_str()), (Some("REJECTED"), Some("licence")));
    for (body, field) in [
        (json!({"name": "x", "url": "file:///etc/passwd", "reason": "r"}), "http"),
        (json!({"name": "../x", "url": "https://e.org/a", "reason": "r"}), "name"),
        (json!({"name": "x", "url": "https://e.org/a", "sha256": "zz", "reason": "r"}), "sha256"),
    ] {
        let resp = app.post(Some(&demo), "/v1/data-requests", body).await;
        let message = assert_error(resp, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
        assert!(message.contains(field), "{message}");
    }

    // the requester heard of each decision and of the data being ready
    let wanted = ["scans:APPROVED", "scans:READY", "scans-bad:APPROVED", "scans-bad:FAILED", "not-this:REJECTED"];
    let states = || -> Vec<String> {
        let heard = heard.lock().unwrap();
        let request = |b: &Value| {
            format!("{}:{}", b["data_request"]["name"].as_str()?, b["data_request"]["state"].as_str()?).into()
        };
        heard.iter().filter_map(request).collect()
    };
    app.wait_until(&format!("webhooks {wanted:?}"), || {
        let heard = states();
        async move { wanted.iter().all(|w| heard.iter().any(|h| h == w)) }
    })
    .await;
    let deliveries: Value = app.get(Some(&demo), "/v1/me/notifications/deliveries").await.json().await.unwrap();
    assert_eq!(deliveries["deliveries"][0]["event"], "data_request", "{deliveries}");

    // not deleted while a job of a lab it is open to runs
    let long = app.submit_ok(&demo, json!({"name": "long", "command": "sleep 60", "num_gpus": 1})).await;
    let long = long["id"].as_i64().unwrap();
    app.wait_state(&demo, long, "RUNNING").await;
    assert_error(app.delete(&admin, "/v1/admin/datasets/scans").await, StatusCode::CONFLICT, "CONFLICT").await;
    app.cancel(&demo, long).await;
    app.wait_state(&demo, long, "CANCELLED").await;
    assert_eq!(app.delete(&admin, "/v1/admin/datasets/scans").await.status(), StatusCode::NO_CONTENT);
    assert!(!kept.exists(), "its files went with it");
}

/// A folder an admin registers is used as it is, read-only, by the labs
/// it is opened to; opened to every lab, another lab's job sees it too.
#[tokio::test]
async fn a_registered_folder_is_read_only_to_the_labs_it_is_open_to() {
    if !as_root() {
        return;
    }
    let app = TestApp::spawn_local_with(|s| s.executor.uid_range = "3102400-3102499".into()).await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let folder = storage_root_for(app.dir.path()).with_extension("corpus");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("words.txt"), "lexicon").unwrap();
    for (body, field) in [
        (json!({"name": "corpus", "source": {"path": "relative/dir"}}), "source.path"),
        (json!({"name": "corpus", "source": {"path": "/no/such/folder"}}), "source.path"),
        (json!({"name": "corpus", "labs": ["no-lab"], "source": {"path": folder}}), "labs"),
        (json!({"name": ".hidden", "source": {"path": folder}}), "name"),
    ] {
        let resp = app.post(Some(&admin), "/v1/admin/datasets", body).await;
        let message = assert_error(resp, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
        assert!(message.contains(field), "{message}");
    }
    let made = app
        .post(
            Some(&admin),
            "/v1/admin/datasets",
            json!({"name": "corpus", "labs": ["demo-lab"], "source": {"path": folder}}),
        )
        .await;
    assert_eq!(made.status(), StatusCode::CREATED);
    let again =
        app.post(Some(&admin), "/v1/admin/datasets", json!({"name": "corpus", "source": {"path": folder}})).await;
    assert_error(again, StatusCode::CONFLICT, "CONFLICT").await;
    let job = app
        .run_job(
            &demo,
            "reads",
            "cat \"$JPU_DATASETS/corpus/words.txt\"; echo x > \"$JPU_DATASETS/corpus/words.txt\" && echo WROTE; true",
        )
        .await;
    let out = std::fs::read_to_string(app.log_path(job)).unwrap();
    assert!(out.contains("lexicon") && !out.contains("WROTE"), "{out}");
    assert_eq!(std::fs::read_to_string(folder.join("words.txt")).unwrap(), "lexicon");
    let listing: Value = app.get(Some(&demo), "/v1/datasets/corpus/files/").await.json().await.unwrap();
    assert_eq!(listing["entries"][0]["name"], "words.txt");
    assert_eq!(
        app.post(Some(&admin), "/v1/admin/labs", json!({"name": "other-lab"})).await.status(),
        StatusCode::CREATED
    );
    let stranger = app.researcher(&admin, "stranger", "other-lab").await;
    let peek = "ls \"$JPU_DATASETS\"/corpus && echo SAW; true";
    let out = std::fs::read_to_string(app.log_path(app.run_job(&stranger, "peek", peek).await)).unwrap();
    assert!(!out.contains("SAW"), "{out}");
    let opened = app.patch(&admin, "/v1/admin/datasets/corpus", json!({"labs": null})).await;
    assert_eq!(opened.status(), StatusCode::OK);
    let body: Value = opened.json().await.unwrap();
    assert_eq!(body["labs"], Value::Null, "open to every lab");
    let out = std::fs::read_to_string(app.log_path(app.run_job(&stranger, "peek-again", peek).await)).unwrap();
    assert!(out.contains("words.txt") && out.contains("SAW"), "{out}");
    let _ = std::fs::remove_dir_all(&folder);
}

/// #43 on Slurm: no mount namespace of ours there, so a job finds its
/// lab's datasets in its lab's view (links), each fetched folder readable
/// by the people of the labs it is open to and nobody else; closing it
/// to the lab takes it away, by the view and by the folder's path alike.
#[tokio::test]
async fn on_slurm_a_job_reads_its_labs_datasets_and_no_others() {
    let _cluster = crate::slurm::CLUSTER.lock().await;
    let Some(app) = TestApp::spawn_slurm_with(|s| s.storage.fetch_private_addresses = true).await else { return };
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    assert_eq!(
        app.post(Some(&admin), "/v1/admin/labs", json!({"name": "other-lab"})).await.status(),
        StatusCode::CREATED
    );
    let (server, _) = data_server(hostile_archive()).await;
    for (name, lab) in [("pixels", "demo-lab"), ("secret-set", "other-lab")] {
        let body = json!({"name": name, "labs": [lab], "source": {"url": format!("{server}/set.tar.gz")}});
        assert_eq!(app.post(Some(&admin), "/v1/admin/datasets", body).await.status(), StatusCode::CREATED);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let all: Value = app.get(Some(&admin), "/v1/datasets").await.json().await.unwrap();
        let states: Vec<&str> =
            all["datasets"].as_array().unwrap().iter().filter_map(|d| d["state"].as_str()).collect();
        if states.len() == 2 && states.iter().all(|s| *s == "READY") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "fetched: {all}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let store = storage_root_for(app.dir.path()).join("datasets/.store");
    let script = format!(
        "echo \"view=$JPU_DATASETS\"; echo \"listed: $(ls \"$JPU_DATASETS\" | tr '\\n' ' ')\"\n\
         cat \"$JPU_DATASETS/pixels/good/data.txt\" && echo\n\
         cat {store}/pixels/good/data.txt >/dev/null 2>&1 && echo BY-PATH\n\
         ls {store}/secret-set >/dev/null 2>&1 && echo SAW-OTHER || echo other-refused\n\
         ls {store} >/dev/null 2>&1 && echo LISTED-STORE || echo store-unlisted",
        store = store.display()
    );
    let job =
        app.submit_ok(&demo, json!({"name": "reads", "command": script, "num_gpus": 1})).await["id"].as_i64().unwrap();
    app.wait_state(&demo, job, "COMPLETED").await;
    let log = std::fs::read_to_string(app.log_path(job)).unwrap();
    let view = storage_root_for(app.dir.path()).join("datasets/.labs/demo-lab");
    assert!(log.contains(&format!("view={}", view.display())), "{log}");
    assert!(log.contains("listed: pixels \n") || log.contains("listed: pixels "), "only its lab's: {log}");
    assert!(!log.contains("secret-set "), "{log}");
    assert!(log.contains("pixels\n") && log.contains("BY-PATH"), "its lab's dataset reads: {log}");
    assert!(log.contains("other-refused") && log.contains("store-unlisted"), "{log}");

    // closed to demo-lab: gone from the view and refused by path
    let closed = app.patch(&admin, "/v1/admin/datasets/pixels", json!({"labs": ["other-lab"]})).await;
    assert_eq!(closed.status(), StatusCode::OK);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while view.join("pixels").symlink_metadata().is_ok() {
        assert!(std::time::Instant::now() < deadline, "the view still links it");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let again = format!(
        "cat \"$JPU_DATASETS/pixels/good/data.txt\" 2>/dev/null && echo IN-VIEW\n\
         cat {store}/pixels/good/data.txt 2>/dev/null && echo STILL-BY-PATH; echo checked",
        store = store.display()
    );
    let job =
        app.submit_ok(&demo, json!({"name": "again", "command": again, "num_gpus": 1})).await["id"].as_i64().unwrap();
    app.wait_state(&demo, job, "COMPLETED").await;
    let log = std::fs::read_to_string(app.log_path(job)).unwrap();
    assert!(log.contains("checked") && !log.contains("IN-VIEW") && !log.contains("STILL-BY-PATH"), "{log}");
}
