//! Asserting a recording as an insta snapshot, so `cargo insta review`,
//! `accept`, `INSTA_UPDATE`, `INSTA_FORCE_PASS`, `INSTA_PENDING_DIR` and
//! `--unreferenced` treat it like any other snapshot.
//!
//! ragaliq writes the snapshot files itself rather than through insta's
//! assertion, for one reason: insta writes `.snap` and `.snap.new` with a
//! plain truncate-and-write, so a test process killed mid-write (a CI
//! timeout, `kill -9`, nextest's slow-test kill) would leave a half file for
//! every later run to trip over. Here every file is written to a temporary
//! file beside it and renamed into place: readers see the old file or the
//! new one, never half of one. The rest follows insta: its settings (see
//! [`insta_settings`](super::insta_settings)), its file format (read back by
//! insta's own reader), its pending folder, its reference file for
//! `cargo insta test --unreferenced`, and its failure message.
//!
//! It also finds the workspace root from the manifest folder instead of the
//! `cargo metadata` child process insta's macros start in every test process.

use super::insta_settings::{Output, Settings, Update, is_ci};
use super::snapfile::find_workspace;
use super::{recording, snapfile};
use crate::run;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Where a recording's assertion is made, for insta's metadata.
#[derive(Clone, Copy, Debug)]
pub struct Site<'a> {
    /// The source file, relative to the workspace root (`file!()` of the test).
    pub file: &'a str,
    /// The module path (`module_path!()`).
    pub module_path: &'a str,
    /// The function.
    pub function: &'a str,
    /// The line.
    pub line: u32,
    /// The package root (`CARGO_MANIFEST_DIR`).
    pub manifest_dir: &'a str,
}

/// Where a recording that differs goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Write {
    /// Over the accepted `.snap`.
    InPlace,
    /// As a pending `.snap.new`, for `cargo insta review`.
    Pending,
    /// Nowhere.
    Nothing,
}

/// Asserts `contents` as the snapshot at `snapshot`: passes when it matches
/// the accepted `.snap` (removing a pending `.snap.new` of it); else writes
/// it as insta's settings say (`.snap.new` by default, nothing on CI) and
/// panics with insta's message, unless `INSTA_FORCE_PASS` is set. Every file
/// is written atomically.
///
/// # Panics
///
/// When the recording differs from the accepted one (that is the
/// assertion), when a file cannot be written, or when insta's settings are
/// invalid.
pub fn assert_snapshot(snapshot: &Path, contents: &str, description: &str, site: Site<'_>) {
    let env = |name: &str| std::env::var(name).ok();
    let workspace = workspace_root(site.manifest_dir);
    let settings = match Settings::read(&workspace, &env) {
        Ok(s) => s,
        Err(e) => panic!("insta's settings are invalid: {e}"),
    };
    remember_reference(snapshot);
    let pending = snapfile::pending_path(snapshot);
    let accepted = snapfile::read_contents(snapshot).ok().flatten();
    let source = site.file.replace('\\', "/");
    let write = |path: &Path, line: Option<u32>| {
        let text = snapfile::snap_text(contents, &source, description, line);
        if let Err(e) = run::write_atomic(path, text.as_bytes()) {
            panic!("could not write the recording {}: {e}", path.display());
        }
    };
    if accepted.as_deref().map(normalize) == Some(normalize(contents)) {
        if let Err(e) = std::fs::remove_file(&pending)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            panic!(
                "could not remove the stale pending recording {}: {e}",
                pending.display()
            );
        }
        if settings.update == Update::Force {
            write(snapshot, None);
        }
        return;
    }
    let to = match settings.update {
        Update::Always | Update::Force => Write::InPlace,
        Update::Auto if is_ci(&env) => Write::Nothing,
        Update::Auto | Update::New => Write::Pending,
        // insta's rule: a snapshot seen before goes to review, a new one in place.
        Update::Unseen if snapshot.exists() => Write::Pending,
        Update::Unseen => Write::InPlace,
        Update::No => Write::Nothing,
    };
    match to {
        Write::InPlace => write(snapshot, None),
        Write::Pending => write(&pending, Some(site.line)),
        Write::Nothing => {}
    }
    if settings.output != Output::Nothing {
        let place = match to {
            Write::InPlace => format!("updated snapshot {}", snapshot.display()),
            Write::Pending => format!("stored new snapshot {}", pending.display()),
            Write::Nothing => format!(
                "recording {} differs and was not written (INSTA_UPDATE={}{})",
                snapshot.display(),
                env("INSTA_UPDATE").unwrap_or_else(|| "auto".into()),
                if is_ci(&env) { ", on CI" } else { "" }
            ),
        };
        eprintln!("{place}");
        if settings.output == Output::Full {
            eprintln!("  {}", what_changed(accepted.as_deref(), contents));
        }
        if to == Write::Pending {
            println!("To update snapshots run `cargo insta review` or set `INSTA_UPDATE=always`");
        }
    }
    if to != Write::InPlace && !settings.force_pass {
        let name = snapshot
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = name.strip_suffix(".snap").unwrap_or(&name).to_owned();
        panic!(
            "snapshot assertion for '{name}' failed in line {}",
            site.line
        );
    }
}

/// What insta compares: the text without trailing white space, with Windows
/// line ends read as `\n`.
fn normalize(text: &str) -> String {
    text.trim_end().replace("\r\n", "\n")
}

/// "new recording: 3 exchanges", or which exchanges (and pipeline calls)
/// were added, dropped or answered anew, by task.
fn what_changed(accepted: Option<&str>, contents: &str) -> String {
    let read = |text: &str| recording::parse_yaml(text).ok();
    let Some(new) = read(contents) else {
        return "the new recording is not a ragaliq recording of format 2".to_owned();
    };
    /// Each item: its key, its task (a pipeline call's API), and itself,
    /// to tell a changed answer.
    fn items(r: &recording::Recording) -> Vec<(String, String, String)> {
        r.pipeline
            .iter()
            .map(|c| (c.key(), format!("pipeline {}", c.api), format!("{c:?}")))
            .chain(
                r.exchanges
                    .iter()
                    .map(|e| (e.fingerprint.clone(), e.task.clone(), format!("{e:?}"))),
            )
            .collect()
    }
    let now = items(&new);
    let Some(old) = accepted.and_then(read) else {
        return format!(
            "new recording: {}",
            count(now.iter().map(|(_, task, _)| task.as_str()))
        );
    };
    let was = items(&old);
    let old_keys: BTreeSet<&str> = was.iter().map(|(k, _, _)| k.as_str()).collect();
    let new_keys: BTreeSet<&str> = now.iter().map(|(k, _, _)| k.as_str()).collect();
    let added = now
        .iter()
        .filter(|(k, _, _)| !old_keys.contains(k.as_str()));
    let dropped = was
        .iter()
        .filter(|(k, _, _)| !new_keys.contains(k.as_str()));
    let answered = now
        .iter()
        .filter(|(k, _, e)| was.iter().any(|(ok, _, o)| ok == k && o != e));
    let mut parts = Vec::new();
    for (what, tasks) in [
        ("asked anew", count(added.map(|(_, t, _)| t.as_str()))),
        (
            "no longer asked",
            count(dropped.map(|(_, t, _)| t.as_str())),
        ),
        ("changed", count(answered.map(|(_, t, _)| t.as_str()))),
    ] {
        if !tasks.is_empty() {
            parts.push(format!("{what}: {tasks}"));
        }
    }
    if parts.is_empty() {
        "the exchanges are the same; their layout changed".to_owned()
    } else {
        parts.join("; ")
    }
}

/// "2 verify_claims, 1 extract_claims".
fn count<'a>(tasks: impl Iterator<Item = &'a str>) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for t in tasks {
        match counts.iter_mut().find(|(k, _)| *k == t) {
            Some((_, n)) => *n += 1,
            None => counts.push((t, 1)),
        }
    }
    counts
        .iter()
        .map(|(t, n)| format!("{n} {t}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Notes `snapshot` as used for `cargo insta test --unreferenced`, as
/// insta's assertion does (a line per use, appended).
fn remember_reference(snapshot: &Path) {
    let Some(file) = std::env::var_os("INSTA_SNAPSHOT_REFERENCES_FILE") else {
        return;
    };
    use std::io::Write as _;
    let line = format!("{}\n", snapshot.display());
    let appended = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&file)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = appended {
        panic!(
            "cannot note the recording {} for `cargo insta test --unreferenced` in {}: {e}",
            snapshot.display(),
            Path::new(&file).display()
        );
    }
}

/// The cargo workspace root of the package at `manifest_dir`:
/// `INSTA_WORKSPACE_ROOT` when set (as insta reads it), else the nearest
/// ancestor whose `Cargo.toml` has a `[workspace]` table, else the package.
#[must_use]
pub fn workspace_root(manifest_dir: &str) -> PathBuf {
    if let Some(root) = std::env::var_os("INSTA_WORKSPACE_ROOT").filter(|r| !r.is_empty()) {
        return PathBuf::from(root);
    }
    static ROOTS: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut roots = crate::core::sync::lock(ROOTS.get_or_init(Mutex::default));
    roots
        .entry(manifest_dir.to_owned())
        .or_insert_with(|| find_workspace(Path::new(manifest_dir)))
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_is_found_without_cargo() {
        let here = env!("CARGO_MANIFEST_DIR");
        let root = find_workspace(Path::new(here));
        assert!(root.join("ragaliq").is_dir(), "{}", root.display());
        assert_eq!(Path::new(here).parent().unwrap(), root);
    }
}
