//! `[storage]` settings (api.md "Research data", policy §13): where homes,
//! lab shares and datasets live, their quotas and limits.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageSettings {
    /// Under it `home/USER`, `labs/LAB`, `datasets/NAME`. With Slurm, the
    /// same path on every node (a shared file system).
    pub root: PathBuf,
    /// A home's quota, GB (10^9 bytes; fractions allowed).
    pub home_quota_gb: f64,
    /// A lab share's quota, GB.
    pub lab_quota_gb: f64,
    /// The largest upload through the site, MB (10^6 bytes).
    pub max_upload_mb: u64,
    /// How often usage is measured in the background, minutes (fractions
    /// allowed; a job's places are measured again within a minute of its
    /// end, or this, if shorter).
    pub scan_minutes: f64,
    /// The largest dataset fetched from a URL, GB.
    pub max_dataset_gb: f64,
    /// Lets a data URL resolve to a loopback, link-local or private address.
    pub fetch_private_addresses: bool,
    /// Group ids handed out to labs whose group the directory does not
    /// give, `"FIRST-LAST"`: a lab share is group-owned by its lab's gid,
    /// which every member's jobs carry. Pick a range no group of the
    /// host's uses.
    pub lab_gid_range: String,
}

impl Default for StorageSettings {
    fn default() -> Self {
        Self {
            root: "data/storage".into(),
            home_quota_gb: 50.0,
            lab_quota_gb: 1000.0,
            max_upload_mb: 1024,
            scan_minutes: 10.0,
            max_dataset_gb: 200.0,
            fetch_private_addresses: false,
            lab_gid_range: "4000000-4999999".into(),
        }
    }
}

impl StorageSettings {
    /// `lab_gid_range` as `(first, last)`, or why it is not one.
    pub fn lab_gid_range(&self) -> Result<(u32, u32), String> {
        super::id_range(&self.lab_gid_range, i32::MAX as u32).ok_or_else(|| {
            format!(
                "storage.lab_gid_range `{}` must be FIRST-LAST with 1000 <= FIRST <= LAST, not containing nogroup (65534)",
                self.lab_gid_range
            )
        })
    }

    /// A quota in GB as bytes.
    pub fn bytes(gb: f64) -> u64 {
        (gb.max(0.0) * 1e9) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_gid_range_keeps_off_system_groups() {
        let range = |r: &str| StorageSettings { lab_gid_range: r.into(), ..Default::default() }.lab_gid_range();
        assert_eq!(range("4000000-4999999"), Ok((4_000_000, 4_999_999)));
        for bad in ["999-2000", "5000-4000", "60000-70000", "x-y", "4000000", "4000000-3000000000"] {
            assert!(range(bad).is_err(), "{bad}");
        }
        assert_eq!(StorageSettings::bytes(0.5), 500_000_000);
    }
}
