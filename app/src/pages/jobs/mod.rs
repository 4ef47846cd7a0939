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
