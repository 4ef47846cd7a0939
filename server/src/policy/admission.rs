//! Submit-time checks (policy §1, §3, §10): can this job ever fit, is the
//! service taking jobs, is the user under the unfinished-jobs limit, and
//! which queue does it enter.

use app::model::{JobState, MaintenancePhase};

use super::model::TierInfo;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    #[error("submissions are paused for maintenance ({0})")]
    Maintenance(MaintenancePhase),
    #[error("no placement can ever fit {num_gpus} GPU(s){vram}: the largest request any tier and node can take is {largest}")]
    NoFit { num_gpus: u32, vram: String, largest: u32 },
    #[error("you already have {limit} unfinished jobs, the most allowed; wait for some to finish or cancel some")]
    QueueLimit { limit: u32 },
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
}

/// The state a new job enters, or why it is refused.
pub fn admit(
    phase: MaintenancePhase,
    tiers: &[TierInfo],
    placements: &[Shape<'_>],
    max_unfinished: u32,
    req: &Request,
) -> Result<JobState, AdmissionError> {
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
        let vram = if req.min_vram_gb > 0 { format!(" with {} GB VRAM", req.min_vram_gb) } else { String::new() };
        return Err(AdmissionError::NoFit { num_gpus: req.num_gpus, vram, largest });
    }
    if req.unfinished >= max_unfinished {
        return Err(AdmissionError::QueueLimit { limit: max_unfinished });
    }
    Ok(if req.holding < req.max_concurrent { JobState::GlobalQueueWait } else { JobState::UserQueueWait })
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
        Request { num_gpus, min_vram_gb: 0, unfinished, holding, max_concurrent: 2 }
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
            let got = admit(phase, &tiers(), &shapes, 100, &r).map_err(|e| match e {
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
