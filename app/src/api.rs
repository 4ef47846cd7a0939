//! Server functions used by the console. Each one: get the backend and
//! viewer, call one backend method, map the error.

use crate::model::{DashboardView, MaintenanceView, Viewer};
use leptos::prelude::*;

#[server]
pub async fn whoami() -> Result<Option<Viewer>, ServerFnError> {
    crate::backend::current_viewer().await
}

#[server]
pub async fn maintenance_status() -> Result<MaintenanceView, ServerFnError> {
    use crate::backend::*;
    backend()?.0.maintenance().await.map_err(to_server_error)
}

#[server]
pub async fn dashboard() -> Result<DashboardView, ServerFnError> {
    use crate::backend::*;
    let viewer = current_viewer().await?.ok_or_else(|| to_server_error(ConsoleError::Unauthenticated))?;
    backend()?.0.dashboard(&viewer).await.map_err(to_server_error)
}
