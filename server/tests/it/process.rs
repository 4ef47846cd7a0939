//! The real `jpu-share serve` binary as a child process, for what only a
//! process can show: `kill -9` and restart on the same data.

use std::path::Path;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::helpers::{ADMIN_PASSWORD, DEMO_PASSWORD};

pub struct ServerProcess {
    child: Child,
    pub base: String,
}

impl ServerProcess {
    /// Starts the server on `dir`'s database and job files, with a 200 ms
    /// cycle and a 2 s grace, plus `extra_env` (e.g. a failpoint).
    pub async fn start(dir: &Path, extra_env: &[(&str, &str)]) -> ServerProcess {
        Self::start_command(Command::new(env!("CARGO_BIN_EXE_jpu-share")), dir, extra_env).await
    }

    /// [`start`](Self::start) as `nobody` (65534), from a copy of the
    /// binary in `dir` (which it then owns), for what a server that is not
    /// root does.
    pub async fn start_as_nobody(dir: &Path, extra_env: &[(&str, &str)]) -> ServerProcess {
        use std::os::unix::fs::PermissionsExt;
        let binary = dir.join("jpu-share");
        // copied by `cp`, not by this process: a child another test thread
        // forks meanwhile would inherit our write descriptor until its
        // exec, and running the copy then fails with "Text file busy"
        let copied = std::process::Command::new("cp").arg(env!("CARGO_BIN_EXE_jpu-share")).arg(&binary).status();
        assert!(copied.is_ok_and(|s| s.success()), "copy the binary");
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::chown(dir, Some(65534), Some(65534)).expect("chown");
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(&binary).current_dir(dir);
        Self::start_command(command, dir, extra_env).await
    }

    async fn start_command(mut command: Command, dir: &Path, extra_env: &[(&str, &str)]) -> ServerProcess {
        command
            .arg("serve")
            .env("JPU__SERVER__BIND", "127.0.0.1:0")
            .env("JPU__DATABASE__URL", format!("sqlite://{}", dir.join("jpu.db").display()))
            .env("JPU__EXECUTOR__OUTPUT_ROOT", dir.join("jobs"))
            .env("JPU__SCHEDULER__CYCLE_MS", "200")
            .env("JPU__CANCEL__GRACE_SECONDS", "2")
            // the tests' webhook receivers listen on loopback
            .env("JPU__NOTIFY__WEBHOOK_ALLOW", "[\"127.0.0.1\"]")
            .env("JPU_ADMIN_PASSWORD", ADMIN_PASSWORD)
            .env("JPU_DEMO_PASSWORD", DEMO_PASSWORD)
            .envs(extra_env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("jpu-share starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let base = loop {
            let line = lines.next_line().await.expect("read stdout").expect("server printed its address");
            if let Some(url) = line.split("listening on ").nth(1) {
                break url.trim().to_string();
            }
        };
        let base_for_echo = base.clone();
        // keep draining stdout so the server never blocks on it (shown
        // with JPU_TEST_ECHO=1, to read what a server logged)
        let echo = std::env::var_os("JPU_TEST_ECHO").is_some();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                if echo {
                    eprintln!("[{base_for_echo}] {line}");
                }
            }
        });
        ServerProcess { child, base }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("running")
    }

    /// `kill -9`.
    pub async fn kill9(mut self) {
        self.child.start_kill().expect("kill");
        let _ = self.child.wait().await;
    }

    /// Waits for the process to end by itself (e.g. at a failpoint).
    pub async fn wait_exit(mut self) {
        let _ = self.child.wait().await;
    }
}
