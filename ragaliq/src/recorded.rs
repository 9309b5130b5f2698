//! A judge bound to a recording of its own, for tests that do not use
//! `#[rag_test]`: `#[tokio::test]`, a harness of one's own, a `main`.
//!
//! [`recorded_judge!`](crate::recorded_judge) names the recording after the
//! function it is written in, as insta names snapshots: `tests/rag.rs`'s
//! `refund_window` records to `tests/snapshots/rag__refund_window.snap`,
//! in the mode the configuration says (`replay` under `CI`, `auto`
//! elsewhere). When the [`RecordedJudge`] is dropped at the end of the
//! test, the recording goes to insta, as `#[rag_test]`'s does: a new or
//! changed one fails the test and waits for `cargo insta review`. A test
//! that panics keeps what it paid for as a pending snapshot to review.
//!
//! A recording has one binder: a second `recorded_judge!()` (or
//! `#[rag_test]`) that maps to the same file from other code or another
//! test panics, naming both, instead of letting the two judges drop each
//! other's answers (see the `record` module's binding rules).

use crate::config::Config;
use crate::judge::Judge;
use crate::record::{Binder, Location, Recorder, Site};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A [`Judge`] with a recording of its own, made by
/// [`recorded_judge!`](crate::recorded_judge): use it as a `Judge` (it
/// derefs to one); when it is dropped, its recording is asserted through
/// insta.
#[must_use = "the recording is asserted when the judge is dropped: keep it for the whole test"]
pub struct RecordedJudge {
    judge: Judge,
    recorder: Arc<Recorder>,
    here: Here,
}

impl std::ops::Deref for RecordedJudge {
    type Target = Judge;

    fn deref(&self) -> &Judge {
        &self.judge
    }
}

impl std::fmt::Debug for RecordedJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedJudge")
            .field("judge", &self.judge)
            .field("recording", &self.recorder.location().snapshot)
            .finish()
    }
}

/// Where `recorded_judge!` was written, from the user's crate.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Here {
    /// `type_name` of a function defined at the call: its path names the
    /// enclosing function.
    pub item: &'static str,
    /// The recording's name, when given (`recorded_judge!(name = "…")`).
    pub name: Option<&'static str>,
    /// `module_path!()`.
    pub module_path: &'static str,
    /// `file!()`.
    pub file: &'static str,
    /// `line!()`.
    pub line: u32,
    /// `env!("CARGO_MANIFEST_DIR")`.
    pub manifest_dir: &'static str,
    /// `env!("CARGO_PKG_NAME")`.
    pub package: &'static str,
}

impl Here {
    /// The enclosing function's name: the item path without the marker
    /// function and the `{{closure}}` segments an async body adds.
    fn function(&self) -> &'static str {
        self.item
            .split("::")
            .filter(|s| !s.starts_with('{') && !s.starts_with("__ragaliq"))
            .last()
            .unwrap_or("test")
    }
}

/// The type name of `f`: `recorded_judge!` reads the enclosing function's
/// path from a function it defines.
#[doc(hidden)]
pub fn type_name_of<T>(_: T) -> &'static str {
    std::any::type_name::<T>()
}

/// Builds the judge for [`recorded_judge!`](crate::recorded_judge).
#[doc(hidden)]
#[track_caller]
pub fn recorded_judge(here: Here) -> RecordedJudge {
    let env = |name: &str| std::env::var(name).ok();
    let root = Path::new(here.manifest_dir);
    let config = match Config::load_from(root, &env) {
        Ok(c) => c,
        Err(e) => panic!("ragaliq configuration error (this test cannot run as configured): {e}"),
    };
    let judge = match Judge::from_config(&config) {
        Ok(j) => j,
        Err(e) => panic!("ragaliq configuration error (this test cannot run as configured): {e}"),
    };
    let function = here.function();
    let name = here.name.unwrap_or(function);
    let source = crate::record::workspace_root(here.manifest_dir).join(here.file);
    let dir = env("RAGALIQ_SNAPSHOT_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(
            || source.parent().unwrap_or(root).join("snapshots"),
            |d| root.join(d),
        );
    let location = Location {
        snapshot: dir.join(format!(
            "{}__{}.snap",
            here.module_path.replace("::", "__"),
            name.replace(['/', '\\'], "__")
        )),
        test: format!("{}::{function}", here.module_path),
        record_command: record_command(&here, &source, function),
    };
    // A recording has one binder: a second judge mapped to this file (a
    // second call in this function, this helper called by another test, a
    // `#[rag_test]` around it, the same name elsewhere) fails here, before
    // it can drop the first one's answers. Live mode reads and writes no
    // recording: there is nothing two judges could drop.
    let binder = Binder::here(
        "recorded_judge!()",
        here.file,
        here.line,
        format!("{}::{function}", here.module_path),
    );
    if config.mode != crate::config::Mode::Live
        && let Err(e) = crate::record::bind(&location.snapshot, &binder)
    {
        panic!("{e}");
    }
    let recorder = Arc::new(Recorder::bound(location, config.mode, &binder));
    RecordedJudge {
        judge: judge.with_recorder(recorder.clone()),
        recorder,
        here,
    }
}

/// `RAGALIQ_MODE=record cargo test -p pkg --test rag -- refund_window`.
fn record_command(here: &Here, source: &Path, function: &str) -> String {
    let relative: PathBuf = source
        .strip_prefix(here.manifest_dir)
        .map_or_else(|_| PathBuf::from(here.file), Path::to_path_buf);
    let target = match relative
        .components()
        .next()
        .and_then(|c| c.as_os_str().to_str())
    {
        Some("tests") => format!(
            " --test {}",
            here.module_path.split("::").next().unwrap_or_default()
        ),
        Some("src") => " --lib".to_owned(),
        _ => String::new(),
    };
    format!(
        "RAGALIQ_MODE=record cargo test -p {}{target} -- {function}",
        here.package
    )
}

impl Drop for RecordedJudge {
    fn drop(&mut self) {
        let snapshot = self.recorder.location().snapshot.clone();
        if std::thread::panicking() {
            // Asserting now could panic again, which aborts: what the test
            // paid for waits as a pending snapshot instead.
            match self.recorder.save_pending_after(false, self.here.file) {
                Ok(Some(path)) => eprintln!(
                    "ragaliq: the test panicked; its new judge answers wait for review in {}",
                    path.display()
                ),
                Ok(None) => {}
                Err(e) => eprintln!(
                    "ragaliq: the test panicked, and its recording could not be kept ({}): {e}",
                    snapshot.display()
                ),
            }
            return;
        }
        let site = Site {
            file: self.here.file,
            module_path: self.here.module_path,
            function: self.here.function(),
            line: self.here.line,
            manifest_dir: self.here.manifest_dir,
        };
        // What the pipeline's endpoint could not serve fails the test, as
        // under `#[rag_test]`, whatever the application made of it.
        let app = self.judge.started_pipeline();
        let app_failed = app.as_ref().and_then(|p| p.check().err());
        if app.is_some() {
            self.recorder.calls_finished(None, app_failed.is_none());
        }
        if let Some(text) = app_failed {
            // What was paid for waits as a pending snapshot, as when the
            // test panics.
            let _ = self.recorder.save_pending_after(false, self.here.file);
            drop(app);
            panic!("{text}");
        }
        let description = self.recorder.description();
        let committed = self.recorder.commit(None, true, |recording| {
            crate::record::assert_snapshot(&snapshot, &recording.to_yaml(), &description, site);
        });
        drop(app);
        if let Err(e) = committed {
            panic!("{e}");
        }
    }
}

/// A [`Judge`] bound to a recording named after the function it is written
/// in, for tests that do not use `#[rag_test]`: `#[tokio::test]`, a harness
/// of one's own. It replays in CI and records elsewhere, as `#[rag_test]`
/// does; the recording is asserted through insta when the judge is dropped
/// (see [`RecordedJudge`]). `recorded_judge!(name = "…")` names the
/// recording otherwise. A configuration error panics with its message.
///
/// One recording, one judge: a second binding of the same file by other
/// code (a second `recorded_judge!()` in the function, a `#[rag_test]`
/// around it) or from another test (a helper several tests call, the same
/// `name` in two tests) panics with both call sites, in this process or in
/// another process of the run. Give each its own `name`, or make the judge
/// once and pass it (or a clone) along. The same line in the same test
/// binding again, as a loop or a retried test does, is allowed.
///
/// ```no_run
/// use ragaliq::prelude::*;
///
/// #[tokio::test]
/// async fn refund_window() {
///     let judge = ragaliq::recorded_judge!();
///     let case = RagCase::new("What is the refund window?")
///         .context(["Refunds are accepted within 30 days of delivery."])
///         .response("The refund window is 30 days from delivery.");
///     assert_faithful!(judge, case);
/// }
/// ```
#[macro_export]
macro_rules! recorded_judge {
    () => {
        $crate::recorded_judge!(@ ::core::option::Option::None)
    };
    (name = $name:literal) => {
        $crate::recorded_judge!(@ ::core::option::Option::Some($name))
    };
    (@ $name:expr) => {{
        fn __ragaliq_here() {}
        $crate::__private::recorded_judge($crate::__private::Here {
            item: $crate::__private::type_name_of(__ragaliq_here),
            name: $name,
            module_path: ::core::module_path!(),
            file: ::core::file!(),
            line: ::core::line!(),
            manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
            package: ::core::env!("CARGO_PKG_NAME"),
        })
    }};
}
