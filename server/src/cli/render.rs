//! Plain-text tables for people (scripts use `--json`).

use serde_json::Value;

/// Columns padded to their widest cell, two spaces apart.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<width$}", width = widths.get(i).copied().unwrap_or(0)))
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(headers.iter().map(|h| h.to_string()).collect())];
    out.extend(rows.iter().map(|r| line(r.clone())));
    out.join("\n")
}

/// A JSON field as display text (`-` for null).
pub fn text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "-".into(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{f:.0}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// The API's JSON with `--json`, else what `human` makes of it.
pub fn print(json: bool, value: &Value, human: impl FnOnce(&Value) -> String) {
    if json {
        println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
    } else {
        println!("{}", human(value));
    }
}

/// A job per row: the columns `jpu jobs` and `jpu show` share.
pub fn job_rows(jobs: &[Value]) -> Vec<Vec<String>> {
    jobs.iter()
        .map(|j| {
            let place = match (j["node"].as_str(), j["tier"].as_str()) {
                (Some(n), Some(t)) => format!("{n} ({t})"),
                _ => "-".into(),
            };
            vec![
                text(&j["id"]),
                text(&j["name"]),
                text(&j["user"]),
                text(&j["state"]),
                text(&j["num_gpus"]),
                place,
                text(&j["pending_reason"]),
            ]
        })
        .collect()
}

/// A footnote saying where the Policy page explains each reason in a
/// table (`pending_reason`, `end_reason`, …); empty when none is known.
pub fn reason_notes<'a>(server: &str, reasons: impl IntoIterator<Item = &'a Value>) -> String {
    let mut seen: Vec<(String, String)> = Vec::new();
    for reason in reasons.into_iter().filter_map(Value::as_str) {
        let code = app::model::policy::reason_code(reason).to_string();
        if let Some(link) = app::model::policy::reason_link(reason) {
            if !seen.iter().any(|(c, _)| *c == code) {
                seen.push((code, format!("{server}{link}")));
            }
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = seen.into_iter().map(|(code, url)| format!("  {code}: {url}")).collect();
    format!("\n\nwhy, explained on the Policy page:\n{}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_point_to_the_policy_page_once_each() {
        let reasons = [
            serde_json::json!("NO_IDLE_GPU"),
            serde_json::json!("RESERVING (1/2 GPUs on n/t)"),
            serde_json::json!("RESERVING (0/2 GPUs on m/t)"),
            serde_json::json!(null),
            serde_json::json!("SOMETHING_NEW"),
        ];
        let notes = reason_notes("https://gpu.example.edu", &reasons);
        assert_eq!(
            notes,
            "\n\nwhy, explained on the Policy page:\n  NO_IDLE_GPU: https://gpu.example.edu/policy#scheduling\n  \
             RESERVING: https://gpu.example.edu/policy#multi-gpu"
        );
        assert_eq!(reason_notes("https://x", &[serde_json::json!("SOMETHING_NEW")]), "");
    }

    #[test]
    fn columns_line_up() {
        let out = table(&["ID", "NAME"], &[vec!["1".into(), "train".into()], vec!["100".into(), "x".into()]]);
        assert_eq!(out, "ID   NAME\n1    train\n100  x");
        assert_eq!(text(&serde_json::json!(null)), "-");
        assert_eq!(text(&serde_json::json!(12.6)), "13");
    }
}
