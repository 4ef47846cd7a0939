//! What every page shows of the cluster: who is signed in, maintenance,
//! the dashboard, whether the executor can be reached, usage charts.

use crate::model::error::ConsoleError;
use crate::model::views::{self, DashboardView};
use crate::model::{MaintenanceView, Viewer};
use leptos::prelude::*;

#[server]
pub async fn whoami() -> Result<Option<Viewer>, ConsoleError> {
    Ok(crate::api::backend::current_caller().await?.map(|who| who.viewer))
}

#[server]
pub async fn maintenance_status() -> Result<MaintenanceView, ConsoleError> {
    use crate::api::backend::*;
    backend()?.maintenance().await.map_err(answer)
}

/// The Policy page's facts (anyone, as the university publishes them).
#[server]
pub async fn policy_facts() -> Result<crate::model::policy::PolicyView, ConsoleError> {
    use crate::api::backend::*;
    let who = current_caller().await?;
    backend()?.policy(who.as_ref()).await.map_err(answer)
}

#[server]
pub async fn dashboard() -> Result<DashboardView, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.dashboard(&who).await.map_err(answer)
}

/// Why the cluster cannot be reached right now (signed-in users only;
/// nothing for anyone else, whose pages are public ones).
#[server]
pub async fn cluster_problem() -> Result<Option<String>, ConsoleError> {
    use crate::api::backend::*;
    if current_caller().await?.is_none() {
        return Ok(None);
    }
    Ok(backend()?.executor_problem().await)
}

/// A month's usage report (`YYYY-MM`; None = this month) by `by`.
#[server]
pub async fn usage_report(month: Option<String>, by: String) -> Result<views::UsageReport, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.usage_report(&who, month, by).await.map_err(answer)
}

#[server]
pub async fn usage_page(lab: Option<String>) -> Result<views::UsagePage, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.usage(&who, lab).await.map_err(answer)
}
