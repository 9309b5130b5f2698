//! The library's layers, kept true: every module of `src/` imports only the
//! modules its layer may import (ARCHITECTURE.md, "Layers").
//!
//! The test reads the sources as text. A file belongs to the top-level
//! module its path starts with; it imports another top-level module when it
//! names it through `crate::…` (in a `use` or inline, also inside
//! `crate::{…}` groups and macros' `$crate::…`) or through `super::…` that
//! climbs out of its own module. A top-layer macro's `$crate::__private::…`
//! is the one exception: it is resolved where the macro is used. Comments, string and character literals
//! and `#[cfg(test)]` modules are skipped: tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every top-level module: its layer, and the modules it may import.
const LAYERS: &[(&str, &str, &[&str])] = &[
    // The vocabulary: imports nothing.
    ("core", "core", &[]),
    ("prompts", "prompts, parse, stats", &["core"]),
    ("parse", "prompts, parse, stats", &["core"]),
    ("stats", "prompts, parse, stats", &["core"]),
    ("evidence", "prompts, parse, stats", &["core"]),
    ("retrieval", "prompts, parse, stats", &["core"]),
    ("html", "prompts, parse, stats", &[]),
    ("transport", "transport", &["core"]),
    ("run", "runstate", &["core"]),
    ("record", "store", &["core", "run"]),
    (
        "error",
        "error",
        &["core", "parse", "retrieval", "transport", "record"],
    ),
    ("client", "client", &["core", "transport", "run", "error"]),
    ("tasks", "tasks", &["core", "prompts", "parse", "evidence"]),
    (
        "session",
        "session",
        &["core", "client", "record", "tasks", "error"],
    ),
    (
        "metrics",
        "metrics",
        &[
            "core", "prompts", "parse", "stats", "evidence", "tasks", "session", "error",
        ],
    ),
    ("config", "config", &["core", "transport"]),
    // The pipeline's loopback endpoint: serves through a recorder, forwards
    // with the transport's HTTP client, under a judge client's limits.
    (
        "pipeline",
        "pipeline",
        &["core", "transport", "client", "record"],
    ),
    (
        "judge",
        "judge",
        &[
            "core",
            "config",
            "client",
            "session",
            "metrics",
            "tasks",
            "transport",
            "prompts",
            "record",
            "error",
            "pipeline",
        ],
    ),
    ("data_files", "top", &[]),
    ("recorded", "top", &["config", "judge", "record"]),
    ("assertions", "top", &["private"]),
    (
        "private",
        "top",
        &[
            "core",
            "config",
            "judge",
            "metrics",
            "record",
            "recorded",
            "error",
            "retrieval",
            "pipeline",
        ],
    ),
    (
        "harness",
        "top",
        &[
            "core",
            "config",
            "judge",
            "metrics",
            "record",
            "run",
            "error",
            "data_files",
            "evidence",
            "html",
            "retrieval",
            "pipeline",
        ],
    ),
    (
        "calibrate",
        "top",
        &[
            "core",
            "config",
            "judge",
            "metrics",
            "record",
            "review",
            "stats",
            "data_files",
            "evidence",
            "html",
        ],
    ),
    (
        "review",
        "top",
        &["core", "judge", "metrics", "parse", "record"],
    ),
    ("generation", "top", &["core", "judge", "tasks", "error"]),
    ("batch", "top", &["config", "run", "transport"]),
];

/// Modules a path may name under another name (`#[path]`).
const ALIASES: &[(&str, &str)] = &[("__private", "private")];

#[test]
fn every_module_imports_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let table: BTreeMap<&str, (&str, &[&str])> = LAYERS
        .iter()
        .map(|(module, layer, may)| (*module, (*layer, *may)))
        .collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let module = module_path(rel);
        let Some(top) = module.first() else {
            continue; // lib.rs: the crate root re-exports every layer.
        };
        seen.insert(top.clone());
        let Some((layer, may)) = table.get(top.as_str()) else {
            problems.push(format!(
                "{}: module `{top}` is in no layer: add it to LAYERS in tests/layers.rs",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (line, imported) in imports(&code_only(&text), &module) {
            // An exported macro of the top layer reaches its support through
            // `$crate::__private`, as the assertion macros do: the path is
            // resolved in the user's crate, so it is no import of the module
            // that defines the macro (`private` itself imports `recorded`).
            let through_macro_support = *layer == "top"
                && imported == "private"
                && lines
                    .get(line.wrapping_sub(1))
                    .is_some_and(|l| l.contains("$crate::__private"));
            if through_macro_support {
                continue;
            }
            // Items of the crate root (re-exports, exported macros) are not
            // a layer's: only modules count.
            let is_module = table.contains_key(imported.as_str());
            if is_module && imported != *top && !may.contains(&imported.as_str()) {
                problems.push(format!(
                    "{}:{line}: `{top}` (layer {layer}) imports `{imported}`, which it may not (it may import: {})",
                    rel.display(),
                    if may.is_empty() { "nothing".to_owned() } else { may.join(", ") }
                ));
            }
        }
    }
    for (module, ..) in LAYERS {
        if !seen.contains(*module) {
            problems.push(format!(
                "LAYERS names `{module}`, which is not a module of src/"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scanner_sees_what_the_compiler_sees() {
    let text = r#####"
use crate::core::{Verdict, Usage};
use crate::{
    error::Error,
    tasks,
};
// use crate::judge::Judge;
/* crate::metrics */
let s = "crate::suite";
let r = r#"crate::calibration"#;
let c = '"'; let l: &'static str = "";
fn f() { crate::stats::vote(); $crate::__private::x(); super::super::transport::T; }
#[cfg(test)]
mod tests { use crate::judge::Judge; }
"#####;
    let found: BTreeSet<String> = imports(&code_only(text), &["record".into(), "x".into()])
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    let expected: BTreeSet<String> = ["core", "error", "tasks", "stats", "private", "transport"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(found, expected);
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

/// `judge/builder.rs` → `[judge, builder]`; `judge/mod.rs` → `[judge]`;
/// `error.rs` → `[error]`; `lib.rs` → `[]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The text with comments, string and character literals blanked (line
/// breaks kept, so lines still count) and `#[cfg(test)]` modules removed.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars[..i]
                .last()
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"…", r#"…"#, …
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    out.push(blank(ch));
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    strip_test_modules(&out)
}

fn strip_test_modules(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_module = trimmed.starts_with("mod ")
            || trimmed.starts_with("pub mod ")
            || trimmed.starts_with("pub(crate) mod ");
        let Some(open) = after.find('{').filter(|_| is_module) else {
            out.push_str(&rest[..at + "#[cfg(test)]".len()]);
            rest = after;
            continue;
        };
        if after[..open].contains(';') {
            // `#[cfg(test)] mod tests;`: an out-of-line module, nothing here.
            out.push_str(&rest[..at + "#[cfg(test)]".len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        let mut depth = 0;
        let mut end = after.len();
        for (k, ch) in after[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        // Keep the line count: the removed block's line breaks stay.
        out.extend(after[..end].chars().filter(|c| *c == '\n'));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The top-level modules `code` names, with the line each is named on, for
/// a file whose module path is `module`.
fn imports(code: &str, module: &[String]) -> Vec<(usize, String)> {
    let alias = |name: &str| -> String {
        ALIASES
            .iter()
            .find(|(from, _)| *from == name)
            .map_or(name, |(_, to)| to)
            .to_owned()
    };
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = find_word(code, i, "crate") {
        i = at + "crate".len();
        let Some(rest) = code[i..].trim_start().strip_prefix("::") else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::X, b}`: the first name of each item.
            let inner = group.split('}').next().unwrap_or_default();
            for item in inner.split(',') {
                let name = ident(item.trim_start());
                if !name.is_empty() {
                    found.push((line_of(at), alias(name)));
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                found.push((line_of(at), alias(name)));
            }
        }
    }
    let mut i = 0;
    while let Some(at) = find_word(code, i, "super") {
        // `super::super::x`: climb once per `super`.
        let mut depth = module.len();
        let mut rest = &code[at..];
        while let Some(r) = rest
            .strip_prefix("super")
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix("::"))
        {
            depth = depth.saturating_sub(1);
            rest = r.trim_start();
        }
        i = (code.len() - rest.len()).max(at + "super".len());
        if depth == 0 {
            let name = ident(rest);
            if !name.is_empty() {
                found.push((line_of(at), alias(name)));
            }
        }
    }
    found
}

/// The next occurrence of `word` at or after `from`, as a whole word.
fn find_word(text: &str, from: usize, word: &str) -> Option<usize> {
    let mut start = from;
    while let Some(k) = text.get(start..)?.find(word) {
        let at = start + k;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        if boundary(before) && boundary(after) {
            return Some(at);
        }
        start = at + word.len();
    }
    None
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// No files import each other in a loop, within a module as across
/// modules: `a.rs` naming `b.rs` (through `crate::…` or `super::…`) and
/// `b.rs` naming `a.rs`, directly or round a longer circle, means neither
/// can be read or changed alone. Naming an ancestor module (`super::Error`
/// from a child) does not count: a parent declares its children, and that
/// is no loop of concepts.
#[test]
fn no_files_import_each_other_in_a_loop() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_path(f.strip_prefix(&src).unwrap()), f.clone()))
        .collect();
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, file) in &modules {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        let named = graph.entry(module.clone()).or_default();
        for path in module_paths(&code, module) {
            // The longest prefix of the path that is a module of src/.
            let Some(target) = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains_key(p))
            else {
                continue;
            };
            if !module.starts_with(&target) {
                named.insert(target);
            }
        }
    }
    let loops = cycles(&graph);
    let shown: Vec<String> = loops
        .iter()
        .map(|c| {
            let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            format!("{} → {}", names.join(" → "), names[0])
        })
        .collect();
    assert!(
        shown.is_empty(),
        "files that import each other in a loop:\n{}",
        shown.join("\n")
    );
}

#[test]
fn the_file_scanner_resolves_groups_and_super() {
    let code = "use super::{RecordingError, snapfile};\nuse super::recording::{self, Recording};\nfn f() { crate::core::judged::items(); super::super::run::x(); }";
    let module: Vec<String> = vec!["record".into(), "reviewed".into()];
    let found: BTreeSet<String> = module_paths(code, &module)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    let expected: BTreeSet<String> = [
        "record::RecordingError",
        "record::snapfile",
        "record::recording::self",
        "record::recording::Recording",
        "core::judged::items",
        "run::x",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(found, expected);
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    let m = |s: &str| vec![s.to_owned()];
    graph.entry(m("a")).or_default().insert(m("b"));
    graph.entry(m("b")).or_default().insert(m("c"));
    graph.entry(m("c")).or_default().insert(m("a"));
    graph.entry(m("d")).or_default().insert(m("a"));
    assert_eq!(cycles(&graph), vec![vec![m("a"), m("b"), m("c")]]);
}

/// Every path `code` names through `crate::` or `super::`, resolved from
/// the crate root, with `{…}` groups expanded one level.
fn module_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for word in ["crate", "super"] {
        let mut i = 0;
        while let Some(at) = find_word(code, i, word) {
            let mut base: Vec<String> = if word == "crate" {
                Vec::new()
            } else {
                module.to_vec()
            };
            let mut rest = &code[at..];
            if word == "crate" {
                rest = &rest["crate".len()..];
                match rest.trim_start().strip_prefix("::") {
                    Some(r) => rest = r.trim_start(),
                    None => {
                        i = at + word.len();
                        continue;
                    }
                }
            } else {
                while let Some(r) = rest
                    .strip_prefix("super")
                    .map(str::trim_start)
                    .and_then(|r| r.strip_prefix("::"))
                {
                    base.pop();
                    rest = r.trim_start();
                }
            }
            i = (code.len() - rest.len()).max(at + word.len());
            // `a::b::` before a group or a name.
            let mut prefix = base;
            loop {
                let name = ident(rest);
                if name.is_empty() {
                    break;
                }
                let after = rest[name.len()..].trim_start();
                prefix.push(name.to_owned());
                match after.strip_prefix("::") {
                    Some(r) => rest = r.trim_start(),
                    None => break,
                }
            }
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or_default();
                for item in inner.split(',') {
                    let mut path = prefix.clone();
                    path.extend(
                        item.split("::")
                            .map(|s| ident(s.trim()).to_owned())
                            .take_while(|s| !s.is_empty()),
                    );
                    if path.len() > prefix.len() {
                        out.push(path);
                    }
                }
            } else if !prefix.is_empty() {
                out.push(prefix);
            }
        }
    }
    out
}

/// The loops of `graph` (strongly connected components of more than one
/// node), each as its nodes in order, smallest first.
fn cycles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    // Kosaraju: finish order on the graph, then components on its reverse.
    fn visit<'a>(
        n: &'a Vec<String>,
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        seen: &mut BTreeSet<&'a Vec<String>>,
        out: &mut Vec<&'a Vec<String>>,
    ) {
        if !seen.insert(n) {
            return;
        }
        for m in edges.get(n).into_iter().flatten() {
            visit(m, edges, seen, out);
        }
        out.push(n);
    }
    let mut reverse: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (from, tos) in graph {
        for to in tos {
            reverse.entry(to.clone()).or_default().insert(from.clone());
        }
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for n in graph.keys() {
        visit(n, graph, &mut seen, &mut order);
    }
    let mut assigned = BTreeSet::new();
    let mut loops = Vec::new();
    for n in order.into_iter().rev() {
        let mut component = Vec::new();
        visit(n, &reverse, &mut assigned, &mut component);
        if component.len() > 1 {
            component.sort();
            loops.push(component.into_iter().cloned().collect());
        }
    }
    loops.sort();
    loops
}
