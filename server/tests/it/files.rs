//! #43: files through the site (`/v1/files`), as the person: in and out
//! of a home and a lab share, what a job then finds, and what an attacker
//! tries — links a job plants, `..`, another lab, a file the person may
//! not read, uploads past the limit and the quota.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_error, client, storage_root_for, TestApp};

fn as_root() -> bool {
    nix::unistd::geteuid().is_root()
}

async fn local(first_uid: u32, change: impl FnOnce(&mut jpu_share::config::Settings)) -> TestApp {
    TestApp::spawn_local_with(|s| {
        s.executor.uid_range = format!("{first_uid}-{}", first_uid + 99);
        change(s);
    })
    .await
}

fn storage(app: &TestApp) -> PathBuf {
    storage_root_for(app.dir.path())
}

async fn put(app: &TestApp, token: &str, path: &str, body: impl Into<reqwest::Body>) -> reqwest::Response {
    client().put(app.url(&format!("/v1/files/{path}"))).bearer_auth(token).body(body).send().await.unwrap()
}

async fn get(app: &TestApp, token: &str, path: &str) -> reqwest::Response {
    app.get(Some(token), &format!("/v1/files/{path}")).await
}

async fn delete(app: &TestApp, token: &str, path: &str) -> reqwest::Response {
    client().delete(app.url(&format!("/v1/files/{path}"))).bearer_auth(token).send().await.unwrap()
}

async fn names(app: &TestApp, token: &str, path: &str) -> Vec<(String, String)> {
    let resp = get(app, token, path).await;
    assert_eq!(resp.status(), StatusCode::OK, "{path}");
    let body: Value = resp.json().await.unwrap();
    body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap().to_string(), e["kind"].as_str().unwrap().to_string()))
        .collect()
}

/// Uploaded, listed, read whole and in part, a folder made and removed:
/// each file is the person's on disk, the next job finds it in `$HOME`,
/// a colleague reads what went to the lab share and never the home.
#[tokio::test]
async fn files_go_in_and_out_as_the_person_and_jobs_find_them() {
    if !as_root() {
        return;
    }
    let app = local(3_102_000, |_| {}).await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let colleague = app.researcher(&admin, "colleague", "demo-lab").await;

    assert_eq!(put(&app, &demo, "home/notes.txt", "hello from the site").await.status(), StatusCode::CREATED);
    let on_disk = storage(&app).join("home/demo/notes.txt");
    let meta = std::fs::metadata(&on_disk).unwrap();
    let id = app.run_job(&demo, "reads", "cat \"$HOME/notes.txt\"; id -u").await;
    let log = std::fs::read_to_string(app.log_path(id)).unwrap();
    assert!(log.contains("hello from the site"), "{log}");
    assert!(log.contains(&meta.uid().to_string()), "the file is the uid the job runs as: {log}");
    assert_eq!(meta.mode() & 0o777, 0o600, "the person's alone");

    let top = names(&app, &demo, "home/").await;
    assert!(top.contains(&("notes.txt".into(), "file".into())), "{top:?}");
    assert_eq!(names(&app, &demo, "home").await, top, "with or without the slash");

    let part = client()
        .get(app.url("/v1/files/home/notes.txt"))
        .bearer_auth(&demo)
        .header("range", "bytes=6-9")
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.headers()["content-range"], "bytes 6-9/19");
    assert_eq!(part.text().await.unwrap(), "from");
    let past = client()
        .get(app.url("/v1/files/home/notes.txt"))
        .bearer_auth(&demo)
        .header("range", "bytes=19-")
        .send()
        .await
        .unwrap();
    assert_error(past, StatusCode::RANGE_NOT_SATISFIABLE, "RANGE_NOT_SATISFIABLE").await;
    let whole = get(&app, &demo, "home/notes.txt").await;
    assert_eq!(whole.headers()["content-type"], "application/octet-stream");
    assert!(whole.headers()["content-disposition"].to_str().unwrap().starts_with("attachment"));
    assert_eq!(whole.text().await.unwrap(), "hello from the site");

    let made = client().post(app.url("/v1/files/home/runs/?mkdir")).bearer_auth(&demo).send().await.unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    let again = client().post(app.url("/v1/files/home/runs?mkdir")).bearer_auth(&demo).send().await.unwrap();
    assert_error(again, StatusCode::CONFLICT, "CONFLICT").await;
    let no_flag = client().post(app.url("/v1/files/home/other")).bearer_auth(&demo).send().await.unwrap();
    assert_error(no_flag, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert_eq!(put(&app, &demo, "home/runs/a.bin", vec![7u8; 1000]).await.status(), StatusCode::CREATED);
    assert_error(put(&app, &demo, "home/missing/a.bin", "x").await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
    assert_error(delete(&app, &demo, "home/runs").await, StatusCode::CONFLICT, "CONFLICT").await;
    assert_eq!(delete(&app, &demo, "home/runs/a.bin").await.status(), StatusCode::NO_CONTENT);
    assert_eq!(delete(&app, &demo, "home/runs").await.status(), StatusCode::NO_CONTENT);
    assert_error(get(&app, &demo, "home/runs").await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
    assert_error(get(&app, &demo, "attic/x").await, StatusCode::NOT_FOUND, "NOT_FOUND").await;

    // the lab share: a colleague reads it and adds to it; the home stays shut
    assert_eq!(put(&app, &demo, "lab/results.csv", "a,b\n1,2\n").await.status(), StatusCode::CREATED);
    assert_eq!(get(&app, &colleague, "lab/results.csv").await.text().await.unwrap(), "a,b\n1,2\n");
    assert_eq!(put(&app, &colleague, "lab/more.csv", "c\n").await.status(), StatusCode::CREATED);
    let share = std::fs::metadata(storage(&app).join("labs/demo-lab")).unwrap();
    assert_eq!(std::fs::metadata(storage(&app).join("labs/demo-lab/more.csv")).unwrap().gid(), share.gid());
    assert!(names(&app, &colleague, "home/").await.is_empty(), "the colleague's own home, empty");
    // uploads and deletes count at once
    let mine: Value = app.get(Some(&demo), "/v1/me/storage").await.json().await.unwrap();
    assert!(mine["home"]["used_bytes"].as_u64().unwrap() >= 19, "{mine}");
}

/// Links a job leaves in its home are listed as links and never followed
/// (to a file or folder of the system, as the last component or in the
/// middle); a fifo is refused without waiting; a file of root's in the
/// home stays unread (the helper is the person); `..` and absolute paths
/// are refused; a link is deleted as itself.
#[tokio::test]
async fn what_a_job_plants_is_never_followed_and_nothing_is_read_as_root() {
    if !as_root() {
        return;
    }
    let app = local(3_102_100, |_| {}).await;
    let demo = app.demo_token().await;
    let plant = "ln -s /etc \"$HOME/etc\" && ln -s /etc/shadow \"$HOME/shadow\" && mkfifo \"$HOME/pipe\" && mkdir \"$HOME/d\" && ln -s .. \"$HOME/d/up\"";
    let id = app.run_job(&demo, "plant", plant).await;
    let log = std::fs::read_to_string(app.log_path(id)).unwrap();
    let secret = storage(&app).join("home/demo/root-only");
    std::fs::write(&secret, "root's").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();

    let top = names(&app, &demo, "home/").await;
    for link in ["etc", "shadow"] {
        assert!(top.contains(&(link.to_string(), "link".to_string())), "{top:?} ({log})");
    }
    for path in ["home/etc", "home/etc/passwd", "home/shadow", "home/d/up", "home/d/up/etc/passwd", "home/pipe"] {
        let resp = get(&app, &demo, path).await;
        assert_error(resp, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    }
    // sent as they are (a client library would resolve the dots first)
    for path in [
        "home/../../etc/passwd",
        "home/%2e%2e/%2e%2e/etc/passwd",
        "home//etc/passwd",
        "home/d/./up",
        "home/..%2f..%2fetc",
    ] {
        let (status, answer) = raw(&app, "GET", &demo, &format!("/v1/files/{path}"), &[]).await;
        assert_eq!(status, 422, "{path}: {answer}");
    }
    let (status, _) = raw(&app, "DELETE", &demo, "/v1/files/home/.", &[]).await;
    assert_eq!(status, 422);
    assert_error(get(&app, &demo, "home/root-only").await, StatusCode::FORBIDDEN, "FORBIDDEN").await;
    // an upload through a planted link lands nowhere outside
    assert_error(put(&app, &demo, "home/etc/evil", "x").await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert!(!std::path::Path::new("/etc/evil").exists());
    // replacing a link by an upload replaces the link, not its target
    assert_eq!(put(&app, &demo, "home/shadow", "mine").await.status(), StatusCode::CREATED);
    assert!(std::fs::symlink_metadata(storage(&app).join("home/demo/shadow")).unwrap().is_file());
    assert_eq!(delete(&app, &demo, "home/etc").await.status(), StatusCode::NO_CONTENT);
    assert!(std::path::Path::new("/etc/passwd").exists(), "the link went, not what it pointed at");
    assert!(!delete(&app, &demo, "home/").await.status().is_success());
    assert!(storage(&app).join("home/demo").is_dir());
}

/// `storage.max_upload_mb` at its edge: exactly the limit is taken, one
/// byte more is `TOO_LARGE` (declared or streamed without a length) and
/// leaves no file, not even a partial one; a home at its quota refuses the
/// next upload with `QUOTA_EXCEEDED`; a disabled person is refused.
#[tokio::test]
async fn uploads_past_the_limit_or_the_quota_leave_nothing_behind() {
    if !as_root() {
        return;
    }
    let app = local(3_102_200, |s| {
        s.storage.max_upload_mb = 1;
        s.storage.home_quota_gb = 0.0025;
    })
    .await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let limit = 1_000_000usize;
    assert_eq!(put(&app, &demo, "home/edge.bin", vec![1u8; limit]).await.status(), StatusCode::CREATED);
    let over = put(&app, &demo, "home/over.bin", vec![1u8; limit + 1]).await;
    assert_error(over, StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE").await;
    // no Content-Length: cut off as it streams
    let chunks = vec![vec![b'z'; 100_000]; 11];
    let (status, answer) = raw(&app, "PUT", &demo, "/v1/files/home/streamed.bin", &chunks).await;
    assert_eq!(status, 413, "{answer}");
    assert!(answer.contains("TOO_LARGE"), "{answer}");
    let left: Vec<String> = std::fs::read_dir(storage(&app).join("home/demo"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["edge.bin".to_string()], "no partial upload is left");

    // 2.5 MB quota: the second MB fits, the third passes the quota
    assert_eq!(put(&app, &demo, "home/two.bin", vec![1u8; limit]).await.status(), StatusCode::CREATED);
    let third = put(&app, &demo, "home/three.bin", vec![1u8; limit]).await;
    let message = assert_error(third, StatusCode::CONFLICT, "QUOTA_EXCEEDED").await;
    assert!(message.contains("home") && message.contains("2500000"), "{message}");
    assert!(!storage(&app).join("home/demo/three.bin").exists());
    // a replacement counts what it replaces: the same size fits
    assert_eq!(put(&app, &demo, "home/two.bin", vec![3u8; limit]).await.status(), StatusCode::CREATED);

    // a sparse file a job makes frees nothing but its blocks: deleting it
    // does not lift the quota
    app.run_job(&demo, "sparse", "truncate -s 100G \"$HOME/sparse\"").await;
    let used = |v: Value| v["home"]["used_bytes"].as_u64().unwrap();
    let before = used(app.get(Some(&demo), "/v1/me/storage").await.json().await.unwrap());
    assert_eq!(delete(&app, &demo, "home/sparse").await.status(), StatusCode::NO_CONTENT);
    let after = used(app.get(Some(&demo), "/v1/me/storage").await.json().await.unwrap());
    assert!(after + 8192 >= before && after >= 2_000_000, "{before} → {after}");

    let patched = app.patch(&admin, "/v1/admin/users/demo", json!({"disabled": true})).await;
    assert_eq!(patched.status(), StatusCode::OK);
    assert_error(get(&app, &demo, "home/").await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
}

/// A request sent byte for byte (no client resolves its dots), its body
/// in `chunks` (`Transfer-Encoding: chunked`, no length declared, as a
/// stream is sent): the status and the answer's text.
async fn raw(app: &TestApp, method: &str, token: &str, path: &str, chunks: &[Vec<u8>]) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = app.base.trim_start_matches("http://").trim_end_matches('/').to_string();
    let mut stream = tokio::net::TcpStream::connect(addr.as_str()).await.unwrap();
    let body = if chunks.is_empty() { "" } else { "Transfer-Encoding: chunked\r\n" };
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n{body}Connection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    if !chunks.is_empty() {
        for chunk in chunks {
            // the server may stop reading once it has refused the upload
            if stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes()).await.is_err()
                || stream.write_all(chunk).await.is_err()
                || stream.write_all(b"\r\n").await.is_err()
            {
                break;
            }
        }
        let _ = stream.write_all(b"0\r\n\r\n").await;
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, text)
}
