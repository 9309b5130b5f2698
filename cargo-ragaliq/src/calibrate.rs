//! `cargo ragaliq calibrate`: a judge's agreement with labelled items
//! (claims, answers, passages, graded answers, judged responses; see
//! `ragaliq::calibrate`).

use ragaliq::Mode;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The folder of labelled items (.yaml, .yml, .json, .jsonl, .csv);
    /// several folders of one kind are calibrated as one set. With
    /// --reviewed: where to look for recordings (default: the current
    /// folder, so tests/ and every snapshots folder under it).
    #[arg(value_name = "DIR", required_unless_present = "reviewed")]
    dirs: Vec<PathBuf>,
    /// Read the person's verdicts kept in the project's recordings
    /// (`cargo ragaliq review`) as the labelled set, against the judge's
    /// reading in the same exchanges: no call, nothing recorded. One report
    /// per model and kind of item; with --fit, the thresholds are written
    /// into the one --judge file.
    #[arg(long)]
    reviewed: bool,
    /// With --reviewed: read only the verdicts given blind (`cargo ragaliq
    /// review --blind`), so agreement is not measured against labels a
    /// person gave while seeing the judge's reading.
    #[arg(long, requires = "reviewed")]
    blind_only: bool,
    /// A judge to compare, as NAME=FILE: FILE is a TOML file in
    /// ragaliq.toml's format that alone configures the judge (RAGALIQ_*
    /// variables other than RAGALIQ_MODE are not applied). Repeat for a
    /// side-by-side table. Default: the judge ragaliq.toml and the
    /// environment configure, named `default`.
    #[arg(long = "judge", value_name = "NAME=FILE")]
    judges: Vec<String>,
    /// Exit with 1 when a judge's kappa is below this: over the four
    /// verdicts where the claims' labels give more than supported / not,
    /// else supported / not; relevant / not for answers and passages;
    /// correct / not for graded answers; meets / fails for judged
    /// responses.
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
    /// Fit each judge's threshold to the labels (P(supported) for claims,
    /// the relevance score for answers, P(relevant) for passages, the
    /// correctness score for graded answers, the criteria score for judged
    /// responses) and write
    /// it into the judge's file (`--judge NAME=FILE`), with the set and the
    /// date it was fitted on. Fit on a dev half, then report the test half.
    #[arg(long)]
    fit: bool,
    /// With --fit: write the fitted threshold even where the items cannot
    /// tell it from the current one (too few, or the current one inside
    /// the middle 90% of the thresholds fitted on halves of them), which
    /// --fit otherwise keeps.
    #[arg(long, requires = "fit")]
    fit_anyway: bool,
    /// With --fit: the band fitted around the threshold promises decided
    /// agreement of at least 1 - ALPHA (default 0.1: 0.9)...
    #[arg(long, value_name = "ALPHA", requires = "fit", default_value_t = ragaliq::calibrate::DEFAULT_ALPHA)]
    alpha: f64,
    /// ...with probability at least 1 - DELTA (default 0.05: 0.95), by
    /// fixed-sequence binomial tests on the items; too few items to show it
    /// is said (TOO FEW), and nothing is written.
    #[arg(long, value_name = "DELTA", requires = "fit", default_value_t = ragaliq::calibrate::DEFAULT_DELTA)]
    delta: f64,
}

/// Writes the band fitted for `kind` into the judge file at `path`, or says
/// why not; `Ok` either way unless the file cannot be written.
fn band_outcome(
    path: &std::path::Path,
    kind: &str,
    fit: Option<&ragaliq::calibrate::BandFit>,
    set: &str,
    model: &str,
) -> Result<(), String> {
    let Some(fit) = fit else {
        return Ok(());
    };
    if !fit.writable() {
        println!("fitted: bands.{kind} kept: {fit}");
        return Ok(());
    }
    write_band(path, kind, fit, set, model)?;
    println!(
        "fitted: wrote bands.{kind} = {} into {} for `{model}` ({fit})",
        fit.band.to_toml(),
        path.display()
    );
    Ok(())
}

/// Writes `fit`'s band as `bands.<kind>` into the judge file at `path`, and
/// in `[fitted]` the model it applies to and what it promises (kept as
/// [`write_fit`] keeps the file).
fn write_band(
    path: &std::path::Path,
    kind: &str,
    fit: &ragaliq::calibrate::BandFit,
    set: &str,
    model: &str,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("{}: not TOML: {e}", path.display()))?;
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    // A side that decides nothing is written "never".
    let end = |x: Option<f64>| -> toml_edit::Value {
        x.map_or_else(|| "never".into(), |x| round(x).into())
    };
    let band: toml_edit::Value = match fit.band {
        ragaliq::Band::Between { low, high } => {
            toml_edit::Array::from_iter([end(Some(low)), end(Some(high))]).into()
        }
        ragaliq::Band::NoOnly { low } => {
            toml_edit::Array::from_iter([end(Some(low)), end(None)]).into()
        }
        ragaliq::Band::YesOnly { high } => {
            toml_edit::Array::from_iter([end(None), end(Some(high))]).into()
        }
        other => other.to_toml().trim_matches('"').into(),
    };
    let mut set_in = |t: &str, k: &str, v: toml_edit::Value| set_value(&mut doc, path, t, k, v);
    set_in("bands", kind, band)?;
    set_in("fitted", &format!("{kind}_band_model"), model.into())?;
    set_in("fitted", &format!("{kind}_band_set"), set.into())?;
    set_in("fitted", &format!("{kind}_band_date"), today().into())?;
    set_in("fitted", &format!("{kind}_band_alpha"), fit.alpha.into())?;
    set_in("fitted", &format!("{kind}_band_delta"), fit.delta.into())?;
    set_in(
        "fitted",
        &format!("{kind}_band_items"),
        (fit.items as i64).into(),
    )?;
    set_in(
        "fitted",
        &format!("{kind}_band_coverage"),
        ((fit.coverage() * 1000.0).round() / 1000.0).into(),
    )?;
    ragaliq::run::write_atomic(path, doc.to_string().as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Whether `fit` is written: `Err` with the line that says why the
/// current threshold is kept instead.
fn to_write(fit: &ragaliq::calibrate::Fit, anyway: bool, whose: &str) -> Result<(), String> {
    match fit.keeps_current() {
        Some(why) if !anyway => {
            let (table, key) = fit.key();
            let anyway = if (fit.threshold - fit.current).abs() < 1e-9 {
                String::new()
            } else {
                format!(" (--fit-anyway writes {:.3})", fit.threshold)
            };
            Err(format!(
                "fitted: kept {table}.{key} at {} for {whose}, nothing written: {why}{anyway}",
                fit.current
            ))
        }
        _ => Ok(()),
    }
}

/// `Ok(true)` when the report passes.
pub fn run(args: Args) -> Result<bool, String> {
    if args.reviewed {
        return run_reviewed(&args);
    }
    let mut command = format!(
        "RAGALIQ_MODE=record cargo ragaliq calibrate {}",
        dirs_text(&args.dirs)
    );
    for spec in &args.judges {
        command.push_str(&format!(" --judge {spec}"));
    }
    // Paths on the command line are relative to where it runs.
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
    let mut calibration = ragaliq::calibration(&args.dirs[0])
        .with_root(here.clone())
        .with_record_command(command)
        .with_fit(args.fit)
        .with_guarantee(args.alpha, args.delta);
    for dir in &args.dirs[1..] {
        calibration = calibration.with_dir(dir);
    }
    if args.fit && args.judges.is_empty() {
        return Err(
            "--fit writes each judge's file: name one with --judge NAME=FILE (ragaliq.toml itself is not rewritten)".into(),
        );
    }
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
    let mut refused = false;
    if args.fit {
        for (spec, judge) in args.judges.iter().zip(&report.judges) {
            let file = here.join(spec.split_once('=').map_or(spec.as_str(), |(_, f)| f));
            // A threshold fitted on part of the set is fitted on a set
            // nobody chose: refused, loudly, until every item is judged.
            if !judge.not_judged.is_empty() || !judge.pending.is_empty() {
                refused = true;
                eprintln!(
                    "fitted: NOT written for judge `{}`: {}; a threshold fitted on the rest would be fitted on a set nobody chose. Record and review them, then fit again.",
                    judge.name,
                    unjudged_text(judge.not_judged.len(), report.claims, judge.pending.len())
                );
                continue;
            }
            band_outcome(
                &file,
                report.kind.band_kind().name(),
                judge.band_fit.as_ref(),
                &dirs_text(&args.dirs),
                &judge.model,
            )?;
            match &judge.fit {
                Some(fit) => {
                    if let Err(kept) =
                        to_write(fit, args.fit_anyway, &format!("judge `{}`", judge.name))
                    {
                        println!("{kept}");
                        continue;
                    }
                    write_fit(&file, fit, &dirs_text(&args.dirs), &judge.model)?;
                    let (table, key) = fit.key();
                    let also = fit.contradiction.as_ref().map_or_else(String::new, |c| {
                        format!(
                            " and {table}.contradiction_ratio = {} (four-verdict kappa {:.3})",
                            c.ratio, c.kappa
                        )
                    });
                    println!(
                        "fitted: wrote {table}.{key} = {}{also} into {} for `{}` (kappa {:.3} at that value on {}; report the other half with it)",
                        fit.threshold,
                        file.display(),
                        judge.model,
                        fit.kappa,
                        dirs_text(&args.dirs)
                    );
                }
                None => println!(
                    "fitted: nothing for judge `{}`: {}",
                    judge.name,
                    judge
                        .unfitted
                        .as_deref()
                        .unwrap_or("no threshold was found")
                ),
            }
        }
    }
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
    if refused {
        return Err("--fit refused: not every item was judged (see above)".into());
    }
    Ok(report.passed())
}

/// What keeps a fit from being written: items not judged (of the set's
/// items) and recording files awaiting review, each counted as what it is.
fn unjudged_text(not_judged: usize, items: usize, pending: usize) -> String {
    let mut parts = Vec::new();
    if not_judged > 0 {
        parts.push(format!("{not_judged} of the {items} items were not judged"));
    }
    if pending > 0 {
        parts.push(format!(
            "{pending} recording file{} {} pending review",
            if pending == 1 { "" } else { "s" },
            if pending == 1 { "is" } else { "are" }
        ));
    }
    parts.join(" and ")
}

/// `cargo ragaliq calibrate --reviewed`: the person's verdicts in the
/// recordings under the folders given, as labels.
fn run_reviewed(args: &Args) -> Result<bool, String> {
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
    let env = |name: &str| std::env::var(name).ok();
    let (judge_file, judge) = match &args.judges[..] {
        [] => {
            if args.fit {
                return Err("--fit writes a judge file: name it with --judge NAME=FILE (ragaliq.toml itself if you mean it: --judge team=ragaliq.toml)".into());
            }
            let config = ragaliq::Config::load_from(&here, &env).map_err(|e| e.to_string())?;
            (
                None,
                ragaliq::Judge::from_config(&config).map_err(|e| e.to_string())?,
            )
        }
        [spec] => {
            let Some((_, file)) = spec.split_once('=') else {
                return Err(format!(
                    "--judge {spec:?}: expected NAME=FILE, e.g. --judge team=ragaliq.toml"
                ));
            };
            let path = here.join(file);
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let config = ragaliq::Config::from_sources(Some((&text, &path)), &here, &env)
                .map_err(|e| e.to_string())?;
            (
                Some(path),
                ragaliq::Judge::from_config(&config).map_err(|e| e.to_string())?,
            )
        }
        _ => return Err(
            "--reviewed reads the recordings at one judge's thresholds: give one --judge at most"
                .into(),
        ),
    };
    if args.html.is_some() {
        return Err("--html draws one report; with --reviewed there is one per kind of item: use --json or --markdown".into());
    }
    let paths = crate::review::reading_paths(&args.dirs);
    let mut recordings = Vec::new();
    for path in &paths {
        match ragaliq::record::Recording::read(path) {
            Ok(Some(r)) => recordings.push((path.clone(), r)),
            Ok(None) => {}
            Err(e) => eprintln!("skipped: {e}"),
        }
    }
    // Verdicts given beside the judge's reading lean toward it; with
    // --blind-only they are left out before anything is read.
    let mut seen = 0;
    if args.blind_only {
        for (_, r) in &mut recordings {
            for e in &mut r.exchanges {
                seen += e.reviewed.len();
                e.reviewed.retain(|v| v.blind);
            }
        }
    }
    // The fit is always reported (how many verdicts are enough is part of
    // the answer); it is written only with --fit.
    let set = ragaliq::calibrate::reviewed(
        &recordings,
        &judge,
        ragaliq::calibrate::DEFAULT_RESAMPLES,
        args.min_kappa,
        true,
        (args.alpha, args.delta),
    );
    println!(
        "read {} recording{} (a pending .snap.new in place of its .snap): {} verdict{} given by a person{}, read as labels against the judge's reading in the same exchanges, no call",
        set.recordings,
        if set.recordings == 1 { "" } else { "s" },
        set.verdicts,
        if set.verdicts == 1 { "" } else { "s" },
        if args.blind_only {
            format!(
                " blind (--blind-only: {} given beside the judge's reading left out)",
                seen - set.verdicts
            )
        } else {
            format!(" ({} blind)", set.blind)
        }
    );
    if !args.blind_only && set.blind < set.verdicts {
        println!(
            "  {} of them given beside the judge's reading, which can lean toward it: agreement with blind verdicts is the figure to trust (`cargo ragaliq review --blind --all` to give them, `--blind-only` to read only those)",
            set.verdicts - set.blind
        );
    }
    for why in &set.not_used {
        println!("  not read as labels: {why}");
    }
    if set.reports.is_empty() {
        println!(
            "no person's verdict to read: give some with `cargo ragaliq review` (`--blind` hides the judge's reading while you do)"
        );
        return Ok(true);
    }
    let set_text = format!(
        "verdicts given by a person in {}",
        if args.dirs.is_empty() {
            ".".to_owned()
        } else {
            dirs_text(&args.dirs)
        }
    );
    let mut markdown = String::new();
    let mut json = Vec::new();
    let mut passed = true;
    for report in &set.reports {
        println!();
        print!("{report}");
        passed &= report.passed();
        markdown.push_str(&report.to_markdown());
        markdown.push('\n');
        json.push(report.to_json());
        if !args.fit {
            continue;
        }
        let (Some(file), Some(result)) = (&judge_file, report.judges.first()) else {
            continue;
        };
        if result.model == judge.model() {
            band_outcome(
                file,
                report.kind.band_kind().name(),
                result.band_fit.as_ref(),
                &set_text,
                &result.model,
            )?;
        }
        let Some(fit) = &result.fit else {
            println!(
                "fitted: nothing for {}: {}",
                report.kind.plural(),
                result
                    .unfitted
                    .as_deref()
                    .unwrap_or("no threshold was found")
            );
            continue;
        };
        if result.model != judge.model() {
            println!(
                "fitted: NOT written for {}: they were recorded by `{}`, and {} configures `{}`",
                report.kind.plural(),
                result.model,
                file.display(),
                judge.model()
            );
            continue;
        }
        if let Err(kept) = to_write(fit, args.fit_anyway, report.kind.plural()) {
            println!("{kept}");
            continue;
        }
        write_fit(file, fit, &set_text, &result.model)?;
        let (table, key) = fit.key();
        println!(
            "fitted: wrote {table}.{key} = {} into {} for `{}` (kappa {:.3} at that value on {} {}){}",
            fit.threshold,
            file.display(),
            result.model,
            fit.kappa,
            fit.items,
            report.kind.plural(),
            if fit.too_few.is_some() {
                "; too few to mean anything yet (see above)"
            } else {
                ""
            }
        );
    }
    if let Some(path) = &args.json {
        std::fs::write(path, format!("[{}]", json.join(",\n")))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(path) = &args.markdown {
        std::fs::write(path, &markdown).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(passed)
}

/// The folders as a command line writes them.
fn dirs_text(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes `fit` into the judge file at `path`, keeping everything else in
/// it as written (comments, order, inline tables such as `judge = {
/// provider = …, model = … }`): the threshold (and a fitted contradiction
/// threshold) under its table, and a `[fitted]` table that says for which
/// model, on what and when. The file is replaced atomically: a reader (or
/// a crash) sees the old file or the new one, never half of one.
fn write_fit(
    path: &std::path::Path,
    fit: &ragaliq::calibrate::Fit,
    set: &str,
    model: &str,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("{}: not TOML: {e}", path.display()))?;
    // Each kind names its own model: fitting passages on model B never
    // makes model A's claim threshold apply to B. A file written when one
    // `model` stood for every kind keeps that model for the kinds it had.
    if let Some(fitted) = doc.get_mut("fitted").and_then(|t| t.as_table_like_mut())
        && let Some(legacy) = fitted
            .get("model")
            .and_then(toml_edit::Item::as_str)
            .map(str::to_owned)
    {
        for (other, _) in ragaliq::config::FITTED_KINDS {
            let had = fitted.iter().any(|(k, _)| {
                k.starts_with(&format!("{other}_"))
                    || (other == "claims" && k.starts_with("contradiction_"))
            });
            let key = format!("{other}_model");
            if had && fitted.get(&key).is_none() {
                fitted.insert(&key, toml_edit::value(legacy.as_str()));
            }
        }
        fitted.remove("model");
    }
    let (table, key) = fit.key();
    let mut set_in = |t: &str, k: &str, v: toml_edit::Value| set_value(&mut doc, path, t, k, v);
    set_in(table, key, fit.threshold.into())?;
    if let Some(c) = &fit.contradiction {
        set_in(table, "contradiction_ratio", c.ratio.into())?;
        set_in(
            "fitted",
            "contradiction_kappa",
            ((c.kappa * 1000.0).round() / 1000.0).into(),
        )?;
    }
    let kind = fit.kind.key();
    set_in("fitted", &format!("{kind}_model"), model.into())?;
    set_in("fitted", &format!("{kind}_set"), set.into())?;
    set_in("fitted", &format!("{kind}_date"), today().into())?;
    set_in(
        "fitted",
        &format!("{kind}_kappa"),
        ((fit.kappa * 1000.0).round() / 1000.0).into(),
    )?;
    set_in(
        "fitted",
        &format!("{kind}_items"),
        (fit.items as i64).into(),
    )?;
    ragaliq::run::write_atomic(path, doc.to_string().as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Today's date (UTC), `2026-11-25`.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Sets `table.key = value` in `doc` (the judge file at `path`), making
/// the table if there is none; an error names the file when `table` is
/// there but is not a table.
fn set_value(
    doc: &mut toml_edit::DocumentMut,
    path: &std::path::Path,
    table: &str,
    key: &str,
    value: toml_edit::Value,
) -> Result<(), String> {
    if doc.get(table).is_none() {
        doc[table] = toml_edit::table();
    }
    let like = doc[table].as_table_like_mut().ok_or_else(|| {
        format!(
            "{}: `{table}` is not a table, so {table}.{key} cannot be written",
            path.display()
        )
    })?;
    like.insert(key, toml_edit::Item::Value(value));
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_fit_is_written_beside_what_the_file_says() {
        let dir = std::env::temp_dir().join(format!("ragaliq-fit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("judge.toml");
        std::fs::write(
            &file,
            "# my judge\n[judge]\nprovider = \"openai-compatible\"  # local\nmodel = \"m\"\n",
        )
        .unwrap();
        let fit = ragaliq::calibrate::Fit::new(
            ragaliq::calibrate::ItemKind::Claim,
            0.34,
            0.5,
            100,
            0.5,
            Some(0.4),
        )
        .with_contradiction(3.0, 0.35, Some(0.7), 2.0, Some(0.23), 120);
        super::write_fit(&file, &fit, "labels/dev", "m").unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with("# my judge\n[judge]\nprovider = \"openai-compatible\"  # local"),
            "{text}"
        );
        assert!(text.contains("claim_threshold = 0.34"), "{text}");
        assert!(
            text.contains("[fitted]") && text.contains("claims_set = \"labels/dev\""),
            "{text}"
        );
        // The file still configures a judge.
        let config = ragaliq::Config::from_sources(Some((&text, &file)), &dir, &|_| None).unwrap();
        assert_eq!(config.claim_threshold, 0.34);
        assert_eq!(config.contradiction_ratio, 3.0);
        let fitted = config.fitted.unwrap();
        assert_eq!(fitted.kinds.len(), 1);
        assert_eq!(fitted.kinds[0].model.as_deref(), Some("m"));
        assert!(text.contains("claims_model = \"m\""), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Claims fitted on model A, then passages on model B: B does not get
    /// A's claim threshold or contradiction ratio.
    #[test]
    fn each_kind_keeps_the_model_it_was_fitted_for() {
        let dir = std::env::temp_dir().join(format!("ragaliq-fit-kinds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("judge.toml");
        // Written by an earlier ragaliq: one `model` for every kind.
        std::fs::write(
            &file,
            "[judge]\nprovider = \"openai-compatible\"\nmodel = \"b\"\nclaim_threshold = 0.2\ncontradiction_ratio = 5.0\n\n[fitted]\nmodel = \"a\"\nclaims_set = \"x\"\nclaims_kappa = 0.5\ncontradiction_kappa = 0.4\n",
        )
        .unwrap();
        let passages = ragaliq::calibrate::Fit::new(
            ragaliq::calibrate::ItemKind::Passage,
            0.42,
            0.6,
            50,
            0.5,
            Some(0.5),
        );
        super::write_fit(&file, &passages, "passages/dev", "b").unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("claims_model = \"a\""), "{text}");
        assert!(text.contains("passages_model = \"b\""), "{text}");
        assert!(!text.contains("\nmodel = \"a\""), "{text}");
        let read = |model: &str| {
            ragaliq::Config::from_sources(Some((&text, &file)), &dir, &|v| {
                (v == "RAGALIQ_MODEL").then(|| model.to_owned())
            })
            .unwrap()
        };
        let b = read("b");
        assert_eq!(b.passage_threshold, 0.42, "b's own fit");
        assert_eq!(
            (b.claim_threshold, b.contradiction_ratio),
            (0.33, 3.0),
            "a's claim fit must not apply to b"
        );
        let a = read("a");
        assert_eq!((a.claim_threshold, a.contradiction_ratio), (0.2, 5.0));
        assert_eq!(
            a.passage_threshold, 0.5,
            "b's passage fit must not apply to a"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A judge file that is a link to a shared one stays a link, and keeps
    /// its permissions.
    #[cfg(unix)]
    #[test]
    fn a_linked_judge_file_is_written_through() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("ragaliq-fit-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("shared")).unwrap();
        let real = dir.join("shared/judge.toml");
        std::fs::write(
            &real,
            "[judge]\nprovider = \"openai-compatible\"\nmodel = \"m\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.join("judge.toml");
        std::os::unix::fs::symlink("shared/judge.toml", &link).unwrap();
        let fit = ragaliq::calibrate::Fit::new(
            ragaliq::calibrate::ItemKind::Claim,
            0.3,
            0.5,
            10,
            0.5,
            Some(0.4),
        );
        super::write_fit(&link, &fit, "labels/dev", "m").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::read_to_string(&real)
                .unwrap()
                .contains("claim_threshold = 0.3")
        );
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_refusal_counts_items_and_recording_files_apart() {
        assert_eq!(
            super::unjudged_text(3, 76, 2),
            "3 of the 76 items were not judged and 2 recording files are pending review"
        );
        assert_eq!(
            super::unjudged_text(0, 76, 1),
            "1 recording file is pending review"
        );
    }

    #[test]
    fn a_fit_keeps_an_inline_judge_table_whole() {
        let dir = std::env::temp_dir().join(format!("ragaliq-fit-inline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("judge.toml");
        std::fs::write(
            &file,
            "judge = { provider = \"openai-compatible\", model = \"m\", base_url = \"http://127.0.0.1:8767/v1\" }\n",
        )
        .unwrap();
        let fit = ragaliq::calibrate::Fit::new(
            ragaliq::calibrate::ItemKind::Claim,
            0.34,
            0.5,
            100,
            0.5,
            Some(0.4),
        );
        super::write_fit(&file, &fit, "labels/dev", "m").unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let config = ragaliq::Config::from_sources(Some((&text, &file)), &dir, &|_| None).unwrap();
        assert_eq!(
            (
                config.model.as_str(),
                config.base_url.as_deref(),
                config.claim_threshold
            ),
            ("m", Some("http://127.0.0.1:8767/v1"), 0.34),
            "{text}"
        );
        // Nothing but the file itself is left in the folder.
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["judge.toml"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
