//! `[sessions]` settings (api.md "Interactive sessions"): the apps a
//! researcher may start, when an unused one ends, how many one may have.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionSettings {
    /// Minutes without traffic through `/s/{id}/` and without a busy
    /// kernel after which a session ends `CANCELLED`, `end_reason` `IDLE`.
    /// Fractions are allowed (the tests use seconds).
    pub idle_minutes: f64,
    /// Unfinished sessions one user may have (more: `429 QUEUE_LIMIT`).
    pub max_per_user: u32,
    /// The apps by name (`jupyterlab` by default).
    pub apps: BTreeMap<String, SessionApp>,
}

/// One app: the program, found on the jobs' `PATH` or in the workspace
/// image; the server adds the arguments that make it listen where only
/// the site can reach it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionApp {
    pub command: String,
}

impl Default for SessionSettings {
    fn default() -> Self {
        let apps = BTreeMap::from([("jupyterlab".to_string(), SessionApp { command: "jupyter-lab".into() })]);
        Self { idle_minutes: 60.0, max_per_user: 2, apps }
    }
}

impl SessionSettings {
    /// `idle_minutes` in milliseconds, at least one second.
    pub fn idle_ms(&self) -> i64 {
        let ms = self.idle_minutes * 60_000.0;
        if ms.is_finite() {
            (ms as i64).max(1_000)
        } else {
            i64::MAX / 2
        }
    }
}
