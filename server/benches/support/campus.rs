//! The project's test OpenID Provider (`node end2end/oidc/provider.mjs`)
//! and test directory (`slapd` from Debian, in a temp dir, with
//! `end2end/ldap/`), started on loopback as the campus sign-in bench and
//! the integration tests (which include this file) both need them.

use std::path::Path;
use std::time::{Duration, Instant};

use jpu_share::config::LdapSettings;

const END2END: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../end2end");
pub const SLAPD: &str = "/usr/sbin/slapd";

/// Whether `npm ci` put the provider's package in place.
pub fn provider_installed() -> bool {
    Path::new(END2END).join("node_modules/oidc-provider").is_dir()
}

pub struct Provider {
    _child: tokio::process::Child,
    pub issuer: String,
}

impl Provider {
    pub async fn start() -> Provider {
        Self::start_with(&[]).await
    }

    /// With its people from a JSON file it reads at every lookup (a test
    /// drops someone by rewriting it).
    #[allow(dead_code)]
    pub async fn with_accounts(file: &Path) -> Provider {
        Self::start_with(&["--accounts".as_ref(), file.as_os_str()]).await
    }

    /// One that gives no refresh tokens (no offline access).
    #[allow(dead_code)]
    pub async fn without_refresh_tokens() -> Provider {
        Self::start_with(&["--no-refresh".as_ref()]).await
    }

    async fn start_with(args: &[&std::ffi::OsStr]) -> Provider {
        use tokio::io::AsyncBufReadExt;
        let mut child = tokio::process::Command::new("node")
            .arg("oidc/provider.mjs")
            .args(args)
            .current_dir(END2END)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the provider starts within 30 s")
            .expect("its output")
            .expect("a line");
        let issuer: serde_json::Value = serde_json::from_str(&line).unwrap();
        // keep reading: a closed pipe would end the provider at its next line
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Provider { _child: child, issuer: issuer["issuer"].as_str().unwrap().to_string() }
    }
}

pub struct Slapd {
    _child: tokio::process::Child,
    _dir: tempfile::TempDir,
    pub url: String,
}

impl Slapd {
    pub async fn start() -> Slapd {
        let files = format!("{END2END}/ldap");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let conf = std::fs::read_to_string(format!("{files}/slapd.conf.in"))
            .unwrap()
            .replace("@DIR@", &dir.path().display().to_string());
        let conf_path = dir.path().join("slapd.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let loaded = std::process::Command::new("/usr/sbin/slapadd")
            .arg("-f")
            .arg(&conf_path)
            .arg("-l")
            .arg(format!("{files}/people.ldif"))
            .output()
            .expect("slapadd runs");
        assert!(loaded.status.success(), "slapadd: {}", String::from_utf8_lossy(&loaded.stderr));
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("ldap://127.0.0.1:{port}");
        let child = tokio::process::Command::new(SLAPD)
            .arg("-f")
            .arg(&conf_path)
            .args(["-h", &format!("{url}/"), "-d", "0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("slapd starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(Instant::now() < deadline, "slapd did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Slapd { _child: child, _dir: dir, url }
    }

    /// The service's settings for this directory (its bind secret written
    /// into `secrets`).
    pub fn settings(&self, secrets: &Path) -> LdapSettings {
        let secret = secrets.join("ldap-bind-secret");
        std::fs::write(&secret, "jpu-share-bind-secret\n").unwrap();
        LdapSettings {
            url: self.url.clone(),
            bind_dn: "cn=jpu-share,ou=services,dc=example,dc=edu".into(),
            bind_password_file: Some(secret),
            user_base: "ou=people,dc=example,dc=edu".into(),
            user_filter: "(uid={username})".into(),
            group_base: "ou=groups,dc=example,dc=edu".into(),
            lab_group: "^gpu-lab-(.+)$".into(),
            admin_groups: vec!["gpu-admins".into()],
            recheck_seconds: 60,
            ..LdapSettings::default()
        }
    }
}
