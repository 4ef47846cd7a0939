//! The shape the code must keep, checked on its source: the policy folder
//! is pure (no I/O, no async, no clock), and each layer imports only the
//! layers below it, so no import cycle can come back unnoticed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module and the ones it may import (`crate::x`). A
/// module missing here may import nothing of the crate.
const SERVER_LAYERS: &[(&str, &[&str])] = &[
    ("policy", &[]),
    ("clock", &[]),
    ("telemetry", &[]),
    ("config", &["policy"]),
    ("executor", &["policy", "clock", "config"]),
    ("db", &["executor", "policy", "clock", "config"]),
    ("auth", &["db", "clock", "config"]),
    ("services", &["auth", "db", "executor", "policy", "clock", "config"]),
    ("state", &["services", "auth", "db", "executor", "policy", "clock", "config"]),
    ("scheduler", &["services", "db", "executor", "policy", "clock", "config"]),
    ("http", &["state", "services", "auth", "executor", "policy", "clock", "config"]),
    ("sim", &["policy", "clock", "config"]),
    ("cli", &[]),
    (
        "startup",
        &["http", "scheduler", "state", "services", "auth", "db", "executor", "policy", "clock", "config", "telemetry"],
    ),
];

const APP_LAYERS: &[(&str, &[&str])] = &[("model", &[]), ("api", &["model"]), ("pages", &["api", "model"])];

/// What pure code may not name: I/O, async runtimes, the clock, logging
/// and metrics, randomness, and the crate's impure layers.
const IMPURE: &[&str] = &[
    "tokio",
    "sqlx",
    "reqwest",
    "axum",
    "std::fs",
    "std::net",
    "std::process",
    "std::io",
    "std::env",
    "std::thread",
    "SystemTime",
    "Instant",
    "async ",
    ".await",
    "tracing::",
    "metrics::",
    "rand::",
    "crate::db",
    "crate::executor",
    "crate::services",
    "crate::scheduler",
    "crate::http",
    "crate::clock",
    "crate::state",
];

fn src(crate_dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(crate_dir).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments and without its test module
/// (tests may reach wherever they need to).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
    text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// `crate::x` names in the code (after `crate::{` too), as top-level modules.
fn crate_imports(code: &str) -> Vec<String> {
    imports_after(code, "crate::")
}

/// The names right after `prefix` (`crate::`, `super::`), groups included.
fn imports_after(code: &str, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        rest = &rest[at + prefix.len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end].split(',').map(str::trim).collect()
        } else {
            vec![rest]
        };
        for name in names {
            let ident: String = name.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !ident.is_empty() {
                found.push(ident);
            }
        }
    }
    found
}

/// Every import that breaks the layer table, as `file: crate::x`.
fn layer_violations(crate_dir: &str, layers: &[(&str, &[&str])]) -> Vec<String> {
    let root = src(crate_dir);
    let rules: BTreeMap<&str, &[&str]> = layers.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut bad = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&root).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if matches!(top.as_str(), "lib" | "main" | "bin") {
            continue;
        }
        let allowed = rules.get(top.as_str()).copied().unwrap_or(&[]);
        for name in crate_imports(&code(&file)) {
            if name != top && rules.contains_key(name.as_str()) && !allowed.contains(&name.as_str()) {
                bad.push(format!("{}: crate::{name}", rel.display()));
            }
        }
    }
    bad
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    assert_eq!(layer_violations("server", SERVER_LAYERS), Vec::<String>::new());
    assert_eq!(layer_violations("app", APP_LAYERS), Vec::<String>::new());
}

#[test]
fn the_layer_tables_have_no_cycle() {
    for layers in [SERVER_LAYERS, APP_LAYERS] {
        let rules: BTreeMap<&str, &[&str]> = layers.iter().copied().collect();
        // a module's allowed set must not reach back to the module itself
        for (module, _) in layers {
            let mut seen: Vec<&str> = Vec::new();
            let mut todo: Vec<&str> = rules[module].to_vec();
            while let Some(next) = todo.pop() {
                assert_ne!(next, *module, "{module} can reach itself through its imports");
                if !seen.contains(&next) {
                    seen.push(next);
                    todo.extend(rules.get(next).copied().unwrap_or(&[]));
                }
            }
        }
    }
}

#[test]
fn the_policy_folder_is_pure() {
    let mut files = Vec::new();
    rust_files(&src("server").join("policy"), &mut files);
    assert!(files.len() >= 8, "the policy folder moved? found {files:?}");
    let mut bad = Vec::new();
    for file in &files {
        let code = code(file);
        for word in IMPURE {
            if code.contains(word) {
                bad.push(format!("{}: {word}", file.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    assert_eq!(bad, Vec::<String>::new());
}

#[test]
fn the_checks_see_what_they_forbid() {
    // a check that finds nothing in anything would pass forever
    assert_eq!(crate_imports("use crate::db::jobs;\nuse crate::{auth, clock::now_ms};"), ["db", "auth", "clock"]);
    assert!(code(&src("server").join("scheduler").join("cycle.rs")).contains(".await"));
}

/// The modules a `mod.rs` or `lib.rs` declares (`pub mod x;`, `mod x;`),
/// test modules left out.
fn declared_modules(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
        .filter_map(|l| l.strip_suffix(';'))
        .filter(|m| !m.starts_with("tests") && !m.starts_with("proptests") && !m.ends_with("_tests"))
        .map(str::to_string)
        .collect()
}

/// The README's map is the one map of the layout: the crates' top-level
/// modules, the services and the policy's parts must each be named in it
/// (as `name`), so a module added without a place on the map fails here.
fn unnamed_in_map(readme: &str, modules: &[String]) -> Vec<String> {
    let map = readme.split("\n## Architecture\n").nth(1).unwrap_or_default();
    let map = map.split("\n## ").next().unwrap_or_default();
    modules.iter().filter(|m| !map.contains(&format!("`{m}`")) && !map.contains(&format!("`{m}/`"))).cloned().collect()
}

#[test]
fn every_module_has_its_place_on_the_readme_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut modules = Vec::new();
    for file in [
        src("server").join("lib.rs"),
        src("app").join("lib.rs"),
        src("server").join("services").join("mod.rs"),
        src("server").join("policy").join("mod.rs"),
        src("server").join("scheduler").join("mod.rs"),
        src("server").join("http").join("mod.rs"),
    ] {
        let found = declared_modules(&file);
        assert!(!found.is_empty(), "{} declares no module?", file.display());
        modules.extend(found);
    }
    assert_eq!(
        unnamed_in_map(&readme, &modules),
        Vec::<String>::new(),
        "named in the code, missing from the README's map"
    );
    // and the check itself sees a missing one
    assert_eq!(unnamed_in_map(&readme, &["no_such_module".into()]), ["no_such_module"]);
}

/// Which of the policy's modules each one names (`super::x`), tests aside.
fn policy_module_graph() -> BTreeMap<String, Vec<String>> {
    let dir = src("server").join("policy");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let stem = |f: &Path| f.file_stem().unwrap().to_string_lossy().to_string();
    let modules: Vec<String> = files
        .iter()
        .map(|f| stem(f))
        .filter(|m| m != "mod" && !m.starts_with("tests") && !m.starts_with("proptests"))
        .collect();
    modules
        .iter()
        .map(|m| {
            let mut uses: Vec<String> = imports_after(&code(&dir.join(format!("{m}.rs"))), "super::")
                .into_iter()
                .filter(|u| u != m && modules.contains(u))
                .collect();
            uses.sort();
            uses.dedup();
            (m.clone(), uses)
        })
        .collect()
}

/// A module that can reach itself through the graph, if any.
fn first_circle(graph: &BTreeMap<String, Vec<String>>) -> Option<String> {
    for start in graph.keys() {
        let mut seen: Vec<&String> = Vec::new();
        let mut todo: Vec<&String> = graph[start].iter().collect();
        while let Some(next) = todo.pop() {
            if next == start {
                return Some(start.clone());
            }
            if !seen.contains(&next) {
                seen.push(next);
                todo.extend(graph.get(next).into_iter().flatten());
            }
        }
    }
    None
}

#[test]
fn the_policys_modules_form_no_circle() {
    // the seed cycle, `planned` and the forecast share their common steps
    // through one module; a circle would let an edit to one policy reach
    // the other unseen
    let graph = policy_module_graph();
    assert!(graph.get("planned").is_some_and(|u| u.contains(&"steps".to_string())), "{graph:?}");
    assert_eq!(first_circle(&graph), None, "{graph:?}");
    let mut circle = graph.clone();
    circle.get_mut("steps").unwrap().push("planned".into());
    assert!(first_circle(&circle).is_some(), "the check sees a circle");
}

/// For folder `dir` (module path `path`, `""` at a crate's root): which of
/// its sibling modules each module names (`super::x` from the module's
/// own file, `super::super::x` from its folder's other files, or
/// `crate::path::x`), tests aside.
fn folder_graph(dir: &Path, path: &str) -> BTreeMap<String, Vec<String>> {
    let mut modules: BTreeMap<String, Vec<(PathBuf, bool)>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        if p.is_dir() && p.join("mod.rs").is_file() {
            let mut files = Vec::new();
            rust_files(&p, &mut files);
            let own = files.iter().map(|f| (f.clone(), f.file_name().is_some_and(|n| n == "mod.rs"))).collect();
            modules.insert(stem, own);
        } else if p.extension().is_some_and(|e| e == "rs") && !["mod", "lib", "main"].contains(&stem.as_str()) {
            modules.insert(stem, vec![(p.clone(), true)]);
        }
    }
    let names: Vec<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(m, files)| {
            let mut uses = Vec::new();
            for (file, own) in files {
                let c = code(file);
                if !path.is_empty() {
                    uses.extend(imports_after(&c, &format!("crate::{path}::")));
                }
                uses.extend(imports_after(&c, if *own { "super::" } else { "super::super::" }));
            }
            uses.retain(|u| u != m && names.contains(u));
            uses.sort();
            uses.dedup();
            (m.clone(), uses)
        })
        .collect()
}

/// #42: modules of one folder that need each other (`i18n` and the views,
/// the console's backend and admin pages, …) cannot be read or changed
/// apart; a piece both need gets its own module instead.
#[test]
fn no_folder_has_modules_that_need_each_other() {
    let mut circles = Vec::new();
    for krate in ["server", "app"] {
        let root = src(krate);
        let mut dirs = vec![(root.clone(), String::new())];
        while let Some((dir, path)) = dirs.pop() {
            let graph = folder_graph(&dir, &path);
            if let Some(m) = first_circle(&graph) {
                circles.push(format!("{krate}/{path}: {m} ({graph:?})"));
            }
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = entry.path();
                if p.is_dir() && p.join("mod.rs").is_file() {
                    let name = p.file_name().unwrap().to_string_lossy().to_string();
                    let sub = if path.is_empty() { name } else { format!("{path}::{name}") };
                    dirs.push((p, sub));
                }
            }
        }
    }
    assert!(circles.is_empty(), "modules that need each other:\n{}", circles.join("\n"));
    // the check sees the edges it judges: sessions are built on jobs
    let services = folder_graph(&src("server").join("services"), "services");
    assert!(services["sessions"].contains(&"jobs".to_string()), "{services:?}");
    let model = folder_graph(&src("app").join("model"), "model");
    assert!(model["reasons"].is_empty() && model["views"].is_empty(), "{model:?}");
}

/// The functions of a file, each as (name, signature, body), from their
/// `fn` lines to their closing brace at the start of a line.
fn functions(code: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let lines: Vec<&str> = code.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line =
            lines[i].trim_start_matches("pub ").trim_start_matches("pub(crate) ").trim_start_matches("pub(super) ");
        if let Some(rest) = line.strip_prefix("async fn ").or_else(|| line.strip_prefix("fn ")) {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let end = (i..lines.len()).find(|&k| lines[k] == "}").unwrap_or(lines.len() - 1);
            let text = lines[i..=end].join("\n");
            let open = text.find('{').unwrap_or(text.len());
            found.push((name, text[..open].to_string(), text[open..].to_string()));
            i = end;
        }
        i += 1;
    }
    found
}

/// Functions of the database layer that write without the write gate's
/// transaction in their signature.
fn ungated_writes() -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&src("server").join("db"), &mut files);
    let writes = ["INSERT ", "UPDATE ", "DELETE ", "REPLACE "];
    let mut bad = Vec::new();
    for file in files {
        // migrate-db fills a new database no server runs on yet, in a
        // transaction of its own: no count or gate of a server to keep
        if file.file_name().is_some_and(|n| n == "copy.rs") {
            continue;
        }
        for (name, signature, body) in functions(&code(&file)) {
            if writes.iter().any(|w| body.contains(w)) && !signature.contains("&mut WriteTx") {
                bad.push(format!("{}: {name}", file.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    bad
}

#[test]
fn writes_take_the_write_gates_transaction() {
    // the scheduler and the queue cache trust the gate's commit count to
    // notice every change; a write on a plain connection would slip past
    // it, so a database function that writes must take a `&mut WriteTx`
    // (which only `db::write_tx` makes) and cannot be handed anything else
    assert_eq!(ungated_writes(), Vec::<String>::new());
    let sample = "pub async fn f(conn: &mut SqliteConnection) -> R {\n    q(\"UPDATE jobs SET x = 1\")\n}\n";
    assert_eq!(functions(sample)[0].0, "f", "the check reads functions");
    assert!(!functions(sample)[0].1.contains("&mut WriteTx") && functions(sample)[0].2.contains("UPDATE "));
    // and SQL lives in the database layer only (the health check's
    // `SELECT 1` aside)
    let mut files = Vec::new();
    rust_files(&src("server"), &mut files);
    let outside: Vec<String> = files
        .iter()
        .filter(|f| !f.starts_with(src("server").join("db")) && !f.ends_with("http/ops.rs"))
        .filter(|f| ["sqlx::query", "query!(", "query_as!(", "query_scalar!("].iter().any(|q| code(f).contains(q)))
        .map(|f| f.display().to_string())
        .collect();
    assert_eq!(outside, Vec::<String>::new());
}
