//! Reading files of items — suite cases, labelled claims — in YAML, JSON,
//! JSON Lines and CSV, each item with the line it starts on, and errors
//! located at a line (and column where the format gives one).

use serde::de::DeserializeOwned;
use std::fmt;
use std::path::{Path, PathBuf};

/// A case file (or labelled-claims file) that cannot be loaded: the file, the line (and column when
/// the format gives one) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// A second place the problem involves (the other definition of a
    /// duplicate id), named first.
    pub also: Option<(PathBuf, usize)>,
}

impl LoadError {
    /// Paths relative to `root` where they lie under it, so a message names
    /// every file the same way.
    pub fn relativize(&mut self, root: &Path) {
        let rel = |p: &Path| {
            p.strip_prefix(root)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| p.to_owned())
        };
        self.file = rel(&self.file);
        if let Some((file, _)) = &mut self.also {
            *file = rel(file);
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((file, line)) = &self.also {
            write!(f, "{}:{line} and ", file.display())?;
        }
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// The extensions read.
pub(crate) const EXTENSIONS: [&str; 5] = ["yaml", "yml", "json", "jsonl", "csv"];

/// A result whose error carries a line, a column and a message.
pub(crate) type Located<T> = Result<T, (Option<usize>, Option<usize>, String)>;

/// Every file under `dir` with one of [`EXTENSIONS`], recursively,
/// `snapshots` folders skipped (unsorted).
pub(crate) fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "snapshots") {
                collect_files(&path, out)?;
            }
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// The items of a YAML list. A field error is noticed where its mapping
/// ends; it is reported at the start of the `item` ("case", "item") it
/// belongs to.
pub(crate) fn yaml<T: DeserializeOwned>(text: &str, item: &str) -> Located<Vec<(T, usize)>> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let items: Vec<serde_saphyr::Spanned<T>> = serde_saphyr::from_str(text).map_err(|e| {
        let at = e
            .location()
            .map(|l| (l.line() as usize, l.column() as usize));
        let message = yaml_message(&e.to_string());
        let starts: Vec<usize> =
            serde_saphyr::from_str::<Vec<serde_saphyr::Spanned<serde::de::IgnoredAny>>>(text)
                .map(|items| items.iter().map(|i| i.referenced.line() as usize).collect())
                .unwrap_or_default();
        match (
            at,
            starts
                .iter()
                .rev()
                .find(|&&s| at.is_some_and(|(l, _)| s <= l)),
        ) {
            (Some((line, _)), Some(&start)) if start != line => (
                Some(start),
                None,
                format!(
                    "{message} (in the {item} starting here; the parser noticed at line {line})"
                ),
            ),
            (at, _) => (at.map(|a| a.0), at.map(|a| a.1), message),
        }
    })?;
    Ok(items
        .into_iter()
        .map(|s| (s.value, s.referenced.line() as usize))
        .collect())
}

/// The items of a JSON array; `array` and `item` say what was expected.
pub(crate) fn json<T: DeserializeOwned>(
    text: &str,
    array: &str,
    item: &str,
) -> Located<Vec<(T, usize)>> {
    let items: Vec<&serde_json::value::RawValue> = serde_json::from_str(text)
        .map_err(|e| (Some(e.line()), Some(e.column()), json_message(&e, array)))?;
    items
        .into_iter()
        .map(|raw| {
            // RawValue borrows from `text`: its offset gives the item's line.
            let offset = raw.get().as_ptr() as usize - text.as_ptr() as usize;
            let line = text[..offset].matches('\n').count() + 1;
            serde_json::from_str::<T>(raw.get())
                .map(|r| (r, line))
                .map_err(|e| {
                    (
                        Some(line + e.line() - 1),
                        Some(e.column()),
                        json_message(&e, item),
                    )
                })
        })
        .collect()
}

/// One item per non-blank line; `expected` says what a line holds.
pub(crate) fn jsonl<T: DeserializeOwned>(text: &str, expected: &str) -> Located<Vec<(T, usize)>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str::<T>(l)
                .map(|r| (r, i + 1))
                .map_err(|e| (Some(i + 1), Some(e.column()), json_message(&e, expected)))
        })
        .collect()
}

/// A CSV list cell: a JSON array of strings, or values separated by `|`;
/// empty for a blank cell.
pub(crate) fn list_cell(raw: &str, column: &str, line: usize) -> Located<Vec<String>> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    if raw.starts_with('[') {
        return serde_json::from_str::<Vec<String>>(raw).map_err(|e| {
            (
                Some(line),
                None,
                format!(
                    "bad list in column `{column}`: {e} (expected a JSON array of strings, or values separated by `|`)"
                ),
            )
        });
    }
    Ok(raw
        .split('|')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect())
}

fn json_message(e: &serde_json::Error, expected: &str) -> String {
    // serde_json appends " at line L column C"; the location is shown already.
    let message = e.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m)
        .to_owned();
    format!("{message} (expected {expected})")
}

/// serde-saphyr's first line, without its own "error: line L column C: "
/// prefix (the location is shown already).
fn yaml_message(s: &str) -> String {
    let first = s.lines().next().unwrap_or_default().trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    match first.strip_prefix("line ").and_then(|r| r.split_once(": ")) {
        Some((position, rest)) if position.contains("column") => rest.to_owned(),
        _ => first.to_owned(),
    }
}
