//! `cargo ragaliq`: what a team needs around its recorded RAG tests, in the
//! spirit of `cargo insta`.
//!
//! ```text
//! cargo ragaliq report <DIR|FILE>...   combine suite reports from shards or machines
//! cargo ragaliq status [PATH]...       pending, stale-looking and unreferenced recordings
//! cargo ragaliq migrate [PATH]...      convert format-1 recordings to format 2
//! cargo ragaliq calibrate <DIR>        a judge's agreement with labelled items
//! cargo ragaliq review [PATH]...       give a person's verdict where the judge is wrong
//! cargo ragaliq record --batch         record through a provider's batch API
//! ```
//!
//! Install from a checkout with `cargo install --locked --path cargo-ragaliq`
//! (once published: `cargo install --locked cargo-ragaliq`).

#![forbid(unsafe_code)]

mod batch;
mod calibrate;
mod files;
mod recordings;
mod report;
mod review;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// cargo runs `cargo-ragaliq ragaliq …` for `cargo ragaliq …`.
#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo", styles = clap::builder::Styles::plain())]
enum Cargo {
    Ragaliq(Cli),
}

/// Tools for ragaliq's recorded RAG tests.
#[derive(clap::Args)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Combine suite reports from several shards or machines into one.
    ///
    /// Each input is a report folder (holding report.json) or a report.json
    /// file. Every trial is counted once; spending is added up. Checks the
    /// gates of ragaliq.toml (or --config) over the whole run, against
    /// --baseline for max_drop. Writes report.json, junit.xml, summary.md
    /// and report.html (a page to look at), prints the table and each
    /// gate's result, and puts the summary in GITHUB_STEP_SUMMARY when that
    /// is set. Exits with 1 when a gate failed, or a trial failed that no
    /// pass-rate gate allows.
    Report(report::Args),
    /// List recordings awaiting review, recordings that look stale, and (with
    /// --unreferenced) recordings no test uses.
    Status(recordings::StatusArgs),
    /// Convert format-1 recordings (JSON) to format 2 (YAML) in place.
    Migrate(recordings::MigrateArgs),
    /// Report how far a judge agrees with labelled items (claims, answers, passages, graded answers, criteria).
    ///
    /// Verifies every labelled item through the judge (recorded and
    /// replayed like any test), then prints accuracy, Cohen's kappa with a
    /// 95% interval, macro-F1, per-label precision and recall and the
    /// confusion matrix. Exits with 1 when kappa is below --min-kappa.
    Calibrate(calibrate::Args),
    /// Give your own verdict where the judge is wrong, kept in the recording.
    ///
    /// Walks the verdict-deciding items (claims, answers, passages,
    /// criteria) of pending recordings and those the judge decided against
    /// in accepted ones: the claim, its passages with the closest sentence
    /// marked, the judge's reading; one key and Enter per verdict, s skip,
    /// u undo, q quit. Each verdict is written at once into the recording
    /// (the pending one when there is one), replayed in CI as the verdict,
    /// and read by `cargo ragaliq calibrate --reviewed` as a label. With
    /// --key and --verdict it sets one without asking: the command a
    /// failing test prints.
    Review(review::Args),
    /// Record the tests' judge exchanges through the provider's batch API.
    ///
    /// Runs the test command (default `cargo test`; give another after
    /// `--`) in rounds: each round queues the questions no recording
    /// answers, submits them as batches (OpenAI, Anthropic: half price,
    /// answers within 24 hours), waits, and keeps the answers; the next
    /// round writes them as pending recordings and queues the next stage's
    /// questions. Ends when a round queues nothing; then review with
    /// `cargo insta review`. State lives in the batch folder: --resume
    /// continues after a crash, --status shows progress.
    Record(batch::Args),
}

fn main() -> ExitCode {
    let Cargo::Ragaliq(cli) = Cargo::parse();
    let result = match cli.command {
        Command::Report(args) => report::run(args),
        Command::Status(args) => recordings::status(args),
        Command::Migrate(args) => recordings::migrate(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Record(args) => batch::run(args),
        Command::Review(args) => review::run(args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
