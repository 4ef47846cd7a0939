//! Sign-in through the university, end to end on loopback: the real
//! server (in process, temp SQLite file) and the project's test OpenID
//! Provider (`node end2end/oidc/provider.mjs`), each sign-in a fresh
//! browser going server → provider (its sign-in form) → callback →
//! session; first without a directory, then with the test OpenLDAP
//! (`slapd`, as the tests start it) deciding uid, gid, lab and role. Then
//! one directory look-up alone (bind, person, groups).
//!
//! Run: `cargo bench -p server --bench campus_sign_in` (needs node with
//! `end2end/node_modules`, and `slapd` for the directory figures).

use std::time::{Duration, Instant};

use jpu_share::config::{LdapSettings, Settings};
use serde_json::Value;

mod support;

const SIGN_INS: usize = 60;
const LOOKUPS: usize = 300;
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../end2end");

#[tokio::main]
async fn main() {
    let (_provider, issuer) = provider().await;
    let secrets = tempfile::tempdir().unwrap();
    let without = sign_ins(&issuer, secrets.path(), None).await;
    println!("OIDC sign-in end to end, {SIGN_INS} sign-ins, no directory: {}", spread(without));
    let Some((_slapd, ldap)) = slapd(secrets.path()).await else {
        println!("(no slapd: the directory is not measured)");
        return;
    };
    let with = sign_ins(&issuer, secrets.path(), Some(ldap.clone())).await;
    println!("OIDC sign-in end to end, {SIGN_INS} sign-ins, with the directory: {}", spread(with));
    let directory = jpu_share::auth::directory::Directory::from_settings(&ldap).unwrap().unwrap();
    let mut times = Vec::with_capacity(LOOKUPS);
    for _ in 0..LOOKUPS {
        let started = Instant::now();
        assert!(directory.person("kim").await.unwrap().is_some());
        times.push(started.elapsed());
    }
    println!("one directory look-up (connect, bind, person, groups), {LOOKUPS} times: {}", spread(times));
}

async fn sign_ins(issuer: &str, secrets: &std::path::Path, ldap: Option<LdapSettings>) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let secret = secrets.join("client-secret");
    std::fs::write(&secret, "jpu-share-test-secret").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let issuer = issuer.to_string();
    let (app, base) = support::build_server_with(dir.path(), move |s: &mut Settings| {
        s.server.bind = format!("127.0.0.1:{port}");
        s.server.public_url = format!("http://127.0.0.1:{port}");
        s.auth.oidc.issuer = issuer;
        s.auth.oidc.client_id = "jpu-share".into();
        s.auth.oidc.client_secret_file = Some(secret);
        s.auth.oidc.lab_group = "^gpu-lab-(.+)$".into();
        if let Some(ldap) = ldap {
            s.directory.ldap = ldap;
        }
    })
    .await;
    tokio::spawn(app.run_until(std::future::pending()));
    let mut times = Vec::with_capacity(SIGN_INS);
    for i in 0..SIGN_INS {
        let user = ["kim", "lee", "park"][i % 3];
        let browser =
            reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).cookie_store(true).build().unwrap();
        let started = Instant::now();
        sign_in(&browser, &base, user).await;
        times.push(started.elapsed());
    }
    times
}

/// One sign-in as a browser makes it; ends signed in.
async fn sign_in(browser: &reqwest::Client, base: &str, user: &str) {
    let location = |r: &reqwest::Response| r.headers()["location"].to_str().unwrap().to_string();
    let mut url = location(&browser.get(format!("{base}/auth/oidc/login")).send().await.unwrap());
    let issuer = url.split("/auth?").next().unwrap().to_string();
    loop {
        let resp = browser.get(&url).send().await.unwrap();
        if resp.status() == reqwest::StatusCode::OK {
            let form = [("prompt", "login"), ("login", user), ("password", "any")];
            let posted = browser.post(&url).form(&form).send().await.unwrap();
            url = location(&posted);
            continue;
        }
        let next = location(&resp);
        if next.contains("/auth/oidc/callback") {
            let done = browser.get(&next).send().await.unwrap();
            assert_eq!(done.status(), reqwest::StatusCode::SEE_OTHER, "signed in");
            return;
        }
        url = if next.starts_with("http") { next } else { format!("{issuer}{next}") };
    }
}

async fn provider() -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new("node")
        .arg("oidc/provider.mjs")
        .current_dir(ROOT)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts (run .ci/install-tools test first)");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next_line().await.unwrap().expect("the provider's first line");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let issuer: Value = serde_json::from_str(&line).unwrap();
    (child, issuer["issuer"].as_str().unwrap().to_string())
}

async fn slapd(secrets: &std::path::Path) -> Option<((tokio::process::Child, tempfile::TempDir), LdapSettings)> {
    if !std::path::Path::new("/usr/sbin/slapd").exists() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let conf = std::fs::read_to_string(format!("{ROOT}/ldap/slapd.conf.in"))
        .unwrap()
        .replace("@DIR@", &dir.path().display().to_string());
    let conf_path = dir.path().join("slapd.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let loaded = std::process::Command::new("/usr/sbin/slapadd")
        .arg("-f")
        .arg(&conf_path)
        .arg("-l")
        .arg(format!("{ROOT}/ldap/people.ldif"))
        .output()
        .unwrap();
    assert!(loaded.status.success());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = tokio::process::Command::new("/usr/sbin/slapd")
        .arg("-f")
        .arg(&conf_path)
        .args(["-h", &format!("ldap://127.0.0.1:{port}/"), "-d", "0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let secret = secrets.join("ldap-secret");
    std::fs::write(&secret, "jpu-share-bind-secret").unwrap();
    let ldap = LdapSettings {
        url: format!("ldap://127.0.0.1:{port}"),
        bind_dn: "cn=jpu-share,ou=services,dc=example,dc=edu".into(),
        bind_password_file: Some(secret),
        user_base: "ou=people,dc=example,dc=edu".into(),
        user_filter: "(uid={username})".into(),
        group_base: "ou=groups,dc=example,dc=edu".into(),
        lab_group: "^gpu-lab-(.+)$".into(),
        admin_groups: vec!["gpu-admins".into()],
        recheck_seconds: 60,
    };
    Some(((child, dir), ldap))
}

fn spread(mut times: Vec<Duration>) -> String {
    times.sort();
    let at = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0;
    format!("p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms", at(0.5), at(0.9), at(1.0))
}
