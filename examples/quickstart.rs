//! Three RAG answers graded by the judge: one faithful, one hallucinating,
//! one irrelevant. The judge's answers replay from the committed recording
//! `examples/recordings/quickstart.snap`, so this runs with no API key and no
//! network:
//!
//! ```sh
//! cargo run --example quickstart
//! ```
//!
//! The recording was made through the real record path against the scripted
//! judge on 127.0.0.1 (see `ragaliq.toml`). Point `RAGALIQ_JUDGE` at a real
//! model and run with `RAGALIQ_MODE=record` to grade with it instead; new
//! exchanges land in `quickstart.snap.new` for `cargo insta review`.

use ragaliq::prelude::*;
use ragaliq::record::{Location, Recorder};
use ragaliq::{Config, Evaluation, Metric};
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

/// Where the recording lives, and how to make it afresh.
pub fn location() -> Location {
    Location::at(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/recordings/quickstart.snap"),
        "examples/quickstart.rs",
        "RAGALIQ_MODE=record cargo run --example quickstart",
    )
}

/// Faithfulness, hallucination and relevance of every case, in order.
pub async fn grade(judge: &Judge) -> Result<Vec<(RagCase, Evaluation)>, ragaliq::Error> {
    let mut out = Vec::new();
    for case in cases() {
        for metric in [
            Metric::Faithfulness,
            Metric::Hallucination,
            Metric::Relevance,
        ] {
            let evaluation = judge.evaluate(metric, &case).await?;
            out.push((case.clone(), evaluation));
        }
    }
    Ok(out)
}

#[allow(dead_code)] // `tests/quickstart.rs` includes this file as a module.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quickstart: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = Config::load_from(root, &|name| std::env::var(name).ok())?;
    let recorder = Arc::new(Recorder::new(location(), config.mode));
    let judge = Judge::from_config(&config)?.with_recorder(recorder.clone());
    println!(
        "judge: {} {} (mode {:?})",
        judge.provider(),
        judge.model(),
        config.mode
    );

    let mut last_case = None;
    for (case, evaluation) in grade(&judge).await? {
        if last_case.as_ref() != Some(&case) {
            println!(
                "\n── case `{}`: {:?}",
                case.id.as_deref().unwrap_or(""),
                case.response
            );
            last_case = Some(case);
        }
        println!("{evaluation}");
    }
    let usage = judge.usage();
    println!(
        "\n{} judge calls, {} tokens spent; {} answers replayed from {}",
        usage.calls,
        usage.total_tokens(),
        usage.replayed,
        recorder
            .source()
            .map_or_else(|| "nothing".into(), |p| p.display().to_string())
    );
    if let Some(pending) = recorder.save_pending("examples/quickstart.rs")? {
        println!(
            "new exchanges recorded in {}: review them with `cargo insta review`",
            pending.display()
        );
    }
    Ok(())
}
