//! A pending reason (policy §9) in words: the message that says it and its
//! arguments (`reason_message`), in the reader's language (`reason_text`),
//! and the English a browser-side island falls back to
//! (`reason_in_words`). Apart from `i18n` and the views, which both
//! needed it and so needed each other.

use crate::i18n::{tr, Arg, Locale};

/// A pending reason as the message that says it in words and its
/// arguments (`crate::i18n`), e.g. `RESERVING (1/2 GPUs on n/t)` →
/// `reason-reserving` with more 1, have 1, need 2, node n, tier t; None
/// for a reason it does not know (shown as its code).
pub fn reason_message(reason: &str) -> Option<(&'static str, Vec<(&'static str, Arg)>)> {
    let inner = |prefix: &str| reason.strip_prefix(prefix).and_then(|r| r.strip_suffix(')'));
    if let Some(inner) = inner("RESERVING (") {
        let (counts, place) = inner.split_once(" GPUs on ")?;
        let (have, need) = counts.split_once('/')?;
        let (have, need): (u32, u32) = (have.parse().ok()?, need.parse().ok()?);
        let (node, tier) = place.rsplit_once('/')?;
        let args = vec![
            ("more", Arg::from(need.saturating_sub(have))),
            ("have", have.into()),
            ("need", need.into()),
            ("node", node.into()),
            ("tier", tier.into()),
        ];
        return Some(("reason-reserving", args));
    }
    if let Some(inner) = inner("PLANNED (") {
        let (held, rest) = inner.split_once(" GPUs held on ")?;
        let (have, need) = held.split_once('/')?;
        let (place, start) = rest.split_once(", start ")?;
        let (node, tier) = place.rsplit_once('/')?;
        let (day, time) = start.trim_end_matches('Z').split_once('T')?;
        let args = vec![
            ("node", Arg::from(node)),
            ("tier", tier.into()),
            ("day", day.into()),
            ("time", time.into()),
            ("have", have.into()),
            ("need", need.into()),
        ];
        return Some((if have == "0" { "reason-planned" } else { "reason-planned-held" }, args));
    }
    if let Some(inner) = inner("ARRAY_LIMIT (") {
        return Some(("reason-array-limit", vec![("n", inner.split(' ').next()?.into())]));
    }
    if let Some(inner) = inner("NO_IDLE_GPU (needs ≥ ") {
        return Some(("reason-no-idle-gpu-vram", vec![("gb", inner.trim_end_matches(" GB VRAM").into())]));
    }
    let key = match reason {
        "USER_CONCURRENCY_LIMIT" => "reason-user-concurrency-limit",
        "DEPENDENCY" => "reason-dependency",
        "WAITING_FOR_HIGHER_RANK" => "reason-waiting-for-higher-rank",
        "NO_IDLE_GPU" => "reason-no-idle-gpu",
        "MAINTENANCE" => "reason-maintenance",
        _ => return None,
    };
    Some((key, Vec::new()))
}

/// A pending reason (policy §9) in words for the console, e.g.
/// `RESERVING (1/2 GPUs on node-4090/rtx4090)` → "waiting for 1 more GPU
/// on node-4090 (rtx4090), reserved 1/2".
pub fn reason_in_words(reason: &str) -> String {
    if let Some(inner) = reason.strip_prefix("RESERVING (").and_then(|r| r.strip_suffix(')')) {
        // "k/n GPUs on node/tier"
        let parsed = inner.split_once(" GPUs on ").and_then(|(counts, place)| {
            let (have, need) = counts.split_once('/')?;
            let (have, need): (u32, u32) = (have.parse().ok()?, need.parse().ok()?);
            let (node, tier) = place.rsplit_once('/')?;
            Some((have, need, node.to_string(), tier.to_string()))
        });
        if let Some((have, need, node, tier)) = parsed {
            let more = need.saturating_sub(have);
            let gpus = if more == 1 { "GPU" } else { "GPUs" };
            return format!("waiting for {more} more {gpus} on {node} ({tier}), reserved {have}/{need}");
        }
    }
    match reason {
        "USER_CONCURRENCY_LIMIT" => "over the owner's concurrent-job limit (personal queue)".into(),
        "DEPENDENCY" => "waiting for the jobs it depends on to end".into(),
        r if r.starts_with("ARRAY_LIMIT (") => {
            let n = r.trim_start_matches("ARRAY_LIMIT (").split(' ').next().unwrap_or("?");
            format!("its array already runs {n} elements, the most it allows at once")
        }
        "WAITING_FOR_HIGHER_RANK" => "waiting for higher-ranked jobs".into(),
        "NO_IDLE_GPU" => "no idle GPUs fit it yet".into(),
        r if r.starts_with("PLANNED (") => planned_in_words(r).unwrap_or_else(|| r.to_string()),
        r if r.starts_with("NO_IDLE_GPU (needs ≥ ") => {
            let gb = r.trim_start_matches("NO_IDLE_GPU (needs ≥ ").trim_end_matches(" GB VRAM)");
            format!("needs a GPU with at least {gb} GB of VRAM; none of those is idle")
        }
        "MAINTENANCE" => "maintenance: nothing is dispatched".into(),
        other => other.to_string(),
    }
}

/// `PLANNED (1/2 GPUs held on node-4090/rtx4090, start 2026-12-04T14:20Z)`
/// as "planned on node-4090 (rtx4090) at 14:20 UTC on 2026-12-04; 1 of 2
/// GPUs held".
fn planned_in_words(reason: &str) -> Option<String> {
    let inner = reason.strip_prefix("PLANNED (")?.strip_suffix(')')?;
    let (held, rest) = inner.split_once(" GPUs held on ")?;
    let (have, need) = held.split_once('/')?;
    let (place, start) = rest.split_once(", start ")?;
    let (node, tier) = place.rsplit_once('/')?;
    let (day, time) = start.trim_end_matches('Z').split_once('T')?;
    let hold = if have == "0" { String::new() } else { format!("; {have} of {need} GPUs held") };
    Some(format!("planned on {node} ({tier}) at {time} UTC on {day}{hold}"))
}

/// A pending reason in words in `locale` ([`reason_message`];
/// its code when the reason is not one we know).
pub fn reason_text(locale: Locale, reason: &str) -> String {
    match reason_message(reason) {
        Some((key, args)) => tr(locale, key, &args),
        None => reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_as_words() {
        assert_eq!(
            reason_in_words("RESERVING (1/2 GPUs on node-4090/rtx4090)"),
            "waiting for 1 more GPU on node-4090 (rtx4090), reserved 1/2"
        );
        assert_eq!(reason_in_words("RESERVING (0/4 GPUs on a/b)"), "waiting for 4 more GPUs on a (b), reserved 0/4");
        assert_eq!(reason_in_words("NO_IDLE_GPU"), "no idle GPUs fit it yet");
        assert_eq!(
            reason_in_words("PLANNED (1/2 GPUs held on node-4090/rtx4090, start 2026-12-04T14:20Z)"),
            "planned on node-4090 (rtx4090) at 14:20 UTC on 2026-12-04; 1 of 2 GPUs held"
        );
        assert_eq!(
            reason_in_words("PLANNED (0/8 GPUs held on a/b, start 2026-12-05T01:00Z)"),
            "planned on a (b) at 01:00 UTC on 2026-12-05"
        );
        assert_eq!(
            reason_in_words("NO_IDLE_GPU (needs ≥ 13 GB VRAM)"),
            "needs a GPU with at least 13 GB of VRAM; none of those is idle"
        );
        assert_eq!(reason_in_words("SOMETHING_NEW"), "SOMETHING_NEW");
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn reasons_read_in_either_language() {
        let table = [
            (
                "RESERVING (1/2 GPUs on node-4090/rtx4090)",
                "waiting for 1 more GPU on node-4090 (rtx4090), reserved 1/2",
                "node-4090(rtx4090)에서 GPU 1장 더 기다리는 중, 1/2장 예약됨",
            ),
            (
                "RESERVING (0/4 GPUs on a/b)",
                "waiting for 4 more GPUs on a (b), reserved 0/4",
                "a(b)에서 GPU 4장 더 기다리는 중, 0/4장 예약됨",
            ),
            (
                "PLANNED (1/2 GPUs held on n/t, start 2026-12-04T14:20Z)",
                "planned on n (t) at 14:20 UTC on 2026-12-04; 1 of 2 GPUs held",
                "2026-12-04 14:20 UTC에 n(t)에서 시작하도록 계획됨, GPU 2장 중 1장 확보",
            ),
            (
                "NO_IDLE_GPU (needs ≥ 13 GB VRAM)",
                "needs a GPU with at least 13 GB of VRAM; none of those is idle",
                "VRAM 13 GB 이상인 GPU가 필요하지만 유휴 상태인 것이 없음",
            ),
            (
                "USER_CONCURRENCY_LIMIT",
                "over the owner's concurrent-job limit (personal queue)",
                "소유자의 동시 실행 한도 초과 (개인 대기열)",
            ),
            ("SOMETHING_NEW", "SOMETHING_NEW", "SOMETHING_NEW"),
        ];
        for (reason, en, ko) in table {
            assert_eq!(reason_text(Locale::En, reason), en);
            assert_eq!(reason_text(Locale::Ko, reason), ko);
            // the English the browser-side fallback writes is the same
            assert_eq!(reason_in_words(reason), en);
        }
    }
}
