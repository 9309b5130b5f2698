//! One binder per recording file.
//!
//! A recording is one test's: when it is written, the exchanges it holds
//! that the writer no longer asks for are dropped. Two judges bound to one
//! file (`recorded_judge!()` twice in a function, in a helper several tests
//! call, inside a `#[rag_test]`, or one `name = "…"` in two tests) would
//! each drop the other's answers, and in record mode the last to write
//! would win. So the first binding of a file is remembered, and a second
//! one by a different [`Binder`] is an error naming both.
//!
//! A binder is the code that binds (its file and line) together with the
//! test it runs in (the name the test harness gives the test's thread:
//! libtest, and nextest through it, name each test's thread after the
//! test). The same binder binding again is no conflict: a test the harness
//! runs again, in this process or another process of the run (nextest's
//! retries), or a loop around one `recorded_judge!()`. Clones of one judge
//! share one binding. A judge made inside a task on a runtime's worker
//! thread is known by that thread's name, so two tests making it there
//! from one line are not told apart. Suites bind their per-case
//! recordings themselves (one recorder per case, shared by its trials) and
//! do not come here.
//!
//! Within a process the first binder of each file is kept for the
//! process's life, so tests that run one after the other collide too.
//! Across the processes of a run (see [`run`](crate::run)) the run's folder
//! keeps, for each recording, which binder holds it
//! (`recordings/<name>.holder.json`, changed under its lock), so a test
//! process of the same run that binds the file from elsewhere fails with
//! both named. A holder written by another build of the test binary (a
//! `RAGALIQ_RUN_ID` kept across an edit and a rebuild) is taken over: its
//! lines are no longer this code's.

use super::RecordingError;
use crate::core::sync::lock;
use crate::run;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Who binds a recording: where the binding is written, and the test it
/// runs in.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Binder {
    /// What binds: `recorded_judge!()` or `#[rag_test]`.
    pub by: String,
    /// Where, as `file:line` (`tests/rag.rs:12`).
    pub site: String,
    /// The function it is written in, with its module (`rag::helper`).
    pub function: String,
    /// The name of the thread it ran on: the test's name under libtest and
    /// nextest.
    pub thread: String,
    /// The process that bound it.
    pub pid: u32,
    /// The test binary's path and modification time: bindings of other
    /// builds are not this code's.
    pub build: String,
}

impl Binder {
    /// The binder at `file:line`, in `function`, on the current thread.
    #[must_use]
    pub fn here(by: &str, file: &str, line: u32, function: String) -> Binder {
        Binder {
            by: by.to_owned(),
            site: format!("{file}:{line}"),
            function,
            thread: std::thread::current()
                .name()
                .unwrap_or("an unnamed thread")
                .to_owned(),
            pid: std::process::id(),
            build: build().to_owned(),
        }
    }

    /// What tells binders apart: the site and the thread.
    pub(crate) fn key(&self) -> String {
        format!("{}\n{}", self.site, self.thread)
    }

    /// Whether `other` is the same binder (the same code in the same test),
    /// which may bind the file again.
    fn same(&self, other: &Binder) -> bool {
        self.site == other.site && self.thread == other.thread
    }
}

/// `` `recorded_judge!()` at tests/rag.rs:20 in `rag::helper`, run by test `refund` ``
impl fmt::Display for Binder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` at {} in `{}`, ", self.by, self.site, self.function)?;
        if self.thread == "main" {
            f.write_str("run on the main thread")
        } else {
            write!(f, "run by test `{}`", self.thread)
        }
    }
}

/// This test binary: its path and modification time.
fn build() -> &'static str {
    static BUILD: OnceLock<String> = OnceLock::new();
    BUILD.get_or_init(|| {
        let exe = std::env::current_exe().unwrap_or_default();
        let modified = std::fs::metadata(&exe)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        format!("{}@{modified}", exe.display())
    })
}

/// The first binder of each recording in this process, by canonical path.
fn bound() -> &'static Mutex<HashMap<PathBuf, Binder>> {
    static BOUND: OnceLock<Mutex<HashMap<PathBuf, Binder>>> = OnceLock::new();
    BOUND.get_or_init(Mutex::default)
}

/// Binds the recording at `snapshot` to `binder`: an error naming both when
/// another binder holds it, in this process or another process of the run.
pub fn bind(snapshot: &Path, binder: &Binder) -> Result<(), RecordingError> {
    let key = run::lock::canonical(snapshot);
    {
        let mut bound = lock(bound());
        match bound.get(&key) {
            Some(first) if !first.same(binder) => {
                return Err(shared(snapshot, first.to_string(), binder));
            }
            Some(_) => return Ok(()),
            None => {
                bound.insert(key, binder.clone());
            }
        }
    }
    if !run::current().spans_processes() {
        return Ok(());
    }
    let unusable = |problem: String| RecordingError::Lock {
        path: snapshot.to_owned(),
        problem,
    };
    let dir = run::run_dir().map_err(|e| unusable(e.to_string()))?;
    let path = dir
        .join("recordings")
        .join(format!("{}.holder.json", super::state_name(snapshot)));
    let held = run::state::update(&path, |holder: &mut Option<Binder>| hold(holder, binder))
        .map_err(|e| unusable(e.to_string()))?;
    held.map_err(|first| {
        shared(
            snapshot,
            format!(
                "{first} (process {} of run `{}`)",
                first.pid,
                run::current().id
            ),
            binder,
        )
    })
}

/// Takes the run's holder of a recording for `me`, unless another binder of
/// this build holds it: then that binder.
fn hold(holder: &mut Option<Binder>, me: &Binder) -> Result<(), Box<Binder>> {
    match holder {
        Some(first) if first.build == me.build && !first.same(me) => Err(Box::new(first.clone())),
        _ => {
            *holder = Some(me.clone());
            Ok(())
        }
    }
}

fn shared(snapshot: &Path, first: String, second: &Binder) -> RecordingError {
    RecordingError::Shared {
        path: snapshot.to_owned(),
        first,
        second: second.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binder(site: &str, thread: &str, build: &str) -> Binder {
        Binder {
            by: "recorded_judge!()".into(),
            site: site.into(),
            function: "rag::helper".into(),
            thread: thread.into(),
            pid: 7,
            build: build.into(),
        }
    }

    #[test]
    fn a_second_binder_is_refused_with_both_named() {
        let dir = std::env::temp_dir().join(format!("ragaliq-binding-{}", std::process::id()));
        let snapshot = dir.join("rag__helper.snap");
        let a = binder("tests/rag.rs:20", "test_a", "b1");
        bind(&snapshot, &a).unwrap();
        // The same code in the same test again: a retry, a loop.
        bind(&snapshot, &a).unwrap();
        bind(&dir.join("./rag__helper.snap"), &a).unwrap();
        let e = bind(&snapshot, &binder("tests/rag.rs:20", "test_b", "b1")).unwrap_err();
        let message = e.to_string();
        assert!(
            message.contains(
                "`recorded_judge!()` at tests/rag.rs:20 in `rag::helper`, run by test `test_a`"
            ) && message.contains(
                "`recorded_judge!()` at tests/rag.rs:20 in `rag::helper`, run by test `test_b`"
            ) && message.contains("recorded_judge!(name = \"…\")"),
            "{message}"
        );
        // Another line in the same test.
        assert!(bind(&snapshot, &binder("tests/rag.rs:21", "test_a", "b1")).is_err());
    }

    #[test]
    fn the_runs_holder_is_kept_per_build() {
        let mut holder = None;
        let a = binder("tests/rag.rs:20", "test_a", "b1");
        assert_eq!(hold(&mut holder, &a), Ok(()));
        // nextest running the test again in another process.
        assert_eq!(hold(&mut holder, &a), Ok(()));
        let b = binder("tests/rag.rs:20", "test_b", "b1");
        assert_eq!(hold(&mut holder, &b), Err(Box::new(a.clone())));
        // An edited and rebuilt binary under a reused RAGALIQ_RUN_ID: its
        // lines moved, and the earlier build's holder is no longer its own.
        let moved = binder("tests/rag.rs:24", "test_a", "b2");
        assert_eq!(hold(&mut holder, &moved), Ok(()));
        assert_eq!(holder, Some(moved));
    }
}
