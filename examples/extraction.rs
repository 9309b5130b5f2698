//! How well a judge's claim extraction agrees with the claims a person
//! lists, beside taking the response's sentences as claims (no judge call).
//!
//! ```sh
//! cargo run --example extraction -- tests/labelled_extraction/dev tests/judges/qwen15.toml
//! cargo run --example extraction -- tests/labelled_extraction/dev tests/judges/qwen15.toml --sentences
//! ```
//!
//! The labelled set is JSONL: `id`, `query`, `response`, `claims` (the list a
//! person makes: one fact per claim, pronouns resolved, greetings, hedges
//! and questions left out). The judge's extractions are recorded beside the
//! set (`snapshots/<judge file stem>/responses.jsonl.snap`) and replay like
//! any recording (`RAGALIQ_MODE`, `CI`).
//!
//! A unit (an extracted claim or a sentence) *covers* a person's claim when
//! it holds at least 60% of that claim's content words (lower-cased words
//! of three letters or more, minus small words; a final `s` ignored). Per
//! method: the person's claims covered (recall), the units that cover at
//! least one (precision), *merged* units (covering two or more: one verdict
//! then decides several facts), *missed* claims (covered by none) and
//! *extra* units (covering none: greetings, hedges, facts a person would
//! not list, or invented ones).

use ragaliq::record::{Location, Recorder};
use ragaliq::{Config, Judge, Mode};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

const SMALL: &[&str] = &[
    "the", "and", "are", "was", "were", "for", "with", "from", "that", "this", "your", "you",
    "can", "per", "its", "has", "have", "not", "but", "any", "all", "which", "they", "their",
    "our", "will", "into", "after", "before", "then", "than", "also", "each", "there", "does",
    "what",
];

fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !SMALL.contains(&w.as_str()))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() >= 3 => stem.to_owned(),
            _ => w,
        })
        .collect()
}

fn covers(unit: &BTreeSet<String>, claim: &BTreeSet<String>) -> bool {
    !claim.is_empty() && claim.intersection(unit).count() * 10 >= claim.len() * 6
}

#[derive(Default)]
struct Tally {
    responses: usize,
    person: usize,
    units: usize,
    covered: usize,
    useful_units: usize,
    merged: usize,
    extra: usize,
}

/// One judge's extraction (or the sentences) measured against the
/// person's claims of one labelled folder.
pub struct Measured {
    /// Share of the person's claims some unit covers.
    pub recall: f64,
    /// Share of the units that cover a person's claim.
    pub precision: f64,
    /// Their harmonic mean.
    pub f1: f64,
    /// Responses measured; `failed` more could not be extracted.
    pub responses: usize,
    /// Responses the judge's extraction failed for (an error each).
    pub failed: usize,
    /// What was said of each failure.
    pub errors: Vec<String>,
    /// Judge calls made, and answers replayed.
    pub calls: u64,
    pub replayed: u64,
    /// The recording (extraction only).
    pub recorder: Arc<Recorder>,
    tally: Tally,
}

#[allow(dead_code)] // `tests/extraction.rs` includes this file as a module.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("extraction: {e}");
            ExitCode::FAILURE
        }
    }
}

#[allow(dead_code)]
async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, judge_file) = match (args.first(), args.get(1)) {
        (Some(d), Some(j)) => (PathBuf::from(d), PathBuf::from(j)),
        _ => return Err("usage: extraction <labelled folder> <judge file> [--sentences]".into()),
    };
    let sentences = args.iter().any(|a| a == "--sentences");
    let m = measure(&dir, &judge_file, sentences, None).await?;
    for e in &m.errors {
        eprintln!("{e}");
    }
    let t = &m.tally;
    let stem = stem(&judge_file);
    println!(
        "{} ({}), {}: {} responses, {} person claims, {} units; recall {:.3}, precision {:.3}, F1 {:.3}; {} missed, {} merged, {} extra; {} judge calls, {} replayed",
        stem,
        if sentences {
            "sentences"
        } else {
            "extracted by the judge"
        },
        dir.display(),
        t.responses,
        t.person,
        t.units,
        m.recall,
        m.precision,
        m.f1,
        t.person - t.covered,
        t.merged,
        t.extra,
        m.calls,
        m.replayed,
    );
    if !sentences
        && let Some(pending) = m
            .recorder
            .save_pending_after(m.failed == 0, "examples/extraction.rs")?
    {
        println!(
            "new exchanges in {}: review them with `cargo insta review`",
            pending.display()
        );
    }
    if m.failed > 0 {
        return Err(format!("{} responses could not be extracted", m.failed).into());
    }
    Ok(())
}

fn stem(judge_file: &Path) -> String {
    judge_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Measures `judge_file`'s extraction (or the sentences) on the labelled
/// folder `dir` (both relative to this package), in `mode` or as the
/// environment says.
pub async fn measure(
    dir: &Path,
    judge_file: &Path,
    sentences: bool,
    mode: Option<Mode>,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(judge_file))?;
    // The judge file alone configures the judge, as for calibration.
    let env = |name: &str| {
        if name.starts_with("RAGALIQ_") && name != "RAGALIQ_MODE" {
            return None;
        }
        std::env::var(name).ok()
    };
    let mut config = Config::from_sources(Some((&text, &root.join(judge_file))), root, &env)?;
    config.sentences = sentences;
    if let Some(mode) = mode {
        config.set_mode(mode);
    }
    let stem = stem(judge_file);
    let file = root.join(dir).join("responses.jsonl");
    let snapshot = root
        .join(dir)
        .join("snapshots")
        .join(&stem)
        .join("responses.jsonl.snap");
    let recorder = Arc::new(Recorder::new(
        Location::at(
            &snapshot,
            format!("claim extraction of judge `{stem}` on {}", dir.display()),
            format!(
                "RAGALIQ_MODE=record cargo run --example extraction -- {} {}",
                dir.display(),
                judge_file.display()
            ),
        ),
        config.mode,
    ));
    let judge = Judge::from_config(&config)?.with_recorder(recorder.clone());
    let mut t = Tally::default();
    let mut errors = Vec::new();
    for line in std::fs::read_to_string(&file)?
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let item: serde_json::Value = serde_json::from_str(line)?;
        let (query, response) = (
            item["query"].as_str().unwrap_or_default(),
            item["response"].as_str().unwrap_or_default(),
        );
        let person: Vec<BTreeSet<String>> = item["claims"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c.as_str()).map(words).collect())
            .unwrap_or_default();
        let units = match judge.extract_claims(query, response).await {
            Ok(units) => units,
            Err(e) => {
                errors.push(format!("{}: {e}", item["id"]));
                continue;
            }
        };
        let units: Vec<BTreeSet<String>> = units.iter().map(|u| words(u)).collect();
        t.responses += 1;
        t.person += person.len();
        t.units += units.len();
        t.covered += person
            .iter()
            .filter(|c| units.iter().any(|u| covers(u, c)))
            .count();
        for u in &units {
            let n = person.iter().filter(|c| covers(u, c)).count();
            match n {
                0 => t.extra += 1,
                1 => t.useful_units += 1,
                _ => {
                    t.useful_units += 1;
                    t.merged += 1;
                }
            }
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let (recall, precision) = (ratio(t.covered, t.person), ratio(t.useful_units, t.units));
    let f1 = if recall + precision > 0.0 {
        2.0 * recall * precision / (recall + precision)
    } else {
        0.0
    };
    Ok(Measured {
        recall,
        precision,
        f1,
        responses: t.responses,
        failed: errors.len(),
        errors,
        calls: judge.usage().calls,
        replayed: judge.usage().replayed,
        recorder,
        tally: t,
    })
}
