//! Building a workspace image with Apptainer, in the background: a
//! definition file (base image + `pip install` of the packages) goes to
//! `apptainer build`, whose output is the build log; the image is renamed
//! into place only when the build succeeds, so a READY workspace always
//! has a whole image. Files live under `<output_root>/.workspaces/<lab>/`.
//! Where Apptainer is not installed the workspace ends FAILED with a log
//! that says so (nothing else can build an image here).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::db;
use crate::services::Services;

/// A build that takes longer than this is stopped and FAILED.
const BUILD_TIMEOUT: Duration = Duration::from_secs(2 * 3600);

#[derive(Debug, Clone)]
pub struct BuildJob {
    pub lab: String,
    pub name: String,
    /// With its scheme (`docker://…`), as `check_base_image` returns it.
    pub base_image: String,
    pub packages: Vec<String>,
    /// The uid of the researcher who asked for it: the build runs as
    /// that uid (with `--fakeroot`) when the server is root, never as root.
    pub uid: Option<u32>,
}

/// The definition-file bootstrap agent for an image reference's scheme.
pub fn bootstrap_of(image: &str) -> Option<(&'static str, &str)> {
    let (scheme, rest) = image.split_once("://")?;
    let agent = match scheme {
        "docker" => "docker",
        "library" => "library",
        "oras" => "oras",
        _ => return None,
    };
    (!rest.is_empty()).then_some((agent, rest))
}

/// The Apptainer definition file for a workspace. Inputs are validated to
/// plain characters, and each package is single-quoted anyway. `proxy`:
/// the build's way to the registries, given to `%post` (which starts
/// with an environment of its own).
pub fn definition(base_image: &str, packages: &[String], proxy: Option<&str>) -> String {
    let (agent, from) = bootstrap_of(base_image).unwrap_or(("docker", base_image));
    let mut def = format!("Bootstrap: {agent}\nFrom: {from}\n");
    if !packages.is_empty() {
        let quoted: Vec<String> = packages.iter().map(|p| format!("'{}'", p.replace('\'', ""))).collect();
        def.push_str("\n%post\n");
        if let Some(proxy) = proxy {
            def.push_str(&format!("    export HTTPS_PROXY={proxy} HTTP_PROXY={proxy}\n"));
        }
        def.push_str(&format!("    python3 -m pip install --no-cache-dir {}\n", quoted.join(" ")));
    }
    def
}

pub fn dir(output_root: &Path, lab: &str) -> PathBuf {
    std::path::absolute(output_root).unwrap_or_else(|_| output_root.to_path_buf()).join(".workspaces").join(lab)
}

pub fn image_path(output_root: &Path, lab: &str, name: &str) -> PathBuf {
    dir(output_root, lab).join(format!("{name}.sif"))
}

fn log_path(output_root: &Path, lab: &str, name: &str) -> PathBuf {
    dir(output_root, lab).join(format!("{name}.build.log"))
}

/// The build log as written so far (its last 64 KiB, as a job log's tail).
pub fn live_log(output_root: &Path, lab: &str, name: &str) -> String {
    crate::executor::record::read_log_tail(&log_path(output_root, lab, name), 0)
}

/// The configured Apptainer command (`executor.apptainer`: a path, or a
/// name looked up on the server's PATH), if it is installed.
pub fn find_apptainer(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        let path = PathBuf::from(command);
        return path.is_file().then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(command)).find(|p| p.is_file())
}

/// Starts the build; its outcome is written to the workspace row.
pub fn spawn(state: Services, job: BuildJob) {
    tokio::spawn(async move {
        let root = state.settings.executor.output_root.clone();
        let (status, image, log) = match run(&root, &state.settings, &job).await {
            Ok(image) => ("READY", Some(image.display().to_string()), live_log(&root, &job.lab, &job.name)),
            Err(why) => {
                let mut log = live_log(&root, &job.lab, &job.name);
                log.push_str(&format!("\n[jpu-share] the build failed: {why}\n"));
                ("FAILED", None, log)
            }
        };
        tracing::info!(lab = %job.lab, workspace = %job.name, status, "workspace build ended");
        let saved = async {
            let mut tx = db::write_tx(&state.db).await?;
            db::workspaces::finish_build(&mut tx, &job.lab, &job.name, status, image.as_deref(), &log).await?;
            tx.commit().await
        };
        if let Err(e) = saved.await {
            tracing::error!(lab = %job.lab, workspace = %job.name, error = %e, "could not record the workspace build");
        }
    });
}

async fn run(root: &Path, settings: &crate::config::Settings, job: &BuildJob) -> Result<PathBuf, String> {
    let apptainer = settings.executor.apptainer.as_str();
    use std::os::unix::fs::OpenOptionsExt;
    let dir = dir(root, &job.lab);
    // jobs pass through to read their lab's image; nobody lists the folder
    crate::executor::layout::private_dir(&dir, 0o711).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let log_file = log_path(root, &job.lab, &job.name);
    let _ = std::fs::remove_file(&log_file);
    let mut log = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&log_file)
        .map_err(|e| format!("cannot write the build log: {e}"))?;
    {
        use std::io::Write;
        let _ = writeln!(log, "[jpu-share] building workspace {} of lab {} from {}", job.name, job.lab, job.base_image);
        let def = definition(&job.base_image, &job.packages, None);
        let _ = write!(log, "[jpu-share] definition file:\n{def}\n");
    }
    let Some(apptainer) = find_apptainer(apptainer) else {
        return Err(format!(
            "Apptainer is not installed on this server (`{apptainer}` not found; see executor.apptainer), so \
             workspace images cannot be built here; jobs without a workspace still run"
        ));
    };
    let as_root = nix::unistd::geteuid().is_root();
    let builder = match (as_root, job.uid) {
        (false, _) => None,
        (true, Some(uid)) if uid != 0 => Some(uid),
        (true, _) => return Err("the researcher who asked for it has no unix uid to build as".into()),
    };
    // the build's own folder: its user's alone, gone after the build
    let work = dir.join(format!(".build-{}", job.name));
    let _ = std::fs::remove_dir_all(&work);
    crate::executor::layout::create_output_dir(&work, builder.map(|uid| (uid, uid)))
        .map_err(|e| format!("cannot create the build folder: {e}"))?;
    // the proxy's socket: in a folder of root's the builder only passes
    // through (in the builder's own folder it could be swapped for a link
    // between its bind and its chown, and root would chown the target)
    let egress = dir.join(format!(".egress-{}", job.name));
    let _ = std::fs::remove_dir_all(&egress);
    crate::executor::layout::private_dir(&egress, 0o711)
        .map_err(|e| format!("cannot create {}: {e}", egress.display()))?;
    let ws = &settings.workspaces;
    let spec = crate::executor::build_box::BuildSpec {
        work: &work,
        egress_dir: &egress,
        apptainer: &apptainer,
        builder,
        name: crate::executor::build_box::cgroup_name(root, &job.lab, &job.name),
        limits: crate::executor::contain::Limits {
            cpus: ws.build_cpus.max(1),
            mem_bytes: u64::from(ws.build_mem_gb.max(1)) << 30,
            pids: ws.build_pids.max(64),
        },
        gpus: crate::executor::devices::GpuDevices {
            pattern: settings.executor.gpu_devices.clone(),
            control: settings.executor.gpu_control_devices.clone(),
        }
        .rule(&[]),
        registries: crate::executor::egress::Registries::parse(&ws.registries)?,
        log: log.try_clone().map_err(|e| e.to_string())?,
    };
    let (command, held) =
        crate::executor::build_box::command(spec).map_err(|e| format!("cannot contain the build: {e}"))?;
    let def = definition(&job.base_image, &job.packages, held.proxy.as_deref());
    {
        use std::io::Write;
        let _ = writeln!(log, "{}", held.note);
        if let Some(proxy) = &held.proxy {
            let _ = writeln!(log, "[jpu-share] %post is given that proxy ({proxy}) in HTTPS_PROXY and HTTP_PROXY");
        }
    }
    let result = build_in(&work, command, builder, &def, log).await;
    // the build's cgroup killed and removed, its proxy closed
    drop(held);
    let image = image_path(root, &job.lab, &job.name);
    let moved = result.and_then(|partial| install(&partial, &image, builder));
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&egress);
    moved.map(|()| image)
}

/// Moves the built image into place and makes it root's, 0644. What the
/// builder left at `partial` is theirs to choose: a link (root would chown
/// or chmod its target: /etc/passwd, the database) or a second name of
/// another file is refused; only a plain file of the builder's own is
/// taken, and it is changed through its descriptor, never by path.
fn install(partial: &Path, image: &Path, builder: Option<u32>) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let refuse = |why: &str| {
        let _ = std::fs::remove_file(image);
        Err(format!("the build left no plain image file ({why})"))
    };
    // rename moves a link itself, never its target; the lab's folder is
    // root's, so nothing changes the new name after it
    std::fs::rename(partial, image).map_err(|e| format!("cannot move the image into place: {e}"))?;
    let file = match std::fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_NOFOLLOW).open(image) {
        Ok(file) => file,
        Err(e) => return refuse(&e.to_string()),
    };
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() || meta.nlink() != 1 || builder.is_some_and(|uid| meta.uid() != uid) {
        return refuse("a link, a second name of another file, or not the builder's");
    }
    if builder.is_some() {
        // root's from here on: its builder cannot change it under the jobs
        std::os::unix::fs::fchown(&file, Some(0), Some(0)).map_err(|e| format!("cannot own the image: {e}"))?;
    }
    // jobs run as their users' uids and must read the image
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
        .map_err(|e| format!("cannot open the image to jobs: {e}"))
}

/// Runs the build's `command` (`apptainer build --fakeroot` in `work`, as
/// `builder` where given, in its box: the definition's `%post` is the
/// researcher's code, run with their privileges, not root's).
async fn build_in(
    work: &Path,
    mut command: tokio::process::Command,
    builder: Option<u32>,
    def: &str,
    log: std::fs::File,
) -> Result<PathBuf, String> {
    use std::os::unix::fs::OpenOptionsExt;
    // relative to the build folder, which the command starts in (entered
    // as root): the builder need not pass through the folders above it
    let (def_path, partial) = (work.join("workspace.def"), work.join("image.sif"));
    // a new file, never through a link the builder planted in its folder
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .mode(0o644)
        .open(&def_path)
        .map_err(|e| format!("cannot write the definition file: {e}"))?;
    std::io::Write::write_all(&mut file, def.as_bytes())
        .map_err(|e| format!("cannot write the definition file: {e}"))?;
    if let Some(uid) = builder {
        let _ = std::os::unix::fs::fchown(&file, Some(uid), Some(uid));
    }
    drop(file);
    command.stdin(Stdio::null()).stdout(log.try_clone().map_err(|e| e.to_string())?).stderr(log).kill_on_drop(true);
    let status = match tokio::time::timeout(BUILD_TIMEOUT, command.status()).await {
        Err(_) => return Err(format!("it took longer than {} minutes", BUILD_TIMEOUT.as_secs() / 60)),
        Ok(Err(e)) => return Err(format!("cannot run apptainer: {e}")),
        Ok(Ok(status)) => status,
    };
    if !status.success() {
        return Err(format!("apptainer build exited with {status}"));
    }
    Ok(partial)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_files_bootstrap_from_the_image_and_install_packages() {
        let def = definition("docker://python:3.11-slim", &["numpy".into(), "torch==2.4.0".into()], None);
        assert_eq!(
            def,
            "Bootstrap: docker\nFrom: python:3.11-slim\n\n%post\n    python3 -m pip install --no-cache-dir 'numpy' 'torch==2.4.0'\n"
        );
        assert_eq!(definition("library://alpine:3.19", &[], None), "Bootstrap: library\nFrom: alpine:3.19\n");
        let boxed = definition("docker://python:3.11", &["numpy".into()], Some("http://127.0.0.1:3128"));
        assert!(boxed.contains(
            "%post\n    export HTTPS_PROXY=http://127.0.0.1:3128 HTTP_PROXY=http://127.0.0.1:3128\n    python3"
        ));
    }

    #[test]
    fn only_pullable_schemes_bootstrap() {
        assert_eq!(bootstrap_of("oras://ghcr.io/x/y:1"), Some(("oras", "ghcr.io/x/y:1")));
        assert_eq!(bootstrap_of("http://x"), None);
        assert_eq!(bootstrap_of("docker://"), None);
        assert_eq!(bootstrap_of("python:3.11"), None);
    }
}
