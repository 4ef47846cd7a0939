//! Typed, layered configuration, read in one place:
//! built-in defaults → TOML file (`--config`) → env `JPU__SECTION__KEY`.

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub mod defaults;
pub mod sessions;
pub mod storage;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    pub server: ServerSettings,
    pub database: DatabaseSettings,
    pub scheduler: SchedulerSettings,
    pub executor: ExecutorSettings,
    pub cancel: CancelSettings,
    pub backfill: BackfillSettings,
    pub auth: AuthSettings,
    pub metrics: MetricsSettings,
    pub workspaces: WorkspaceSettings,
    pub notify: NotifySettings,
    pub demo: DemoSettings,
    pub directory: DirectorySettings,
    pub sessions: sessions::SessionSettings,
    pub storage: storage::StorageSettings,
    pub ha: HaSettings,
}

/// The scheduler's lease among several instances on one PostgreSQL
/// database (api.md "High availability"; SQLite has one instance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HaSettings {
    /// How long a lease holds without a renewal.
    pub lease_seconds: u64,
    /// How often the holder renews it (less than `lease_seconds`).
    pub renew_seconds: u64,
}

impl Default for HaSettings {
    fn default() -> Self {
        Self { lease_seconds: 15, renew_seconds: 5 }
    }
}

impl HaSettings {
    /// The lease and renewal periods, or why they are not usable.
    pub fn periods(&self) -> Result<(std::time::Duration, std::time::Duration), String> {
        // the holder acts until `lease − renew` after a renewal began; the
        // next one begins `renew` later: with lease ≤ 2 × renew it would
        // stop between two good renewals and step down for nothing
        if self.renew_seconds == 0 || self.lease_seconds <= 2 * self.renew_seconds {
            return Err(format!(
                "ha.renew_seconds ({}) must be at least 1 and less than half of ha.lease_seconds ({})",
                self.renew_seconds, self.lease_seconds
            ));
        }
        Ok((std::time::Duration::from_secs(self.lease_seconds), std::time::Duration::from_secs(self.renew_seconds)))
    }
}

/// The university's directory: the one truth for uids, gids, labs and
/// roles of people who sign in through it (api.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct DirectorySettings {
    pub ldap: LdapSettings,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LdapSettings {
    /// `ldap://host:389` or `ldaps://host:636`; empty = no directory.
    pub url: String,
    /// The service's read-only bind.
    pub bind_dn: String,
    pub bind_password_file: Option<PathBuf>,
    /// Where people are, and how one is found (`{username}` is replaced,
    /// escaped, by the name the provider gave).
    pub user_base: String,
    pub user_filter: String,
    /// Where groups are (`posixGroup` with `memberUid`, `groupOfNames`
    /// with `member`).
    pub group_base: String,
    /// As `auth.oidc.lab_group`, on group `cn`s.
    pub lab_group: String,
    pub admin_groups: Vec<String>,
    /// How long the directory's "still listed, still in a lab group" holds
    /// for a signed-in user before their next request asks again.
    pub recheck_seconds: u64,
    /// The lowest `uidNumber` and `gidNumber` (primary and supplementary)
    /// jobs may run with; below it are the system's own accounts and
    /// groups (`postgres`, `shadow`). 65534 (nobody) is never taken.
    pub min_id: u32,
    /// StartTLS on an `ldap://` URL: a person's password is sent to the
    /// directory only over TLS (this, or `ldaps://`) or to loopback.
    pub starttls: bool,
}

impl Default for LdapSettings {
    fn default() -> Self {
        Self {
            url: String::new(),
            bind_dn: String::new(),
            bind_password_file: None,
            user_base: String::new(),
            user_filter: "(uid={username})".into(),
            group_base: String::new(),
            lab_group: String::new(),
            admin_groups: Vec::new(),
            recheck_seconds: 60,
            min_id: 1000,
            starttls: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSettings {
    /// Address to listen on, e.g. `127.0.0.1:8080` (port 0 = any free port).
    pub bind: String,
    /// Where the built console assets (`pkg/`) live.
    pub site_root: PathBuf,
    /// Mark the session cookie `Secure` (set when served over https).
    pub secure_cookies: bool,
    /// Console sessions end after this long without a request.
    pub session_idle_minutes: u32,
    /// Reverse proxies whose `X-Forwarded-For` names the client (the
    /// sign-in slow-down is per client address); empty = none.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// The console's origin as browsers see it (e.g.
    /// `https://gpu.example.edu`); empty = the request's own host. A
    /// state-changing request made with the session cookie must come from
    /// it.
    pub public_url: String,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8080".into(),
            site_root: "target/site".into(),
            secure_cookies: false,
            session_idle_minutes: 8 * 60,
            trusted_proxies: Vec::new(),
            public_url: String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseSettings {
    /// `sqlite://path/to/file.db` (relative paths are relative to the
    /// working directory).
    pub url: String,
    pub busy_timeout_ms: u64,
    pub max_connections: u32,
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        Self { url: "sqlite://data/jpu-share.db".into(), busy_timeout_ms: 5_000, max_connections: 4 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulerSettings {
    /// Period of the dispatch cycle; it also runs at once on events.
    pub cycle_ms: u64,
    /// Largest number of unfinished jobs one user may have (policy §3).
    pub max_unfinished_per_user: u32,
    /// Default job time limit when the submitter gives none (policy §8).
    pub default_time_limit_minutes: u32,
    /// `seed` (policy §1–§10 exactly, the default) or `planned` (§11).
    pub policy: PolicyName,
    /// `planned`: jobs at the head of the order that get a planned start.
    pub plan_depth: usize,
    /// `planned`: a job waiting longer goes ahead of fair-share…
    pub max_wait_hours: u32,
    /// …as long as the overdue jobs ahead of it use at most this share
    /// (%) of the cluster's GPUs.
    pub max_wait_lift_percent: u32,
    /// `planned`: of the overdue jobs lifted, only the oldest this many go
    /// ahead of light labs' jobs (labs using at most the mean of the labs
    /// waiting); the others right behind them.
    pub plan_lift_ahead_of_light: u32,
    /// `planned`: how many planned jobs may drain GPUs for a later start
    /// at once: a number, a share of the placements (`"5%"`) or `"all"`.
    pub plan_drains: PlanDrains,
    /// `planned`: a job drains GPUs only once it has waited this share (%)
    /// of its time limit.
    pub plan_drain_after_percent: u32,
    /// `planned`: GPUs that stand idle for a job's booked start are
    /// charged to its lab.
    pub plan_charge_drains: bool,
    /// `planned`: plans see running jobs end when the runtime predictor
    /// expects them to (their limits stay their kill times).
    pub plan_predicted_ends: bool,
}

/// `scheduler.plan_drains`: `"all"`, `"N"` or `"N%"` (a bare number too:
/// `plan_drains = 3` in the file, `JPU__SCHEDULER__PLAN_DRAINS=3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "DrainsText", into = "String")]
pub struct PlanDrains(pub Option<crate::policy::DrainBudget>);

/// What `plan_drains` may be written as.
#[derive(Deserialize)]
#[serde(untagged)]
enum DrainsText {
    Number(i64),
    Text(String),
}

impl TryFrom<DrainsText> for PlanDrains {
    type Error = String;
    fn try_from(text: DrainsText) -> Result<Self, String> {
        match text {
            DrainsText::Number(n) => PlanDrains::try_from(n.to_string()),
            DrainsText::Text(t) => PlanDrains::try_from(t),
        }
    }
}

impl TryFrom<String> for PlanDrains {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        use crate::policy::DrainBudget;
        let bad =
            || format!("scheduler.plan_drains must be \"all\", a number of jobs or a share like \"5%\", not {text:?}");
        let t = text.trim();
        if t == "all" {
            return Ok(PlanDrains(None));
        }
        let budget = match t.strip_suffix('%') {
            Some(p) => DrainBudget::PercentOfPlacements(
                p.trim().parse().ok().filter(|p| (1..=100).contains(p)).ok_or_else(bad)?,
            ),
            None => DrainBudget::Jobs(t.parse().ok().filter(|&k| k >= 1).ok_or_else(bad)?),
        };
        Ok(PlanDrains(Some(budget)))
    }
}

impl From<PlanDrains> for String {
    fn from(d: PlanDrains) -> String {
        match d.0 {
            None => "all".into(),
            Some(crate::policy::DrainBudget::Jobs(k)) => k.to_string(),
            Some(crate::policy::DrainBudget::PercentOfPlacements(p)) => format!("{p}%"),
        }
    }
}

/// `scheduler.max_wait_hours`'s default: with the lift bounded (below),
/// 36 h was the most even across the load sweep of the `policy` guide
/// (12 h and 24 h each missed more targets at 64×8 and 56×8).
pub const DEFAULT_MAX_WAIT_HOURS: u32 = 36;

/// `scheduler.max_wait_lift_percent`'s default: on the `policy` guide's
/// load sweep, 0–3 % let the 8-GPU p95 pass EASY's at 56×8; with no bound the
/// median wait went from minutes to most of a day.
pub const DEFAULT_LIFT_PERCENT: u32 = 10;

/// The rules the scheduler applies (`scheduler.policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyName {
    #[default]
    Seed,
    Planned,
}

impl Default for SchedulerSettings {
    fn default() -> Self {
        Self {
            cycle_ms: 5_000,
            max_unfinished_per_user: 100,
            default_time_limit_minutes: 24 * 60,
            policy: PolicyName::Seed,
            plan_depth: 100,
            max_wait_hours: DEFAULT_MAX_WAIT_HOURS,
            max_wait_lift_percent: DEFAULT_LIFT_PERCENT,
            plan_lift_ahead_of_light: 0,
            plan_drains: PlanDrains(None),
            plan_drain_after_percent: 0,
            plan_charge_drains: true,
            plan_predicted_ends: false,
        }
    }
}

impl SchedulerSettings {
    /// The mode `decide` runs in.
    pub fn mode(&self) -> crate::policy::PolicyMode {
        match self.policy {
            PolicyName::Seed => crate::policy::PolicyMode::Seed,
            PolicyName::Planned => crate::policy::PolicyMode::Planned(self.planned_params()),
        }
    }

    /// `planned`'s settings as the policy takes them.
    pub fn planned_params(&self) -> crate::policy::PlannedParams {
        crate::policy::PlannedParams {
            depth: self.plan_depth,
            max_wait_ms: i64::from(self.max_wait_hours) * 3_600_000,
            lift_percent: self.max_wait_lift_percent,
            lift_ahead_of_light: self.plan_lift_ahead_of_light,
            drains: self.plan_drains.0,
            drain_after_percent: self.plan_drain_after_percent,
            charge_drains: self.plan_charge_drains,
            predicted_ends: self.plan_predicted_ends,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorKind {
    Local,
    Slurm,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExecutorSettings {
    pub kind: ExecutorKind,
    /// Root of the per-job output directories (with Slurm: a path every
    /// node sees, e.g. a shared file system).
    pub output_root: PathBuf,
    /// Longest wait for one `sbatch`/`scontrol`/`scancel` call.
    pub slurm_command_timeout_seconds: u64,
    /// The low-priority preemptible partition LLM backfill runs in.
    pub slurm_backfill_partition: String,
    /// The Apptainer command (a name on PATH or a path) that builds
    /// workspace images and runs jobs inside them.
    pub apptainer: String,
    /// Unix uids handed out (local executor) to users who have none
    /// configured, `"FIRST-LAST"`: each user gets one of their own, kept
    /// for good. Pick a range no account of the host's directory uses.
    pub uid_range: String,
    /// Lets a server that is not root run jobs as its own user, with no
    /// isolation at all (a one-person laptop demo). Off: such a server
    /// refuses submits and says why.
    pub allow_unisolated: bool,
    /// Processes (and threads) one job may have per GPU it holds.
    pub pids_per_gpu: u32,
    /// Largest job output directory; past it the attempt is stopped
    /// (`OUTPUT_LIMIT`).
    pub max_output_bytes: u64,
    /// Largest job log (all attempts' stdout and stderr); past it the
    /// attempt is stopped (`LOG_LIMIT`).
    pub max_log_bytes: u64,
    /// Free space the disk holding job output keeps: below it, attempts
    /// whose output still grows are stopped (`OUTPUT_LIMIT`), whatever
    /// their own limit (one job must not fill the disk for everyone).
    pub min_free_bytes: u64,
    /// Lets local jobs create user namespaces (`unshare -U`); off, a
    /// seccomp filter refuses them (an Apptainer without its setuid
    /// starter needs them on).
    pub allow_user_namespaces: bool,
    /// A GPU's device node, `{index}` standing for its index: a local job
    /// may open its own GPUs' nodes, no other's.
    pub gpu_devices: String,
    /// Device nodes every GPU job may open besides its GPUs' own.
    pub gpu_control_devices: Vec<PathBuf>,
}

impl Default for ExecutorSettings {
    fn default() -> Self {
        Self {
            kind: ExecutorKind::Local,
            output_root: "data/jobs".into(),
            slurm_command_timeout_seconds: 10,
            slurm_backfill_partition: "backfill".into(),
            apptainer: "apptainer".into(),
            uid_range: "3000000-3999999".into(),
            allow_unisolated: false,
            pids_per_gpu: 1024,
            max_output_bytes: 100 << 30,
            max_log_bytes: 1 << 30,
            min_free_bytes: 1 << 30,
            allow_user_namespaces: false,
            gpu_devices: "/dev/nvidia{index}".into(),
            gpu_control_devices: ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"]
                .map(PathBuf::from)
                .to_vec(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CancelSettings {
    /// SIGTERM → this many seconds → SIGKILL (policy §8).
    pub grace_seconds: u64,
    /// A cancelled job whose end the executor has not confirmed this long
    /// after the request ends CANCELLED with `kill_unconfirmed` and its
    /// node is drained for an admin to look at (policy §8: 5 min).
    pub unconfirmed_after_seconds: u64,
}

impl Default for CancelSettings {
    fn default() -> Self {
        Self { grace_seconds: 30, unconfirmed_after_seconds: 300 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackfillSettings {
    pub enabled: bool,
    /// GPUs must be idle this long before an LLM instance is deployed.
    pub min_idle_seconds: u64,
    pub gpus_per_instance: u32,
    /// Shell command that serves the model; empty = nothing to deploy.
    pub command: String,
}

impl Default for BackfillSettings {
    fn default() -> Self {
        Self { enabled: false, min_idle_seconds: 60, gpus_per_instance: 1, command: String::new() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthSettings {
    /// Lifetime of API tokens from `POST /v1/auth/token`.
    pub token_ttl_hours: u32,
    /// Failed sign-ins for one username from one address before that
    /// pair is slowed down.
    pub max_failed_logins: u32,
    /// Failed sign-ins from one address (any usernames) before it is
    /// slowed down.
    pub max_failed_logins_per_address: u32,
    /// Upper bound of the wait imposed after repeated failures.
    pub max_lockout_seconds: u64,
    /// `false`: only users marked local (the seeded `admin`) may sign in
    /// with a password; everyone else signs in through the university.
    pub passwords: bool,
    pub oidc: OidcSettings,
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            token_ttl_hours: 30 * 24,
            max_failed_logins: 5,
            max_failed_logins_per_address: 30,
            max_lockout_seconds: 300,
            passwords: true,
            oidc: OidcSettings::default(),
        }
    }
}

/// Sign-in through the university's OpenID Provider (api.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OidcSettings {
    /// The provider's issuer URL; empty = no OIDC sign-in.
    pub issuer: String,
    pub client_id: String,
    /// A file holding this service's client secret (kept out of the
    /// settings file and the environment).
    pub client_secret_file: Option<PathBuf>,
    /// The sign-in button's words (also named where a password is refused).
    pub display_name: String,
    pub scopes: Vec<String>,
    pub username_claim: String,
    pub groups_claim: String,
    /// A regex with one capture group: a group it matches names a lab.
    pub lab_group: String,
    /// Groups whose members are admins.
    pub admin_groups: Vec<String>,
    /// Without a directory: how often the provider is asked again about
    /// each campus account (its refresh token), so a person it dropped, or
    /// who lost every lab group or the admin group, loses what they have
    /// here; 0 = never. Ask the provider for a grant that outlives the
    /// browser's sign-in (`offline_access` in `scopes`): one that ends with
    /// it would sign people out here when they sign out there.
    pub recheck_seconds: u64,
}

impl Default for OidcSettings {
    fn default() -> Self {
        Self {
            issuer: String::new(),
            client_id: String::new(),
            client_secret_file: None,
            display_name: "University sign-in".into(),
            scopes: ["openid", "profile", "email", "groups", "offline_access"].map(String::from).to_vec(),
            username_claim: "preferred_username".into(),
            groups_claim: "groups".into(),
            lab_group: String::new(),
            admin_groups: Vec::new(),
            recheck_seconds: 900,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsSettings {
    /// A bearer token Prometheus may scrape `/metrics` with (besides an
    /// admin's API token); empty = admins only.
    pub token: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkspaceSettings {
    /// Workspaces one lab may have (a create past it is `429`).
    pub max_per_lab: u32,
    /// Image builds running at once on this server (each lab has at most
    /// one at a time).
    pub max_concurrent_builds: u32,
    /// What a build may reach: `host` (port 443), `host:port`, or
    /// `.domain` for every name under it. Nothing else: a build's network
    /// is a proxy to these.
    pub registries: Vec<String>,
    /// One build's CPUs, RAM and processes (its cgroup).
    pub build_cpus: u32,
    pub build_mem_gb: u32,
    pub build_pids: u32,
}

impl Default for WorkspaceSettings {
    fn default() -> Self {
        Self {
            max_per_lab: 20,
            max_concurrent_builds: 2,
            registries: [
                // pip
                "pypi.org",
                "files.pythonhosted.org",
                // docker:// base images (Docker Hub and its blob store)
                "registry-1.docker.io",
                "auth.docker.io",
                "production.cloudflare.docker.com",
                // oras:// and GitHub's registry
                "ghcr.io",
                "pkg-containers.githubusercontent.com",
                // library://
                "library.sylabs.io",
                "cloud.sylabs.io",
            ]
            .map(String::from)
            .to_vec(),
            build_cpus: 2,
            build_mem_gb: 8,
            build_pids: 4096,
        }
    }
}

impl ExecutorSettings {
    /// `uid_range` as `(first, last)`, or why it is not one.
    pub fn uid_range(&self) -> Result<(u32, u32), String> {
        id_range(&self.uid_range, u32::MAX - 1).ok_or_else(|| {
            format!(
                "executor.uid_range `{}` must be FIRST-LAST with 1000 <= FIRST <= LAST, not containing nobody (65534)",
                self.uid_range
            )
        })
    }
}

/// A range of unix ids handed out (`"FIRST-LAST"`): above the system's own
/// (1000), never 65534 (nobody, nogroup), LAST at most `max`.
pub(crate) fn id_range(text: &str, max: u32) -> Option<(u32, u32)> {
    let (a, b) = text.split_once('-')?;
    let first: u32 = a.trim().parse().ok()?;
    let last: u32 = b.trim().parse().ok()?;
    let ok = first >= 1000 && first <= last && !(first..=last).contains(&65534) && last <= max;
    ok.then_some((first, last))
}

/// Notifications (api.md "Notifications and reports").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifySettings {
    /// The SMTP server e-mail goes through, e.g. `smtp://127.0.0.1:25`
    /// (plain), `smtp://mail.example.edu:587?tls=required` (STARTTLS) or
    /// `smtps://user:password@mail.example.edu` (TLS); empty = no e-mail
    /// (users cannot set an address).
    pub smtp_url: String,
    /// The sender of notification e-mail.
    pub from: String,
    /// Where webhooks may go: host names (`hooks.example.edu`; `.example.edu`
    /// for a whole domain) or address ranges (`10.20.0.0/16`). Empty = any
    /// http(s) target. Link-local and cloud-metadata addresses are refused
    /// either way.
    pub webhook_allow: Vec<String>,
    /// A failed delivery is retried after this long, doubling each time
    /// (at most 10 minutes apart).
    pub retry_base_ms: u64,
    /// Deliveries tried this many times without success are given up.
    pub max_attempts: u32,
}

impl Default for NotifySettings {
    fn default() -> Self {
        Self {
            smtp_url: String::new(),
            from: "JPU-Share <jpu-share@localhost>".into(),
            webhook_allow: Vec::new(),
            retry_base_ms: 2_000,
            max_attempts: 10,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DemoSettings {
    /// On an empty database, create the demo tiers, nodes, lab and users.
    pub seed: bool,
}

impl Default for DemoSettings {
    fn default() -> Self {
        Self { seed: true }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config file {0} does not exist")]
    MissingFile(PathBuf),
    #[error("invalid configuration: {0}")]
    Invalid(#[from] Box<figment::Error>),
}

impl Settings {
    /// Defaults, then the TOML file if given, then `JPU__SECTION__KEY`
    /// variables from the process environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        Self::load_from(file, Env::prefixed("JPU__").split("__"))
    }

    fn load_from(file: Option<&Path>, env: Env) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Settings::default()));
        if let Some(path) = file {
            if !path.exists() {
                return Err(ConfigError::MissingFile(path.to_path_buf()));
            }
            figment = figment.merge(Toml::file(path));
        }
        figment.merge(env).extract().map_err(|e| ConfigError::Invalid(Box::new(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_spec() {
        let s = Settings::default();
        assert_eq!(s.scheduler.cycle_ms, 5000);
        assert_eq!(s.cancel.grace_seconds, 30);
        assert_eq!(s.backfill.min_idle_seconds, 60);
        assert_eq!(s.executor.kind, ExecutorKind::Local);
        assert!(s.database.url.contains("data/"));
    }

    #[test]
    fn uid_ranges_are_checked_at_their_edges() {
        let range = |r: &str| ExecutorSettings { uid_range: r.into(), ..Default::default() }.uid_range();
        assert_eq!(range("3000000-3999999"), Ok((3_000_000, 3_999_999)));
        assert_eq!(range("1000-1000"), Ok((1000, 1000)), "one uid, the lowest allowed");
        assert_eq!(range("65535-4294967294"), Ok((65535, u32::MAX - 1)));
        for bad in ["999-2000", "2000-1000", "60000-70000", "65534-65534", "1000-4294967295", "x-y", "5000", ""] {
            assert!(range(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment::Jail's closure returns figment's own (large) error
    fn file_overrides_defaults_and_env_overrides_file() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "jpu.toml",
                "[scheduler]\ncycle_ms = 1000\n[executor]\nkind = \"slurm\"\n[cancel]\ngrace_seconds = 10\n",
            )?;
            jail.set_env("JPU__CANCEL__GRACE_SECONDS", "3");
            jail.set_env("JPU__SERVER__BIND", "0.0.0.0:9999");
            let s = Settings::load(Some(Path::new("jpu.toml"))).expect("loads");
            assert_eq!(s.scheduler.cycle_ms, 1000, "from file");
            assert_eq!(s.executor.kind, ExecutorKind::Slurm, "from file");
            assert_eq!(s.cancel.grace_seconds, 3, "env beats file");
            assert_eq!(s.server.bind, "0.0.0.0:9999", "env beats default");
            assert_eq!(s.backfill.min_idle_seconds, 60, "default kept");
            Ok(())
        });
    }

    #[test]
    #[allow(clippy::result_large_err)] // as above
    fn bad_values_and_unknown_keys_are_errors_not_panics() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("bad.toml", "[executor]\nkind = \"kubernetes\"\n")?;
            assert!(Settings::load(Some(Path::new("bad.toml"))).is_err());
            jail.create_file("typo.toml", "[scheduler]\ncycle_msec = 5\n")?;
            assert!(Settings::load(Some(Path::new("typo.toml"))).is_err());
            assert!(matches!(Settings::load(Some(Path::new("nope.toml"))), Err(ConfigError::MissingFile(_))));
            jail.create_file("drains.toml", "[scheduler]\npolicy = \"planned\"\nplan_drains = \"5%\"\n")?;
            let s = Settings::load(Some(Path::new("drains.toml"))).expect("a share of the placements");
            assert_eq!(s.scheduler.planned_params().drains, Some(crate::policy::DrainBudget::PercentOfPlacements(5)));
            jail.create_file("drains.toml", "[scheduler]\nplan_drains = \"0\"\n")?;
            assert!(Settings::load(Some(Path::new("drains.toml"))).is_err(), "no drain at all is refused");
            jail.create_file("drains.toml", "[scheduler]\nplan_drains = 0\n")?;
            assert!(Settings::load(Some(Path::new("drains.toml"))).is_err(), "nor as a bare number");
            // a bare number, in the file or the environment
            jail.create_file("drains.toml", "[scheduler]\nplan_drains = 3\n")?;
            let s = Settings::load(Some(Path::new("drains.toml"))).expect("a number of jobs");
            assert_eq!(s.scheduler.plan_drains.0, Some(crate::policy::DrainBudget::Jobs(3)));
            jail.create_file("empty.toml", "[scheduler]\n")?;
            for (env, want) in [
                ("2", Some(crate::policy::DrainBudget::Jobs(2))),
                ("5%", Some(crate::policy::DrainBudget::PercentOfPlacements(5))),
                ("all", None),
            ] {
                jail.set_env("JPU__SCHEDULER__PLAN_DRAINS", env);
                let s = Settings::load(Some(Path::new("empty.toml"))).expect(env);
                assert_eq!(s.scheduler.plan_drains.0, want, "{env:?} from the environment");
            }
            Ok(())
        });
    }

    #[test]
    fn plan_drains_are_all_a_count_or_a_share_within_their_edges() {
        use crate::policy::DrainBudget::*;
        let parse = |t: &str| PlanDrains::try_from(t.to_string()).map(|d| d.0);
        for (text, want) in [
            ("all", Some(None)),
            ("1", Some(Some(Jobs(1)))),
            (" 4 ", Some(Some(Jobs(4)))),
            ("0", None),
            ("-1", None),
            ("1%", Some(Some(PercentOfPlacements(1)))),
            ("100%", Some(Some(PercentOfPlacements(100)))),
            ("0%", None),
            ("101%", None),
            ("five", None),
            ("", None),
        ] {
            assert_eq!(parse(text).ok(), want, "{text:?}");
        }
        for d in ["all", "3", "12%"] {
            assert_eq!(String::from(PlanDrains::try_from(d.to_string()).unwrap()), d, "round trip");
        }
    }
}
