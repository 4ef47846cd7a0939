//! `jpu-share config --print-defaults`: every setting the binary accepts,
//! with its default, as the TOML `serve --config` reads (it loads back to
//! the defaults exactly: tested), each with its meaning from the
//! operator's guide's table. The guide's table and these keys are tested
//! to name the same settings, so neither can drift from the other.

use serde_json::Value;

use super::Settings;

/// The operator's guide, whose settings table gives each key's meaning.
const GUIDE: &str = include_str!("../../README.md");

/// Every setting as (dotted key, default as TOML; None = unset).
pub fn flat() -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let value = serde_json::to_value(Settings::default()).unwrap_or(Value::Null);
    walk("", &value, &mut out);
    out
}

fn walk(prefix: &str, value: &Value, out: &mut Vec<(String, Option<String>)>) {
    match value {
        Value::Object(map) if !map.is_empty() || prefix.is_empty() => {
            for (k, v) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                walk(&key, v, out);
            }
        }
        Value::Null => out.push((prefix.to_string(), None)),
        // JSON's strings, numbers, booleans and arrays of them are TOML too
        other => out.push((prefix.to_string(), Some(other.to_string()))),
    }
}

/// A key as the guide's table names it: a map's own names (the apps of
/// `sessions.apps`) are `NAME`.
pub fn generic(key: &str) -> String {
    match key.strip_prefix("sessions.apps.") {
        Some(rest) => match rest.split_once('.') {
            Some((_, field)) => format!("sessions.apps.NAME.{field}"),
            None => "sessions.apps".into(),
        },
        None => key.to_string(),
    }
}

/// The guide's table: key → meaning.
pub fn documented() -> Vec<(String, String)> {
    GUIDE
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let key = cells.first()?.strip_prefix("| `")?.strip_suffix('`')?;
            // a setting's row: a dotted name, no spaces (other tables name
            // endpoints and commands)
            if !key.contains('.') || key.contains([' ', '/']) {
                return None;
            }
            let meaning = cells.get(2)?.trim_end_matches(" |").trim();
            Some((key.to_string(), meaning.to_string()))
        })
        .collect()
}

/// The commented TOML.
pub fn print() -> String {
    let meanings = documented();
    let mut out = String::from(
        "# JPU-Share: every setting with its default (jpu-share config --print-defaults).\n\
         # `jpu-share serve --config FILE` reads this as it is; env JPU__SECTION__KEY overrides a key.\n",
    );
    // each table once, its own keys before its subtables'
    let mut tables: std::collections::BTreeMap<String, Vec<(String, String, Option<String>)>> = Default::default();
    for (key, value) in flat() {
        let (section, name) = key.rsplit_once('.').unwrap_or(("", key.as_str()));
        tables.entry(section.to_string()).or_default().push((key.clone(), name.to_string(), value));
    }
    for (section, keys) in tables {
        if !section.is_empty() {
            out.push_str(&format!("\n[{section}]\n"));
        }
        for (key, name, value) in keys {
            if let Some((_, meaning)) = meanings.iter().find(|(k, _)| *k == generic(&key)) {
                out.push_str(&format!("# {}\n", meaning.replace('`', "")));
            }
            match value {
                Some(v) => out.push_str(&format!("{name} = {v}\n")),
                None => out.push_str(&format!("# {name} = (unset)\n")),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_defaults_load_back_as_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("defaults.toml");
        std::fs::write(&file, print()).unwrap();
        let loaded = Settings::load_from(Some(&file), figment::providers::Env::prefixed("JPU_NOTHING__")).unwrap();
        assert_eq!(loaded, Settings::default());
    }

    #[test]
    fn the_guide_documents_every_setting_and_no_other() {
        let keys: std::collections::BTreeSet<String> = flat().into_iter().map(|(k, _)| generic(&k)).collect();
        let table: std::collections::BTreeSet<String> = documented().into_iter().map(|(k, _)| k).collect();
        let undocumented: Vec<_> = keys.difference(&table).collect();
        let unknown: Vec<_> = table.difference(&keys).collect();
        assert!(undocumented.is_empty(), "settings missing from the guide's table: {undocumented:?}");
        assert!(unknown.is_empty(), "the guide's table names settings that do not exist: {unknown:?}");
    }
}
