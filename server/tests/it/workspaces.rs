//! Workspaces over /v1: create, status and build log, lab isolation, jobs
//! refused until their workspace is READY, and a READY workspace's jobs
//! run through Apptainer. Apptainer is not packaged for Debian, so these
//! machines have none: the "no Apptainer" path runs for real, and the
//! build/exec path uses `FAKE_APPTAINER`, a stand-in that takes the same
//! command line, writes a dummy image and runs the job without a container.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

const FAKE_APPTAINER: &str = r#"#!/bin/bash
# test stand-in for apptainer: same command line, no container
case "$1" in
  build)
    shift; flags=
    while [[ "$1" == --* ]]; do flags="$flags $1"; shift; done
    echo "fake-apptainer: build$flags as uid $(id -u) $1 from $2"
    cat "$2"
    grep -q '^From: ' "$2" || exit 2
    sleep 0.3
    echo SIF > "$1";;
  exec)
    shift
    echo "fake-apptainer: exec $*"
    while [ $# -gt 0 ] && [[ "$1" != *.sif ]]; do shift; done
    shift
    for v in $(compgen -e); do
      case "$v" in APPTAINERENV_*) export "${v#APPTAINERENV_}=${!v}";; esac
    done
    exec "$@";;
  *) exit 64;;
esac
"#;

async fn workspace(app: &TestApp, token: &str, name: &str) -> Value {
    let resp = app.get(Some(token), &format!("/v1/workspaces/{name}")).await;
    assert_eq!(resp.status(), StatusCode::OK);
    resp.json().await.unwrap()
}

async fn wait_built(app: &TestApp, token: &str, name: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let ws = workspace(app, token, name).await;
        if ws["status"] != "BUILDING" {
            return ws;
        }
        assert!(std::time::Instant::now() < deadline, "workspace {name} never finished building: {ws}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn without_apptainer_a_workspace_fails_with_a_log_that_says_why() {
    let app = TestApp::spawn_local_with(|s| s.executor.apptainer = "/nonexistent/apptainer".into()).await;
    let demo = app.demo_token().await;
    let admin = app.admin_token().await;
    let other = app.researcher(&admin, "kim", "other-lab").await;

    let body = json!({"name": "torch", "base_image": "python:3.11-slim", "packages": ["numpy", "torch==2.4.0"]});
    let resp = app.post(Some(&demo), "/v1/workspaces", body.clone()).await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let created: Value = resp.json().await.unwrap();
    assert_eq!(created["status"], "BUILDING");
    assert_eq!(created["base_image"], "docker://python:3.11-slim");
    assert_eq!(created["packages"], json!(["numpy", "torch==2.4.0"]));
    assert_eq!(created["lab"], "demo-lab");

    let ws = wait_built(&app, &demo, "torch").await;
    assert_eq!(ws["status"], "FAILED", "{ws}");
    let log = ws["build_log"].as_str().unwrap();
    assert!(log.contains("Apptainer is not installed on this server"), "{log}");
    assert!(log.contains("From: python:3.11-slim"), "the log shows the definition: {log}");

    // jobs cannot use it; the message names the field and the state
    let job = json!({"name": "j", "command": "true", "num_gpus": 1, "workspace": "torch"});
    let msg = assert_error(app.submit(&demo, job).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert!(msg.contains("workspace") && msg.contains("FAILED"), "{msg}");
    let job = json!({"name": "j", "command": "true", "num_gpus": 1, "workspace": "nope"});
    let msg = assert_error(app.submit(&demo, job).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert!(msg.contains("no workspace named `nope`"), "{msg}");

    // a FAILED workspace can be created again (rebuilt)
    let resp = app.post(Some(&demo), "/v1/workspaces", body).await;
    assert_eq!(resp.status(), StatusCode::CREATED);

    // another lab neither lists nor reads it, nor can its jobs name it
    let theirs: Value = app.get(Some(&other), "/v1/workspaces").await.json().await.unwrap();
    assert_eq!(theirs, json!([]));
    assert_error(app.get(Some(&other), "/v1/workspaces/torch").await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
    let job = json!({"name": "j", "command": "true", "num_gpus": 1, "workspace": "torch"});
    assert_error(app.submit(&other, job).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    // the owner's lab lists it; admins list every lab's
    let mine: Value = app.get(Some(&demo), "/v1/workspaces").await.json().await.unwrap();
    assert_eq!(mine.as_array().unwrap().len(), 1);
    assert!(mine[0].get("build_log").is_none(), "the list leaves logs out");
    let all: Value = app.get(Some(&admin), "/v1/workspaces").await.json().await.unwrap();
    assert_eq!(all.as_array().unwrap().len(), 1);

    // bad input names its field
    for (bad, field) in [
        (json!({"name": "a b", "base_image": "python:3.11"}), "name"),
        (json!({"name": "x", "base_image": "http://evil/img"}), "base_image"),
        (json!({"name": "x", "base_image": "ubuntu\nFrom: evil"}), "base_image"),
        (json!({"name": "x", "base_image": "python:3.11", "packages": ["numpy; curl evil"]}), "packages"),
    ] {
        let msg = assert_error(
            app.post(Some(&demo), "/v1/workspaces", bad).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
        )
        .await;
        assert!(msg.starts_with(field), "{msg}");
    }
    assert_error(app.get(None, "/v1/workspaces").await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
}

#[tokio::test]
async fn a_ready_workspace_runs_its_jobs_through_apptainer_offline() {
    // the stand-in must be executable by the job's uid (nobody, as root)
    let tools = crate::helpers::shared_tempdir();
    std::fs::set_permissions(tools.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake = tools.path().join("apptainer");
    std::fs::write(&fake, FAKE_APPTAINER).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake_path = fake.display().to_string();
    let app = TestApp::spawn_local_with(move |s| s.executor.apptainer = fake_path).await;
    let demo = app.demo_token().await;

    let resp = app
        .post(
            Some(&demo),
            "/v1/workspaces",
            json!({"name": "np", "base_image": "python:3.11-slim", "packages": ["numpy"]}),
        )
        .await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    // submitting while it builds is refused with the reason
    let job = json!({"name": "in-ws", "command": "echo \"inside LR=$LR id=$JOB_ID\"", "num_gpus": 1, "workspace": "np", "env": {"LR": "0.1"}});
    let msg = assert_error(app.submit(&demo, job.clone()).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert!(msg.contains("still building"), "{msg}");
    let ws = wait_built(&app, &demo, "np").await;
    assert_eq!(ws["status"], "READY", "{}", ws["build_log"].as_str().unwrap_or_default());
    let build_log = ws["build_log"].as_str().unwrap();
    assert!(build_log.contains("pip install --no-cache-dir 'numpy'"), "{ws}");
    // the definition's %post is the researcher's code: never root's
    assert!(build_log.contains("fake-apptainer: build --fakeroot --force as uid "), "{build_log}");
    if nix::unistd::geteuid().is_root() {
        assert!(!build_log.contains("as uid 0 "), "built as the researcher's uid: {build_log}");
        let lab_dir = app.output_root().join(".workspaces/demo-lab");
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&lab_dir), 0o711, "another lab lists nothing");
        assert_eq!(mode(&lab_dir.join("np.build.log")), 0o600, "nor reads the build log");
        assert_eq!(mode(&lab_dir.join("np.sif")), 0o644, "jobs read the image");
        assert_eq!(
            std::fs::metadata(lab_dir.join("np.sif")).map(|m| std::os::unix::fs::MetadataExt::uid(&m)).unwrap(),
            0
        );
    }
    let again = app.post(Some(&demo), "/v1/workspaces", json!({"name": "np", "base_image": "python:3.12"})).await;
    assert_error(again, StatusCode::CONFLICT, "CONFLICT").await;

    let id = app.submit_ok(&demo, job).await["id"].as_i64().unwrap();
    let done = app.wait_state(&demo, id, "COMPLETED").await;
    assert_eq!(done["exit_code"], 0);
    let log = std::fs::read_to_string(app.log_path(id)).unwrap();
    let out = app.output_dir(id).display().to_string();
    assert!(log.contains("in workspace image"), "the header names the image: {log}");
    assert!(
        log.contains(&format!("fake-apptainer: exec --containall --nv --net --network none --bind {out} --pwd {out} ")),
        "contained, offline, only the output dir: {log}"
    );
    assert!(log.contains(&format!("inside LR=0.1 id={id}")), "the job's env reaches the container: {log}");
}

/// W2: a build runs like an attempt — its own PID namespace (nothing it
/// leaves outlives it), no new privileges, none of the server's
/// environment — and its only way out is the proxy to the listed
/// registries: a listed one answers through it, another is refused (and
/// the build log says so), and nothing is reached without it.
#[tokio::test]
async fn a_build_is_contained_and_reaches_only_the_registries() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let answer = |body: &'static str| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut buf = [0u8; 1024];
                let _ = conn.read(&mut buf).await;
                let reply = format!("HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
                let _ = conn.write_all(reply.as_bytes()).await;
            }
        });
        port
    };
    let (registry, other) = (answer("registry").await, answer("elsewhere").await);
    let tools = crate::helpers::shared_tempdir();
    std::fs::set_permissions(tools.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake = tools.path().join("apptainer");
    let script = format!(
        r#"#!/bin/bash
[ "$1" = build ] || exit 64
echo "pid $$"
grep NoNewPrivs /proc/self/status
cat /proc/self/cgroup
echo "server env: ${{CARGO_MANIFEST_DIR:-none}}"
echo "registry: $(curl -s --max-time 5 --proxytunnel -x "$HTTPS_PROXY" http://127.0.0.1:{registry}/)"
echo "other: $(curl -s -o /dev/null -w '%{{http_connect}}' --max-time 5 --proxytunnel -x "$HTTPS_PROXY" http://127.0.0.1:{other}/)"
echo "direct: $(curl -s -o /dev/null -w '%{{http_code}}' --max-time 5 --noproxy '*' http://127.0.0.1:{registry}/)"
setsid sleep 1234.5 &
echo SIF > image.sif
"#
    );
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake_path = fake.display().to_string();
    let app = TestApp::spawn_local_with(move |s| {
        s.executor.apptainer = fake_path;
        s.workspaces.registries = vec![format!("127.0.0.1:{registry}")];
    })
    .await;
    let demo = app.demo_token().await;
    let resp =
        app.post(Some(&demo), "/v1/workspaces", json!({"name": "boxed", "base_image": "python:3.11-slim"})).await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let ws = wait_built(&app, &demo, "boxed").await;
    let log = ws["build_log"].as_str().unwrap_or_default().to_string();
    assert_eq!(ws["status"], "READY", "{log}");
    for expected in [
        "its only way out is a proxy to the package registries",
        "pid 1\n",
        "NoNewPrivs:\t1",
        "-build-demo-lab-boxed",
        "server env: none",
        "registry: registry",
        "other: 403",
        "direct: 000",
        &format!("connection to 127.0.0.1:{other} was refused: not a package registry"),
    ] {
        assert!(log.contains(expected), "`{expected}` in the build log:\n{log}");
    }
    // what the build left running went with it
    let leftovers: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("1234.5"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A build that leaves a link where its image should be (to a file of
/// root's) gets no image, and root never changes the link's target: its
/// owner and mode stay (root once chowned and chmodded it by path).
#[tokio::test]
async fn a_build_that_leaves_a_link_for_its_image_changes_nothing_of_roots() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let tools = crate::helpers::shared_tempdir();
    std::fs::set_permissions(tools.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let canary = tools.path().join("roots-secret");
    std::fs::write(&canary, "secret").unwrap();
    std::fs::set_permissions(&canary, std::fs::Permissions::from_mode(0o600)).unwrap();
    let fake = tools.path().join("apptainer");
    let script = format!("#!/bin/bash\n[ \"$1\" = build ] || exit 64\nln -s {} image.sif\n", canary.display());
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake_path = fake.display().to_string();
    let app = TestApp::spawn_local_with(move |s| s.executor.apptainer = fake_path).await;
    let demo = app.demo_token().await;
    let resp = app.post(Some(&demo), "/v1/workspaces", json!({"name": "sly", "base_image": "python:3.11-slim"})).await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let ws = wait_built(&app, &demo, "sly").await;
    assert_eq!(ws["status"], "FAILED", "{ws}");
    assert!(ws["build_log"].as_str().unwrap_or_default().contains("no plain image file"), "{ws}");
    let meta = std::fs::metadata(&canary).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "root's file keeps its mode");
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), 0, "and its owner");
}
