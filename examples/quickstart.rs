//! Three RAG answers graded by the judge: one faithful, one hallucinating,
//! one irrelevant. The judge's answers replay from the committed recording
//! `examples/recordings/quickstart.snap`, so this runs with no API key and no
//! network:
//!
//! ```sh
//! cargo run --example quickstart
//! ```
//!
//! The recording was made with a real model: Qwen2.5-Coder-1.5B-Instruct on
//! llama.cpp's server on this machine (`examples/quickstart.toml` says how,
//! with the thresholds fitted for it on labelled data). To grade the cases
//! with your own judge instead, into a folder of your own (without
//! `RAGALIQ_SNAPSHOT_DIR` the new answers go beside the committed recording,
//! and accepting them replaces it):
//!
//! ```sh
//! RAGALIQ_JUDGE=openai:gpt-4o-mini RAGALIQ_MODE=record RAGALIQ_SNAPSHOT_DIR=my-recordings cargo run --example quickstart
//! ```
//!
//! then read what it answered in `my-recordings/quickstart.snap.new` with
//! `cargo insta review` (which looks anywhere in the checkout but under
//! `target/`), and run it again with the same variables but
//! `RAGALIQ_MODE`, to replay.

use ragaliq::prelude::*;
use ragaliq::record::{Location, Recorder};
use ragaliq::{Config, ConfigError, Evaluation, Metric};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// The three cases. `tests/quickstart.rs` replays them too, so the
/// recording stays in use and the example stays correct.
pub fn cases() -> Vec<RagCase> {
    let context = [
        "Refunds are accepted within 30 days of delivery.",
        "Refunds are paid to the original payment method.",
    ];
    vec![
        RagCase::new("What is the refund window?")
            .id("faithful")
            .context(context)
            .response("The refund window is 30 days from delivery."),
        RagCase::new("What is the refund window?")
            .id("hallucinating")
            .context(context)
            .response("The refund window is 30 days from delivery. Refunds are also available as store credit in any currency."),
        RagCase::new("What is the refund window?")
            .id("irrelevant")
            .context(context)
            .response("Our stores open at nine in the morning."),
    ]
}

/// Where the recording lives (`examples/recordings`, or the folder
/// `RAGALIQ_SNAPSHOT_DIR` names, as for `#[rag_test]`), and how to make it
/// afresh.
pub fn location() -> Location {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::var_os("RAGALIQ_SNAPSHOT_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| root.join("examples/recordings"), |d| root.join(d));
    Location::at(
        dir.join("quickstart.snap"),
        "examples/quickstart.rs",
        "RAGALIQ_MODE=record cargo run --example quickstart",
    )
}

/// The quickstart's judge: `examples/quickstart.toml` (the model its
/// recording was made with), unless `RAGALIQ_CONFIG` names another file;
/// `RAGALIQ_*` variables override it as usual.
pub fn config(env: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if env("RAGALIQ_CONFIG").is_some_and(|c| !c.is_empty()) {
        return Config::load_from(root, env);
    }
    let file = root.join("examples/quickstart.toml");
    let text = std::fs::read_to_string(&file).map_err(|e| ConfigError::File {
        path: file.display().to_string(),
        message: e.to_string(),
    })?;
    Config::from_sources(Some((&text, &file)), root, env)
}

/// Faithfulness, hallucination and relevance of every case, in order: the
/// evaluation, or why it could not be made. One failed evaluation does not
/// stop the others, so everything the judge answered is kept.
pub async fn grade(judge: &Judge) -> Vec<(RagCase, Metric, Result<Evaluation, ragaliq::Error>)> {
    let mut out = Vec::new();
    for case in cases() {
        for metric in [
            Metric::Faithfulness,
            Metric::Hallucination,
            Metric::Relevance,
        ] {
            let evaluation = judge.evaluate(metric, &case).await;
            out.push((case.clone(), metric, evaluation));
        }
    }
    out
}

#[allow(dead_code)] // `tests/quickstart.rs` includes this file as a module.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("quickstart: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Grades the cases; `Ok(false)` when an evaluation could not be made.
async fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let config = config(&|name| std::env::var(name).ok())?;
    let recorder = Arc::new(Recorder::new(location(), config.mode));
    let judge = Judge::from_config(&config)?.with_recorder(recorder.clone());
    println!(
        "judge: {}; mode {} ({}); recording {}",
        judge.describe(),
        config.mode,
        config.mode_reason(),
        location().snapshot.display()
    );

    let started = std::time::Instant::now();
    let mut last_case = None;
    let mut failed = 0;
    for (case, metric, evaluation) in grade(&judge).await {
        if last_case.as_ref() != Some(&case) {
            println!(
                "\n── case `{}`: {:?}",
                case.id.as_deref().unwrap_or(""),
                case.response_text()
            );
            last_case = Some(case);
        }
        match evaluation {
            Ok(evaluation) => println!("{evaluation}"),
            Err(e) => {
                failed += 1;
                println!("{metric}: could not evaluate: {e}");
            }
        }
    }
    if !judge.refusals().is_empty() {
        println!("\njudge: {}", judge.describe());
    }
    let usage = judge.usage();
    println!(
        "\n{} judge calls, {} tokens spent; {} answers replayed from {}; {:.1} s",
        usage.calls,
        usage.total_tokens(),
        usage.replayed,
        recorder
            .source()
            .map_or_else(|| "nothing".into(), |p| p.display().to_string()),
        started.elapsed().as_secs_f64()
    );
    if usage.calls == 0 {
        println!(
            "to grade with your own judge, recorded apart from this one: RAGALIQ_JUDGE=openai:gpt-4o-mini RAGALIQ_MODE=record RAGALIQ_SNAPSHOT_DIR=my-recordings cargo run --example quickstart (examples/quickstart.toml says more)"
        );
    }
    // Kept even when an evaluation failed: answers already paid for are not
    // asked (or paid) again.
    if let Some(pending) = recorder.save_pending_after(failed == 0, "examples/quickstart.rs")? {
        // cargo insta skips target/ folders: a recording there is read as a file.
        let under_target = pending.components().any(|c| c.as_os_str() == "target");
        println!(
            "new exchanges recorded in {}: {}",
            pending.display(),
            if under_target {
                "read them there (`cargo insta review` does not look under target/), and rename the file to .snap to accept it"
            } else {
                "review them with `cargo insta review`"
            }
        );
    }
    Ok(failed == 0)
}
