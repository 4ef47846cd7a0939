//! What a replay records of each trace job (its `Outcome`, with what the
//! forecast said of it: `Estimate`), and how the figures group jobs by
//! size and round their numbers. The engine fills these, the forecast's
//! accuracy and the metrics read them: on their own, so that none of the
//! three needs another back.

/// What the forecast said of one job at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Estimate {
    /// Not measured: the job was not waiting then (it started in the pass
    /// that saw it, or waited under an hour), or the policy has no forecast.
    #[default]
    NotAsked,
    /// Waiting, but beyond the forecast's depth or horizon: no estimate.
    Missing,
    /// The estimated start (virtual ms).
    At(i64),
}

/// What happened to one trace job.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub lab: String,
    pub num_gpus: u32,
    pub submit_ms: i64,
    pub run_ms: i64,
    pub start_ms: Option<i64>,
    /// No placement can ever fit it (NO_FIT_PLACEMENT).
    pub rejected: bool,
    /// What the forecast said right after its submission, and one hour
    /// before its start ([`replay_forecasting`] only).
    pub estimate_at_submit: Estimate,
    pub estimate_hour_before: Estimate,
}

/// The job-size groups of every per-size figure: "1", "2", "4", "8", "other".
pub fn size_class(num_gpus: u32) -> String {
    match num_gpus {
        1 | 2 | 4 | 8 => num_gpus.to_string(),
        _ => "other".to_string(),
    }
}

/// Six significant decimals: stable text across platforms' last-bit noise.
pub fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}
