//! Reading files of items — suite cases, labelled claims — in YAML, JSON,
//! JSON Lines and CSV, each item with the line it starts on, and errors
//! located at a line (and column where the format gives one).

use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

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
