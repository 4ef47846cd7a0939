//! What the admin pages for the cluster, people and LLM backfill show, and
//! the changes their forms ask for. Form fields arrive as text; the server
//! parses them and names the field when one is wrong.

use serde::{Deserialize, Serialize};

use crate::model::views::BackfillView;
use crate::model::{NodeView, Role, TierView};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserView {
    pub username: String,
    pub lab: String,
    pub role: Role,
    pub unix_uid: Option<i64>,
    /// The uid handed out from `executor.uid_range` when none is
    /// configured (policy §8): the user's own, kept for good.
    pub allocated_uid: Option<i64>,
    pub max_concurrent: i64,
    pub disabled: bool,
    /// May use a password even when sign-in goes through the university.
    pub local: bool,
    /// Signs in through the university: lab, role and uid come from it.
    pub university: bool,
}

/// Tiers, nodes, labs, users and backfill, for the admin pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdminClusterView {
    pub tiers: Vec<TierView>,
    pub nodes: Vec<NodeView>,
    pub labs: Vec<String>,
    pub users: Vec<UserView>,
    /// With the command (admins see it).
    pub backfill: BackfillView,
    /// Policy §6's GPU-OOM signatures in force.
    #[serde(default)]
    pub oom_patterns: Vec<String>,
}

/// One admin change from a console form. Empty text = leave as is (for
/// edits) or the default (for new things).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AdminAction {
    CreateTier {
        name: String,
        display_name: String,
        vram_gb: String,
        tflops: String,
        sort_order: String,
        max_gpus: String,
    },
    UpdateTier {
        name: String,
        vram_gb: String,
        tflops: String,
        sort_order: String,
        max_gpus: String,
    },
    SetTierActive {
        name: String,
        active: bool,
    },
    CreateNode {
        name: String,
        tier: String,
        count: String,
    },
    DrainNode {
        name: String,
    },
    DeleteNode {
        name: String,
    },
    ResumeNode {
        name: String,
    },
    /// One pattern per line.
    SetOomPatterns {
        patterns: String,
    },
    CreateLab {
        name: String,
    },
    CreateUser {
        username: String,
        password: String,
        lab: String,
        role: String,
        unix_uid: String,
        max_concurrent: String,
        local: bool,
    },
    /// `unix_uid` "none" clears it.
    /// `access`: "" unchanged, "disable" (sign-in refused, sessions and
    /// tokens ended) or "enable".
    UpdateUser {
        username: String,
        lab: String,
        role: String,
        unix_uid: String,
        max_concurrent: String,
        password: String,
        access: String,
    },
    SetBackfill {
        enabled: bool,
        command: String,
        min_idle_seconds: String,
        gpus_per_instance: String,
    },
}

/// The range of one of a tier's numbers (policy §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub min: i64,
    pub max: i64,
}

impl Bound {
    pub fn contains(self, value: i64) -> bool {
        (self.min..=self.max).contains(&value)
    }
}

/// A tier's bounds, written once: the server's checks, the OpenAPI
/// document and the admin page's form fields all read them here.
pub mod tier_bounds {
    use super::Bound;

    pub const VRAM_GB: Bound = Bound { min: 1, max: 1024 };
    pub const SORT_ORDER: Bound = Bound { min: -1000, max: 1000 };
    /// As large as a job may be (`num_gpus` is at most 8 too).
    pub const MAX_GPUS: Bound = Bound { min: 1, max: 8 };
    /// A year.
    pub const MAX_TIME_LIMIT_MINUTES: Bound = Bound { min: 1, max: 525_600 };
    pub const CPUS_PER_GPU: Bound = Bound { min: 1, max: 256 };
    pub const MEM_GB_PER_GPU: Bound = Bound { min: 1, max: 4096 };
    /// TFLOPS are above 0 and at most this.
    pub const TFLOPS_MAX: f64 = 100_000.0;
}
