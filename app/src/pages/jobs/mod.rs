//! The researcher's job pages: the queue (refreshing itself), the job
//! list, one job (timeline, attempts, live log, files, cancel) and the
//! submit form — one file each.

mod detail;
mod list;
mod queue;
mod submit;

pub use detail::JobPage;
pub use list::JobsPage;
pub use queue::QueuePage;
pub use submit::SubmitPage;

/// `2026-12-02T11:34:48.123Z` → `2026-12-02 11:34:48`
fn short_time(t: &Option<String>) -> String {
    t.as_deref().map(|t| t.get(..19).unwrap_or(t).replace('T', " ")).unwrap_or_default()
}
