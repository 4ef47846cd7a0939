//! The delivery task: takes due rows from the outbox, sends them (a few at
//! a time), and records each outcome, retrying failures with back-off. It
//! runs beside the scheduler loop and never inside its cycle.
//!
//! Each delivery runs on its own and records its own outcome, at most
//! [`PER_TARGET`] at once to one target: a target that never answers
//! holds its own sends only (in rounds that waited for all, one
//! researcher's silent webhook and 64 events delayed another user's
//! delivery from 0.08 s to 79 s).
//!
//! A row is marked SENDING (committed) before it is sent and DELIVERED
//! after; a crash between the two leaves it SENDING, and the next start
//! sends it again. So nothing is lost; the only duplicate possible is a
//! send a crash interrupted, and it carries the same delivery id
//! (`X-JPU-Delivery`, the e-mail's Message-ID) for the receiver to drop.

use app::i18n::{Arg, Locale};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::db::Pool;
use lettre::{AsyncSmtpTransport, Tokio1Executor};

use super::send;
use super::targets::AllowList;
use crate::clock::{now_ms, rfc3339};
use crate::config::NotifySettings;
use crate::db;
use crate::db::notifications::Due;
use crate::services::ha::Duty;

/// How often the outbox is looked at: the longest an event waits before
/// its first try.
const POLL: Duration = Duration::from_millis(250);
/// Deliveries in flight at once, and to any one target.
const IN_FLIGHT: usize = 16;
const PER_TARGET: usize = 2;
/// The longest wait between tries.
const MAX_BACKOFF_MS: u64 = 600_000;

struct Context {
    db: Pool,
    settings: NotifySettings,
    allow: AllowList,
    mailer: Option<AsyncSmtpTransport<Tokio1Executor>>,
}

/// Delivers until `stop` resolves, while `duty` says this instance does
/// the scheduler's work (api.md: deliveries are the scheduler's).
pub async fn run(db: Pool, settings: NotifySettings, duty: Duty, stop: impl Future<Output = ()> + Send) {
    let ctx = Arc::new(Context {
        allow: AllowList::new(&settings.webhook_allow),
        mailer: send::mailer(&settings.smtp_url),
        db,
        settings,
    });
    let mut sending = Sending::default();
    let mut on_duty = false;
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tokio::time::sleep(POLL) => {}
            Some(done) = sending.tasks.join_next() => sending.finished(done),
        }
        match (on_duty, duty.now()) {
            (_, false) => on_duty = false,
            // on taking the duty: what the last holder was sending when it
            // stopped (or this instance, before a restart) goes again
            (false, true) => on_duty = requeue_interrupted(&ctx.db).await,
            (true, true) => {}
        }
        if on_duty {
            if let Err(e) = sending.claim_more(&ctx).await {
                tracing::error!(error = %e, "cannot claim due notifications");
            }
        }
    }
    // a send cut short stays SENDING and goes again at the next start
    sending.tasks.abort_all();
}

/// Whether the interrupted deliveries were put back (else: tried again).
async fn requeue_interrupted(db: &Pool) -> bool {
    let requeued = async {
        let mut tx = db::write_tx(db).await?;
        let n = db::notifications::requeue_sending(&mut tx).await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(n)
    };
    match requeued.await {
        Ok(n) if n > 0 => {
            tracing::warn!(n, "deliveries interrupted by the last stop are sent again");
            true
        }
        Ok(_) => true,
        Err(e) => {
            tracing::error!(error = %e, "cannot requeue interrupted deliveries");
            false
        }
    }
}

/// The deliveries in flight, by target.
#[derive(Default)]
struct Sending {
    tasks: tokio::task::JoinSet<(String, String)>,
    per_target: HashMap<(String, String), usize>,
}

impl Sending {
    fn finished(&mut self, done: Result<(String, String), tokio::task::JoinError>) {
        match done {
            Ok(key) => {
                if let Some(n) = self.per_target.get_mut(&key) {
                    *n -= 1;
                    if *n == 0 {
                        self.per_target.remove(&key);
                    }
                }
            }
            Err(e) => tracing::error!(error = %e, "a notification delivery task failed"),
        }
    }

    /// Claims what is due for targets with room, and sends each on its own.
    async fn claim_more(&mut self, ctx: &Arc<Context>) -> Result<(), sqlx::Error> {
        let room = IN_FLIGHT.saturating_sub(self.tasks.len());
        if room == 0 {
            return Ok(());
        }
        let busy: Vec<(String, String)> = self.per_target.keys().cloned().collect();
        let due = {
            let mut tx = db::write_tx(&ctx.db).await?;
            let due = db::notifications::claim_due(&mut tx, now_ms(), room as i64, PER_TARGET as i64, &busy).await?;
            tx.commit().await?;
            due
        };
        for d in due {
            let key = (d.channel.clone(), d.target.clone());
            *self.per_target.entry(key.clone()).or_default() += 1;
            let ctx = ctx.clone();
            self.tasks.spawn(async move {
                let outcome = deliver(&ctx, &d).await;
                let recorded = async {
                    let mut tx = db::write_tx(&ctx.db).await?;
                    record(&mut tx, &ctx.settings, &d, outcome).await?;
                    tx.commit().await
                };
                if let Err(e) = recorded.await {
                    // left SENDING: sent again at the next start
                    tracing::error!(delivery = d.id, error = %e, "cannot record a delivery's outcome");
                }
                key
            });
        }
        Ok(())
    }
}

/// Why a try failed, and whether trying again could help.
struct Failure {
    message: String,
    retry: bool,
}

fn retry(message: String) -> Failure {
    Failure { message, retry: true }
}

fn give_up(message: impl Into<String>) -> Failure {
    Failure { message: message.into(), retry: false }
}

async fn record(
    tx: &mut db::WriteTx,
    settings: &NotifySettings,
    d: &Due,
    outcome: Result<(), Failure>,
) -> Result<(), sqlx::Error> {
    let now = now_ms();
    match outcome {
        Ok(()) => {
            metrics::counter!("notifications_delivered_total", "channel" => d.channel.clone()).increment(1);
            db::notifications::delivered(tx, d.id, now).await
        }
        Err(f) => {
            let tries = d.attempts + 1;
            let again =
                (f.retry && tries < settings.max_attempts).then(|| now + backoff_ms(settings.retry_base_ms, tries));
            if again.is_none() {
                metrics::counter!("notifications_failed_total", "channel" => d.channel.clone()).increment(1);
                tracing::warn!(delivery = d.id, error = %f.message, "a notification was given up");
            }
            db::notifications::failed(tx, d.id, &f.message, again).await
        }
    }
}

/// The wait after the `tries`-th failed try: the base, doubling, at most
/// ten minutes.
pub fn backoff_ms(base_ms: u64, tries: u32) -> i64 {
    let factor = 1u64 << tries.saturating_sub(1).min(20);
    base_ms.saturating_mul(factor).min(MAX_BACKOFF_MS) as i64
}

/// One try: the job as it stood at the event, to the target the user
/// still has (a target changed or removed since is not written to).
async fn deliver(ctx: &Context, d: &Due) -> Result<(), Failure> {
    let mut conn = ctx.db.acquire().await.map_err(|e| retry(format!("database: {e}")))?;
    let about = match d.job_id {
        Some(id) => {
            let Some(mut job) = db::job_view::view(&mut conn, id).await.map_err(|e| retry(format!("database: {e}")))?
            else {
                return Err(give_up("the job no longer exists"));
            };
            at_event(&mut job, &d.snapshot);
            About::Job(Box::new(job))
        }
        // a data request as it stood at the event
        None => About::Request(serde_json::from_str(&d.snapshot).unwrap_or_default()),
    };
    let settings =
        db::notifications::settings(&mut conn, d.user_id).await.map_err(|e| retry(format!("database: {e}")))?;
    // the language the person chose in the console, if they did
    let locale = db::accounts::user_by_id(&mut conn, d.user_id)
        .await
        .map_err(|e| retry(format!("database: {e}")))?
        .and_then(|u| u.locale)
        .and_then(|tag| Locale::from_tag(&tag))
        .unwrap_or_default();
    drop(conn);
    let Some(settings) = settings else { return Err(give_up("notifications were turned off")) };
    match d.channel.as_str() {
        "webhook" => {
            if settings.webhook_url.as_deref() != Some(d.target.as_str()) {
                return Err(give_up("the webhook URL was changed or removed before delivery"));
            }
            let secret = settings.webhook_secret.unwrap_or_default();
            let body = match &about {
                About::Job(job) => serde_json::json!({"event": d.event, "sent_at": rfc3339(now_ms()), "job": job}),
                About::Request(r) => {
                    serde_json::json!({"event": d.event, "sent_at": rfc3339(now_ms()), "data_request": r})
                }
            };
            let body = serde_json::to_vec(&body).map_err(|e| give_up(format!("payload: {e}")))?;
            send::webhook(&d.target, &ctx.allow, &secret, d.id, &d.event, body).await.map_err(retry)
        }
        "email" => {
            if settings.email.as_deref() != Some(d.target.as_str()) {
                return Err(give_up("the e-mail address was changed or removed before delivery"));
            }
            let (subject, text) = match &about {
                About::Job(job) => email_text(&d.event, job, locale),
                About::Request(r) => request_email(r, locale),
            };
            send::email(ctx.mailer.as_ref(), &ctx.settings.from, &d.target, d.id, &subject, text).await.map_err(retry)
        }
        other => Err(give_up(format!("unknown channel {other}"))),
    }
}

/// What a delivery is about.
enum About {
    Job(Box<app::model::JobView>),
    Request(serde_json::Value),
}

/// A data request's news, in the person's language.
fn request_email(r: &serde_json::Value, locale: Locale) -> (String, String) {
    let tr = |key: &str, args: &[(&str, Arg)]| app::i18n::tr(locale, key, args);
    let text_of = |k: &str| r[k].as_str().unwrap_or_default().to_string();
    let args = [
        ("id", Arg::from(r["id"].as_i64().unwrap_or_default().to_string())),
        ("name", text_of("name").into()),
        ("state", text_of("state").into()),
    ];
    let subject = tr("mail-request-subject", &args);
    let mut text = tr("mail-request-intro", &args);
    text.push_str("\n\n");
    text.push_str(&format!("URL: {}\n", text_of("url")));
    for (key, field) in [("mail-request-why", "decision_reason"), ("mail-request-problem", "message")] {
        if let Some(v) = r[field].as_str() {
            text.push_str(&format!("{}: {v}\n", tr(key, &[])));
        }
    }
    text.push('\n');
    text.push_str(&tr("mail-off", &[]));
    text.push('\n');
    (subject, text)
}

/// The job's state, attempt, exit code and end reason as they were at the
/// event (the rest of the job object is as it is now).
fn at_event(job: &mut app::model::JobView, snapshot: &str) {
    let Ok(s) = serde_json::from_str::<serde_json::Value>(snapshot) else { return };
    if let Some(state) = s["state"].as_str().and_then(|t| t.parse().ok()) {
        job.state = state;
    }
    if let Some(attempt) = s["attempt"].as_u64() {
        job.attempt = attempt as u32;
    }
    job.exit_code = s["exit_code"].as_i64();
    job.end_reason = s["end_reason"].as_str().map(str::to_string);
}

/// The e-mail in the person's language (their choice in the console;
/// English when they made none). Codes (states, reasons) stay as the API
/// names them; in Korean the reason also comes in words.
fn email_text(event: &str, job: &app::model::JobView, locale: Locale) -> (String, String) {
    let tr = |key: &str, args: &[(&str, Arg)]| app::i18n::tr(locale, key, args);
    let what = match event {
        "started" => tr("mail-what-started", &[]),
        "retried" => tr("mail-what-retried", &[("attempt", job.attempt.into())]),
        _ => tr("mail-what-ended", &[("state", job.state.as_str().into())]),
    };
    let id = || Arg::from(job.id.to_string());
    let subject = tr("mail-subject", &[("id", id()), ("name", job.name.clone().into()), ("what", what.clone().into())]);
    let mut text = tr(
        "mail-intro",
        &[("id", id()), ("name", job.name.clone().into()), ("lab", job.lab.clone().into()), ("what", what.into())],
    );
    text.push_str("\n\n");
    let mut line = |key: &str, value: String| {
        text.push_str(&format!("{}: {value}\n", tr(key, &[])));
    };
    line("mail-state", job.state.as_str().to_string());
    line("mail-attempt", job.attempt.to_string());
    if let (Some(node), Some(tier)) = (&job.node, &job.tier) {
        line("mail-where", format!("{node} ({tier}), GPUs {:?}", job.gpu_indices));
    }
    if let Some(code) = job.exit_code {
        line("mail-exit", code.to_string());
    }
    if let Some(reason) = &job.end_reason {
        let words = match locale {
            Locale::En => reason.clone(),
            _ => format!("{} ({reason})", app::model::reasons::reason_text(locale, reason)),
        };
        line("mail-reason", words);
    }
    text.push('\n');
    text.push_str(&tr("mail-off", &[]));
    text.push('\n');
    (subject, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_up_to_ten_minutes() {
        let waits: Vec<i64> = (1..=12).map(|t| backoff_ms(2_000, t)).collect();
        assert_eq!(&waits[..5], &[2_000, 4_000, 8_000, 16_000, 32_000]);
        assert_eq!(waits[11], 600_000);
        assert_eq!(backoff_ms(2_000, 64), 600_000, "no overflow");
    }
}
