//! Workspaces (api.md): a lab's named container image, built from a base
//! image plus packages with network access, which jobs then run in with
//! the network cut off (policy §8). Creating one records it as BUILDING
//! and starts the build in the background (`build`); its status and log
//! are read back while it builds. Jobs may name only a READY workspace of
//! their own lab.

pub mod build;

use app::model::views::WorkspaceView;
use app::model::Role;
use app::msg;
use serde::Deserialize;

use crate::auth::Caller;
use crate::clock::{now_ms, rfc3339};
use crate::db;
use crate::db::workspaces::WorkspaceRow;
use crate::services::admin::check_name;
use crate::services::ServiceError;
use crate::services::Services;

pub const MAX_PACKAGES: usize = 64;

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWorkspaceBody {
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,64}$")]
    pub name: String,
    /// An image reference Apptainer can pull, e.g. `docker://python:3.11-slim`
    /// (a plain `python:3.11-slim` means Docker Hub).
    #[schema(min_length = 1, max_length = 256)]
    pub base_image: String,
    /// pip requirement specifiers installed into the image, e.g. `torch==2.4.0`.
    #[serde(default)]
    #[schema(max_items = 64)]
    pub packages: Vec<String>,
}

/// An image reference: registry, path, tag or digest characters only (it
/// ends up in a definition file, so nothing that could break out of it).
pub fn check_base_image(image: &str) -> Result<String, ServiceError> {
    let image = image.trim();
    let ok = (1..=256).contains(&image.len())
        && image.chars().all(|c| c.is_ascii_alphanumeric() || "._-/:@".contains(c))
        && !image.starts_with(['-', ':', '/']);
    if !ok {
        return Err(ServiceError::field("base_image", msg!("err-image-chars")));
    }
    let full = if image.contains("://") { image.to_string() } else { format!("docker://{image}") };
    if build::bootstrap_of(&full).is_none() {
        return Err(ServiceError::field("base_image", msg!("err-image-source")));
    }
    Ok(full)
}

/// A pip requirement: a name with optional extras and version bounds.
pub fn check_packages(packages: &[String]) -> Result<Vec<String>, ServiceError> {
    if packages.len() > MAX_PACKAGES {
        return Err(ServiceError::field("packages", msg!("err-packages-count", max = MAX_PACKAGES)));
    }
    packages
        .iter()
        .map(|p| {
            let p = p.trim();
            let ok = (1..=100).contains(&p.len())
                && p.starts_with(|c: char| c.is_ascii_alphanumeric())
                && p.chars().all(|c| c.is_ascii_alphanumeric() || "._-[],=<>!~*".contains(c));
            if ok {
                Ok(p.to_string())
            } else {
                Err(ServiceError::field("packages", msg!("err-not-pip", text = p.to_string())))
            }
        })
        .collect()
}

/// A workspace row as its view, without the build log.
fn view(row: WorkspaceRow, with_log: Option<String>) -> WorkspaceView {
    WorkspaceView {
        packages: serde_json::from_str(&row.packages_json).unwrap_or_default(),
        name: row.name,
        lab: row.lab,
        base_image: row.base_image,
        status: row.status,
        created_at: rfc3339(row.created_at_ms),
        build_log: with_log,
    }
}

/// Records the workspace and starts its build. A FAILED workspace of the
/// same name is replaced; a building or ready one is a conflict.
pub async fn create(state: &Services, caller: &Caller, body: NewWorkspaceBody) -> Result<WorkspaceView, ServiceError> {
    check_name("name", &body.name)?;
    let base_image = check_base_image(&body.base_image)?;
    let packages = check_packages(&body.packages)?;
    let packages_json = serde_json::to_string(&packages).unwrap_or_else(|_| "[]".into());
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    check_caps(&state.settings.workspaces, &mut tx, caller, &body.name).await?;
    let fresh =
        db::workspaces::upsert_building(&mut tx, caller.user.lab_id, &body.name, &base_image, &packages_json, now)
            .await?;
    if !fresh {
        return Err(ServiceError::Conflict(msg!("err-workspace-exists", name = &body.name, lab = &caller.user.lab)));
    }
    let row = db::workspaces::get(&mut tx, &caller.user.lab, &body.name)
        .await?
        .ok_or_else(|| ServiceError::Internal("the new workspace vanished".into()))?;
    tx.commit().await?;
    let uid = caller.user.unix_uid.or(caller.user.allocated_uid).and_then(|u| u32::try_from(u).ok());
    build::spawn(
        state.clone(),
        build::BuildJob { lab: row.lab.clone(), name: row.name.clone(), base_image, packages, uid },
    );
    Ok(view(row, None))
}

/// Each build runs `apptainer build --fakeroot` as the researcher's uid, with network: a lab has at
/// most `workspaces.max_per_lab` workspaces and one build at a time, and
/// the server at most `workspaces.max_concurrent_builds` (checked in the
/// transaction that records the new build, so concurrent creates cannot
/// slip past together).
async fn check_caps(
    caps: &crate::config::WorkspaceSettings,
    conn: &mut impl crate::db::AsConn,
    caller: &Caller,
    name: &str,
) -> Result<(), ServiceError> {
    let (others, building, running) = db::workspaces::counts(conn, caller.user.lab_id, name).await?;
    let lab = &caller.user.lab;
    if others >= i64::from(caps.max_per_lab) {
        return Err(ServiceError::QueueLimit(msg!(
            "err-workspaces-limit",
            lab = lab,
            count = others,
            max = caps.max_per_lab
        )));
    }
    if let Some(other) = building.filter(|b| b != name) {
        return Err(ServiceError::QueueLimit(msg!("err-workspace-build-busy", lab = lab, name = other)));
    }
    if running >= i64::from(caps.max_concurrent_builds) {
        return Err(ServiceError::QueueLimit(msg!("err-workspace-builds-full", running = running)));
    }
    Ok(())
}

/// The caller's lab's workspaces (admins: every lab's).
pub async fn list(state: &Services, caller: &Caller) -> Result<Vec<WorkspaceView>, ServiceError> {
    let lab = (caller.user.role != Role::Admin).then_some(caller.user.lab.as_str());
    let rows = db::workspaces::list(&mut state.db.acquire().await?, lab).await?;
    Ok(rows.into_iter().map(|r| view(r, None)).collect())
}

/// The caller's own lab's workspaces, also for admins: a job runs in
/// its own lab's workspace (what the submit form offers).
pub async fn own_lab(state: &Services, caller: &Caller) -> Result<Vec<WorkspaceView>, ServiceError> {
    let rows = db::workspaces::list(&mut state.db.acquire().await?, Some(&caller.user.lab)).await?;
    Ok(rows.into_iter().map(|r| view(r, None)).collect())
}

/// One of the caller's lab's workspaces with its build log (the live log
/// while it builds). Admins reach any lab's, their own lab's first.
pub async fn get(state: &Services, caller: &Caller, name: &str) -> Result<WorkspaceView, ServiceError> {
    let mut conn = state.db.acquire().await?;
    let mut row = db::workspaces::get(&mut conn, &caller.user.lab, name).await?;
    if row.is_none() && caller.user.role == Role::Admin {
        row = db::workspaces::list(&mut conn, None).await?.into_iter().find(|w| w.name == name);
    }
    let row =
        row.ok_or_else(|| ServiceError::NotFound(msg!("err-no-workspace", name = name, lab = &caller.user.lab)))?;
    let log = if row.status == "BUILDING" {
        build::live_log(&state.settings.executor.output_root, &row.lab, &row.name)
    } else {
        row.build_log.clone()
    };
    Ok(view(row, Some(log)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_images_are_plain_references() {
        assert_eq!(check_base_image("python:3.11-slim").unwrap(), "docker://python:3.11-slim");
        assert_eq!(
            check_base_image("docker://nvcr.io/nvidia/pytorch:24.01-py3").unwrap(),
            "docker://nvcr.io/nvidia/pytorch:24.01-py3"
        );
        assert_eq!(check_base_image("library://alpine@sha256:abc").unwrap(), "library://alpine@sha256:abc");
        for bad in ["", "http://x/y", "ubuntu\nFrom: evil", "a b", "-rf", "$(id)", &"x".repeat(257)] {
            assert!(check_base_image(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn packages_are_pip_requirements() {
        let ok = vec!["numpy".to_string(), "torch==2.4.0".into(), "transformers[torch]>=4.40,<5".into()];
        assert_eq!(check_packages(&ok).unwrap(), ok);
        for bad in ["", "numpy; rm -rf /", "../x", "-e git+https://x", "a b", "pkg$(id)"] {
            assert!(check_packages(&[bad.to_string()]).is_err(), "{bad:?} accepted");
        }
        let many: Vec<String> = (0..=MAX_PACKAGES).map(|i| format!("p{i}")).collect();
        assert!(check_packages(&many).is_err());
    }
}
