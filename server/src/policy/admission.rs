//! Submit-time checks (policy §1, §3, §10): can this job ever fit, is the
//! service taking jobs, is the user under the unfinished-jobs limit, and
//! which queue does it enter.

use app::i18n::Msg;
use app::model::{JobState, MaintenancePhase};
use app::msg;

use super::model::{PendingReason, TierInfo};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub enum AdmissionError {
    Maintenance(MaintenancePhase),
    NoFit { num_gpus: u32, min_vram_gb: u32, largest: u32 },
    QueueLimit { unfinished: u32, adding: u32, limit: u32 },
}

impl AdmissionError {
    /// Why, as a message the API gives in English and the console in the
    /// reader's language.
    pub fn message(&self) -> Msg {
        match *self {
            AdmissionError::Maintenance(phase) => msg!("err-maintenance-paused", phase = phase.to_string()),
            AdmissionError::NoFit { num_gpus, min_vram_gb: 0, largest } => {
                msg!("err-no-fit", gpus = num_gpus, largest = largest)
            }
            AdmissionError::NoFit { num_gpus, min_vram_gb, largest } => {
                msg!("err-no-fit-vram", gpus = num_gpus, vram = min_vram_gb, largest = largest)
            }
            AdmissionError::QueueLimit { unfinished, adding, .. } if adding <= 1 => {
                msg!("err-queue-limit-full", unfinished = unfinished)
            }
            AdmissionError::QueueLimit { unfinished, adding, limit } => {
                msg!("err-queue-limit-adding", unfinished = unfinished, adding = adding, limit = limit)
            }
        }
    }
}

/// A placement's shape for the fit check: tier name and capacity.
pub struct Shape<'a> {
    pub tier: &'a str,
    pub capacity: u32,
}

pub struct Request {
    pub num_gpus: u32,
    pub min_vram_gb: u32,
    /// The user's non-terminal jobs before this one.
    pub unfinished: u32,
    /// The user's jobs holding concurrency slots.
    pub holding: u32,
    pub max_concurrent: u32,
    /// Jobs this request submits: 1, or an array's elements.
    pub count: u32,
    /// It has dependencies: it waits in the personal queue until they are
    /// met (the cycle decides; they may be met already).
    pub has_dependencies: bool,
    /// An array's `%N`.
    pub array_limit: Option<u32>,
}

/// Where one new job enters, and why it waits if in the personal queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub state: JobState,
    pub reason: Option<PendingReason>,
}

/// Where each of a request's `count` jobs enters, or why the request is
/// refused (all or nothing).
pub fn admit(
    phase: MaintenancePhase,
    tiers: &[TierInfo],
    placements: &[Shape<'_>],
    max_unfinished: u32,
    req: &Request,
) -> Result<Vec<Entry>, AdmissionError> {
    if phase != MaintenancePhase::Normal {
        return Err(AdmissionError::Maintenance(phase));
    }
    let largest_for = |p: &Shape<'_>| {
        tiers
            .iter()
            .find(|t| t.name == p.tier && t.active && t.vram_gb >= req.min_vram_gb)
            .map_or(0, |t| p.capacity.min(t.max_gpus))
    };
    let largest = placements.iter().map(largest_for).max().unwrap_or(0);
    if req.num_gpus > largest {
        return Err(AdmissionError::NoFit { num_gpus: req.num_gpus, min_vram_gb: req.min_vram_gb, largest });
    }
    if req.unfinished.saturating_add(req.count) > max_unfinished {
        return Err(AdmissionError::QueueLimit {
            unfinished: req.unfinished,
            adding: req.count,
            limit: max_unfinished,
        });
    }
    let mut holding = req.holding;
    let personal = |reason| Entry { state: JobState::UserQueueWait, reason: Some(reason) };
    Ok((0..req.count)
        .map(|k| match req.array_limit {
            _ if req.has_dependencies => personal(PendingReason::Dependency),
            Some(max_running) if k >= max_running => personal(PendingReason::ArrayLimit { max_running }),
            _ if holding < req.max_concurrent => {
                holding += 1;
                Entry { state: JobState::GlobalQueueWait, reason: None }
            }
            _ => personal(PendingReason::UserConcurrencyLimit),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiers() -> Vec<TierInfo> {
        vec![
            TierInfo { name: "rtx4090".into(), tflops: 82.6, vram_gb: 24, sort_order: 20, max_gpus: 2, active: true },
            TierInfo { name: "rtx3080ti".into(), tflops: 34.1, vram_gb: 12, sort_order: 10, max_gpus: 2, active: true },
        ]
    }

    fn req(num_gpus: u32, unfinished: u32, holding: u32) -> Request {
        Request {
            num_gpus,
            min_vram_gb: 0,
            unfinished,
            holding,
            max_concurrent: 2,
            count: 1,
            has_dependencies: false,
            array_limit: None,
        }
    }

    #[test]
    fn an_array_enters_within_its_limit_and_its_owners_slots() {
        let shapes = [Shape { tier: "rtx4090", capacity: 2 }];
        let normal = MaintenancePhase::Normal;
        let states = |r: &Request| -> Vec<&'static str> {
            let entries = admit(normal, &tiers(), &shapes, 100, r).unwrap();
            entries.iter().map(|e| e.reason.as_ref().map_or("GLOBAL", PendingReason::code)).collect()
        };
        let array = Request { count: 4, array_limit: Some(3), max_concurrent: 2, holding: 1, ..req(1, 0, 1) };
        assert_eq!(states(&array), ["GLOBAL", "USER_CONCURRENCY_LIMIT", "USER_CONCURRENCY_LIMIT", "ARRAY_LIMIT"]);
        let waiting = Request { count: 2, has_dependencies: true, ..req(1, 0, 0) };
        assert_eq!(states(&waiting), ["DEPENDENCY", "DEPENDENCY"], "dependants wait, slots or not");
        let edge = Request { count: 90, ..req(1, 10, 0) };
        assert!(admit(normal, &tiers(), &shapes, 100, &edge).is_ok(), "10 + 90 is the limit itself");
        let over = Request { count: 91, ..req(1, 10, 0) };
        let e = admit(normal, &tiers(), &shapes, 100, &over).unwrap_err();
        assert!(e.to_string().contains("91 more would pass the limit of 100"), "{e}");
    }

    #[test]
    fn admission_table() {
        let shapes = [Shape { tier: "rtx4090", capacity: 2 }, Shape { tier: "rtx3080ti", capacity: 2 }];
        let normal = MaintenancePhase::Normal;
        use JobState::*;
        let cases: Vec<(&str, MaintenancePhase, Request, Result<JobState, &str>)> = vec![
            ("free slot → global queue", normal, req(2, 0, 1), Ok(GlobalQueueWait)),
            ("slots full → personal queue", normal, req(1, 2, 2), Ok(UserQueueWait)),
            ("4 GPUs on 2-GPU placements never fit", normal, req(4, 0, 0), Err("NoFit")),
            ("maintenance refuses", MaintenancePhase::Draining, req(1, 0, 0), Err("Maintenance")),
            ("the 101st unfinished job is refused", normal, req(1, 100, 2), Err("QueueLimit")),
            ("the 100th is fine", normal, req(1, 99, 2), Ok(UserQueueWait)),
        ];
        for (what, phase, r, want) in cases {
            let got = admit(phase, &tiers(), &shapes, 100, &r).map(|e| e[0].state).map_err(|e| match e {
                AdmissionError::Maintenance(_) => "Maintenance",
                AdmissionError::NoFit { .. } => "NoFit",
                AdmissionError::QueueLimit { .. } => "QueueLimit",
            });
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn capacity_and_tier_limits_both_bound_the_fit() {
        let mut t = tiers();
        t[0].max_gpus = 8;
        let shapes = [Shape { tier: "rtx4090", capacity: 4 }];
        assert!(admit(MaintenancePhase::Normal, &t, &shapes, 100, &req(4, 0, 0)).is_ok());
        let err = admit(MaintenancePhase::Normal, &t, &shapes, 100, &req(5, 0, 0)).unwrap_err();
        assert!(err.to_string().contains("largest request any tier and node can take is 4"), "{err}");
        t[0].active = false;
        assert!(
            admit(MaintenancePhase::Normal, &t, &shapes, 100, &req(1, 0, 0)).is_err(),
            "inactive tiers fit nothing"
        );
    }
}
