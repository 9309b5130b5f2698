//! Reading and writing recordings as insta `.snap` files.
//!
//! Reading goes through one adapter: `insta::Snapshot::from_file`, turned
//! into an owned `String` at once; should insta's reader ever refuse a file,
//! a fallback reads insta's documented format (a `---` line, a YAML header,
//! a `---` line, then the contents) by hand.

use super::RecordingError;
use super::recording::Recording;
use std::path::{Path, PathBuf};

/// The pending twin of a `.snap` file: `.snap.new`, as insta names it.
pub(crate) fn pending_path(snap: &Path) -> PathBuf {
    let mut name = snap.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
}

/// The contents of the snapshot at `path`, or `None` when there is no file.
pub(crate) fn read_contents(path: &Path) -> Result<Option<String>, RecordingError> {
    if !path.exists() {
        return Ok(None);
    }
    let from_insta = insta::Snapshot::from_file(path)
        .ok()
        .and_then(|s| s.as_text().map(ToString::to_string));
    if let Some(text) = from_insta {
        return Ok(Some(text));
    }
    let raw = std::fs::read_to_string(path).map_err(|e| RecordingError::Corrupt {
        path: path.to_owned(),
        problem: e.to_string(),
    })?;
    Ok(Some(strip_header(&raw).to_owned()))
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

/// Parses a recording's contents; errors name the file and the parser's position.
pub(crate) fn parse(contents: &str, path: &Path) -> Result<Recording, RecordingError> {
    serde_json::from_str(contents).map_err(|e| RecordingError::Corrupt {
        path: path.to_owned(),
        problem: e.to_string(),
    })
}

/// Writes `recording` to `path` in insta's format, atomically: a temporary
/// file in the same folder, then a rename, so a crash mid-write leaves the
/// previous file whole.
pub(crate) fn write_atomic(
    path: &Path,
    recording: &Recording,
    source: &str,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let body = serde_json::to_string_pretty(recording).map_err(std::io::Error::other)?;
    let text = format!("---\nsource: {source}\nexpression: recording\n---\n{body}\n");
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
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
        let rec = Recording {
            ragaliq_recording: 1,
            exchanges: vec![],
        };
        write_atomic(&path, &rec, "tests/x.rs").unwrap();
        let text = read_contents(&path).unwrap().unwrap();
        assert_eq!(parse(&text, &path).unwrap(), rec);
        assert!(read_contents(&dir.join("missing.snap")).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
