//! Policy §6's GPU-OOM signatures, which admins may change: case-
//! insensitive substrings searched for in the last 64 KiB of a failed
//! attempt's output. A change is audited and in force at the next
//! attempt end (the loop reads the list each time it records ends).

use app::msg;
use serde::{Deserialize, Serialize};

use crate::auth::Caller;
use crate::clock::now_ms;
use crate::db;
use crate::services::{ServiceError, Services};

/// At most this many patterns, each at most this long: every failed
/// attempt's tail is searched for each one.
pub const MAX_PATTERNS: usize = 100;
pub const MAX_PATTERN_CHARS: usize = 200;

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OomPatterns {
    /// Case-insensitive substrings; an empty list turns GPU-OOM detection off.
    #[schema(max_items = 100)]
    pub patterns: Vec<String>,
}

pub async fn get(state: &Services) -> Result<OomPatterns, ServiceError> {
    Ok(OomPatterns { patterns: db::oom_patterns::in_force(&mut state.db.acquire().await?).await? })
}

pub async fn set(state: &Services, admin: &Caller, body: OomPatterns) -> Result<OomPatterns, ServiceError> {
    let patterns = check(body.patterns)?;
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let before = db::oom_patterns::in_force(&mut tx).await?;
    db::oom_patterns::set(&mut tx, &patterns, now).await?;
    let detail = serde_json::json!({"from": before, "to": patterns});
    db::audit::record(&mut tx, &admin.user.username, "oom_patterns.set", None, &detail, now).await?;
    tx.commit().await?;
    Ok(OomPatterns { patterns })
}

/// Trimmed, without duplicates (case-insensitively), each printable and
/// 1 to 200 characters, at most 100.
fn check(patterns: Vec<String>) -> Result<Vec<String>, ServiceError> {
    if patterns.len() > MAX_PATTERNS {
        return Err(ServiceError::field(
            "patterns",
            msg!("err-patterns-count", max = MAX_PATTERNS, got = patterns.len()),
        ));
    }
    let mut kept: Vec<String> = Vec::with_capacity(patterns.len());
    for (i, p) in patterns.into_iter().enumerate() {
        let p = p.trim().to_string();
        let chars = p.chars().count();
        if chars == 0 || chars > MAX_PATTERN_CHARS {
            return Err(ServiceError::field(
                "patterns",
                msg!("err-pattern-length", entry = i + 1, max = MAX_PATTERN_CHARS),
            ));
        }
        if p.chars().any(char::is_control) {
            return Err(ServiceError::field("patterns", msg!("err-pattern-chars", entry = i + 1)));
        }
        if !kept.iter().any(|k| k.to_lowercase() == p.to_lowercase()) {
            kept.push(p);
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_trimmed_deduplicated_and_bounded() {
        let ok = check(vec![" CUDA out of memory ".into(), "cuda OUT of memory".into(), "XLA OOM".into()]).unwrap();
        assert_eq!(ok, ["CUDA out of memory", "XLA OOM"]);
        assert_eq!(check(vec![]).unwrap(), Vec::<String>::new());
        assert!(check(vec!["  ".into()]).is_err());
        assert!(check(vec!["a".repeat(MAX_PATTERN_CHARS)]).is_ok());
        assert!(check(vec!["a".repeat(MAX_PATTERN_CHARS + 1)]).is_err());
        assert!(check(vec!["bad\nline".into()]).is_err());
        assert!(check((0..MAX_PATTERNS).map(|i| format!("p{i}")).collect()).is_ok());
        assert!(check((0..=MAX_PATTERNS).map(|i| format!("p{i}")).collect()).is_err());
    }
}
