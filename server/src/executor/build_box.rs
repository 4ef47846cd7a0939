//! Where a workspace build runs (#42 W2): like an attempt — in a cgroup of
//! its own (CPU, memory and process limits, `workspaces.build_*`), its own
//! PID namespace (nothing of it outlives the build: the kernel ends the
//! rest with its first process, and the cgroup is killed and removed
//! after), with no new privileges, as the researcher's uid, and an
//! environment of ours alone (the server's variables never reach the
//! definition's `%post`). Its network namespace has only loopback, where
//! the egress relay listens: the build's one way out is the registry-only
//! proxy ([`super::egress`]). A server that is not root, or a host that
//! cannot make namespaces, builds as before, and the build log says so.

use std::path::{Path, PathBuf};

use super::contain::{AttemptCgroup, Containment, Limits};
use super::egress::{Egress, Registries};
use super::enter::EGRESS_PORT;

/// What one build needs.
pub struct BuildSpec<'a> {
    /// The build's own folder (its user's), where it starts.
    pub work: &'a Path,
    /// A folder of root's the builder may pass through: the proxy's socket.
    pub egress_dir: &'a Path,
    pub apptainer: &'a Path,
    /// The researcher's uid, when the server is root.
    pub builder: Option<u32>,
    /// Unique on this host: names the build's cgroup.
    pub name: String,
    pub limits: Limits,
    /// The host's GPU nodes, every one refused to the build.
    pub gpus: super::devices::DeviceRule,
    pub registries: Registries,
    /// The build log, for the proxy's refusals.
    pub log: std::fs::File,
}

/// The build's cgroup and proxy: killed, removed and closed when dropped.
pub struct BuildBox {
    cgroup: Option<AttemptCgroup>,
    _egress: Option<Egress>,
    /// One line for the build log: what holds the build.
    pub note: String,
    /// The proxy the build's tools are given (`None`: not contained).
    pub proxy: Option<String>,
}

impl Drop for BuildBox {
    fn drop(&mut self) {
        if let Some(cgroup) = self.cgroup.take() {
            cgroup.remove();
        }
    }
}

/// `apptainer build --fakeroot --force image.sif workspace.def` in the
/// box, or plainly where no box can be made.
pub fn command(spec: BuildSpec<'_>) -> std::io::Result<(tokio::process::Command, BuildBox)> {
    let helper = super::enter::helper();
    // probed once (a process started and waited for)
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let works =
        |helper: &Path| *WORKS.get_or_init(|| super::enter::works(helper, &[("JPU_NETNS", "1"), ("JPU_PIDNS", "1")]));
    let boxed = match (spec.builder, &helper) {
        (Some(uid), Some(helper)) if works(helper) => Some((uid, helper.clone())),
        _ => None,
    };
    let Some((uid, helper)) = boxed else {
        let why = if spec.builder.is_none() { "the server is not root" } else { "no namespaces can be made here" };
        let mut command = tokio::process::Command::new(spec.apptainer);
        apptainer_args(&mut command, spec.work, None);
        let note = format!("[jpu-share] {why}: this build is NOT contained and HAS network access");
        return Ok((command, BuildBox { cgroup: None, _egress: None, note, proxy: None }));
    };
    let containment = Containment::detect_quietly();
    let cgroup = containment.create(&spec.name, spec.limits, &spec.gpus)?;
    let socket = spec.egress_dir.join("egress.sock");
    let egress = super::egress::open(&socket, Some(uid), spec.registries.clone(), spec.log)?;
    let proxy = format!("http://127.0.0.1:{EGRESS_PORT}");
    let mut command = tokio::process::Command::new(&helper);
    command.arg(super::enter::SUBCOMMAND).arg("setpriv").args([
        format!("--reuid={uid}"),
        format!("--regid={uid}"),
        "--clear-groups".into(),
        "--no-new-privs".into(),
        "--".into(),
    ]);
    command.arg(spec.apptainer);
    apptainer_args(&mut command, spec.work, Some(&proxy));
    let joins = std::env::join_paths(&cgroup.join).map_err(std::io::Error::other)?;
    command
        .env("JPU_NETNS", "1")
        .env("JPU_PIDNS", "1")
        .env("JPU_BUILD_CGROUP", joins)
        .env("JPU_EGRESS", &socket)
        .env("JPU_EGRESS_UID", uid.to_string());
    let Limits { cpus, mem_bytes, pids } = spec.limits;
    let note = format!(
        "[jpu-share] the build runs as uid {uid} with no new privileges, in its own PID and network namespaces and \
         {} ({cpus} CPUs, {} GiB RAM, {pids} processes); its only way out is a proxy to the package registries \
         (workspaces.registries)",
        containment.describe_cgroups(),
        mem_bytes >> 30
    );
    Ok((command, BuildBox { cgroup: Some(cgroup), _egress: Some(egress), note, proxy: Some(proxy) }))
}

/// The build's command line and an environment of ours alone.
fn apptainer_args(command: &mut tokio::process::Command, work: &Path, proxy: Option<&str>) {
    command
        .arg("build")
        .arg("--fakeroot")
        .arg("--force")
        .arg("image.sif")
        .arg("workspace.def")
        .current_dir(work)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("HOME", work)
        .env("APPTAINER_CACHEDIR", work.join("cache"))
        .env("APPTAINER_TMPDIR", work);
    if let Some(proxy) = proxy {
        for name in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] {
            command.env(name, proxy);
        }
    }
}

/// The cgroup name of a build: this output root's, the lab's and the
/// workspace's (one build per workspace at a time).
pub fn cgroup_name(output_root: &Path, lab: &str, workspace: &str) -> String {
    let root: PathBuf = std::path::absolute(output_root).unwrap_or_else(|_| output_root.to_path_buf());
    let tag = super::attempt_files::fnv1a(super::layout::Layout::new(&root).root().as_os_str().as_encoded_bytes());
    format!("{tag:016x}-build-{lab}-{workspace}")
}
