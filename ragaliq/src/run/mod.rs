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
//! `target/ragaliq/runs/<run id>/`, and every file there is written whole
//! (a temporary file renamed into place) and changed under an advisory file
//! lock (the operating system's, through [`std::fs::File::lock`]), so no
//! update is lost whatever the interleaving and however a process dies. See
//! the lock module for what happens when a lock cannot be taken.
//!
//! A run's folder is the run's for as long as its processes keep coming: a
//! folder no process has joined for [`IDLE`] belongs to an earlier run that
//! reused the id (a constant `RAGALIQ_RUN_ID`), and the next process to join
//! empties it, so an old budget or old report fragments never count again.

mod atomic;
mod batch;
pub(crate) mod lock;
mod slots;
pub(crate) mod state;

pub(crate) use atomic::remove_left_behind;
pub use atomic::write_atomic;
pub use batch::{BatchFolder, DriverLock, Prepared, QueuedRequest, is_batch_state};
pub(crate) use slots::{Slot, Slots, key_hash};

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// How long a run's folder may go without a process joining it before the
/// next one starts the run afresh.
pub const IDLE: Duration = Duration::from_secs(12 * 3600);

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
/// first use; emptied first when no process joined it for [`IDLE`];
/// folders of other runs untouched for a week are removed then.
pub fn run_dir() -> io::Result<&'static Path> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let runs = state_dir().join("runs");
        let dir = runs.join(current().file_name());
        let member =
            join(&dir, IDLE, SystemTime::now()).map_err(|e| format!("{}: {e}", dir.display()))?;
        // Held for the process's life: a later process that finds the
        // folder idle sees this one is still of the run.
        let _ = MEMBER.set(member);
        prune(&runs, &dir, Duration::from_secs(7 * 24 * 3600));
        Ok(dir)
    });
    dir.as_deref().map_err(|e| io::Error::other(e.clone()))
}

/// This process's membership of its run (see [`join`]).
static MEMBER: OnceLock<std::fs::File> = OnceLock::new();

/// The file every live process of a run holds a shared lock on.
const MEMBERS: &str = "members.lock";

/// Joins the run whose folder is `dir` at `now`: under the folder's lock,
/// empties it when the last process joined more than `idle` ago and no
/// process of it is still alive, then notes this process's arrival (the
/// `joined` file's time). Returns the membership: a shared lock on the
/// folder's `members.lock` for as long as the file is kept, which tells a
/// later joiner that a process of the run (one that may hold its slots or
/// be about to write its ledger) is still at work.
fn join(dir: &Path, idle: Duration, now: SystemTime) -> io::Result<std::fs::File> {
    std::fs::create_dir_all(dir)?;
    let _guard = lock::exclusive(dir).map_err(|e| io::Error::other(e.to_string()))?;
    let members = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(MEMBERS))?;
    let alive = matches!(members.try_lock(), Err(std::fs::TryLockError::WouldBlock));
    let joined = dir.join("joined");
    let last = std::fs::metadata(&joined).and_then(|m| m.modified()).ok();
    if let Some(last) = last
        && now.duration_since(last).is_ok_and(|gap| gap > idle)
    {
        let hours = now.duration_since(last).unwrap_or_default().as_secs() / 3600;
        if alive {
            eprintln!(
                "ragaliq: run `{}` was last joined {hours} h ago, but a process of it is still alive: its folder is kept as it is",
                current().id
            );
        } else {
            eprintln!(
                "ragaliq: run `{}` was last joined {hours} h ago: an earlier run reused the id, so its spending and report fragments are cleared and this run starts afresh",
                current().id
            );
            for entry in std::fs::read_dir(dir)?.flatten() {
                let path = entry.path();
                if path.file_name().is_some_and(|n| n == MEMBERS) {
                    continue;
                }
                if path.is_dir() {
                    std::fs::remove_dir_all(&path)?;
                } else {
                    std::fs::remove_file(&path)?;
                }
            }
        }
    }
    if !alive {
        members.unlock()?;
    }
    members.lock_shared()?;
    write_atomic(&joined, b"")?;
    let file = std::fs::File::options().write(true).open(&joined)?;
    file.set_modified(now)?;
    Ok(members)
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
    fn a_run_folder_left_idle_starts_afresh() {
        let dir = std::env::temp_dir().join(format!("ragaliq-run-join-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let t0 = SystemTime::now() - Duration::from_secs(100 * 3600);
        // Each membership is dropped, as its process would end.
        drop(join(&dir, IDLE, t0).unwrap());
        std::fs::write(dir.join("budget.json"), "{\"usd\": 4.2}").unwrap();
        // Another process of the same run, an hour later: the state stays.
        drop(join(&dir, IDLE, t0 + Duration::from_secs(3600)).unwrap());
        assert!(dir.join("budget.json").exists());
        // Two days later the id is used again: an earlier run's state goes.
        drop(join(&dir, IDLE, t0 + Duration::from_secs(49 * 3600)).unwrap());
        assert!(!dir.join("budget.json").exists());
        assert!(dir.join("joined").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_idle_run_folder_whose_process_is_alive_is_kept() {
        let dir = std::env::temp_dir().join(format!("ragaliq-run-alive-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let t0 = SystemTime::now() - Duration::from_secs(100 * 3600);
        // A process that joined long ago and is still at work (holding
        // slots, say): its membership is kept.
        let alive = join(&dir, IDLE, t0).unwrap();
        std::fs::create_dir_all(dir.join("slots")).unwrap();
        std::fs::write(dir.join("slots/slot-0.lock"), "").unwrap();
        drop(join(&dir, IDLE, t0 + Duration::from_secs(49 * 3600)).unwrap());
        assert!(
            dir.join("slots/slot-0.lock").exists(),
            "a live process's run folder was emptied"
        );
        // Once it is gone, an idle folder starts afresh.
        drop(alive);
        drop(join(&dir, IDLE, t0 + Duration::from_secs(98 * 3600)).unwrap());
        assert!(!dir.join("slots").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
