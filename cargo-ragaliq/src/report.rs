//! `cargo ragaliq report`: one report from the reports of several shards,
//! with the run's gates checked over it.

use ragaliq::config::{Config, Gates};
use ragaliq::harness::gates;
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
    /// A previous run's report.json (or its folder) for the gates' max_drop
    /// and the changes per case (default: $RAGALIQ_BASELINE, else
    /// gates.baseline).
    #[arg(long, value_name = "DIR|FILE")]
    baseline: Option<PathBuf>,
    /// The configuration file whose gates to check (default:
    /// $RAGALIQ_CONFIG, else ragaliq.toml in the current folder).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// `report.json` in `input` when it is a folder, else `input`.
fn report_file(input: &Path) -> PathBuf {
    if input.is_dir() {
        input.join("report.json")
    } else {
        input.to_owned()
    }
}

/// The gates of the configuration in the current folder (or `--config`).
fn load_gates(config: Option<&Path>) -> Result<Gates, String> {
    let here = std::env::current_dir().map_err(|e| format!("the current folder: {e}"))?;
    let config = config.map(|c| c.display().to_string());
    let env = |name: &str| match (name, &config) {
        ("RAGALIQ_CONFIG", Some(c)) => Some(c.clone()),
        _ => std::env::var(name).ok(),
    };
    Config::load_from(&here, &env)
        .map(|c| c.gates)
        .map_err(|e| e.to_string())
}

/// `Ok(true)` when every trial passed (or failed as a pass-rate gate
/// allows) and every gate checked passed.
pub fn run(args: Args) -> Result<bool, String> {
    let gates = load_gates(args.config.as_deref())?;
    let mut reports = Vec::new();
    for input in &args.inputs {
        let path = report_file(input);
        let report = Report::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        reports.push(report);
    }
    let baseline = args
        .baseline
        .clone()
        .or_else(|| std::env::var_os("RAGALIQ_BASELINE").map(PathBuf::from))
        .or_else(|| gates.baseline.clone())
        .map(|b| {
            let path = report_file(&b);
            Report::read(&path).map_err(|e| format!("{}: {e}", path.display()))
        })
        .transpose()?;
    let suites: Vec<&str> = reports.iter().map(|r| r.suite.as_str()).collect();
    if suites.windows(2).any(|w| w[0] != w[1]) {
        return Err(format!(
            "the reports are of different suites ({}); combine one suite's shards at a time",
            suites.join(", ")
        ));
    }
    let (mut report, duplicates) = Report::combine(reports)?;
    for d in &duplicates {
        eprintln!("warning: {d} is in more than one report; its later report is kept");
    }
    if let Some(b) = &baseline {
        report.compare(b, None);
    }
    report.gates = gates::check(&report, &gates, baseline.as_ref());
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
    // A trial passes, or fails as a pass-rate gate checked here allows.
    let not_allowed = report
        .results
        .iter()
        .filter(|r| !r.passed() && !gates::allowed(r, &gates))
        .count();
    let failed_gates = report.gates.iter().filter(|g| g.failed()).count();
    if let Some(line) = report.gates_line() {
        println!("{line}");
    }
    if not_allowed > 0 {
        println!(
            "{not_allowed} trial{} failed{}",
            if not_allowed == 1 { "" } else { "s" },
            if gates.pass_rate.is_empty() {
                ""
            } else {
                " that no pass-rate gate allows"
            }
        );
    }
    Ok(not_allowed == 0 && failed_gates == 0)
}
