//! `cargo ragaliq status` and `cargo ragaliq migrate`.

use crate::files::{self, shown};
use ragaliq::Config;
use ragaliq::prompts::{Task, Templates};
use ragaliq::record::{Recording, format_of, migrate as migrate_file};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct StatusArgs {
    /// Folders to search (default: the current folder).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Run `cargo test --workspace` (replay only, nothing written) to find
    /// recordings no test uses any more.
    #[arg(long)]
    unreferenced: bool,
}

#[derive(clap::Args)]
pub struct MigrateArgs {
    /// Folders or files to convert (default: the current folder).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

fn roots(paths: &[PathBuf]) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    }
}

/// `Ok(true)` when nothing needs attention.
pub fn status(args: StatusArgs) -> Result<bool, String> {
    let found = files::recordings(&roots(&args.paths));
    let mut pending = Vec::new();
    let mut old_format = Vec::new();
    let mut stale: Vec<(PathBuf, Vec<String>)> = Vec::new();
    let mut unreadable = Vec::new();
    let mut templates: BTreeMap<PathBuf, Option<(Templates, String)>> = BTreeMap::new();
    // Person's verdicts per recording: (given, of them overruling the judge).
    let mut reviewed: Vec<(PathBuf, usize, usize)> = Vec::new();
    // Items the judge is unsure of with no person's verdict, per recording
    // (none under `uncertain = "decide"`: the threshold decides them), and
    // whether their tests fail meanwhile (`uncertain = "fail"`).
    let mut awaiting: Vec<(PathBuf, usize)> = Vec::new();
    let mut failing_meanwhile = false;
    let mut decided_by_threshold = false;
    // Items the found rule decided with no call, with no person's verdict.
    let mut by_rule: Vec<(PathBuf, usize)> = Vec::new();
    let mut thresholds = BTreeMap::new();
    for path in &found {
        if let Ok(Some(recording)) = Recording::read(path) {
            let at = crate::review::thresholds(path, &mut thresholds)?;
            let (given, overruling) = ragaliq::review::count(&recording, &at);
            if given > 0 {
                reviewed.push((path.clone(), given, overruling));
            }
            decided_by_threshold |= at.uncertain == ragaliq::Uncertain::Decide;
            let items = ragaliq::review::deciding(&recording, &at);
            let unsure = items.iter().filter(|i| i.awaits()).count();
            if unsure > 0 {
                awaiting.push((path.clone(), unsure));
                failing_meanwhile |= at.uncertain == ragaliq::Uncertain::Fail;
            }
            let ruled = items
                .iter()
                .filter(|i| i.judge.rule.is_some() && i.person.is_none())
                .count();
            if ruled > 0 {
                by_rule.push((path.clone(), ruled));
            }
        }
        if path.extension().is_some_and(|e| e == "new") {
            // A pending recording that cannot be read is lost pending work:
            // tests set it aside and ask again, but a person should know.
            if let Err(e) = Recording::read(path) {
                unreadable.push(e.to_string());
            }
            pending.push(path.clone());
            continue;
        }
        if format_of(path) == Some(1) {
            old_format.push(path.clone());
            continue;
        }
        let recording = match Recording::read(path) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                unreadable.push(e.to_string());
                continue;
            }
        };
        let root = files::package_root(path).unwrap_or_default();
        let current = templates
            .entry(root.clone())
            .or_insert_with(|| current_setup(&root))
            .as_ref();
        if let Some((templates, model)) = current {
            let mut reasons = BTreeSet::new();
            for e in &recording.exchanges {
                if let Some(task) = Task::ALL.iter().find(|t| t.name() == e.task) {
                    let now = templates.version_label(*task);
                    if now != e.template {
                        reasons.insert(format!("template {} → {now}", e.template));
                    }
                }
                if &e.model != model && !e.is_rule() {
                    reasons.insert(format!("model {} → {model}", e.model));
                }
            }
            if !reasons.is_empty() {
                stale.push((path.clone(), reasons.into_iter().collect()));
            }
        }
    }
    let section = |title: &str, items: &[String], hint: &str| {
        println!(
            "{title} ({}){}",
            items.len(),
            if items.is_empty() { "" } else { ":" }
        );
        for i in items {
            println!("  {i}");
        }
        if !items.is_empty() && !hint.is_empty() {
            println!("  → {hint}");
        }
    };
    println!(
        "{} ragaliq recording{} under {}",
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        roots(&args.paths)
            .iter()
            .map(|p| shown(p))
            .collect::<Vec<_>>()
            .join(", ")
    );
    section(
        "awaiting review",
        &pending.iter().map(|p| shown(p)).collect::<Vec<_>>(),
        "cargo insta review",
    );
    section(
        "stale-looking (recorded with another template or model than configured now)",
        &stale
            .iter()
            .map(|(p, r)| format!("{}: {}", shown(p), r.join("; ")))
            .collect::<Vec<_>>(),
        "re-record them: RAGALIQ_MODE=record cargo test, then cargo insta review",
    );
    section(
        "in format 1",
        &old_format.iter().map(|p| shown(p)).collect::<Vec<_>>(),
        "cargo ragaliq migrate",
    );
    section("unreadable", &unreadable, "");
    let unsure: usize = awaiting.iter().map(|(_, n)| n).sum();
    section(
        "awaiting a person (items the judge is unsure of, read inside its band, with no person's verdict)",
        &awaiting
            .iter()
            .map(|(p, n)| format!("{}: {n} item{}", shown(p), if *n == 1 { "" } else { "s" }))
            .collect::<Vec<_>>(),
        match (unsure, failing_meanwhile) {
            (0, _) => "",
            (_, true) => {
                "cargo ragaliq review (it shows them first); their tests fail until a person gives the verdicts (uncertain = \"fail\", the default)"
            }
            (_, false) => {
                "cargo ragaliq review (it shows them first); their tests pass meanwhile (uncertain = \"pass\")"
            }
        },
    );
    if decided_by_threshold {
        println!(
            "  (none counted where uncertain = \"decide\": there the threshold decides what the judge is unsure of)"
        );
    }
    let ruled: usize = by_rule.iter().map(|(_, n)| n).sum();
    section(
        "decided by the found rule with no call (no judge read them), with no person's verdict",
        &by_rule
            .iter()
            .map(|(p, n)| format!("{}: {n} answer{}", shown(p), if *n == 1 { "" } else { "s" }))
            .collect::<Vec<_>>(),
        if ruled > 0 {
            "cargo ragaliq review (it walks them; a person's \"no\" overrules the rule)"
        } else {
            ""
        },
    );
    let given: usize = reviewed.iter().map(|(_, n, _)| n).sum();
    let overruling: usize = reviewed.iter().map(|(_, _, n)| n).sum();
    println!(
        "verdicts given by a person ({given}{}){}",
        if given > 0 {
            format!(
                " in {} recording{}, {overruling} overruling the judge's reading; replayed as the verdict",
                reviewed.len(),
                if reviewed.len() == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        },
        if reviewed.is_empty() { "" } else { ":" }
    );
    for (path, n, o) in &reviewed {
        println!("  {}: {n} ({o} overruling the judge)", shown(path));
    }
    if given > 0 {
        println!(
            "  → cargo ragaliq review --all (to revise), cargo ragaliq calibrate --reviewed (the judge against them)"
        );
    }
    // A test awaiting a person fails until the verdict is given (under the
    // default `uncertain = "fail"`), so status does too; under "pass" the
    // items are listed and the tests pass meanwhile.
    let mut clean = pending.is_empty()
        && stale.is_empty()
        && old_format.is_empty()
        && unreadable.is_empty()
        && !failing_meanwhile;
    if args.unreferenced {
        let unused = unreferenced(&found)?;
        section(
            "unreferenced (no test asserted them)",
            &unused.iter().map(|p| shown(p)).collect::<Vec<_>>(),
            "delete them, or `cargo insta test --unreferenced=delete`",
        );
        clean &= unused.is_empty();
    } else {
        println!("unreferenced: not checked (pass --unreferenced to run the tests and find them)");
    }
    Ok(clean)
}

/// The templates and model the package's configuration uses now.
fn current_setup(root: &Path) -> Option<(Templates, String)> {
    let config = Config::load_from(root, &|name| std::env::var(name).ok()).ok()?;
    let templates = match &config.prompts_dir {
        Some(dir) => Templates::from_dir(dir).ok()?,
        None => Templates::builtin(),
    };
    Some((templates, config.model.clone()))
}

/// Runs the tests in replay mode with insta recording every snapshot it
/// asserts, and returns the recordings it did not.
fn unreferenced(found: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let list = std::env::temp_dir().join(format!("ragaliq-references-{}", std::process::id()));
    let _ = std::fs::remove_file(&list);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("running `cargo test --workspace` in replay mode to see which recordings are used…");
    let status = Command::new(cargo)
        .args(["test", "--workspace", "--no-fail-fast", "--quiet"])
        .env("INSTA_SNAPSHOT_REFERENCES_FILE", &list)
        .env("INSTA_FORCE_PASS", "1")
        .env("INSTA_UPDATE", "no")
        .env("RAGALIQ_MODE", "replay")
        .status()
        .map_err(|e| format!("cannot run cargo test: {e}"))?;
    if !status.success() {
        eprintln!(
            "note: some tests failed; recordings they would have asserted may show as unreferenced"
        );
    }
    let text = std::fs::read_to_string(&list).unwrap_or_default();
    let _ = std::fs::remove_file(&list);
    let used: BTreeSet<PathBuf> = text
        .lines()
        .filter_map(|l| std::fs::canonicalize(l.trim()).ok())
        .collect();
    Ok(found
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
        .filter(|p| std::fs::canonicalize(p).is_ok_and(|c| !used.contains(&c)))
        .cloned()
        .collect())
}

/// `Ok(true)` when every format-1 recording was converted.
pub fn migrate(args: MigrateArgs) -> Result<bool, String> {
    let found = files::recordings(&roots(&args.paths));
    let mut converted = 0;
    let mut failed = 0;
    for path in &found {
        match migrate_file(path) {
            Ok(true) => {
                converted += 1;
                println!("migrated {}", shown(path));
            }
            Ok(false) => {}
            Err(e) => {
                failed += 1;
                eprintln!("error: {e}");
            }
        }
    }
    println!(
        "{converted} recording{} converted to format 2; {} already in format 2{}",
        if converted == 1 { "" } else { "s" },
        found.len() - converted - failed,
        if failed > 0 {
            format!("; {failed} could not be read")
        } else {
            String::new()
        }
    );
    Ok(failed == 0)
}
