//! Quotas of homes and lab shares (policy §13): what each holds is
//! measured in the background (every `storage.scan_minutes`, and within a
//! minute of a job's end for that job's home and share) and kept in the
//! database; `GET /v1/me/storage` reads it, and a submit from a person
//! whose home or lab share is over its quota is refused (`409
//! QUOTA_EXCEEDED`, naming the place, its usage and its quota). A running
//! job is never stopped for it: the filesystem's own quota, where the
//! operator sets one, is the hard limit.

use std::path::Path;
use std::time::Duration;

use app::model::storage::{PlaceUsage, StorageView};
use app::msg;

use crate::auth::Caller;
use crate::clock::{now_ms, rfc3339};
use crate::config::storage::StorageSettings;
use crate::db;
use crate::executor::places::Places;
use crate::services::{ServiceError, ServiceResult, Services};

/// A walk counts at most this many entries (a share of millions of files
/// is measured by its first ten million; the rest only adds).
const MAX_WALK: usize = 10_000_000;
/// How soon after a job's end its places are measured again (or sooner,
/// with a shorter `storage.scan_minutes`).
const AFTER_END: Duration = Duration::from_secs(60);

/// The key of a place in `storage_usage`.
fn key(kind: &str, name: &str) -> String {
    format!("{kind}/{name}")
}

/// `GET /v1/me/storage`.
pub async fn my_storage(state: &Services, caller: &Caller) -> ServiceResult<StorageView> {
    let places = Places::new(&state.settings.storage.root);
    let (user, lab) = (&caller.user.username, &caller.user.lab);
    let mut conn = state.db.acquire().await?;
    let home = db::storage::usage_of(&mut conn, &key("home", user)).await?;
    let share = db::storage::usage_of(&mut conn, &key("labs", lab)).await?;
    let settings = &state.settings.storage;
    let place = |path: Option<std::path::PathBuf>, used: Option<(i64, i64)>, gb: f64| PlaceUsage {
        path: path.map(|p| p.display().to_string()).unwrap_or_default(),
        used_bytes: used.map_or(0, |(bytes, _)| bytes.max(0) as u64),
        quota_bytes: StorageSettings::bytes(gb),
    };
    let measured_at = home.zip(share).map(|((_, a), (_, b))| rfc3339(a.min(b)));
    Ok(StorageView {
        home: place(places.home(user), home, settings.home_quota_gb),
        lab: place(places.lab(lab), share, settings.lab_quota_gb),
        measured_at,
    })
}

/// Refuses new work that would write to a home or lab share over its
/// quota (a submit; later, an upload).
pub async fn within_quota(state: &Services, caller: &Caller) -> ServiceResult<()> {
    match over_quota(&my_storage(state, caller).await?) {
        None => Ok(()),
        Some((what, place)) => Err(ServiceError::QuotaExceeded(msg!(
            "err-quota-exceeded",
            place = what,
            path = place.path.clone(),
            used = place.used_bytes,
            quota = place.quota_bytes
        ))),
    }
}

/// The first place over its quota (at it is still within).
fn over_quota(view: &StorageView) -> Option<(&'static str, &PlaceUsage)> {
    [("home", &view.home), ("lab share", &view.lab)].into_iter().find(|(_, p)| p.used_bytes > p.quota_bytes)
}

/// The background measurement: every home and lab share every
/// `storage.scan_minutes`, and the places of jobs that ended since the
/// last look within [`AFTER_END`].
pub async fn usage_scan(state: Services) {
    let full_every = Duration::from_secs_f64((state.settings.storage.scan_minutes * 60.0).max(0.5));
    let pause = AFTER_END.min(full_every);
    let mut last_full: Option<std::time::Instant> = None;
    let mut looked = now_ms();
    loop {
        let now = now_ms();
        let places: Vec<String> = if last_full.is_none_or(|at| at.elapsed() >= full_every) {
            last_full = Some(std::time::Instant::now());
            every_place(&state.settings.storage.root)
        } else {
            let ended = match state.db.acquire().await {
                Ok(mut conn) => db::storage::ended_since(&mut conn, looked).await.unwrap_or_default(),
                Err(_) => Vec::new(),
            };
            ended.into_iter().flat_map(|(user, lab)| [key("home", &user), key("labs", &lab)]).collect()
        };
        looked = now;
        for place in places {
            measure_and_record(&state, &place).await;
        }
        tokio::time::sleep(pause).await;
    }
}

/// Every home and lab share there is, as keys.
fn every_place(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for kind in ["home", "labs"] {
        let Ok(entries) = std::fs::read_dir(root.join(kind)) else { continue };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                found.push(key(kind, &entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

/// Measures one place (off the async workers: a walk) and records it.
pub async fn measure_and_record(state: &Services, place: &str) {
    let path = Places::new(&state.settings.storage.root).root().join(place);
    let Ok(used) = tokio::task::spawn_blocking(move || disk_usage(&path)).await else { return };
    let recorded = async {
        let mut tx = db::write_tx(&state.db).await?;
        db::storage::record_usage(&mut tx, place, used as i64, now_ms()).await?;
        tx.commit().await
    };
    if let Err(e) = recorded.await {
        tracing::warn!(error = %e, place, "cannot record a place's usage");
    }
}

/// Bytes on disk under `dir` (allocated blocks), never following links,
/// a file of several names counted once. A place the walk cannot finish
/// (deeper than the walk goes, more entries than [`MAX_WALK`]) counts as
/// full: what it did not see would otherwise be free of the quota.
pub fn disk_usage(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut seen = 0usize;
    let mut unfinished = false;
    let mut linked = std::collections::HashSet::new();
    let deepest = crate::executor::walk::MAX_DEPTH;
    let _ = crate::executor::walk::walk(dir, MAX_WALK, |entry| {
        seen += 1;
        unfinished |= seen >= MAX_WALK || (entry.is_dir() && entry.path.components().count() >= deepest);
        if entry.stat.st_nlink > 1 && !entry.is_dir() && !linked.insert((entry.stat.st_dev, entry.stat.st_ino)) {
            return true;
        }
        total += (entry.stat.st_blocks.max(0) as u64) * 512;
        true
    });
    if unfinished {
        return i64::MAX as u64;
    }
    total
}

/// How often pending regroups are tried again without a wake (a walk cut
/// short, a share not reachable).
const REGROUP_RETRY: Duration = Duration::from_secs(600);

/// Lab shares whose gid moved (policy §13, `db::lab_gids`): at start, at
/// each wake (a sign-in moved a gid) and every [`REGROUP_RETRY`], each
/// pending share first gets its lab's gid now (quick: no share keeps a
/// gid its lab gave up), then its files of the old gid are walked, one
/// share after another; a move is done once a walk saw every entry. Only
/// a root server can change groups.
pub async fn regroups(state: Services) {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    loop {
        if let Err(e) = regroup_pass(&state).await {
            tracing::warn!(error = %e, "the lab shares' regroup stopped; it is tried again later");
        }
        let _ = tokio::time::timeout(REGROUP_RETRY, state.lab_regroups.notified()).await;
    }
}

async fn regroup_pass(state: &Services) -> ServiceResult<()> {
    let pending = db::lab_gids::pending_regroups(&mut state.db.acquire().await?).await?;
    if pending.is_empty() {
        return Ok(());
    }
    let places = Places::new(&state.settings.storage.root);
    let gid = |g: Option<i64>| g.and_then(|g| u32::try_from(g).ok());
    // every pending share's own folder first: quick, and no share keeps a
    // gid its lab gave up while others are walked
    let mut roots_set = Vec::new();
    for r in &pending {
        // the lab's gid as it is now (it may have moved since the list)
        let now = match state.db.acquire().await {
            Ok(mut conn) => db::lab_gids::of_lab(&mut conn, r.lab_id).await.ok().flatten().and_then(|l| l.gid),
            Err(_) => continue,
        };
        let (places, lab, to) = (places.clone(), r.lab.clone(), gid(now));
        match tokio::task::spawn_blocking(move || places.set_share_group(&lab, to)).await {
            Ok(Ok(())) => roots_set.push(r.clone()),
            outcome => tracing::warn!(lab = %r.lab, ?outcome, "a lab share did not take its lab's gid"),
        }
    }
    for r in roots_set {
        // the lab's gid as it is now (it may have moved since the list); a
        // database that does not answer leaves this lab to the next pass
        let Ok(mut conn) = state.db.acquire().await else { continue };
        let Ok(lab) = db::lab_gids::of_lab(&mut conn, r.lab_id).await else { continue };
        drop(conn);
        let now = lab.and_then(|l| l.gid);
        let (Ok(from), to) = (u32::try_from(r.from_gid), gid(now)) else { continue };
        let (places, lab) = (places.clone(), r.lab.clone());
        let walk = tokio::task::spawn_blocking(move || {
            places.set_share_group(&lab, to)?;
            places.regroup_share(&lab, from, to)
        })
        .await
        .map_err(|e| ServiceError::Internal(format!("the regroup stopped: {e}")))?;
        let complete = match walk {
            Ok(Some(walk)) => {
                tracing::info!(lab = %r.lab, from, ?to, changed = walk.changed, linked = walk.linked,
                    too_deep = walk.too_deep, failed = walk.failed, complete = walk.complete,
                    "a lab share's files took its lab's new gid");
                walk.complete
            }
            Ok(None) => true,
            Err(e) => {
                tracing::warn!(error = %e, lab = %r.lab, "a lab share's files were not regrouped");
                false
            }
        };
        if complete {
            if let Err(e) = regroup_done(state, r.lab_id, r.from_gid).await {
                tracing::warn!(error = %e, lab = %r.lab, "a done regroup was not written down; it is walked again later");
            }
        }
    }
    Ok(())
}

async fn regroup_done(state: &Services, lab_id: i64, from_gid: i64) -> ServiceResult<()> {
    let mut tx = db::write_tx(&state.db).await?;
    db::lab_gids::regroup_done(&mut tx, lab_id, from_gid).await?;
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_at_its_quota_is_within_it_and_one_byte_more_is_over() {
        let place = |used| PlaceUsage { path: "/p".into(), used_bytes: used, quota_bytes: 1000 };
        let view = |home, lab| StorageView { home: place(home), lab: place(lab), measured_at: None };
        assert!(over_quota(&view(1000, 1000)).is_none());
        assert_eq!(over_quota(&view(1001, 0)).map(|(w, _)| w), Some("home"));
        assert_eq!(over_quota(&view(0, 1001)).map(|(w, _)| w), Some("lab share"));
    }

    #[test]
    fn usage_counts_what_is_on_disk_and_follows_no_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("data"), vec![1u8; 64 * 1024]).unwrap();
        std::os::unix::fs::symlink("/usr", dir.path().join("out")).unwrap();
        for i in 0..100 {
            std::fs::hard_link(dir.path().join("data"), dir.path().join(format!("again-{i}"))).unwrap();
        }
        let used = disk_usage(dir.path());
        assert!((64 * 1024..1 << 20).contains(&used), "a file of many names counted once: {used}");
        let mut deep = dir.path().to_path_buf();
        for _ in 0..crate::executor::walk::MAX_DEPTH + 1 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(disk_usage(dir.path()), i64::MAX as u64, "a tree deeper than the walk counts as full");
    }
}
