//! `cargo ragaliq calibrate`: a judge's agreement with labelled claims (see
//! `ragaliq::calibration`).

use ragaliq::Mode;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The folder of labelled claims (.yaml, .yml, .json, .jsonl, .csv).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// A judge to compare, as NAME=FILE: FILE is a TOML file in
    /// ragaliq.toml's format that alone configures the judge (RAGALIQ_*
    /// variables other than RAGALIQ_MODE are not applied). Repeat for a
    /// side-by-side table. Default: the judge ragaliq.toml and the
    /// environment configure, named `default`.
    #[arg(long = "judge", value_name = "NAME=FILE")]
    judges: Vec<String>,
    /// Exit with 1 when a judge's kappa over the four verdicts is below this.
    #[arg(long, value_name = "KAPPA")]
    min_kappa: Option<f64>,
    /// Recording mode (auto, record, replay, live), instead of RAGALIQ_MODE / CI.
    #[arg(long, value_name = "MODE")]
    mode: Option<String>,
    /// Write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the report as one self-contained HTML page to this file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Write the report as Markdown to this file (and to
    /// $GITHUB_STEP_SUMMARY when that is set).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
}

/// `Ok(true)` when the report passes.
pub fn run(args: Args) -> Result<bool, String> {
    let mut command = format!(
        "RAGALIQ_MODE=record cargo ragaliq calibrate {}",
        args.dir.display()
    );
    for spec in &args.judges {
        command.push_str(&format!(" --judge {spec}"));
    }
    // Paths on the command line are relative to where it runs.
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
    let mut calibration = ragaliq::calibration(&args.dir)
        .with_root(here)
        .with_record_command(command);
    for spec in &args.judges {
        let Some((name, file)) = spec.split_once('=') else {
            return Err(format!(
                "--judge {spec:?}: expected NAME=FILE, e.g. --judge small=judges/small.toml"
            ));
        };
        calibration = calibration.with_judge_file(name, file);
    }
    if let Some(floor) = args.min_kappa {
        calibration = calibration.with_min_kappa(floor);
    }
    if let Some(mode) = &args.mode {
        let mode = Mode::from_name(mode).ok_or_else(|| {
            format!("--mode {mode:?}: expected one of auto, record, replay, live")
        })?;
        calibration = calibration.with_mode(mode);
    }
    // insta reports a new or changed recording by panicking; the run lists
    // those itself, so that panic's message is not printed as a crash.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if !message.starts_with("snapshot assertion for") {
            default_hook(info);
        }
    }));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let report = runtime
        .block_on(calibration.run())
        .map_err(|e| e.to_string())?;
    print!("{report}");
    if let Some(path) = &args.json {
        std::fs::write(path, report.to_json()).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(path) = &args.html {
        std::fs::write(path, report.to_html()).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let markdown = report.to_markdown();
    if let Some(path) = &args.markdown {
        std::fs::write(path, &markdown).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(step) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&step)
            .map_err(|e| format!("{}: {e}", PathBuf::from(&step).display()))?;
        writeln!(file, "{markdown}").map_err(|e| e.to_string())?;
    }
    Ok(report.passed())
}
