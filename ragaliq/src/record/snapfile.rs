//! Reading and writing recordings as insta `.snap` files.
//!
//! Reading goes through `insta::Snapshot::from_file`, with a fallback that
//! reads insta's documented format (a `---` line, a YAML header, a `---`
//! line, then the contents) should insta's reader refuse a file. The
//! contents are a format-2 recording (YAML) or a format-1 one (JSON).

use super::RecordingError;
use super::recording::{self, Recording};
use std::path::{Path, PathBuf};

/// The pending twin of a `.snap` file, where insta reads and writes it:
/// `.snap.new` beside it, or under `INSTA_PENDING_DIR` (at the same path
/// relative to the workspace) when that is set.
///
/// ```
/// use std::path::Path;
/// let twin = ragaliq::record::pending_path(Path::new("tests/snapshots/rag__refund.snap"));
/// # if std::env::var_os("INSTA_PENDING_DIR").is_none() {
/// assert_eq!(twin, Path::new("tests/snapshots/rag__refund.snap.new"));
/// # }
/// ```
#[must_use]
pub fn pending_path(snap: &Path) -> PathBuf {
    let mut name = snap.as_os_str().to_owned();
    name.push(".new");
    let beside = PathBuf::from(name);
    let Some(dir) = std::env::var_os("INSTA_PENDING_DIR").filter(|d| !d.is_empty()) else {
        return beside;
    };
    let start = snap.parent().unwrap_or(Path::new("."));
    let workspace = workspace_of(start);
    match beside.strip_prefix(&workspace) {
        Ok(relative) => PathBuf::from(dir).join(relative),
        Err(_) => beside,
    }
}

/// The contents of the snapshot at `path`, or `None` when there is no file.
pub(crate) fn read_contents(path: &Path) -> Result<Option<String>, RecordingError> {
    let raw = match std::fs::read_to_string(path) {
        Ok(raw) => raw,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(RecordingError::Corrupt {
                path: path.to_owned(),
                problem: e.to_string(),
            });
        }
    };
    let from_insta = insta::Snapshot::from_file(path)
        .ok()
        .and_then(|s| s.as_text().map(ToString::to_string));
    Ok(Some(
        from_insta.unwrap_or_else(|| strip_header(&raw).to_owned()),
    ))
}

/// insta's format: an optional `---`-fenced YAML header, then the contents.
fn strip_header(raw: &str) -> &str {
    let Some(rest) = raw
        .strip_prefix("---\n")
        .or_else(|| raw.strip_prefix("---\r\n"))
    else {
        return raw.trim_end();
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end() == "---" {
            return rest[offset..].trim_end();
        }
    }
    raw.trim_end()
}

/// A snapshot file's text written anew with `contents` under the insta
/// header `raw` (the file as it was) had: the header kept as it stood,
/// and the file's line ends kept too (CRLF throughout when it had them: a
/// checkout under `core.autocrlf` on Windows).
pub(crate) fn rewritten(raw: &str, contents: &str) -> String {
    let header = header_end(raw).map_or("", |end| &raw[..end]);
    let header = header.replace("\r\n", "\n");
    let text = format!("{header}{}\n", contents.trim_end_matches(['\n', '\r']));
    if raw.contains("\r\n") {
        text.replace('\n', "\r\n")
    } else {
        text
    }
}

/// Where insta's header ends in a snapshot file's text (just past its
/// closing `---` line), `None` when the file has none. Lines may end in LF
/// or CRLF.
fn header_end(raw: &str) -> Option<usize> {
    let mut lines = raw.split_inclusive('\n');
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let mut offset = raw.find('\n')? + 1;
    for line in lines {
        offset += line.len();
        if line.trim_end() == "---" {
            return Some(offset);
        }
    }
    None
}

/// Parses a recording's contents; errors name the file and the parser's position.
pub(crate) fn parse(contents: &str, path: &Path) -> Result<Recording, RecordingError> {
    let corrupt = |problem: String| RecordingError::Corrupt {
        path: path.to_owned(),
        problem,
    };
    if contents.trim_start().starts_with('{') {
        return recording::parse_v1(contents).map_err(corrupt);
    }
    recording::parse_yaml(contents).map_err(corrupt)
}

/// Reads and parses the recording at `path`; `None` when there is no file.
pub(crate) fn load(path: &Path) -> Result<Option<Recording>, RecordingError> {
    read_contents(path)?.map(|c| parse(&c, path)).transpose()
}

/// A snapshot file as insta writes it: a YAML header between `---` lines
/// (the source, the assertion's line for a pending file, the
/// description), then the contents.
pub(crate) fn snap_text(
    contents: &str,
    source: &str,
    description: &str,
    assertion_line: Option<u32>,
) -> String {
    // A JSON string is a valid YAML double-quoted scalar, and what insta
    // writes for these values.
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let source = if source
        .chars()
        .all(|c| c.is_alphanumeric() || "/._-".contains(c))
    {
        source.to_owned()
    } else {
        quote(source)
    };
    let line = assertion_line.map_or_else(String::new, |l| format!("assertion_line: {l}\n"));
    // One line end after the contents, as insta writes it: the contents'
    // own last line end is not doubled.
    format!(
        "---\nsource: {source}\n{line}description: {}\n---\n{}\n",
        quote(description),
        contents.trim_end_matches(['\n', '\r'])
    )
}

/// The workspace a path lies in, for paths that are not a package root
/// (a snapshot's folder): `INSTA_WORKSPACE_ROOT` when set, else the nearest
/// ancestor whose `Cargo.toml` has a `[workspace]` table, else the nearest
/// ancestor with a `Cargo.toml`, else the path itself.
pub(crate) fn workspace_of(path: &Path) -> PathBuf {
    if let Some(root) = std::env::var_os("INSTA_WORKSPACE_ROOT").filter(|r| !r.is_empty()) {
        return PathBuf::from(root);
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let package = absolute
        .ancestors()
        .find(|dir| dir.join("Cargo.toml").is_file())
        .unwrap_or(&absolute);
    find_workspace(package)
}

pub(crate) fn find_workspace(manifest_dir: &Path) -> PathBuf {
    manifest_dir
        .ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|text| {
                text.lines()
                    .any(|l| l.trim() == "[workspace]" || l.trim_start().starts_with("[workspace."))
            })
        })
        .unwrap_or(manifest_dir)
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_stripped_by_the_fallback() {
        assert_eq!(
            strip_header("---\nsource: a.rs\nexpression: x\n---\n{\"a\": 1}\n"),
            "{\"a\": 1}"
        );
        assert_eq!(strip_header("{\"a\": 1}\n"), "{\"a\": 1}");
    }

    #[test]
    fn a_rewrite_keeps_the_header_and_the_line_ends() {
        let lf = "---\nsource: a.rs\n---\nold\n";
        assert_eq!(rewritten(lf, "new\n"), "---\nsource: a.rs\n---\nnew\n");
        let crlf = "---\r\nsource: a.rs\r\n---\r\nold\r\n";
        assert_eq!(
            rewritten(crlf, "new\nlines\n"),
            "---\r\nsource: a.rs\r\n---\r\nnew\r\nlines\r\n"
        );
        assert_eq!(rewritten("old\n", "new"), "new\n", "no header, none made");
        assert_eq!(
            header_end("---\nsource: a.rs\n"),
            None,
            "an unclosed header"
        );
    }

    #[test]
    fn pending_twin() {
        assert_eq!(
            pending_path(Path::new("/s/a__b.snap")),
            Path::new("/s/a__b.snap.new")
        );
    }

    #[test]
    fn written_files_read_back_through_insta() {
        let dir = std::env::temp_dir().join(format!("ragaliq-snapfile-{}", std::process::id()));
        let path = dir.join("x__y.snap");
        let rec = Recording::default();
        let text = snap_text(
            &rec.to_yaml(),
            "tests/x.rs",
            "a \"quoted\" description",
            None,
        );
        crate::run::write_atomic(&path, text.as_bytes()).unwrap();
        assert_eq!(load(&path).unwrap().unwrap(), rec);
        assert!(load(&dir.join("missing.snap")).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
