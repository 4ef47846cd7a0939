//! The environment of an attempt (policy §8): the job's own variables,
//! then the ones the platform sets, which a job may not set itself
//! ([`RESERVED`], refused at submit). Built here, beside the executors
//! that hand it to the job, so the database layer only reads rows and a
//! new variable is added in one place.

use std::collections::BTreeMap;
use std::path::Path;

/// Names the platform sets itself.
pub const RESERVED: &[&str] = &[
    "JOB_ID",
    "JOB_ATTEMPT",
    "JOB_OUTPUT_DIR",
    "CUDA_VISIBLE_DEVICES",
    "JPU_TIER",
    "JOB_ARRAY_ID",
    "JOB_ARRAY_INDEX",
    "HOME",
    "LAB_DIR",
    "JPU_DATASETS",
    "JPU_GPU_INDICES",
];

/// What the platform tells an attempt about itself.
#[derive(Debug, Clone, Copy)]
pub struct AttemptFacts<'a> {
    pub job: i64,
    pub attempt: i64,
    pub output_dir: &'a Path,
    pub gpus: &'a [u32],
    pub tier: &'a str,
    /// The array and this element's index, for an array's element.
    pub array: Option<(i64, i64)>,
    /// Its home, lab share and datasets (policy §13).
    pub places: Option<&'a super::places::JobPlaces>,
}

/// `CUDA_VISIBLE_DEVICES`'s form of a GPU list: `0,1`.
pub fn gpu_list(gpus: &[u32]) -> String {
    gpus.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// The job's own variables (checked at submit), then the platform's.
pub fn attempt_env(own: BTreeMap<String, String>, facts: &AttemptFacts) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = own.into_iter().filter(|(k, _)| !RESERVED.contains(&k.as_str())).collect();
    let set = |k: &str, v: String| (k.to_string(), v);
    env.extend([
        set("JOB_ID", facts.job.to_string()),
        set("JOB_ATTEMPT", facts.attempt.to_string()),
        set("JOB_OUTPUT_DIR", facts.output_dir.display().to_string()),
        set("CUDA_VISIBLE_DEVICES", gpu_list(facts.gpus)),
        set("JPU_TIER", facts.tier.to_string()),
    ]);
    if let Some(places) = facts.places {
        env.extend([
            set("HOME", places.home.display().to_string()),
            set("LAB_DIR", places.lab_dir.display().to_string()),
            set("JPU_DATASETS", places.datasets.display().to_string()),
        ]);
    }
    if let Some((array, index)) = facts.array {
        env.extend([set("JOB_ARRAY_ID", array.to_string()), set("JOB_ARRAY_INDEX", index.to_string())]);
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(array: Option<(i64, i64)>) -> AttemptFacts<'static> {
        AttemptFacts {
            job: 42,
            attempt: 2,
            output_dir: Path::new("/jobs/42"),
            gpus: &[0, 3],
            tier: "rtx4090",
            array,
            places: None,
        }
    }

    #[test]
    fn an_attempt_learns_who_it_is_and_where_to_write() {
        let own = BTreeMap::from([("LR".to_string(), "0.1".to_string())]);
        let env: BTreeMap<_, _> = attempt_env(own, &facts(None)).into_iter().collect();
        for (k, v) in [
            ("LR", "0.1"),
            ("JOB_ID", "42"),
            ("JOB_ATTEMPT", "2"),
            ("JOB_OUTPUT_DIR", "/jobs/42"),
            ("CUDA_VISIBLE_DEVICES", "0,3"),
            ("JPU_TIER", "rtx4090"),
        ] {
            assert_eq!(env.get(k).map(String::as_str), Some(v), "{k}");
        }
        assert!(!env.contains_key("JOB_ARRAY_ID"));
    }

    #[test]
    fn an_array_element_knows_its_index_and_a_stored_reserved_name_never_wins() {
        // a row written before the submit check existed must not override
        let own = BTreeMap::from([("JOB_ID".to_string(), "1".to_string())]);
        let env = attempt_env(own, &facts(Some((7, 15))));
        assert_eq!(env.iter().filter(|(k, _)| k == "JOB_ID").map(|(_, v)| v.as_str()).collect::<Vec<_>>(), ["42"]);
        assert!(env.contains(&("JOB_ARRAY_ID".into(), "7".into())));
        assert!(env.contains(&("JOB_ARRAY_INDEX".into(), "15".into())));
    }

    #[test]
    fn a_job_learns_its_home_lab_share_and_datasets_and_no_job_sets_them() {
        let places = crate::executor::places::Places::new(Path::new("/srv/jpu")).of_job("kim", "vision", None).unwrap();
        let own =
            BTreeMap::from([("HOME".to_string(), "/tmp/x".to_string()), ("LAB_DIR".to_string(), "/".to_string())]);
        let env: BTreeMap<_, _> =
            attempt_env(own, &AttemptFacts { places: Some(&places), ..facts(None) }).into_iter().collect();
        assert_eq!(env["HOME"], "/srv/jpu/home/kim");
        assert_eq!(env["LAB_DIR"], "/srv/jpu/labs/vision");
        assert_eq!(env["JPU_DATASETS"], "/srv/jpu/datasets");
    }
}
