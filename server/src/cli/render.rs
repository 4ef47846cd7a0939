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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let out = table(&["ID", "NAME"], &[vec!["1".into(), "train".into()], vec!["100".into(), "x".into()]]);
        assert_eq!(out, "ID   NAME\n1    train\n100  x");
        assert_eq!(text(&serde_json::json!(null)), "-");
        assert_eq!(text(&serde_json::json!(12.6)), "13");
    }
}
