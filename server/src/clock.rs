//! Wall-clock time as the database stores it (milliseconds since the Unix
//! epoch) and its RFC 3339 rendering for the API.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, UTC. Negative if the clock is before
/// 1970 (never expected, but not a panic).
pub fn now_ms() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

/// RFC 3339 in UTC with millisecond precision, e.g. `2026-12-02T11:34:48.123Z`.
pub fn rfc3339(ms: i64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let fmt = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    t.format(&fmt).unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_string())
}

/// The milliseconds an RFC 3339 time names (what [`rfc3339`] wrote).
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    let t = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_796_038_488_123), "2026-11-30T11:34:48.123Z");
        assert_eq!(parse_rfc3339_ms("2026-11-30T11:34:48.123Z"), Some(1_796_038_488_123));
        assert_eq!(parse_rfc3339_ms("yesterday"), None);
    }
}
