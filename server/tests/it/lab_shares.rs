//! Lab shares under the directory's gids (policy §13): a lab's share is
//! group-owned by its lab group's `gidNumber` in the university's
//! directory, the group the site's nodes give every member's job, so a
//! Slurm job reaches its lab's share as a local one does. A lab holding
//! that gid from the platform's range moves off it, and a share that
//! changes group keeps what members made there.

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::directory::slapd;
use crate::helpers::*;

async fn directory_token(app: &TestApp, user: &str) -> String {
    let resp = app.create_token(user, &format!("{user}-directory-secret")).await;
    assert_eq!(resp.status(), StatusCode::CREATED, "{user} signs in with the directory's password");
    resp.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_string()
}

async fn log_of(app: &TestApp, token: &str, name: &str, script: &str) -> String {
    let job = app.submit_ok(token, json!({"name": name, "command": script, "num_gpus": 1})).await;
    let id = job["id"].as_i64().unwrap();
    app.wait_state(token, id, "COMPLETED").await;
    std::fs::read_to_string(app.log_path(id)).unwrap()
}

fn gid(path: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(path).map(|m| m.gid()).unwrap_or(u32::MAX)
}

#[tokio::test]
async fn a_labs_share_takes_its_directory_groups_gid_and_keeps_its_files() {
    let Some(slapd) = slapd().await else { return };
    if !nix::unistd::geteuid().is_root() {
        eprintln!("not root: shares keep the server's own group; skipping");
        return;
    }
    let secrets = tempfile::tempdir().unwrap();
    let mut ldap = slapd.settings(secrets.path());
    ldap.recheck_seconds = 0;
    // the two seeded labs 29998 and 29999, vision 30000, third 30001 from
    // the platform's range; the directory's gpu-lab-vision is 30001
    let app = TestApp::spawn_local_with(|s| {
        s.directory.ldap = ldap;
        s.storage.lab_gid_range = "29998-30002".into();
    })
    .await;
    let admin = app.admin_token().await;
    let local = app.researcher(&admin, "vlocal", "vision").await;
    let third = app.researcher(&admin, "thirdone", "third").await;
    let log = log_of(&app, &local, "old", "echo old > \"$LAB_DIR/old.txt\" && stat -c group=%g \"$LAB_DIR\"").await;
    assert!(log.contains("group=30000"), "the platform's gid first: {log}");
    let labs = storage_root_for(app.dir.path()).join("labs");
    let share = labs.join("vision");
    assert_eq!(gid(&share.join("old.txt")), 30000);

    // third's running job carries 30001: vision waits for it to end
    let holding = "echo started; while [ ! -e \"$LAB_DIR/stop\" ]; do sleep 0.1; done";
    let job = app.submit_ok(&third, json!({"name": "holds", "command": holding, "num_gpus": 1})).await;
    let held = job["id"].as_i64().unwrap();
    app.wait_state(&third, held, "RUNNING").await;
    let _ = directory_token(&app, "kim").await;
    let audit = app.get(Some(&admin), "/v1/admin/audit").await.text().await.unwrap();
    assert!(!audit.contains("lab.update"), "no gid moved while third's job runs: {audit}");
    std::fs::write(labs.join("third/stop"), "").unwrap();
    app.wait_state(&third, held, "COMPLETED").await;

    // kim's next sign-in brings the directory's gid: third moves off it
    let kim = directory_token(&app, "kim").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while gid(&share) != 30001 || gid(&share.join("old.txt")) != 30001 {
        assert!(Instant::now() < deadline, "the share and its files take 30001: {}", gid(&share.join("old.txt")));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let audit = app.get(Some(&admin), "/v1/admin/audit").await.text().await.unwrap();
    assert!(audit.contains("lab.update") && audit.contains("the directory"), "audited: {audit}");

    // members old and new read and write the share; the moved lab's
    // member carries a new gid, neither vision's nor the one vision gave up
    let script = "cat \"$LAB_DIR/old.txt\"; echo kim > \"$LAB_DIR/new.txt\" && stat -c new=%g \"$LAB_DIR/new.txt\"";
    let log = log_of(&app, &kim, "new", script).await;
    assert!(log.contains("old\n") && log.contains("new=30001"), "{log}");
    let log =
        log_of(&app, &local, "again", "cat \"$LAB_DIR/new.txt\" && echo >> \"$LAB_DIR/old.txt\" && echo wrote").await;
    assert!(log.contains("kim\n") && log.contains("wrote"), "the local member keeps the share: {log}");
    let peek = "id -G | tr ' ' '\\n' | grep -qx 30001 && echo CARRIES-VISION; \
                id -G | tr ' ' '\\n' | grep -qx 30000 && echo CARRIES-OLD; \
                cat \"$(dirname \"$LAB_DIR\")/vision/old.txt\" 2>/dev/null && echo READ-VISION; \
                stat -c third=%g \"$LAB_DIR\"";
    let log = log_of(&app, &third, "peek", peek).await;
    assert!(!log.contains("CARRIES-VISION") && !log.contains("CARRIES-OLD") && !log.contains("READ-VISION"), "{log}");
    assert!(log.contains("third=30002"), "third took a fresh gid: {log}");

    // the gid vision gave up is never handed out again: a new lab finds
    // the range spent (its share is root's group, not 30000)
    let fourth = app.researcher(&admin, "fourthone", "fourth").await;
    let log = log_of(&app, &fourth, "fourth", "stat -c fourth=%g \"$LAB_DIR\"").await;
    assert!(log.contains("fourth=0"), "{log}");
}

#[tokio::test]
async fn on_slurm_a_member_writes_to_the_labs_share_through_the_directory_group() {
    let _cluster = crate::slurm::CLUSTER.lock().await;
    let Some(slapd) = slapd().await else { return };
    let secrets = tempfile::tempdir().unwrap();
    let mut ldap = slapd.settings(secrets.path());
    ldap.recheck_seconds = 0;
    let Some(app) = TestApp::spawn_slurm_with(|s| s.directory.ldap = ldap).await else { return };
    // jeon: the directory's 3903 in gpu-lab-rocket (3950), as the host's
    // jpu-test-c is (the nodes' directory)
    let jeon = directory_token(&app, "jeon").await;
    let me: Value = app.me(Some(&jeon)).await.json().await.unwrap();
    assert_eq!((me["lab"].as_str(), me["unix_uid"].as_i64()), (Some("rocket"), Some(3903)), "{me}");
    let script =
        "echo made > \"$LAB_DIR/from-slurm\" && stat -c '%n group=%g mode=%a' \"$LAB_DIR\" \"$LAB_DIR/from-slurm\"";
    let log = log_of(&app, &jeon, "writes", script).await;
    assert!(log.contains("rocket group=3950 mode=3770"), "the share is the directory group's: {log}");
    assert!(log.contains("from-slurm group=3950"), "what a member makes stays the lab's: {log}");

    // another lab's member (demo, 3901) neither reads nor lists it
    let share = storage_root_for(app.dir.path()).join("labs/rocket");
    let peek = format!(
        "cat {0}/from-slurm 2>/dev/null && echo READ; ls {0} >/dev/null 2>&1 && echo LISTED; echo peeked",
        share.display()
    );
    let log = log_of(&app, &app.demo_token().await, "peek", &peek).await;
    assert!(log.contains("peeked") && !log.contains("READ") && !log.contains("LISTED"), "{log}");
}
