//! A submit's dependencies and array (api.md "Jobs"): the array spec
//! (`"0-15%4"`, `"0-3,8,10-11"`, `"0-15:2"`) and the dependency list
//! checked on their own, then the dependencies against the database in
//! the submit's transaction (they must name existing jobs of the
//! caller's own lab that can still satisfy them).
//!
//! Dependencies can only name jobs that exist when the dependant is
//! submitted, so they always point back in time and cannot form a cycle.

use crate::auth::Caller;
use crate::db;
use crate::policy::personal::{met, Met};
use crate::policy::AfterKind;
use crate::services::ServiceError;
use app::{i18n::Msg, msg};

use super::field::FieldError;

/// The most elements one array may have.
pub const MAX_ARRAY_ELEMENTS: usize = 1000;
/// The largest index an array element may have.
pub const MAX_ARRAY_INDEX: u32 = 1_000_000;
/// The most dependencies one job may have.
pub const MAX_DEPENDENCIES: usize = 32;

/// A parsed array: its indices in ascending order, and its `%N`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    pub text: String,
    pub indices: Vec<u32>,
    pub max_running: Option<u32>,
}

fn array_error(message: Msg) -> FieldError {
    FieldError { field: "array", message }
}

impl ArraySpec {
    pub fn parse(text: &str) -> Result<Self, FieldError> {
        let (ranges, limit) = match text.split_once('%') {
            Some((r, n)) => (r, Some(n)),
            None => (text, None),
        };
        let max_running = match limit {
            None => None,
            Some(n) => match n.trim().parse::<u32>() {
                Ok(n) if n >= 1 => Some(n),
                _ => return Err(array_error(msg!("err-array-limit", text = n))),
            },
        };
        let mut indices = Vec::new();
        for part in ranges.split(',').map(str::trim) {
            let (range, step) = match part.split_once(':') {
                Some((r, s)) => (r, Some(s)),
                None => (part, None),
            };
            let index = |s: &str| -> Result<u32, FieldError> {
                match s.trim().parse::<u32>() {
                    Ok(i) if i <= MAX_ARRAY_INDEX => Ok(i),
                    Ok(_) => Err(array_error(msg!("err-array-index-max", index = s, max = MAX_ARRAY_INDEX))),
                    Err(_) => Err(array_error(msg!("err-array-part", part = part))),
                }
            };
            let (first, last) = match range.split_once('-') {
                Some((a, b)) => (index(a)?, index(b)?),
                None => (index(range)?, index(range)?),
            };
            if last < first {
                return Err(array_error(msg!("err-array-backwards", part = part)));
            }
            let step = match step {
                None => 1,
                Some(s) => match s.trim().parse::<u32>() {
                    Ok(s) if s >= 1 => s,
                    _ => return Err(array_error(msg!("err-array-step", part = part))),
                },
            };
            let count = ((last - first) / step) as usize + 1;
            if indices.len() + count > MAX_ARRAY_ELEMENTS {
                return Err(array_error(msg!("err-array-size", max = MAX_ARRAY_ELEMENTS)));
            }
            indices.extend((first..=last).step_by(step as usize));
        }
        indices.sort_unstable();
        let before = indices.len();
        indices.dedup();
        if indices.len() != before {
            return Err(array_error(msg!("err-array-twice")));
        }
        Ok(ArraySpec { text: text.trim().to_string(), indices, max_running })
    }
}

/// One dependency as submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, utoipa::ToSchema)]
pub struct DependencyBody {
    /// `afterok`, `afterany` or `afternotok`.
    #[serde(rename = "type")]
    pub kind: DependencyKind,
    /// A job of the caller's own lab.
    pub job: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DependencyKind {
    Afterok,
    Afterany,
    Afternotok,
}

impl From<DependencyKind> for AfterKind {
    fn from(k: DependencyKind) -> Self {
        match k {
            DependencyKind::Afterok => AfterKind::Ok,
            DependencyKind::Afterany => AfterKind::Any,
            DependencyKind::Afternotok => AfterKind::NotOk,
        }
    }
}

/// At most [`MAX_DEPENDENCIES`], none twice.
pub fn parse_dependencies(deps: Vec<DependencyBody>) -> Result<Vec<(AfterKind, i64)>, FieldError> {
    let field = "dependencies";
    if deps.len() > MAX_DEPENDENCIES {
        return Err(FieldError { field, message: msg!("err-deps-count", max = MAX_DEPENDENCIES, got = deps.len()) });
    }
    let mut out: Vec<(AfterKind, i64)> = Vec::with_capacity(deps.len());
    for d in deps {
        if out.iter().any(|(_, job)| *job == d.job) {
            return Err(FieldError { field, message: msg!("err-deps-twice", id = d.job) });
        }
        out.push((d.kind.into(), d.job));
    }
    Ok(out)
}

/// Every dependency names a job of the caller's own lab (another lab's
/// job does not exist for a researcher: 404) that can still satisfy it.
pub async fn check_dependencies(
    conn: &mut impl crate::db::AsConn,
    caller: &Caller,
    after: &[(AfterKind, i64)],
) -> Result<Vec<app::model::DependencyView>, ServiceError> {
    let mut views = Vec::with_capacity(after.len());
    for &(kind, id) in after {
        let Some((lab, state)) = db::gates::lab_and_state(conn, id).await? else {
            return Err(ServiceError::NotFound(msg!("err-no-job", id = id).on("dependencies")));
        };
        if lab != caller.user.lab_id {
            return Err(if caller.user.role == app::model::Role::Admin {
                ServiceError::field("dependencies", msg!("err-deps-other-lab", id = id))
            } else {
                ServiceError::NotFound(msg!("err-no-job", id = id).on("dependencies"))
            });
        }
        if met(kind, db::gates::outcome_of(&state)) == Met::Never {
            return Err(ServiceError::field(
                "dependencies",
                msg!("err-deps-never", id = id, state = &state, kind = db::gates::kind_text(kind)),
            ));
        }
        let state = state.parse().map_err(|_| ServiceError::Internal(format!("job {id} has state {state}")))?;
        views.push(app::model::DependencyView { kind: db::gates::kind_text(kind).into(), job: id, state });
    }
    Ok(views)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_specs_as_ranges_lists_steps_and_limits() {
        let a = ArraySpec::parse("0-15%4").unwrap();
        assert_eq!((a.indices.len(), a.indices[15], a.max_running), (16, 15, Some(4)));
        assert_eq!(ArraySpec::parse("0-3,8,10-11").unwrap().indices, vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(ArraySpec::parse("1-9:4").unwrap().indices, vec![1, 5, 9]);
        assert_eq!(ArraySpec::parse("7").unwrap().indices, vec![7]);
        assert_eq!(ArraySpec::parse("0-999").unwrap().indices.len(), MAX_ARRAY_ELEMENTS, "the limit itself is fine");
    }

    #[test]
    fn bad_array_specs_say_what_is_wrong() {
        let table = [
            ("0-1000", "at most 1000 elements"),
            ("0-4000000000", "over the largest"),
            ("0-99999999999", "not an index"),
            ("0-2000000", "over the largest"),
            ("5-2", "must not end before"),
            ("0-3%0", "at least 1"),
            ("0-3%x", "at least 1"),
            ("0-3,2", "listed twice"),
            ("a-b", "not an index"),
            ("", "not an index"),
            ("0-9:0", "step"),
        ];
        for (spec, says) in table {
            let e = ArraySpec::parse(spec).unwrap_err();
            assert_eq!(e.field, "array");
            assert!(e.message.to_string().contains(says), "{spec:?}: {e}");
        }
    }

    #[test]
    fn dependencies_are_bounded_and_distinct() {
        let dep = |job| DependencyBody { kind: DependencyKind::Afterok, job };
        assert_eq!(parse_dependencies(vec![dep(1), dep(2)]).unwrap(), vec![(AfterKind::Ok, 1), (AfterKind::Ok, 2)]);
        assert!(parse_dependencies(vec![dep(1), dep(1)]).unwrap_err().message.to_string().contains("twice"));
        assert!(parse_dependencies((0..MAX_DEPENDENCIES as i64).map(dep).collect()).is_ok());
        assert!(parse_dependencies((0..=MAX_DEPENDENCIES as i64).map(dep).collect()).is_err());
    }
}
