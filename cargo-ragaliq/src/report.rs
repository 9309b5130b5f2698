//! `cargo ragaliq report`: one report from the reports of several shards.

use ragaliq::harness::report::Report;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Report folders (holding report.json) or report.json files.
    #[arg(required = true, value_name = "DIR|FILE")]
    inputs: Vec<PathBuf>,
    /// Where to write the combined report.json, junit.xml, summary.md and
    /// report.html.
    #[arg(
        short,
        long,
        value_name = "DIR",
        default_value = "target/ragaliq/combined"
    )]
    out: PathBuf,
    /// Also write the summary to this file (default: $GITHUB_STEP_SUMMARY when set).
    #[arg(long, value_name = "FILE")]
    step_summary: Option<PathBuf>,
}

/// `Ok(true)` when every trial passed.
pub fn run(args: Args) -> Result<bool, String> {
    let mut reports = Vec::new();
    for input in &args.inputs {
        let path = if input.is_dir() {
            input.join("report.json")
        } else {
            input.clone()
        };
        let report = Report::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        reports.push(report);
    }
    let suites: Vec<&str> = reports.iter().map(|r| r.suite.as_str()).collect();
    if suites.windows(2).any(|w| w[0] != w[1]) {
        return Err(format!(
            "the reports are of different suites ({}); combine one suite's shards at a time",
            suites.join(", ")
        ));
    }
    let (report, duplicates) = Report::combine(reports)?;
    for d in &duplicates {
        eprintln!("warning: {d} is in more than one report; its later report is kept");
    }
    report
        .write_all(&args.out)
        .map_err(|(path, e)| format!("{}: {e}", path.display()))?;
    let step = args
        .step_summary
        .or_else(|| std::env::var_os("GITHUB_STEP_SUMMARY").map(PathBuf::from));
    if let Some(step) = step {
        report
            .write_step_summary(Path::new(&step))
            .map_err(|(path, e)| format!("{}: {e}", path.display()))?;
    }
    println!("{}", report.console_table());
    println!(
        "combined {} report{} into {}",
        args.inputs.len(),
        if args.inputs.len() == 1 { "" } else { "s" },
        args.out.display()
    );
    Ok(report.summary.passed == report.summary.trials)
}
