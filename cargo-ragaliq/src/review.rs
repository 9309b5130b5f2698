//! `cargo ragaliq review`: a person's verdicts on what the judge decided,
//! kept in the recordings (see `ragaliq::record` and `ragaliq::review`).
//!
//! With `--key KEY --verdict WORD` it sets one verdict and exits (what a
//! failing test prints). Otherwise it walks, one item at a time, the
//! verdict-deciding items of pending recordings (`.snap.new`) and the items
//! of accepted ones the judge decided against (a claim not supported, a
//! "no", a score under the threshold: what fails a test) or the found rule
//! decided with no call (no judge read them), that have no person's
//! verdict yet (`--all`: every item). Each verdict is one key and
//! Enter, written at once (atomically, under the recording's lock), so
//! quitting keeps what was given. Line-based on purpose: it needs no
//! terminal raw mode, so it runs the same over a pipe, in a test, or in
//! any terminal.

use crate::files;
use ragaliq::record::{self, Recording, Reviewed};
use ragaliq::review::{Item, Thresholds, deciding};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Recordings (.snap, .snap.new) or folders to search (default: the
    /// current folder).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Set the verdict on what KEY names (the key a failing test prints),
    /// without asking; with --verdict.
    #[arg(long, value_name = "KEY", requires = "verdict")]
    key: Option<String>,
    /// The verdict for --key: supported, partially_supported, no_evidence
    /// or contradicted for a claim, or not_a_claim for an item that states
    /// no fact (a greeting, a refusal: it leaves the score); yes or no for
    /// an answer, a passage or criteria; 1 to 5 for scored criteria; a
    /// metric's own word.
    #[arg(long, value_name = "WORD", requires = "key")]
    verdict: Option<String>,
    /// Remove the person's verdict on KEY (the judge's reading decides
    /// again).
    #[arg(long, value_name = "KEY", conflicts_with_all = ["key", "verdict"])]
    remove: Option<String>,
    /// Who gives the verdicts (kept as `by:`).
    #[arg(long, value_name = "NAME")]
    by: Option<String>,
    /// Why (kept as `note:`), with --key.
    #[arg(long, value_name = "TEXT", requires = "key")]
    note: Option<String>,
    /// Walk every verdict-deciding item: those the judge decided in the
    /// answer's favour, and those a person already gave a verdict on.
    #[arg(long)]
    all: bool,
    /// Hide the judge's reading while you give verdicts, so they are not
    /// anchored on it (for labels that calibrate the judge).
    #[arg(long)]
    blind: bool,
    /// Walk N items drawn at random among those the judge decided and no
    /// person has given a verdict on: verdicts that `calibrate --reviewed
    /// --fit` can read without the bias of reviewing only what failed
    /// (with --blind, not anchored on the judge's reading either).
    #[arg(long, value_name = "N", conflicts_with = "all")]
    sample: Option<usize>,
    /// The seed of --sample's draw: the same recordings and seed draw the
    /// same items.
    #[arg(long, value_name = "SEED", requires = "sample", default_value_t = 0)]
    seed: u64,
}

/// `items` in a random order drawn from `seed` (Fisher–Yates over
/// splitmix64: no dependency for one shuffle, and the same seed gives the
/// same order on every platform).
fn shuffled<T>(mut items: Vec<T>, seed: u64) -> Vec<T> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
    items
}

/// One recording to review: the file verdicts go into (the pending one
/// when there is one: it is what will be accepted), and its accepted twin.
struct Target {
    path: PathBuf,
    accepted: Option<PathBuf>,
}

fn targets(paths: &[PathBuf]) -> Vec<Target> {
    let roots = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let mut found = files::recordings(&roots);
    // A `.snap` named as such (the path a failing test prints): on a first
    // recording only its pending twin exists, and when both do the twin is
    // what will be accepted. Either way the twin is the one to review and
    // write into.
    for root in &roots {
        if root.extension().is_some_and(|e| e == "snap") {
            let twin = record::pending_path(root);
            if twin.is_file() && record::format_of(&twin).is_some() {
                found.push(twin);
            }
        }
    }
    found.sort();
    found.dedup();
    let mut out: BTreeMap<PathBuf, Target> = BTreeMap::new();
    for path in found {
        // `./tests/…` as `tests/…`: paths are shown and reported as typed.
        let path = path
            .strip_prefix(".")
            .map_or_else(|_| path.clone(), Path::to_path_buf);
        let name = path.to_string_lossy().into_owned();
        match name.strip_suffix(".new") {
            Some(accepted) => {
                let accepted = PathBuf::from(accepted);
                out.insert(
                    accepted.clone(),
                    Target {
                        path: path.clone(),
                        accepted: accepted.exists().then_some(accepted),
                    },
                );
            }
            None => {
                let pending = PathBuf::from(format!("{name}.new"));
                if !pending.exists() && !out.contains_key(&path) {
                    out.insert(
                        path.clone(),
                        Target {
                            path: path.clone(),
                            accepted: None,
                        },
                    );
                }
            }
        }
    }
    out.into_values().collect()
}

/// `path` as a person reads it: relative to the current folder, without
/// a leading `./`.
fn shown(path: &Path) -> String {
    let text = files::shown(path);
    text.strip_prefix("./").map(str::to_owned).unwrap_or(text)
}

/// The recording each review reads under `paths`: the pending one where
/// there is one (it is what will be accepted, and what review writes
/// into), else the accepted one.
pub fn reading_paths(paths: &[PathBuf]) -> Vec<PathBuf> {
    targets(paths).into_iter().map(|t| t.path).collect()
}

fn is_pending(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "new")
}

/// The thresholds of the judge the package of `path` configures (its
/// `ragaliq.toml`, or the file `RAGALIQ_CONFIG` names, and the `RAGALIQ_*`
/// variables, read as its tests read them). A configuration its tests
/// would refuse is refused here too, never read as the defaults: a status
/// or a walk at the defaults' bands and thresholds counts what the tests
/// decide as awaiting, and the reverse.
pub fn thresholds(
    path: &Path,
    cache: &mut BTreeMap<PathBuf, Result<Thresholds, String>>,
) -> Result<Thresholds, String> {
    let root = files::package_root(path).unwrap_or_default();
    cache
        .entry(root.clone())
        .or_insert_with(|| {
            ragaliq::Config::load_from(&root, &|name| std::env::var(name).ok())
                .and_then(|c| ragaliq::Judge::from_config(&c))
                .map(|j| Thresholds::of(&j))
                .map_err(|e| {
                    format!(
                        "the configuration of the package at {} (whose recordings include {}), as its tests read it: {e}",
                        if root.as_os_str().is_empty() {
                            ".".to_owned()
                        } else {
                            shown(&root)
                        },
                        shown(path)
                    )
                })
        })
        .clone()
}

/// `Ok(true)` when every verdict asked for was written.
pub fn run(args: Args) -> Result<bool, String> {
    let found = targets(&args.paths);
    if found.is_empty() {
        return Err(format!(
            "no ragaliq recording under {}",
            if args.paths.is_empty() {
                ".".to_owned()
            } else {
                args.paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    if let (Some(key), Some(verdict)) = (&args.key, &args.verdict) {
        return set_one(&found, key, verdict, &args);
    }
    if let Some(key) = &args.remove {
        return remove_one(&found, key);
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout();
    walk(&found, &args, &mut input, &mut out).map_err(|e| e.to_string())
}

/// Sets one verdict in every recording found that judges `key`.
fn set_one(found: &[Target], key: &str, verdict: &str, args: &Args) -> Result<bool, String> {
    let mut written = 0;
    let mut unreadable = Vec::new();
    for t in found {
        let recording = match Recording::read(&t.path) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("skipped: {e}");
                unreadable.push(shown(&t.path));
                continue;
            }
        };
        if !recording
            .exchanges
            .iter()
            .any(|e| e.judged().iter().any(|j| j.key == key))
        {
            continue;
        }
        // `--blind` says the verdict was given without the judge's reading
        // in view: kept, as the walk keeps it, so `calibrate --reviewed`
        // reads it apart.
        let before = record::update(&t.path, |r| {
            record::set_verdict(r, key, verdict, args.by.clone(), args.note.clone()).inspect(|_| {
                record::mark_blind(r, key, args.blind);
            })
        })
        .map_err(|e| e.to_string())??;
        written += 1;
        println!(
            "{}: {} → {} (a person's verdict on key {key}{})",
            shown(&t.path),
            before.map_or_else(
                || "the judge's reading".to_owned(),
                |b| format!("`{}`", b.verdict)
            ),
            verdict.trim().to_lowercase(),
            args.by
                .as_ref()
                .map_or_else(String::new, |b| format!(", by {b}"))
        );
    }
    if written == 0 {
        return Err(format!(
            "no recording under the paths given judges key {key} (a test prints the key of each item it failed on){}",
            unread(&unreadable)
        ));
    }
    println!(
        "replayed from now on (`CI=true cargo test`); review the change with `git diff`{}",
        if found.iter().any(|t| is_pending(&t.path)) {
            " or `cargo insta review`"
        } else {
            ""
        }
    );
    Ok(true)
}

/// Removes the person's verdict on `key` from the recordings that hold
/// one, and from no other: a recording without it is not rewritten, and
/// one that cannot be read is said and passed over.
fn remove_one(found: &[Target], key: &str) -> Result<bool, String> {
    let mut removed = 0;
    let mut unreadable = Vec::new();
    for t in found {
        let holds = match Recording::read(&t.path) {
            Ok(Some(r)) => r
                .exchanges
                .iter()
                .any(|e| e.reviewed.iter().any(|v| v.key == key)),
            Ok(None) => false,
            Err(e) => {
                eprintln!("skipped: {e}");
                unreadable.push(shown(&t.path));
                false
            }
        };
        if !holds {
            continue;
        }
        let gone = record::update(&t.path, |r| record::remove_verdict(r, key))
            .map_err(|e| e.to_string())?;
        if let Some(r) = gone {
            removed += 1;
            println!(
                "{}: removed the person's verdict `{}` on key {key}: the judge's reading decides again",
                shown(&t.path),
                r.verdict
            );
        }
    }
    if removed == 0 {
        return Err(format!(
            "no person's verdict on key {key} under the paths given{}",
            unread(&unreadable)
        ));
    }
    Ok(true)
}

/// The recordings that could not be read, for a message that found
/// nothing: what was looked for may be in one of them.
fn unread(paths: &[String]) -> String {
    if paths.is_empty() {
        String::new()
    } else {
        format!(
            " that could be read ({} could not: {})",
            paths.len(),
            paths.join(", ")
        )
    }
}

/// The keys for the verdicts an item takes: `(key, word)`.
fn choices(item: &Item) -> Vec<(String, String)> {
    match item.words {
        Some(words) if item.judged.family == "claim" => words
            .iter()
            .map(|w| {
                let key = match *w {
                    "supported" => "y",
                    "partially_supported" => "p",
                    "no_evidence" => "n",
                    ragaliq::judged::NOT_A_CLAIM => "x",
                    _ => "c",
                };
                (key.to_owned(), (*w).to_owned())
            })
            .collect(),
        Some(words) => words
            .iter()
            .map(|w| (w[..1].to_owned(), (*w).to_owned()))
            .collect(),
        None => Vec::new(),
    }
}

/// One step back: the key, each file its verdict went into with the
/// verdict it held before, and where the walk was.
struct Written {
    key: String,
    before: Vec<(PathBuf, Option<Reviewed>)>,
    at: usize,
}

/// Sets `word` (or, with `None`, removes the verdict) on `key` in `path`;
/// the verdict it held before.
fn write_verdict(
    path: &Path,
    key: &str,
    word: Option<&Reviewed>,
    blind: bool,
) -> Result<Option<Reviewed>, String> {
    let written = record::update(path, |r| match word {
        Some(v) => {
            record::set_verdict(r, key, &v.verdict, v.by.clone(), v.note.clone()).inspect(|_| {
                // Kept in the file, so calibration can tell verdicts given
                // without the judge's reading from those given beside it.
                record::mark_blind(r, key, blind);
            })
        }
        None => Ok(record::remove_verdict(r, key)),
    });
    match written {
        Ok(Ok(before)) => Ok(before),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// The interactive walk, reading one answer per line from `input`.
///
/// One item is one key: the same claim, answer or passage judged in
/// several recordings under the paths walked (a `#[rag_test]`'s and a
/// suite case's, or two tests asking the same) is asked once, and the
/// verdict goes into each of them, as `--key … --verdict …` does. Each
/// recording keeps its own copy, so that it stays whole on its own: CI
/// replays each file alone, each file's diff shows the verdict it gained,
/// and deleting one test's recording takes no verdict from another's.
fn walk(
    found: &[Target],
    args: &Args,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> std::io::Result<bool> {
    let mut cache = BTreeMap::new();
    // Every item to ask about, in file order, and every recording that
    // judges each key (asked about or not).
    let mut queue: Vec<(PathBuf, Item)> = Vec::new();
    let mut holders: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    // Each recording's pipeline calls: what the application under test
    // asked its own model and was answered, shown above the judge's first
    // verdict on that recording's answers.
    let mut calls: BTreeMap<PathBuf, Vec<record::Call>> = BTreeMap::new();
    for t in found {
        let recording = match Recording::read(&t.path) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                writeln!(out, "skipped: {e}")?;
                continue;
            }
        };
        if let Some(accepted) = &t.accepted
            && let Ok(Some(was)) = Recording::read(accepted)
        {
            for d in record::dropped_between(&was, &recording) {
                writeln!(
                    out,
                    "{}: a person's verdict the accepted recording holds is dropped from the pending one: {d}",
                    shown(&t.path)
                )?;
            }
        }
        if !recording.pipeline.is_empty() {
            calls.insert(t.path.clone(), recording.pipeline.clone());
        }
        let pending = is_pending(&t.path);
        let thresholds = thresholds(&t.path, &mut cache).map_err(std::io::Error::other)?;
        for item in deciding(&recording, &thresholds) {
            holders
                .entry(item.judged.key.clone())
                .or_default()
                .push(t.path.clone());
            // A rule's decision (no judge read it) is walked until a person
            // has given a verdict on it, as what a judge decided against is.
            let wanted = if args.sample.is_some() {
                // Decided by the judge, with no person's verdict yet.
                !item.awaits() && item.person.is_none()
            } else {
                args.all
                    || item.awaits()
                    || (item.person.is_none()
                        && (pending || item.judged_against() || item.judge.rule.is_some()))
            };
            if wanted {
                queue.push((t.path.clone(), item));
            }
        }
    }
    // One key, one question: the first place it is asked about stands for
    // every recording that judges it.
    let mut seen = std::collections::BTreeSet::new();
    queue.retain(|(_, item)| seen.insert(item.judged.key.clone()));
    if let Some(n) = args.sample {
        let of = queue.len();
        queue = shuffled(queue, args.seed);
        queue.truncate(n);
        writeln!(
            out,
            "a random sample (seed {}): {} of the {of} items the judge decided that no person has given a verdict on",
            args.seed,
            queue.len()
        )?;
    } else {
        // What awaits a person first: those verdicts decide tests that
        // fail until they are given. The sort is stable, so each group
        // keeps the files' order.
        queue.sort_by_key(|(_, item)| !item.awaits());
    }
    if queue.is_empty() {
        let pending = found.iter().filter(|t| is_pending(&t.path)).count();
        if pending > 0 && args.sample.is_none() {
            // Said apart: "no pending recording" would send a person
            // looking for one that is there.
            writeln!(
                out,
                "nothing to review: every item of the {} has a person's verdict already, and no item of an accepted one awaits one (--all walks every item); `cargo insta review` shows what changed in {}",
                if pending == 1 {
                    "pending recording".to_owned()
                } else {
                    format!("{pending} pending recordings")
                },
                if pending == 1 { "it" } else { "them" },
            )?;
            return Ok(true);
        }
        writeln!(
            out,
            "nothing to review: no pending recording, and no item the judge decided against or the found rule decided is without a person's verdict (--all walks every item)"
        )?;
        return Ok(true);
    }
    writeln!(
        out,
        "{} to review in {} recording{}; for each, one key and Enter: s skip, u undo, q quit{}",
        if queue.len() == 1 {
            "1 item".to_owned()
        } else {
            format!("{} items", queue.len())
        },
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        if args.blind {
            " (blind: the judge's reading is hidden)"
        } else {
            ""
        }
    )?;
    let mut history: Vec<Written> = Vec::new();
    let mut at = 0;
    let mut given = 0usize;
    while at < queue.len() {
        let (path, item) = &queue[at];
        if let Some(app) = calls.remove(path) {
            show_pipeline(out, path, &app)?;
        }
        let into: Vec<PathBuf> = holders
            .get(&item.judged.key)
            .cloned()
            .unwrap_or_else(|| vec![path.clone()]);
        show(out, path, item, at, queue.len(), args.blind)?;
        let others: Vec<String> = into
            .iter()
            .filter(|p| *p != path)
            .map(|p| shown(p))
            .collect();
        if !others.is_empty() {
            writeln!(
                out,
                "the same item is judged in {} (your verdict goes into each)",
                others.join(", ")
            )?;
        }
        let options = choices(item);
        let listed: Vec<String> = options
            .iter()
            .map(|(k, w)| format!("{k} {w}"))
            .chain(if options.is_empty() {
                vec!["type the metric's answer word".to_owned()]
            } else {
                Vec::new()
            })
            .collect();
        write!(
            out,
            "your verdict [{}; s skip, u undo, q quit]: ",
            listed.join(", ")
        )?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(out)?;
            break;
        }
        let answer = line.trim().to_lowercase();
        match answer.as_str() {
            "" => continue,
            "q" => break,
            "s" => {
                at += 1;
                continue;
            }
            "u" => {
                let Some(last) = history.pop() else {
                    writeln!(out, "nothing to undo")?;
                    continue;
                };
                let mut undone = Vec::new();
                for (file, before) in &last.before {
                    match write_verdict(
                        file,
                        &last.key,
                        before.as_ref(),
                        before.as_ref().is_some_and(|b| b.blind),
                    ) {
                        Ok(_) => undone.push(shown(file)),
                        Err(e) => writeln!(out, "cannot undo in {}: {e}", shown(file))?,
                    }
                }
                if !undone.is_empty() {
                    given = given.saturating_sub(1);
                    writeln!(out, "undone: key {} in {}", last.key, undone.join(", "))?;
                    at = last.at;
                }
                continue;
            }
            _ => {}
        }
        let word = options
            .iter()
            .find(|(k, w)| *k == answer || *w == answer)
            .map(|(_, w)| w.clone())
            .or_else(|| options.is_empty().then(|| answer.clone()));
        let Some(word) = word else {
            writeln!(out, "`{answer}` is not one of the keys")?;
            continue;
        };
        let key = item.judged.key.clone();
        let mut verdict = Reviewed::new(item.judged.item, word.clone(), key.clone());
        verdict.by.clone_from(&args.by);
        verdict.blind = args.blind;
        let mut before = Vec::new();
        let mut failed = Vec::new();
        for file in &into {
            match write_verdict(file, &key, Some(&verdict), args.blind) {
                Ok(was) => before.push((file.clone(), was)),
                Err(e) => failed.push(format!("{} ({e})", shown(file))),
            }
        }
        for f in &failed {
            writeln!(out, "not written: {f}")?;
        }
        if !before.is_empty() {
            let files: Vec<String> = before.iter().map(|(p, _)| shown(p)).collect();
            writeln!(out, "written: {word} (key {key}) in {}", files.join(", "))?;
            history.push(Written { key, before, at });
            given += 1;
            at += 1;
        }
    }
    writeln!(
        out,
        "{given} verdict{} written{}",
        if given == 1 { "" } else { "s" },
        if given > 0 {
            "; replayed from now on (`CI=true cargo test`): review the change with `git diff`, and commit the recordings"
        } else {
            ""
        }
    )?;
    Ok(true)
}

/// What the judge said of an item, kept apart from what a threshold made
/// of it: `wrote "Yes", P(yes) 0.56 → no at the threshold 0.70`. The
/// judge's word is what it wrote; the verdict after the arrow is ragaliq's
/// reading of its probability.
fn judge_said(item: &Item) -> String {
    let j = &item.judge;
    let mut parts: Vec<String> = Vec::new();
    if let Some(w) = &j.written {
        parts.push(format!("wrote {w:?}"));
    }
    if let Some(p) = j.probability {
        parts.push(format!(
            "{} {p:.2}",
            match item.judged.family.as_str() {
                "claim" => "P(supported)",
                "criteria_score" => "score",
                _ => "P(yes)",
            }
        ));
    }
    if let Some(q) = j.contradiction {
        parts.push(format!("P(contradicted) {q:.2}"));
    }
    let mut said = parts.join(", ");
    match (&j.verdict, j.threshold) {
        (Some(v), Some(t)) => said.push_str(&format!(" → {v} at the threshold {t:.2}")),
        (Some(v), None) if j.written.as_deref() != Some(v.as_str()) => {
            if said.is_empty() {
                said.push_str(v);
            } else {
                said.push_str(&format!(" → {v}"));
            }
        }
        (Some(_), None) => {}
        (None, _) if said.is_empty() => said.push_str("(not read)"),
        (None, _) => {}
    }
    said
}

/// One item, as a reviewer reads it.
/// What the pipeline under test asked its own model and was answered, as
/// the recording keeps it: each call's API, model and parameters, its
/// messages (or prompt, or input) by role, and the answer.
fn show_pipeline(out: &mut impl Write, path: &Path, calls: &[record::Call]) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "── {}: what the pipeline under test asked its model, and was answered ({} call{}; the judge's verdicts on its answer follow)",
        shown(path),
        calls.len(),
        if calls.len() == 1 { "" } else { "s" }
    )?;
    for call in calls {
        let body = call.body();
        let params: Vec<String> = body
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| {
                        !matches!(
                            k.as_str(),
                            "model" | "messages" | "system" | "prompt" | "input"
                        )
                    })
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect()
            })
            .unwrap_or_default();
        writeln!(
            out,
            "{} · model {}{}{}",
            call.api,
            if call.model.is_empty() {
                "(none)"
            } else {
                &call.model
            },
            if params.is_empty() {
                String::new()
            } else {
                format!(" · {}", params.join(", "))
            },
            if call.occurrence > 1 {
                format!(" · asked for the {} time", ordinal(call.occurrence))
            } else {
                String::new()
            }
        )?;
        let indented = |label: &str, text: &str| -> String {
            // Under the text: past "  ", the label and ": ".
            let pad = " ".repeat(label.chars().count() + 4);
            let mut lines = text.lines();
            let first = lines.next().unwrap_or_default();
            let mut s = format!("  {label}: {first}");
            for l in lines {
                s.push('\n');
                if !l.is_empty() {
                    s.push_str(&pad);
                    s.push_str(l);
                }
            }
            s
        };
        let text = |v: &serde_json::Value| -> String {
            match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(parts) => parts
                    .iter()
                    .map(|p| {
                        p.get("text")
                            .and_then(serde_json::Value::as_str)
                            .map_or_else(|| p.to_string(), str::to_owned)
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                other => other.to_string(),
            }
        };
        if let Some(system) = body.get("system") {
            writeln!(out, "{}", indented("system", &text(system)))?;
        }
        for m in body
            .get("messages")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            let role = m
                .get("role")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("?");
            let content = m.get("content").map(text).unwrap_or_default();
            writeln!(out, "{}", indented(role, &content))?;
        }
        for key in ["prompt", "input"] {
            if let Some(v) = body.get(key) {
                writeln!(out, "{}", indented(key, &text(v)))?;
            }
        }
        writeln!(out, "{}", indented("answered", &call.answer))?;
    }
    Ok(())
}

/// `2nd`, `3rd`, `4th`, … .
fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn show(
    out: &mut impl Write,
    path: &Path,
    item: &Item,
    at: usize,
    of: usize,
    blind: bool,
) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "── {} [{}/{of}]{}{} key {}",
        shown(path),
        at + 1,
        if is_pending(path) { " (pending)" } else { "" },
        if item.awaits() {
            " AWAITING A PERSON (the judge is unsure)"
        } else {
            ""
        },
        item.judged.key
    )?;
    let family = item.judged.family.as_str();
    if let Some(turn) = item.turn {
        match &item.conversation {
            Some(c) => writeln!(out, "conversation `{c}`, turn {turn}")?,
            None => writeln!(out, "turn {turn}")?,
        }
    }
    let history = item.history();
    if !history.is_empty() {
        writeln!(
            out,
            "the conversation before it, as the judge was shown it:"
        )?;
        for (user, assistant) in &history {
            writeln!(out, "  User: {user}")?;
            writeln!(out, "  Assistant: {assistant}")?;
        }
    }
    if let Some(query) = item.field("query") {
        writeln!(out, "question: {query}")?;
    }
    match family {
        "claim" => {
            writeln!(out, "claim: \"{}\"", item.subject())?;
            let passages = item.passages();
            let closest = ragaliq::evidence::closest_sentence(&item.subject(), &passages);
            writeln!(out, "judged against:")?;
            for (i, p) in passages.iter().enumerate() {
                let text = match &closest {
                    Some(f) if f.passage == i => format!(
                        "{}»{}«{}",
                        &p[..f.span.start],
                        &p[f.span.clone()],
                        &p[f.span.end..]
                    ),
                    _ => p.clone(),
                };
                writeln!(out, "  [{}] {text}", i + 1)?;
            }
            if closest.is_some() {
                writeln!(
                    out,
                    "  (»…« the sentence closest to the claim, found by ragaliq)"
                )?;
            }
        }
        "passage" => {
            if let Some(e) = item.field("expected") {
                writeln!(out, "expected answer: {e}")?;
            }
            writeln!(out, "passage: {}", item.subject())?;
            writeln!(out, "does it help answer the question?")?;
        }
        _ => {
            if let Some(c) = item.field("criteria") {
                writeln!(out, "criteria: {c}")?;
            }
            for p in item.passages() {
                writeln!(out, "  passage: {p}")?;
            }
            if let Some(e) = item.field("expected") {
                writeln!(out, "expected answer: {e}")?;
            }
            let answer = item.subject();
            if !answer.is_empty() {
                writeln!(out, "answer: {answer}")?;
            }
            match family {
                "answer" => writeln!(out, "does it answer the question?")?,
                "criteria_met" => writeln!(out, "does it meet the criteria?")?,
                "answer_correct" => writeln!(
                    out,
                    "does it give the expected answer, without contradicting it?"
                )?,
                "criteria_score" => writeln!(out, "how well does it meet the criteria, 1 to 5?")?,
                "passages_answer" => {
                    writeln!(out, "do the passages contain the answer to the question?")?
                }
                "declines_to_answer" => writeln!(
                    out,
                    "does it say it cannot answer the question, instead of answering?"
                )?,
                "contradicts_earlier" => writeln!(
                    out,
                    "does it contradict what the assistant said earlier? (yes is the failure)"
                )?,
                "ignores_user" => writeln!(
                    out,
                    "does it ask again for, or contradict, what the user said earlier? (yes is the failure)"
                )?,
                other => writeln!(out, "({other})")?,
            }
        }
    }
    if blind {
        writeln!(out, "the judge: (hidden)")?;
    } else if let Some(found) = &item.judge.rule {
        writeln!(
            out,
            "the found rule (no judge asked): correct, with no call: the expected answer stands in it, {found}, with nothing against it"
        )?;
    } else {
        writeln!(out, "the judge ({}): {}", item.model, judge_said(item))?;
        for r in &item.judge.read {
            writeln!(out, "  {r}")?;
        }
    }
    if let Some(p) = &item.person {
        writeln!(
            out,
            "a person's verdict now: {}{}",
            p.verdict,
            p.by.as_ref()
                .map_or_else(String::new, |b| format!(" (by {b})"))
        )?;
    }
    Ok(())
}
