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

mod support;

use support::campus;

const SIGN_INS: usize = 60;
const LOOKUPS: usize = 300;

#[tokio::main]
async fn main() {
    assert!(campus::provider_installed(), "no oidc-provider: run .ci/install-tools test first");
    let provider = campus::Provider::start().await;
    let issuer = provider.issuer.clone();
    let secrets = tempfile::tempdir().unwrap();
    let without = sign_ins(&issuer, secrets.path(), None).await;
    println!("OIDC sign-in end to end, {SIGN_INS} sign-ins, no directory: {}", spread(without));
    if !std::path::Path::new(campus::SLAPD).exists() {
        println!("(no slapd: the directory is not measured)");
        return;
    }
    let slapd = campus::Slapd::start().await;
    let ldap = slapd.settings(secrets.path());
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

fn spread(mut times: Vec<Duration>) -> String {
    times.sort();
    let at = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0;
    format!("p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms", at(0.5), at(0.9), at(1.0))
}
