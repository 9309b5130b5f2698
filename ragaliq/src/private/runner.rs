//! Runs one `#[rag_test]`: the judge and its recorder, the body, then the
//! recording asserted as the test's own snapshot.

use super::outcome::{AWAITING, FAILURE, Failure};
use super::relative::relative;
use super::spec::{TestSpec, record_command, snapshot_dir, test_label};
use crate::config::Config;
use crate::core::Mode;
use crate::judge::Judge;
use crate::record::{Binder, Location, Recorder, Site};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// Runs one `#[rag_test]`: builds the judge and its recorder, runs the body,
/// then asserts the recording through insta, as the test's own snapshot.
#[track_caller]
pub fn run_test(
    spec: TestSpec,
    body: impl FnOnce(Judge) -> Pin<Box<dyn Future<Output = ()>>> + 'static,
) {
    // Generic only in name: the work is in `run_boxed`, compiled once here
    // rather than once per test in the user's crate.
    run_boxed(spec, Box::new(body));
}

/// A test's body, as [`run_test`] takes it.
type Body = Box<dyn FnOnce(Judge) -> Pin<Box<dyn Future<Output = ()>>>>;

#[track_caller]
fn run_boxed(spec: TestSpec, body: Body) {
    let env = |name: &str| -> Option<String> {
        match (name, spec.judge) {
            ("RAGALIQ_JUDGE", Some(judge)) => Some(judge.to_owned()),
            ("RAGALIQ_CONFIG", _) if spec.config.is_some() => spec.config.map(str::to_owned),
            _ => std::env::var(name).ok(),
        }
    };
    let root = Path::new(spec.manifest_dir);
    // The attribute's mode is its own source, not a stand-in for
    // RAGALIQ_MODE: under CI it may only ask for replay.
    let attribute = spec.mode.map(|mode| (mode, test_label(&spec)));
    let config = match Config::load_with(root, &env, attribute)
        .and_then(|c| Judge::from_config(&c).map(|j| (c, j)))
    {
        Ok(pair) => pair,
        // A panic here would satisfy `#[should_panic]`, and a setup
        // problem is no low score: the test returns, and fails as one that
        // did not panic.
        Err(e) if spec.should_panic => {
            eprintln!(
                "ragaliq configuration error (this test cannot run as configured): {e}; this #[should_panic] test is failed instead of passing on it"
            );
            return;
        }
        Err(e) => panic!("ragaliq configuration error (this test cannot run as configured): {e}"),
    };
    let (config, judge) = config;
    let location = Location {
        snapshot: snapshot_dir(&spec, &env).join(format!(
            "{}__{}.snap",
            spec.module_path.replace("::", "__"),
            spec.name.replace(['/', '\\'], "__")
        )),
        test: test_label(&spec),
        record_command: record_command(&spec),
    };
    // One binder per recording: a `recorded_judge!()` in the body, or
    // another test of the same name, fails here or there with both named.
    // Live mode reads and writes no recording, so binds none.
    let binder = Binder::here("#[rag_test]", spec.file, spec.line, test_label(&spec));
    if config.mode != Mode::Live
        && let Err(e) = crate::record::bind(&location.snapshot, &binder)
    {
        if spec.should_panic {
            eprintln!(
                "ragaliq: {e}\n  this #[should_panic] test is failed instead of passing on it"
            );
            return;
        }
        panic!("{e}");
    }
    let recorder = Arc::new(Recorder::bound(location, config.mode, &binder));
    let judge = judge.with_recorder(recorder.clone());
    // Shares the pipeline's endpoint with the body's judge, if the body
    // starts one: what it served is read after the body.
    let kept = judge.clone();

    let runtime = if spec.multi_thread {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    };
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => panic!("ragaliq: cannot start the test's tokio runtime: {e}"),
    };
    let noted: Arc<Mutex<Option<Failure>>> = Arc::default();
    let awaiting: Arc<Mutex<Vec<String>>> = Arc::default();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        runtime
            .block_on(FAILURE.scope(noted.clone(), AWAITING.scope(awaiting.clone(), body(judge))))
    }));
    drop(runtime);
    let failure = *crate::core::sync::lock(&noted);
    let awaiting = std::mem::take(&mut *crate::core::sync::lock(&awaiting));
    let awaiting = (!awaiting.is_empty()).then(|| awaiting.join("\n\n"));
    // What the pipeline's endpoint could not serve fails the test, whatever
    // the application made of the error it was handed.
    let app = kept.started_pipeline();
    drop(kept);
    let app_failed = app.as_ref().and_then(|p| p.check().err());
    if app.is_some() {
        recorder.calls_finished(None, app_failed.is_none());
    }

    // The recording is asserted whether or not the body passed, so insta
    // sees it in use (`--unreferenced`) and keeps what was paid for.
    let site = Site {
        file: spec.file,
        module_path: spec.module_path,
        function: spec.function,
        line: spec.line,
        manifest_dir: spec.manifest_dir,
    };
    let description = recorder.description();
    let snapshot = recorder.location().snapshot.clone();
    let asserted = catch_unwind(AssertUnwindSafe(|| {
        recorder.commit(None, outcome.is_ok(), |recording| {
            crate::record::assert_snapshot(&snapshot, &recording.to_yaml(), &description, site);
        })
    }));

    // Stops the endpoint once the recording is written.
    let notes = app
        .as_ref()
        .map(crate::pipeline::Pipeline::notes)
        .unwrap_or_default();
    drop(app);
    if let Some(text) = app_failed {
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(
                "\n\nbesides, the pipeline's model answered with errors the application was handed:\n  {}",
                notes.join("\n  ")
            )
        };
        let own = match &outcome {
            // The application was handed the same message as its model's
            // error, and may have failed on it: said once.
            Err(payload)
                if panic_text(payload).contains(&text.chars().take(60).collect::<String>()) =>
            {
                "\n\n(the test failed on it too: the application got this message as its model's error)".to_owned()
            }
            Err(payload) => format!(
                "\n\nthe test's own failure, which may follow from it:\n{}",
                panic_text(payload)
            ),
            Ok(()) => String::new(),
        };
        if spec.should_panic {
            eprintln!(
                "{text}{notes}{own}\nragaliq: the pipeline's calls failed, which says nothing about the answer; this #[should_panic] test is failed instead of passing on it"
            );
            return;
        }
        panic!("{text}{notes}{own}");
    }
    if outcome.is_err() && !notes.is_empty() {
        eprintln!(
            "ragaliq: the pipeline's model answered with errors the application was handed:\n  {}",
            notes.join("\n  ")
        );
    }
    if spec.should_panic {
        // Under `#[should_panic]` any panic passes the test. Only a score
        // may: a judge failure, an item awaiting a person or a recording
        // that awaits review returns normally here, so the test fails
        // with "did not panic".
        if let Some(text) = &awaiting {
            eprintln!(
                "{text}\nragaliq: this #[should_panic] test is failed until a person gives the verdict, instead of passing on an unsure reading"
            );
            return;
        }
        if outcome.is_err() && failure == Some(Failure::Judge) {
            eprintln!(
                "ragaliq: the evaluation failed (see above), which says nothing about the answer; this #[should_panic] test is failed instead of passing on it. Use assert_caught! to test that a bad answer is caught."
            );
            return;
        }
        if let Err(payload) = asserted {
            eprintln!(
                "ragaliq: the test's recording is new or changed and awaits review ({}); this #[should_panic] test is failed until it is accepted: {}",
                snapshot.display(),
                panic_text(&payload)
            );
            return;
        }
        if let Ok(Err(e)) = &asserted {
            eprintln!("ragaliq: {e}; this #[should_panic] test is failed instead of passing on it");
            return;
        }
        if let Err(payload) = outcome {
            resume_unwind(payload);
        }
        return;
    }
    // The body's own failure is the one to report; the recording's only
    // when the body passed.
    if let Err(payload) = outcome {
        if let Some(text) = &awaiting {
            eprintln!("{text}");
        }
        resume_unwind(payload);
    }
    match (asserted, awaiting) {
        (Err(payload), Some(text)) => panic!("{text}\n\n{}", panic_text(&payload)),
        (Err(payload), None) => resume_unwind(payload),
        (Ok(Err(e)), Some(text)) => panic!("{text}\n\n{e}"),
        (Ok(Err(e)), None) => panic!("{e}"),
        (Ok(Ok(_)), Some(text)) => panic!("{text}"),
        (Ok(Ok(_)), None) => say_reviewed(&recorder, &spec),
    }
}

/// Says, outside the test harness's capture (so it shows in the run's
/// output even for a test that passed), that a test was decided in part by
/// person's verdicts from its recording: never a silent pass.
fn say_reviewed(recorder: &Recorder, spec: &TestSpec) {
    use std::io::Write as _;
    let n = recorder.reviewed_used();
    if n == 0 {
        return;
    }
    let path = relative(&recorder.location().snapshot);
    let line = format!(
        "ragaliq: `{}` used {} from {} in place of the judge's reading\n",
        test_label(spec),
        if n == 1 {
            "1 verdict given by a person".to_owned()
        } else {
            format!("{n} verdicts given by a person")
        },
        path.display()
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "snapshot assertion failed".into())
}
