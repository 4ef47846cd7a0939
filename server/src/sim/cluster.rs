//! Simulated cluster specs: `NODESxGPUS:TIER[,…]` (e.g. `64x8:v100` or
//! `2x2:rtx4090,2x2:rtx3080ti`). Tiers come from a built-in list unless
//! given; a tier the list lacks gets neutral figures.

use crate::policy::world::PlacementDef;
use crate::policy::TierInfo;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("bad cluster spec `{spec}`: {message} (expected NODESxGPUS:TIER[,…], e.g. 64x8:v100)")]
pub struct SpecError {
    spec: String,
    message: String,
}

/// Known GPU models: (name, TFLOPS FP32, VRAM GB, sort_order).
const KNOWN: &[(&str, f64, u32, i64)] = &[
    ("a100", 19.5, 80, 40),
    ("v100", 15.7, 32, 30),
    ("rtx4090", 82.6, 24, 20),
    ("rtx3080ti", 34.1, 12, 10),
    ("p100", 9.3, 16, 5),
];

pub fn tier_named(name: &str, max_gpus: u32) -> TierInfo {
    let known = KNOWN.iter().find(|k| k.0 == name);
    TierInfo {
        name: name.to_string(),
        tflops: known.map_or(10.0, |k| k.1),
        vram_gb: known.map_or(16, |k| k.2),
        sort_order: known.map_or(0, |k| k.3),
        max_gpus,
        active: true,
    }
}

/// Parses a spec into tiers (max_gpus = the largest node of the tier) and
/// placements named `<tier>-<n>`.
pub fn parse(spec: &str) -> Result<(Vec<TierInfo>, Vec<PlacementDef>), SpecError> {
    let err = |message: String| SpecError { spec: spec.to_string(), message };
    let mut tiers: Vec<TierInfo> = Vec::new();
    let mut placements = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (shape, tier) = part.split_once(':').ok_or_else(|| err(format!("`{part}` has no `:TIER`")))?;
        let (nodes, gpus) = shape.split_once('x').ok_or_else(|| err(format!("`{shape}` is not NODESxGPUS")))?;
        let nodes: u32 = nodes.parse().map_err(|_| err(format!("`{nodes}` is not a node count")))?;
        let gpus: u32 = gpus.parse().map_err(|_| err(format!("`{gpus}` is not a GPU count")))?;
        if nodes == 0 || gpus == 0 || gpus > 64 || nodes > 100_000 {
            return Err(err(format!("`{part}` needs 1–100000 nodes of 1–64 GPUs")));
        }
        if tier.is_empty() {
            return Err(err("empty tier name".into()));
        }
        match tiers.iter_mut().find(|t| t.name == tier) {
            Some(t) => t.max_gpus = t.max_gpus.max(gpus),
            None => tiers.push(tier_named(tier, gpus)),
        }
        let start = placements.iter().filter(|p: &&PlacementDef| p.tier == tier).count();
        for n in 0..nodes as usize {
            placements.push(PlacementDef {
                node: format!("{tier}-{:05}", start + n),
                tier: tier.to_string(),
                gpus: (0..gpus).collect(),
                usable: true,
            });
        }
    }
    if placements.is_empty() {
        return Err(err("no nodes".into()));
    }
    Ok((tiers, placements))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        let (tiers, places) = parse("64x8:v100").unwrap();
        assert_eq!(places.len(), 64);
        assert_eq!(places[0].gpus.len(), 8);
        assert_eq!((tiers[0].max_gpus, tiers[0].tflops), (8, 15.7));
        let (tiers, places) = parse("2x2:rtx4090, 1x2:rtx3080ti").unwrap();
        assert_eq!(tiers.len(), 2);
        assert_eq!(places.len(), 3);
        assert_eq!(places[2].node, "rtx3080ti-00000");
    }

    #[test]
    fn bad_specs_say_why() {
        for bad in ["", "64:v100", "x8:v100", "64x8", "0x8:v100", "64x0:v100", "axb:c"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
