//! The dashboard: the cluster's tiers and nodes with what each GPU is
//! doing, every lab's standing, and the caller's unfinished jobs.

use app::model::views::DashboardView;

use crate::auth::Caller;
use crate::clock::now_ms;
use crate::db;
use crate::services::jobs::{self, ListQuery};
use crate::services::{ServiceResult, Services};

/// The caller's jobs the dashboard lists at most.
const MY_JOBS: i64 = 50;

pub async fn dashboard(state: &Services, caller: &Caller) -> ServiceResult<DashboardView> {
    let mut conn = state.db.acquire().await?;
    let tiers = db::cluster::list_tiers(&mut conn).await?;
    let nodes = crate::services::admin::cluster::nodes_in_use(&mut conn).await?;
    let labs = db::views::labs(&mut conn, now_ms()).await?;
    drop(conn);
    let query = ListQuery {
        state: Some("USER_QUEUE_WAIT,GLOBAL_QUEUE_WAIT,DISPATCHING,RUNNING,CANCELLING".into()),
        user: Some(caller.user.username.clone()),
        limit: Some(MY_JOBS),
        ..ListQuery::default()
    };
    let my_jobs = jobs::list(state, caller, &query).await?.jobs;
    Ok(DashboardView { tiers, nodes, my_jobs, labs })
}
