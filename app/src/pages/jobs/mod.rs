//! The researcher's job pages: the queue (refreshing itself), the job
//! list, one job (timeline, attempts, live log, files, cancel) and the
//! submit form — one file each; and the sessions' parts of them.

mod detail;
mod list;
mod queue;
mod session;
mod submit;

pub use detail::{JobPage, JobPanel};
pub use list::JobsPage;
pub use queue::QueuePage;
pub use session::{StartNotebook, NOTEBOOK_KEYS};
pub use submit::SubmitPage;
