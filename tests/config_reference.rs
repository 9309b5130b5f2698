//! The configuration reference cannot drift from the code that reads it.
//!
//! `ragaliq/src/config/mod.rs`'s module documentation holds the table of every
//! key in `ragaliq.toml` and every `RAGALIQ_*` variable; the guide
//! (`docs/guide/configuration.md`) shows the same table to readers who never
//! open the crate's documentation. This test fails when
//!
//! 1. the guide's table is not, line for line, the module doc's table (copy
//!    it again: it is the one under `<!-- config table: … -->`);
//! 2. a file of `config/` reads a `"RAGALIQ_…"` variable (a string literal outside
//!    its tests, or a `format!` prefix such as `"RAGALIQ_THRESHOLD_{}"`)
//!    that the table does not name (add a row to the module doc, then copy
//!    the table);
//! 3. another file of `ragaliq/src` reads a `RAGALIQ_…` variable that
//!    neither the table nor the guide's list of variables read outside
//!    `config/` names.
//!
//! Two variables `config/` reads are not rows of the table on purpose and
//! are listed in [`NOT_ROWS`] with the reason; each must still be named in
//! the module doc.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Variables `config/` reads that are not rows of its table: the name,
/// why, and a text that must still be in `config/` so the reader is not
/// left without it (in the module doc for a variable a user sets; in the
/// refusal's message for a retired name).
const NOT_ROWS: &[(&str, &str, &str)] = &[
    (
        "RAGALIQ_CONFIG",
        "names the file the table's keys are read from, so it is not one of them; the module doc says so under the table",
        "//! `RAGALIQ_CONFIG` names another file",
    ),
    (
        "RAGALIQ_CONTRADICTION_THRESHOLD",
        "a retired name, read only to refuse it with a message naming its replacement",
        "judge.contradiction_ratio instead",
    ),
];

/// The marker on the line before the guide's copy of the table.
const GUIDE_MARKER: &str = "<!-- config table: ragaliq/src/config/mod.rs -->";

/// The marker on the line before the guide's list of variables read
/// outside `config/`.
const ELSEWHERE_MARKER: &str = "<!-- variables read outside config/ -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `//!` lines at the top of a source file, without the `//!` (and the
/// one space after it).
fn module_doc(source: &str) -> Vec<String> {
    source
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| {
            let l = &l[3..];
            l.strip_prefix(' ').unwrap_or(l).trim_end().to_owned()
        })
        .collect()
}

/// The first Markdown table at or after line `from`: its lines, trimmed at
/// the end.
fn table_from(lines: &[String], from: usize) -> Vec<String> {
    lines[from..]
        .iter()
        .skip_while(|l| !l.trim_start().starts_with('|'))
        .take_while(|l| l.trim_start().starts_with('|'))
        .map(|l| l.trim_end().to_owned())
        .collect()
}

/// The module doc's table in `config/mod.rs`.
fn code_table() -> Vec<String> {
    let doc = module_doc(&read(&root().join("ragaliq/src/config/mod.rs")));
    let table = table_from(&doc, 0);
    assert!(
        table.len() > 2,
        "ragaliq/src/config/mod.rs: its module doc has no table of keys and variables"
    );
    table
}

/// `ragaliq/src/config/`, where the configuration is read.
fn config_dir() -> PathBuf {
    root().join("ragaliq/src/config")
}

/// The source of every file of `config/`, in a stable order.
fn config_sources() -> Vec<String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(config_dir())
        .unwrap_or_else(|e| panic!("{}: {e}", config_dir().display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read(p)).collect()
}

fn guide_lines() -> Vec<String> {
    read(&root().join("docs/guide/configuration.md"))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The guide's copy: the table after [`GUIDE_MARKER`].
fn guide_table(guide: &[String]) -> Vec<String> {
    let at = guide
        .iter()
        .position(|l| l.trim() == GUIDE_MARKER)
        .unwrap_or_else(|| {
            panic!("docs/guide/configuration.md: no `{GUIDE_MARKER}` line before the table")
        });
    table_from(guide, at + 1)
}

/// Every `RAGALIQ_…` name a piece of text mentions (a `<METRIC>`-style
/// placeholder kept as written).
fn names_in(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("RAGALIQ_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || "_<>".contains(c)))
            .unwrap_or(tail.len());
        out.insert(tail[..end].to_owned());
        rest = &tail[end..];
    }
    out
}

/// The source without its tests: everything before the first
/// `#[cfg(test)]`, without `//` comments (which mention variables they do
/// not read).
fn code_only(source: &str) -> String {
    let end = source.find("#[cfg(test)]").unwrap_or(source.len());
    source[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The variables a source file reads: `"RAGALIQ_X"` literals, and
/// `"RAGALIQ_X_{…}"` format strings as the prefix `RAGALIQ_X_`.
fn variables_read(source: &str) -> BTreeSet<String> {
    let code = code_only(source);
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("\"RAGALIQ_") {
        let tail = &rest[i + 1..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        let name = &tail[..end];
        match tail[end..].chars().next() {
            // A whole literal, or the fixed part of a `format!`.
            Some('"') | Some('{') if name != "RAGALIQ_" => {
                out.insert(name.to_owned());
            }
            // `"RAGALIQ_"` alone (a prefix test) names no variable.
            _ => {}
        }
        rest = &tail[end..];
    }
    out
}

/// Whether `documented` (a name as the docs write it, maybe with a
/// `<PLACEHOLDER>`) covers `read` (a literal, or a `format!` prefix ending
/// in `_`).
fn covers(documented: &BTreeSet<String>, read: &str) -> bool {
    documented.iter().any(|d| match d.split_once('<') {
        None => d == read,
        Some((prefix, _)) => read.starts_with(prefix),
    })
}

/// Why two tables differ, readably: the first line that differs, and the
/// rows only one of them has.
fn difference(code: &[String], guide: &[String]) -> Option<String> {
    if code == guide {
        return None;
    }
    let mut out = String::new();
    if let Some(i) = (0..code.len().max(guide.len())).find(|&i| code.get(i) != guide.get(i)) {
        out.push_str(&format!(
            "first difference at the table's line {}:\n  config/: {}\n  guide:   {}\n",
            i + 1,
            code.get(i).map_or("(no line)", String::as_str),
            guide.get(i).map_or("(no line)", String::as_str)
        ));
    }
    for row in code.iter().filter(|r| !guide.contains(r)) {
        out.push_str(&format!("  only in config/: {row}\n"));
    }
    for row in guide.iter().filter(|r| !code.contains(r)) {
        out.push_str(&format!("  only in the guide: {row}\n"));
    }
    Some(out)
}

#[test]
fn the_guides_table_is_config_rs_table() {
    let code = code_table();
    let guide = guide_table(&guide_lines());
    if let Some(why) = difference(&code, &guide) {
        panic!(
            "docs/guide/configuration.md's table of keys and variables is not the one in ragaliq/src/config/mod.rs's module doc (the code's is the reference: copy it under `{GUIDE_MARKER}`):\n{why}"
        );
    }
}

#[test]
fn every_variable_config_rs_reads_is_in_its_table() {
    let sources = config_sources();
    let source = sources.join("\n");
    let documented = names_in(&code_table().join("\n"));
    let read: BTreeSet<String> = sources.iter().flat_map(|s| variables_read(s)).collect();
    assert!(
        read.contains("RAGALIQ_MODE") && read.contains("RAGALIQ_JUDGE"),
        "config/ reads no RAGALIQ_MODE or RAGALIQ_JUDGE literal: this test no longer finds what it reads"
    );
    let mut missing = Vec::new();
    for name in &read {
        if covers(&documented, name) {
            continue;
        }
        match NOT_ROWS.iter().find(|(n, _, _)| n == name) {
            Some((_, _, needle)) if source.contains(needle) => {}
            Some((_, why, needle)) => missing.push(format!(
                "{name} ({why}): config/ no longer holds `{needle}`"
            )),
            None => missing.push(format!(
                "{name} is read by config/ but is no row of its module doc's table"
            )),
        }
    }
    // An exception for a variable no longer read is a stale exception.
    for (name, _, _) in NOT_ROWS {
        if !read.contains(*name) {
            missing.push(format!(
                "{name} is listed in NOT_ROWS (tests/config_reference.rs) but config/ no longer reads it: remove it there"
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "the configuration table in ragaliq/src/config/mod.rs misses variables the code reads (add a row, then copy the table to docs/guide/configuration.md):\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn every_variable_read_elsewhere_is_in_the_guide() {
    let guide = guide_lines();
    let at = guide
        .iter()
        .position(|l| l.trim() == ELSEWHERE_MARKER)
        .unwrap_or_else(|| {
            panic!("docs/guide/configuration.md: no `{ELSEWHERE_MARKER}` line before the list")
        });
    // The list: the lines after the marker up to the first blank one.
    let list: String = guide[at + 1..]
        .iter()
        .take_while(|l| !l.trim().is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    let mut documented = names_in(&code_table().join("\n"));
    let listed = names_in(&list);
    documented.extend(listed.iter().cloned());
    let mut missing = Vec::new();
    let mut read_anywhere = BTreeSet::new();
    let mut files = vec![root().join("ragaliq/src")];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                files.push(entry.unwrap().path());
            }
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") || path.starts_with(config_dir()) {
            continue;
        }
        for name in variables_read(&read(&path)) {
            read_anywhere.insert(name.clone());
            if !covers(&documented, &name) {
                missing.push(format!(
                    "{name} (read in {})",
                    path.strip_prefix(root()).unwrap_or(&path).display()
                ));
            }
        }
    }
    // A listed variable nothing reads any more is a stale line of the guide.
    for name in &listed {
        if !read_anywhere.contains(name) {
            missing.push(format!(
                "{name} is in the guide's list but no file of ragaliq/src outside config/ reads it"
            ));
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "docs/guide/configuration.md's list under `{ELSEWHERE_MARKER}` is out of date:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn the_readers_find_what_they_should() {
    // The helpers themselves: a literal, a format prefix, a prefix test,
    // a comment and a test module.
    let source = "let a = env(\"RAGALIQ_A\");\nlet b = format!(\"RAGALIQ_T_{}\", m);\n// env(\"RAGALIQ_C\")\nif k.starts_with(\"RAGALIQ_\") {}\n#[cfg(test)]\nmod tests { env(\"RAGALIQ_D\"); }";
    let read = variables_read(source);
    assert_eq!(
        read.into_iter().collect::<Vec<_>>(),
        ["RAGALIQ_A", "RAGALIQ_T_"]
    );
    let documented = names_in("| `x` | `RAGALIQ_A` | | `RAGALIQ_T_<METRIC>` |");
    assert!(covers(&documented, "RAGALIQ_A"));
    assert!(covers(&documented, "RAGALIQ_T_"));
    assert!(!covers(&documented, "RAGALIQ_AB"));
}
