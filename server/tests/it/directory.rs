//! The university's directory: a real OpenLDAP (`slapd` from Debian, its
//! own instance and config in a temp dir, the LDIF in `end2end/ldap/`)
//! decides uid, gid, lab and role of people signing in through the real
//! test provider, and jobs run as that uid and gid.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::campus::{browser, me, provider, server, sign_in_through, signed_in_with_token, through_provider};
use crate::helpers::*;

use crate::parts::Slapd;

/// The test directory, or None when slapd is missing and the run does not
/// require it (`JPU_TEST_LDAP=1` does).
pub async fn slapd() -> Option<Slapd> {
    if !std::path::Path::new(crate::parts::SLAPD).exists() {
        assert!(
            std::env::var_os("JPU_TEST_LDAP").is_none(),
            "JPU_TEST_LDAP is set but slapd is not installed: run .ci/install-tools test"
        );
        eprintln!("no slapd: skipping a directory test (make test runs it)");
        return None;
    }
    Some(Slapd::start().await)
}

#[tokio::test]
async fn the_directory_decides_uid_gid_lab_and_role_and_who_gets_in() {
    let (Some(provider), Some(slapd)) = (provider().await, slapd().await) else { return };
    let secrets = tempfile::tempdir().unwrap();
    let ldap = slapd.settings(secrets.path());
    // the token's groups would say otherwise: with a directory it decides
    let app = server(&provider, |s| {
        s.directory.ldap = ldap;
        s.auth.oidc.lab_group = "^nothing-(matches)$".into();
    })
    .await;
    for (user, lab, role, uid, gid) in [
        ("kim", "vision", "researcher", 20001, 20001),
        ("lee", "nlp", "researcher", 20002, 30002),
        ("park", "vision", "admin", 20003, 30001),
    ] {
        let b = browser();
        let callback = through_provider(&app, &b, user, "/").await;
        assert_eq!(b.get(&callback).send().await.unwrap().status(), StatusCode::SEE_OTHER, "{user}");
        let who: Value = me(&app, &b).await.json().await.unwrap();
        assert_eq!((who["lab"].as_str(), who["role"].as_str()), (Some(lab), Some(role)), "{user}");
        assert_eq!(who["unix_uid"], uid, "{user}");
        assert_eq!(who["unix_gid"], gid, "{user}");
    }
    let admin = app.admin_token().await;
    let audit = app.get(Some(&admin), "/v1/admin/audit").await.text().await.unwrap();
    assert!(audit.contains("unix_uid") && audit.contains("20003"), "the ids' arrival is audited: {audit}");

    // choi is the provider's but not the directory's
    let b = browser();
    let callback = through_provider(&app, &b, "choi", "/").await;
    let resp = b.get(&callback).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert!(resp.text().await.unwrap().contains("directory has no entry for choi"));
    assert_eq!(me(&app, &b).await.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn names_that_are_ldap_filters_match_nobody() {
    let Some(slapd) = slapd().await else { return };
    let secrets = tempfile::tempdir().unwrap();
    let directory = jpu_share::auth::directory::Directory::from_settings(&slapd.settings(secrets.path()))
        .unwrap()
        .expect("configured");
    assert!(directory.person("kim").await.unwrap().is_some(), "a real name is found");
    for name in ["*", "*)(uid=*", "kim)(|(uid=*", "*)(objectClass=*", "k*", "\\2a"] {
        assert_eq!(directory.person(name).await.unwrap(), None, "{name}");
    }
    // a wrong bind is the directory being unavailable, never "no such person"
    let mut wrong = slapd.settings(secrets.path());
    std::fs::write(wrong.bind_password_file.as_ref().unwrap(), "not-the-secret").unwrap();
    wrong.bind_dn = "cn=jpu-share,ou=services,dc=example,dc=edu".into();
    let directory = jpu_share::auth::directory::Directory::from_settings(&wrong).unwrap().unwrap();
    assert!(directory.person("kim").await.is_err());
}

#[tokio::test]
async fn jobs_of_a_directory_user_run_as_their_directory_uid_and_gid() {
    let (Some(provider), Some(slapd)) = (provider().await, slapd().await) else { return };
    if !nix::unistd::geteuid().is_root() {
        eprintln!("not root: jobs run as the server's user; skipping");
        return;
    }
    let secrets = tempfile::tempdir().unwrap();
    let ldap = slapd.settings(secrets.path());
    let app = TestApp::spawn_local_with(|s| {
        sign_in_through(&provider, s, secrets.path());
        s.directory.ldap = ldap;
    })
    .await;
    // lee: primary gid 30002, in no posixGroup; kim: gid 20001, and
    // gpu-lab-vision (a posixGroup, 30001) as a supplementary group
    for (user, expected) in [("lee", "ids 20002 30002 groups 30002"), ("kim", "ids 20001 20001 groups 20001 30001")] {
        let (_, token) = signed_in_with_token(&app, user).await;
        let script =
            "echo \"ids $(id -u) $(id -g) groups $(id -G | tr ' ' '\\n' | sort -n | tr '\\n' ' ' | sed 's/ $//')\"";
        let job = app.submit_ok(&token, json!({"name": "ids", "command": script, "num_gpus": 1})).await;
        let id = job["id"].as_i64().unwrap();
        app.wait_state(&token, id, "COMPLETED").await;
        let log = std::fs::read_to_string(app.log_path(id)).unwrap();
        assert!(log.contains(expected), "{user}: {log}");
    }
}

/// The directory as its administrator binds to it.
async fn as_administrator(url: &str) -> ldap3::Ldap {
    let (conn, mut ldap) = ldap3::LdapConnAsync::new(url).await.unwrap();
    ldap3::drive!(conn);
    ldap.simple_bind("cn=root,dc=example,dc=edu", "root-test-secret").await.unwrap().success().unwrap();
    ldap
}

/// Deletes an entry as the directory's administrator would.
pub async fn delete_entry(url: &str, dn: &str) {
    let mut ldap = as_administrator(url).await;
    ldap.delete(dn).await.unwrap().success().unwrap();
    ldap.unbind().await.unwrap();
}

#[tokio::test]
async fn people_the_directory_drops_are_signed_out_at_their_next_request() {
    let (Some(provider), Some(slapd)) = (provider().await, slapd().await) else { return };
    let secrets = tempfile::tempdir().unwrap();
    let mut ldap = slapd.settings(secrets.path());
    ldap.recheck_seconds = 0;
    let app = server(&provider, |s| s.directory.ldap = ldap).await;
    let mut signed_in = Vec::new();
    for user in ["kim", "lee", "park"] {
        let (b, token) = signed_in_with_token(&app, user).await;
        signed_in.push((user, b, token));
    }
    let kims = &signed_in[0].2;
    let waiting = app.submit_ok(kims, json!({"name": "waits", "command": "true", "num_gpus": 1})).await;
    // kim leaves the university; lee's only lab group is dissolved
    delete_entry(&slapd.url, "uid=kim,ou=people,dc=example,dc=edu").await;
    delete_entry(&slapd.url, "cn=gpu-lab-nlp,ou=groups,dc=example,dc=edu").await;
    for (user, browser, token) in &signed_in {
        let expected = if *user == "park" { StatusCode::OK } else { StatusCode::UNAUTHORIZED };
        assert_eq!(app.me(Some(token)).await.status(), expected, "{user}'s token");
        assert_eq!(me(&app, browser).await.status(), expected, "{user}'s session");
    }
    let admin = app.admin_token().await;
    let audit = app.get(Some(&admin), "/v1/admin/audit").await.text().await.unwrap();
    assert!(audit.contains("no longer in the directory") && audit.contains("in no lab group any more"), "{audit}");
    // I4: what kim left waiting never starts
    let job: Value = app.get(Some(&admin), &format!("/v1/jobs/{}", waiting["id"])).await.json().await.unwrap();
    assert_eq!((job["state"].as_str(), job["end_reason"].as_str()), (Some("CANCELLED"), Some("OWNER_LEFT")), "{job}");
    // and they cannot come back in
    let b = browser();
    let callback = through_provider(&app, &b, "kim", "/").await;
    assert_eq!(b.get(&callback).send().await.unwrap().status(), StatusCode::FORBIDDEN);
}

/// Changes one attribute of an entry as the directory's administrator.
async fn modify_entry(url: &str, dn: &str, change: ldap3::Mod<&str>) {
    let mut ldap = as_administrator(url).await;
    ldap.modify(dn, vec![change]).await.unwrap().success().unwrap();
    ldap.unbind().await.unwrap();
}

#[tokio::test]
async fn a_move_to_another_lab_leaves_waiting_jobs_under_the_lab_they_were_submitted_in() {
    let (Some(provider), Some(slapd)) = (provider().await, slapd().await) else { return };
    let secrets = tempfile::tempdir().unwrap();
    let ldap = slapd.settings(secrets.path());
    // no scheduler loop: the job waits
    let app = server(&provider, |s| s.directory.ldap = ldap).await;
    let (_, token) = signed_in_with_token(&app, "kim").await;
    let job = app.submit_ok(&token, json!({"name": "waits", "command": "true", "num_gpus": 1})).await;
    assert_eq!(job["lab"], "vision");

    // the university moves kim from vision to nlp
    let vision = "cn=gpu-lab-vision,ou=groups,dc=example,dc=edu";
    modify_entry(&slapd.url, vision, ldap3::Mod::Delete("memberUid", ["kim"].into())).await;
    let nlp = "cn=gpu-lab-nlp,ou=groups,dc=example,dc=edu";
    modify_entry(&slapd.url, nlp, ldap3::Mod::Add("member", ["uid=kim,ou=people,dc=example,dc=edu"].into())).await;
    let again = browser();
    let callback = through_provider(&app, &again, "kim", "/").await;
    assert_eq!(again.get(&callback).send().await.unwrap().status(), StatusCode::SEE_OTHER);
    let who: Value = me(&app, &again).await.json().await.unwrap();
    assert_eq!(who["lab"], "nlp");
    let admin = app.admin_token().await;
    let job: Value = app.get(Some(&admin), &format!("/v1/jobs/{}", job["id"])).await.json().await.unwrap();
    assert_eq!(job["lab"], "vision", "the waiting job keeps its lab");
    assert!(job["state"].as_str().unwrap().ends_with("WAIT"), "{job}");
}

/// I2: the directory's ids get the admin API's rules. A uidNumber of 101
/// once ran jobs as `postgres`, a gidNumber of 42 read `/etc/shadow`, and
/// uid 0 was stored and its jobs waited forever without a word: now such
/// a person is refused at sign-in with the reason, and a supplementary
/// group below the floor is not given to jobs.
#[tokio::test]
async fn a_system_accounts_ids_from_the_directory_never_reach_a_job() {
    let (Some(provider), Some(slapd)) = (provider().await, slapd().await) else { return };
    let secrets = tempfile::tempdir().unwrap();
    let ldap = slapd.settings(secrets.path());
    let app = server(&provider, |s| s.directory.ldap = ldap).await;
    let kim = "uid=kim,ou=people,dc=example,dc=edu";
    for (attribute, bad, fine) in [
        ("uidNumber", "101", "20001"),
        ("uidNumber", "0", "20001"),
        ("uidNumber", "65534", "20001"),
        ("uidNumber", "999", "20001"),
        ("gidNumber", "42", "20001"),
    ] {
        modify_entry(&slapd.url, kim, ldap3::Mod::Replace(attribute, [bad].into())).await;
        let b = browser();
        let callback = through_provider(&app, &b, "kim", "/").await;
        let resp = b.get(&callback).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{attribute} {bad}");
        let page = resp.text().await.unwrap();
        assert!(page.contains(attribute) && page.contains("system account"), "{attribute} {bad}: {page}");
        modify_entry(&slapd.url, kim, ldap3::Mod::Replace(attribute, [fine].into())).await;
    }
    assert_eq!(app.sql_number("SELECT CAST(COUNT(*) AS REAL) FROM users WHERE username = 'kim'").await, 0.0);
    // the floor itself is a person's: 1000 is taken
    modify_entry(&slapd.url, kim, ldap3::Mod::Replace("uidNumber", ["1000"].into())).await;
    let mut ldap = as_administrator(&slapd.url).await;
    let shadow: Vec<(&str, std::collections::HashSet<&str>)> = vec![
        ("objectClass", ["posixGroup"].into()),
        ("cn", ["shadow"].into()),
        ("gidNumber", ["42"].into()),
        ("memberUid", ["kim"].into()),
    ];
    ldap.add("cn=shadow,ou=groups,dc=example,dc=edu", shadow).await.unwrap().success().unwrap();
    ldap.unbind().await.unwrap();
    let (b, _) = signed_in_with_token(&app, "kim").await;
    let who: Value = me(&app, &b).await.json().await.unwrap();
    assert_eq!(who["unix_uid"], 1000, "{who}");
    let groups =
        "SELECT CAST(COUNT(*) AS REAL) FROM users WHERE username = 'kim' AND ',' || unix_groups || ',' LIKE '%,42,%'";
    assert_eq!(app.sql_number(groups).await, 0.0, "gid 42 (shadow) is not among kim's job groups");
    assert_eq!(
        app.sql_number(
            "SELECT CAST(COUNT(*) AS REAL) FROM users WHERE username = 'kim' AND unix_groups LIKE '%30001%'"
        )
        .await,
        1.0,
        "the lab's group is"
    );
}

/// I4: someone the directory drops is off-boarded on the sweep's schedule
/// even if they never come back: their waiting job ends, without a request.
#[tokio::test]
async fn the_waiting_jobs_of_someone_the_directory_drops_end_without_their_next_request() {
    let (Some(provider), Some(slapd)) = (provider().await, slapd().await) else { return };
    let secrets = tempfile::tempdir().unwrap();
    let mut ldap = slapd.settings(secrets.path());
    ldap.recheck_seconds = 1;
    let app = server(&provider, |s| s.directory.ldap = ldap).await;
    let (_, token) = signed_in_with_token(&app, "lee").await;
    let job = app.submit_ok(&token, json!({"name": "waits", "command": "true", "num_gpus": 1})).await;
    let admin = app.admin_token().await;
    delete_entry(&slapd.url, "uid=lee,ou=people,dc=example,dc=edu").await;
    let ended =
        app.wait_job(&admin, job["id"].as_i64().unwrap(), "the sweep ends it", |j| j["ended_at"].is_string()).await;
    assert_eq!((ended["state"].as_str(), ended["end_reason"].as_str()), (Some("CANCELLED"), Some("OWNER_LEFT")));
    assert_eq!(app.me(Some(&token)).await.status(), StatusCode::UNAUTHORIZED, "and their token with it");
}

/// A directory that suddenly lists nobody (a wrong base, an access rule)
/// does not make the sweep end everyone's work at once: past half of the
/// people it asks about (and more than three), it holds and says so.
#[tokio::test]
async fn a_directory_that_drops_most_people_at_once_off_boards_nobody() {
    let (Some(provider), Some(slapd)) = (provider().await, slapd().await) else { return };
    let secrets = tempfile::tempdir().unwrap();
    let mut ldap = slapd.settings(secrets.path());
    ldap.recheck_seconds = 1;
    let app = server(&provider, |s| s.directory.ldap = ldap).await;
    // a fourth person, in the vision lab
    let mut admin_ldap = as_administrator(&slapd.url).await;
    let choi: Vec<(&str, std::collections::HashSet<&str>)> = vec![
        ("objectClass", ["inetOrgPerson", "posixAccount"].into()),
        ("uid", ["choi"].into()),
        ("cn", ["Choi Ara"].into()),
        ("sn", ["Choi"].into()),
        ("uidNumber", ["20004"].into()),
        ("gidNumber", ["30001"].into()),
        ("homeDirectory", ["/home/choi"].into()),
    ];
    admin_ldap.add("uid=choi,ou=people,dc=example,dc=edu", choi).await.unwrap().success().unwrap();
    let vision = "cn=gpu-lab-vision,ou=groups,dc=example,dc=edu";
    admin_ldap.modify(vision, vec![ldap3::Mod::Add("memberUid", ["choi"].into())]).await.unwrap().success().unwrap();
    admin_ldap.unbind().await.unwrap();
    let mut jobs = Vec::new();
    for user in ["kim", "lee", "park", "choi"] {
        let (_, token) = signed_in_with_token(&app, user).await;
        jobs.push(
            app.submit_ok(&token, json!({"name": "waits", "command": "true", "num_gpus": 1})).await["id"].clone(),
        );
    }
    for user in ["kim", "lee", "park", "choi"] {
        delete_entry(&slapd.url, &format!("uid={user},ou=people,dc=example,dc=edu")).await;
    }
    let admin = app.admin_token().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let metrics = app.get(Some(&admin), "/metrics").await.text().await.unwrap();
        if metrics.lines().any(|l| l.starts_with("campus_offboarding_held_total") && !l.ends_with(" 0")) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the sweep never held:\n{metrics}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    for id in jobs {
        let job: Value = app.get(Some(&admin), &format!("/v1/jobs/{id}")).await.json().await.unwrap();
        assert!(job["state"].as_str().unwrap().ends_with("WAIT"), "held, not off-boarded: {job}");
    }
}
