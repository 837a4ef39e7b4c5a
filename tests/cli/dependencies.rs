//! The dependency rule of docs/DESIGN.md holds: every `crates/*/Cargo.toml` depends (in its
//! `[dependencies]`, target-specific ones included) only on the crates of this workspace that
//! the rule's table allows it, and every crate has a row in the table.
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The marker before the rule's table in DESIGN.md.
const MARKER: &str = "<!-- the dependency rule: read by tests/cli/dependencies.rs -->";
/// The prefix of this workspace's package names.
const PREFIX: &str = "chokepoint-";

/// The rule: crate → the crates it may depend on (short names: `load`, not `chokepoint-load`).
fn rule(design: &str) -> BTreeMap<String, BTreeSet<String>> {
    let after = design
        .split_once(MARKER)
        .unwrap_or_else(|| panic!("docs/DESIGN.md has no line {MARKER}"))
        .1;
    let block = after
        .trim_start()
        .strip_prefix("```text\n")
        .and_then(|b| b.split_once("```"))
        .expect("a ```text block follows the marker")
        .0;
    block
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (name, deps) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("'{line}': a row is `crate: dep, dep` or `crate: -`"));
            let deps = deps
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty() && *d != "-")
                .map(String::from)
                .collect();
            (name.trim().to_string(), deps)
        })
        .collect()
}

/// A crate's short name and the workspace crates its manifest depends on.
fn workspace_deps(manifest: &Path) -> (String, BTreeSet<String>) {
    let text = std::fs::read_to_string(manifest).unwrap();
    let toml: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let name = toml["package"]["name"].as_str().expect("a package name");
    let mut tables: Vec<&toml::Table> = toml
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .into_iter()
        .collect();
    if let Some(targets) = toml.get("target").and_then(toml::Value::as_table) {
        tables.extend(
            targets
                .values()
                .filter_map(|t| t.get("dependencies").and_then(toml::Value::as_table)),
        );
    }
    let deps = tables
        .iter()
        .flat_map(|t| t.keys())
        .filter_map(|dep| dep.strip_prefix(PREFIX))
        .map(String::from)
        .collect();
    let short = name.strip_prefix(PREFIX).unwrap_or(name).to_string();
    (short, deps)
}

#[test]
fn every_crate_depends_only_where_the_rule_allows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rule = rule(&std::fs::read_to_string(root.join("docs/DESIGN.md")).unwrap());
    let mut crates = BTreeSet::new();
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        if !manifest.exists() {
            continue;
        }
        let (name, deps) = workspace_deps(&manifest);
        let Some(allowed) = rule.get(&name) else {
            wrong.push(format!(
                "{name} has no row in DESIGN.md's dependency rule: add one"
            ));
            continue;
        };
        for dep in deps.difference(allowed) {
            wrong.push(format!(
                "{name} depends on {dep}, which the rule does not allow"
            ));
        }
        crates.insert(name);
    }
    for name in rule.keys().filter(|name| !crates.contains(*name)) {
        wrong.push(format!(
            "the rule has a row for {name}, but there is no such crate"
        ));
    }
    assert!(crates.len() >= 9, "the crates were found: {crates:?}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_rules_table_reads_as_written() {
    let design = format!(
        "text\n{MARKER}\n```text\nresult: -\nload:   result, observe\n\nreport: result\n```\nmore"
    );
    let rule = rule(&design);
    let names: Vec<&str> = rule.keys().map(String::as_str).collect();
    assert_eq!(names, ["load", "report", "result"]);
    assert!(rule["result"].is_empty());
    let load: Vec<&str> = rule["load"].iter().map(String::as_str).collect();
    assert_eq!(load, ["observe", "result"]);
}
