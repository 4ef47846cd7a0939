//! Group commit for submits. Under many concurrent clients each submit
//! used to open its own write transaction and re-read the maintenance
//! phase, tiers and placement shapes; the write turn, not the work, was
//! the limit. Here a submit queues its request, and whichever submit gets
//! the write turn takes every request queued by then and admits and
//! inserts them all in one transaction (one read of phase/tiers/shapes,
//! one commit). A lone submit is a batch of one, so nothing waits for
//! company.
//!
//! Each request is judged on its own inside the batch: its admission
//! error is its own answer, and the jobs inserted before it in the same
//! transaction count towards its user's limits. Only a database error
//! fails the whole batch, and then nothing of it is committed.

use app::msg;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use app::model::{ArrayJobs, DependencyView, JobState, JobView, Submitted};
use tokio::sync::oneshot;

use super::input::{FieldError, ValidSubmit};
use crate::auth::Caller;
use crate::clock::now_ms;
use crate::config::Settings;
use crate::db;
use crate::policy::admission::{self, Shape};
use crate::services::ServiceError;

type Reply = oneshot::Sender<Result<Submitted, ServiceError>>;

struct Request {
    caller: Caller,
    job: ValidSubmit,
    reply: Reply,
}

/// The queue of submits waiting for the write turn, shared by one
/// server's handlers.
#[derive(Default)]
pub struct SubmitBatcher {
    waiting: Mutex<Vec<Request>>,
    /// Held by the submit whose batch is being written; the next holder
    /// takes what queued meanwhile.
    turn: tokio::sync::Mutex<()>,
}

impl SubmitBatcher {
    /// Queues one submit and answers it once its batch is committed (or
    /// refused). The batch is written by a spawned task, so a client that
    /// hangs up cannot abort other clients' submits half-way.
    pub async fn submit(
        self: &Arc<Self>,
        pool: &crate::db::Pool,
        settings: &Arc<Settings>,
        caller: &Caller,
        job: ValidSubmit,
    ) -> Result<Submitted, ServiceError> {
        let (reply, answer) = oneshot::channel();
        let request = Request { caller: caller.clone(), job, reply };
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).push(request);
        tokio::spawn(write_waiting(self.clone(), pool.clone(), settings.clone()));
        answer
            .await
            .unwrap_or_else(|_| Err(ServiceError::Internal("the submit was dropped before it was written".into())))
    }
}

/// The most requests one transaction takes, oldest first: a command may be
/// 64 KiB, and the batch goes to SQLite as one JSON text. Every queued
/// request has a task of its own waiting for a turn, so what a turn
/// leaves is taken by the next.
const MAX_BATCH: usize = 128;
/// The most jobs one transaction inserts, arrays counted by their
/// elements (a lone request of any size is still taken whole).
const MAX_BATCH_JOBS: usize = 1024;

fn jobs_in(request: &Request) -> usize {
    request.job.array.as_ref().map_or(1, |a| a.indices.len())
}

async fn write_waiting(batcher: Arc<SubmitBatcher>, pool: crate::db::Pool, settings: Arc<Settings>) {
    let _turn = batcher.turn.lock().await;
    let batch: Vec<Request> = {
        let mut waiting = batcher.waiting.lock().unwrap_or_else(|p| p.into_inner());
        let mut jobs = 0;
        let take = waiting
            .iter()
            .take(MAX_BATCH)
            .take_while(|r| {
                jobs += jobs_in(r);
                jobs <= MAX_BATCH_JOBS
            })
            .count()
            .max(1)
            .min(waiting.len());
        waiting.drain(..take).collect()
    };
    if batch.is_empty() {
        return; // an earlier turn took this request along
    }
    let began = std::time::Instant::now();
    let written = admit_and_insert(&pool, &settings, &batch).await;
    metrics::histogram!("submit_batch_seconds").record(began.elapsed().as_secs_f64());
    metrics::histogram!("submit_batch_jobs").record(batch.len() as f64);
    match written {
        Ok(answers) => {
            for (request, answer) in batch.into_iter().zip(answers) {
                let _ = request.reply.send(answer);
            }
        }
        Err(e) => {
            tracing::error!(error = ?e, jobs = batch.len(), "a batch of submits failed; none of it was stored");
            for request in batch {
                let _ = request.reply.send(Err(ServiceError::Internal(format!("{e:?}"))));
            }
        }
    }
}

/// One transaction for the whole batch; one answer per request, in
/// order. An `Err` means nothing was committed. The round
/// trips to SQLite are per batch, not per job: under load each one waits
/// for a CPU, so they, not SQLite's work, set the pace.
async fn admit_and_insert(
    pool: &crate::db::Pool,
    settings: &Settings,
    batch: &[Request],
) -> Result<Vec<Result<Submitted, ServiceError>>, ServiceError> {
    let mut tx = db::write_tx_adding_jobs(pool).await?;
    let now = now_ms();
    let phase = db::maintenance::get(&mut tx).await?.phase;
    let tier_views = db::cluster::list_tiers(&mut tx).await?;
    let tiers: Vec<_> = tier_views.iter().map(db::scheduling::tier_info).collect();
    let placements = db::scheduling::placement_shapes(&mut tx).await?;
    let shapes: Vec<Shape<'_>> =
        placements.iter().map(|(tier, capacity)| Shape { tier, capacity: *capacity }).collect();
    let cluster = Cluster { phase, tier_views: &tier_views, tiers: &tiers, shapes: &shapes };
    let mut users: Vec<i64> = batch.iter().map(|r| r.caller.user.id).collect();
    users.sort_unstable();
    users.dedup();
    let mut loads = db::jobs::user_loads(&mut tx, &users).await?;
    let mut sessions: HashMap<i64, u32> = HashMap::new();

    // 1. judge each request, counting the ones admitted before it
    let mut judged: Vec<Result<Admitted, ServiceError>> = Vec::with_capacity(batch.len());
    for request in batch {
        let load = loads.entry(request.caller.user.id).or_default();
        if request.job.session_app.is_some() {
            // counted here, in the batch's transaction: two starts at once
            // cannot both take the last place
            let user = request.caller.user.id;
            let had = match sessions.get(&user) {
                Some(n) => *n,
                None => db::jobs::unfinished_sessions(&mut tx, user).await?,
            };
            if had >= settings.sessions.max_per_user {
                judged.push(Err(ServiceError::QueueLimit(msg!("err-sessions-limit", had = had))));
                continue;
            }
            sessions.insert(user, had);
        }
        match judge(&mut tx, settings, &cluster, request, *load).await {
            Ok(ok) => {
                if request.job.session_app.is_some() {
                    *sessions.entry(request.caller.user.id).or_default() += 1;
                }
                load.0 += ok.entries.len() as u32;
                load.1 += ok.entries.iter().filter(|e| e.state != JobState::UserQueueWait).count() as u32;
                judged.push(Ok(ok));
            }
            Err(e @ ServiceError::Internal(_)) => return Err(e),
            Err(refused) => judged.push(Err(refused)),
        }
    }

    // 2. give each admitted array its row
    let mut array_ids: Vec<Option<i64>> = Vec::with_capacity(batch.len());
    for (request, verdict) in batch.iter().zip(&judged) {
        let id = match (&request.job.array, verdict) {
            (Some(spec), Ok(_)) => {
                let user = &request.caller.user;
                Some(db::gates::insert_array(&mut tx, user.id, user.lab_id, &spec.text, spec.max_running, now).await?)
            }
            _ => None,
        };
        array_ids.push(id);
    }

    // 3. insert every admitted job together
    let env_json: Vec<String> = batch.iter().map(|request| request.job.env.to_json()).collect();
    let mut new_jobs: Vec<db::jobs::NewJob<'_>> = Vec::new();
    let mut owner: Vec<usize> = Vec::new();
    for (i, (request, verdict)) in batch.iter().zip(&judged).enumerate() {
        let Ok(ok) = verdict else { continue };
        for (k, entry) in ok.entries.iter().enumerate() {
            let array = array_ids[i].zip(request.job.array.as_ref().map(|a| a.indices[k]));
            new_jobs.push(new_job(request, ok, entry, array, &env_json[i]));
            owner.push(i);
        }
    }
    let ids = db::jobs::insert_many(&mut tx, &new_jobs, now).await?;
    let mut views: Vec<Vec<JobView>> = vec![Vec::new(); batch.len()];
    let mut new_ids: Vec<Vec<i64>> = vec![Vec::new(); batch.len()];
    for ((row, &i), id) in new_jobs.iter().zip(&owner).zip(ids) {
        let (caller, deps) = (&batch[i].caller, judged[i].as_ref().map_or(&[][..], |ok| &ok.dependencies[..]));
        views[i].push(db::job_view::inserted_view(id, row, &caller.user.username, &caller.user.lab, deps, now));
        new_ids[i].push(id);
    }
    for (i, request) in batch.iter().enumerate() {
        db::gates::insert_dependencies(&mut tx, &new_ids[i], &request.job.after).await?;
    }
    let answers = judged
        .into_iter()
        .zip(views)
        .zip(array_ids)
        .map(|((verdict, mut jobs), array_id)| {
            verdict.and_then(|_| match array_id {
                Some(array_id) => Ok(Submitted::Array(ArrayJobs { array_id, jobs })),
                None => jobs
                    .pop()
                    .map(|job| Submitted::Job(Box::new(job)))
                    .ok_or_else(|| ServiceError::Internal("an admitted job was not stored".into())),
            })
        })
        .collect();
    tx.commit().await?;
    Ok(answers)
}

/// What every request of a batch is judged against.
struct Cluster<'a> {
    phase: app::model::MaintenancePhase,
    tier_views: &'a [app::model::TierView],
    tiers: &'a [crate::policy::TierInfo],
    shapes: &'a [Shape<'a>],
}

/// An admitted request: where each of its jobs enters, its time limit,
/// its dependencies as they stand.
struct Admitted {
    entries: Vec<admission::Entry>,
    time_limit_minutes: u32,
    dependencies: Vec<DependencyView>,
}

/// One request judged as a lone submit was before batching: the policy's
/// admission given its user's load (unfinished jobs, jobs holding a
/// slot), then its dependencies, its workspace, its time limit.
async fn judge(
    tx: &mut db::WriteTx,
    settings: &Settings,
    cluster: &Cluster<'_>,
    request: &Request,
    load: (u32, u32),
) -> Result<Admitted, ServiceError> {
    let (caller, job) = (&request.caller, &request.job);
    let wanted = admission::Request {
        num_gpus: job.num_gpus.get(),
        min_vram_gb: job.min_vram_gb,
        unfinished: load.0,
        holding: load.1,
        max_concurrent: caller.user.max_concurrent.max(0) as u32,
        count: jobs_in(request) as u32,
        has_dependencies: !job.after.is_empty(),
        array_limit: job.array.as_ref().and_then(|a| a.max_running),
    };
    let entries = admission::admit(
        cluster.phase,
        cluster.tiers,
        cluster.shapes,
        settings.scheduler.max_unfinished_per_user,
        &wanted,
    )?;
    let dependencies = super::gates::check_dependencies(tx, caller, &job.after).await?;
    if let Some(name) = &job.workspace {
        super::check_workspace(tx, &caller.user.lab, name).await?;
    }
    Ok(Admitted { entries, time_limit_minutes: time_limit(settings, cluster.tier_views, job)?, dependencies })
}

fn new_job<'a>(
    request: &'a Request,
    admitted: &Admitted,
    entry: &admission::Entry,
    array: Option<(i64, u32)>,
    env_json: &'a str,
) -> db::jobs::NewJob<'a> {
    db::jobs::NewJob {
        name: request.job.name.as_str(),
        user_id: request.caller.user.id,
        lab_id: request.caller.user.lab_id,
        state: entry.state,
        command: request.job.command.as_str(),
        num_gpus: request.job.num_gpus.get(),
        workspace: request.job.workspace.as_deref(),
        env_json,
        time_limit_minutes: admitted.time_limit_minutes,
        min_vram_gb: request.job.min_vram_gb,
        pending_reason: entry.reason.as_ref().map(ToString::to_string),
        gated: array.is_some() || !request.job.after.is_empty(),
        array,
        session_app: request.job.session_app.as_deref(),
    }
}

/// The job's limit: as asked, up to the longest limit of any tier that
/// could run it; by default the configured default, capped the same way.
fn time_limit(settings: &Settings, tier_views: &[app::model::TierView], job: &ValidSubmit) -> Result<u32, FieldError> {
    let max_minutes = tier_views
        .iter()
        .filter(|t| t.active && t.max_gpus >= i64::from(job.num_gpus.get()))
        .map(|t| t.max_time_limit_minutes.max(1) as u32)
        .max()
        .unwrap_or(1);
    match job.time_limit_minutes {
        Some(m) if m > max_minutes => Err(FieldError {
            field: "time_limit_minutes",
            message: msg!("err-tier-time-limit", max = max_minutes, got = m),
        }),
        Some(m) => Ok(m),
        None => Ok(settings.scheduler.default_time_limit_minutes.min(max_minutes)),
    }
}
