//! Who may read the datasets on disk (#43: Slurm jobs run outside our
//! mount namespace, as their person's uid): each fetched dataset's folder
//! is given to the people of the labs it is open to (everyone when it is
//! open to every lab), and each lab's view holds links to the datasets
//! open to it, readable by its people ([`crate::executor::dataset_access`]).
//! Recomputed from the database at start-up, at once after a dataset is
//! registered, changed, fetched or deleted, and every minute: people join,
//! move and leave labs through several doors (admin pages, campus
//! sign-in, the directory), and a minute is how long one who left keeps
//! reading by path. Registered folders are the site's own: their
//! permissions are left as they are.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::db;
use crate::executor::dataset_access::{restrict, sync_view, Readers};
use crate::executor::places::Places;
use crate::services::Services;

/// A lab's view: its folder, the (name, folder) links it holds, its readers.
type View = (PathBuf, Vec<(String, PathBuf)>, Readers);

/// The longest a change in a lab's people waits to reach the disk.
const EVERY: Duration = Duration::from_secs(60);

/// A dataset changed: bring the disk in step now.
pub fn changed(state: &Services) {
    state.dataset_readers.notify_one();
}

/// Keeps the disk in step, for as long as the server runs.
pub async fn keep_in_step(state: Services) {
    loop {
        if let Err(e) = sync(&state).await {
            tracing::warn!(error = %e, "cannot bring the datasets' readers in step");
        }
        let _ = tokio::time::timeout(EVERY, state.dataset_readers.notified()).await;
    }
}

/// Gives a just-fetched dataset's folder to its readers, before it is
/// `READY` (until then it is root's alone).
pub async fn open_fetched(state: &Services, row: &db::datasets::DatasetRow) -> Result<(), String> {
    let people = people(state).await?;
    let readers = readers(&super::labs_of(row), &people);
    let folder = Places::new(&state.settings.storage.root).dataset_store().join(&row.name);
    tokio::task::spawn_blocking(move || restrict(&folder, &readers))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

/// Each lab's people's uids (on Slurm, the configured ones alone).
async fn people(state: &Services) -> Result<HashMap<String, Vec<u32>>, String> {
    let mut conn = state.db.acquire().await.map_err(|e| e.to_string())?;
    let local = state.settings.executor.kind == crate::config::ExecutorKind::Local;
    let members = db::datasets::lab_members(&mut conn, local).await.map_err(|e| e.to_string())?;
    let mut people: HashMap<String, Vec<u32>> = HashMap::new();
    for (lab, uid) in members {
        if let Ok(uid) = u32::try_from(uid) {
            people.entry(lab).or_default().push(uid);
        }
    }
    Ok(people)
}

/// Who reads a dataset open to `labs` (None: every lab).
fn readers(labs: &Option<Vec<String>>, people: &HashMap<String, Vec<u32>>) -> Readers {
    match labs {
        None => Readers::Everyone,
        Some(labs) => Readers::Uids(labs.iter().flat_map(|l| people.get(l).cloned().unwrap_or_default()).collect()),
    }
}

/// One full recompute.
pub async fn sync(state: &Services) -> Result<(), String> {
    let (rows, labs) = {
        let mut conn = state.db.acquire().await.map_err(|e| e.to_string())?;
        let rows = db::datasets::list(&mut conn).await.map_err(|e| e.to_string())?;
        let labs = db::datasets::lab_names(&mut conn).await.map_err(|e| e.to_string())?;
        (rows, labs)
    };
    let people = people(state).await?;
    let places = Places::new(&state.settings.storage.root);
    let ready: Vec<_> = rows.into_iter().filter(|r| r.state == "READY").collect();
    let fetched: Vec<(PathBuf, Readers)> = ready
        .iter()
        .filter(|r| r.source_url.is_some())
        .map(|r| (places.dataset_store().join(&r.name), readers(&super::labs_of(r), &people)))
        .collect();
    let views: Vec<View> = labs
        .iter()
        .filter_map(|lab| {
            let open = ready
                .iter()
                .filter(|r| super::open_to(r, lab))
                .map(|r| (r.name.clone(), super::folder_of(state, r)))
                .collect();
            Some((places.lab_view(lab)?, open, Readers::Uids(people.get(lab).cloned().unwrap_or_default())))
        })
        .collect();
    let store = places.dataset_store();
    tokio::task::spawn_blocking(move || -> Result<(), String> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        if store.is_dir() {
            std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o711)).map_err(|e| e.to_string())?;
        } else {
            std::fs::DirBuilder::new().recursive(true).mode(0o711).create(&store).map_err(|e| e.to_string())?;
        }
        for (folder, readers) in &fetched {
            if let Err(e) = restrict(folder, readers) {
                tracing::warn!(error = %e, folder = %folder.display(), "cannot set a dataset's readers");
            }
        }
        for (view, open, readers) in &views {
            if let Err(e) = sync_view(view, open, Some(readers)) {
                tracing::warn!(error = %e, view = %view.display(), "cannot bring a lab's dataset view in step");
            }
        }
        Ok(())
    })
    .await
    .map_err(|e| e.to_string())?
}
