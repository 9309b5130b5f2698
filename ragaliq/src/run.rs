//! What a *run* is, and where it keeps its shared state.
//!
//! A run is every test process that shares an id: `NEXTEST_RUN_ID` when
//! cargo-nextest runs the tests (one process per test), else
//! `RAGALIQ_RUN_ID` (set it yourself to tie several `cargo test` invocations
//! or CI shards on one machine together), else just this process. Within a
//! run there is one cost budget, recordings written by several processes
//! merge, and suite reports count every trial once.
//!
//! State that several processes share lives under the target folder, in
//! `target/ragaliq/runs/<run id>/`, and every file there is read and written
//! under an advisory file lock (the operating system's, through
//! [`std::fs::File::lock`]), so no update is lost whatever the interleaving.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// Where the current run's id came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunSource {
    /// `NEXTEST_RUN_ID`: cargo-nextest's run, one process per test.
    Nextest,
    /// `RAGALIQ_RUN_ID`, set by the user or CI.
    Variable,
    /// This process alone.
    Process,
}

/// The current run: its id and where its id came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The id: the variable's value, or `pid-<pid>-<start>` for a process.
    pub id: String,
    /// Where it came from.
    pub source: RunSource,
}

impl Run {
    /// Whether other processes may share this run (its state then lives in
    /// files, under locks).
    #[must_use]
    pub fn spans_processes(&self) -> bool {
        self.source != RunSource::Process
    }

    /// The id as a file name: anything but letters, digits, `-`, `_` and `.`
    /// becomes `_`.
    #[must_use]
    pub fn file_name(&self) -> String {
        safe_name(&self.id)
    }
}

/// The run this process belongs to (read once).
///
/// ```
/// let run = ragaliq::run::current();
/// assert!(!run.id.is_empty());
/// ```
#[must_use]
pub fn current() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| from_env(&|name| std::env::var(name).ok()))
}

/// The run `env` describes.
pub(crate) fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Run {
    let var = |name| {
        env(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    if let Some(id) = var("NEXTEST_RUN_ID") {
        return Run {
            id,
            source: RunSource::Nextest,
        };
    }
    if let Some(id) = var("RAGALIQ_RUN_ID") {
        return Run {
            id,
            source: RunSource::Variable,
        };
    }
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    Run {
        id: format!("pid-{}-{started}", std::process::id()),
        source: RunSource::Process,
    }
}

/// `name` with anything but letters, digits, `-`, `_` and `.` replaced by `_`.
pub(crate) fn safe_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        "_".into()
    } else {
        s
    }
}

/// The cargo target folder this process was built into: `CARGO_TARGET_DIR`
/// when set, else the ancestor of the running executable that holds cargo's
/// `CACHEDIR.TAG`, else `target/` in the package, else a folder in the
/// system's temporary directory.
#[must_use]
pub fn target_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                return dir;
            }
            if let Some(root) = std::env::var_os("CARGO_MANIFEST_DIR") {
                return PathBuf::from(root).join(dir);
            }
        }
        if let Ok(exe) = std::env::current_exe()
            && let Some(dir) = exe
                .ancestors()
                .skip(1)
                .find(|a| a.join("CACHEDIR.TAG").is_file())
        {
            return dir.to_path_buf();
        }
        if let Some(root) = std::env::var_os("CARGO_MANIFEST_DIR") {
            let dir = PathBuf::from(root).join("target");
            if dir.is_dir() {
                return dir;
            }
        }
        std::env::temp_dir().join("ragaliq-target")
    })
}

/// `target/ragaliq`: everything ragaliq keeps between processes.
#[must_use]
pub fn state_dir() -> PathBuf {
    target_dir().join("ragaliq")
}

/// The current run's folder, `target/ragaliq/runs/<run id>`, created on
/// first use; folders of runs untouched for a week are removed then.
pub fn run_dir() -> io::Result<&'static Path> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let runs = state_dir().join("runs");
        let dir = runs.join(current().file_name());
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        prune(&runs, &dir, Duration::from_secs(7 * 24 * 3600));
        Ok(dir)
    });
    dir.as_deref().map_err(|e| io::Error::other(e.clone()))
}

fn prune(runs: &Path, keep: &Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let path = entry.path();
        if path == keep {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|d| d > age);
        if old {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// An exclusive advisory lock on `path` (created if needed), held until the
/// guard is dropped. Other processes that lock the same path wait.
pub(crate) fn lock_exclusive(path: &Path) -> io::Result<LockGuard> {
    let file = open_lock_file(path)?;
    file.lock()?;
    Ok(LockGuard { _file: file })
}

/// A shared advisory lock on `path`: readers together, never beside a writer.
pub(crate) fn lock_shared(path: &Path) -> io::Result<LockGuard> {
    let file = open_lock_file(path)?;
    file.lock_shared()?;
    Ok(LockGuard { _file: file })
}

fn open_lock_file(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
}

/// Holds an advisory file lock; dropping it (closing the file) releases it,
/// also when a panic unwinds or the process dies.
#[must_use = "the lock is released when the guard is dropped"]
pub(crate) struct LockGuard {
    _file: File,
}

/// The lock file that guards `resource` (any path), under `target/ragaliq/locks`.
pub(crate) fn lock_path_for(resource: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(resource.to_string_lossy().as_bytes());
    let hex: String = digest[..10].iter().map(|b| format!("{b:02x}")).collect();
    let stem = resource
        .file_name()
        .map(|n| safe_name(&n.to_string_lossy()))
        .unwrap_or_default();
    state_dir().join("locks").join(format!("{stem}-{hex}.lock"))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// folder, then a rename, so readers see the old file or the new one, never
/// half of one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}-{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn nextest_then_variable_then_process() {
        let run = from_env(&env(&[("NEXTEST_RUN_ID", "abc"), ("RAGALIQ_RUN_ID", "x")]));
        assert_eq!((run.id.as_str(), run.source), ("abc", RunSource::Nextest));
        let run = from_env(&env(&[("RAGALIQ_RUN_ID", "ci-42")]));
        assert_eq!(
            (run.id.as_str(), run.source),
            ("ci-42", RunSource::Variable)
        );
        assert!(run.spans_processes());
        let run = from_env(&env(&[("RAGALIQ_RUN_ID", "  ")]));
        assert_eq!(run.source, RunSource::Process);
        assert!(run.id.starts_with(&format!("pid-{}-", std::process::id())));
        assert!(!run.spans_processes());
    }

    #[test]
    fn names_are_safe_for_files() {
        assert_eq!(safe_name("a/b c:d"), "a_b_c_d");
        assert_eq!(safe_name(".."), "_");
        assert_eq!(safe_name(""), "_");
    }

    #[test]
    fn locks_exclude_each_other() {
        let path = std::env::temp_dir().join(format!("ragaliq-lock-test-{}", std::process::id()));
        let guard = lock_exclusive(&path).unwrap();
        let file = open_lock_file(&path).unwrap();
        assert!(matches!(
            file.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(guard);
        assert!(file.try_lock().is_ok());
        let _ = std::fs::remove_file(&path);
    }
}
