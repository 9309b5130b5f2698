//! A person's verdicts across a recording: carried over when a recording
//! is written anew, and set or removed by `cargo ragaliq review`.
//!
//! An exchange that decides a verdict may hold, beside the judge's reading,
//! the verdict a reviewer gave on each of its items (the `reviewed:`
//! entries, [`Reviewed`], read in `reviewed_entry.rs`). Their key is what
//! was judged ([`judged`](crate::judged)), not part of the fingerprint, so
//! adding a verdict never makes a recording stale.
//!
//! When a recording is written anew (record mode, new exchanges in auto
//! mode, another model or prompt version), every person's verdict whose
//! key some exchange of the new recording judges is carried over to it;
//! the others are dropped, and the writer says which and why
//! ([`DroppedReview`]).

use super::recording::{Exchange, Recording};
use super::reviewed_entry::Reviewed;
use super::{RecordingError, snapfile};
use crate::core::judged::{self, Judged};
use crate::run;
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

/// A person's verdict a new recording no longer holds: no exchange of it
/// judges what the verdict was given on.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DroppedReview {
    /// The verdict dropped.
    pub reviewed: Reviewed,
    /// The task of the exchange it was on.
    pub task: String,
    /// What it was given on, readably (`claim "You get all your money
    /// back"`).
    pub what: String,
    /// Why it no longer applies (`the passages it was judged against
    /// changed`).
    pub why: String,
}

impl fmt::Display for DroppedReview {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on {} (key {}): {}",
            self.reviewed.verdict, self.what, self.reviewed.key, self.why
        )
    }
}

/// The main field of what a family judges: the text a verdict is about.
fn subject_field(family: &str) -> &'static str {
    match family {
        "claim" => "claim",
        "passage" => "passages",
        _ => "response",
    }
}

/// What `j` judged, readably: `claim "…"`, `answer "…"`, `passage "…"`.
pub(crate) fn describe(j: &Judged) -> String {
    let field = subject_field(&j.family);
    let text = match j.what.get(field) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(a)) => a
            .first()
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    };
    let noun = match j.family.as_str() {
        "claim" => "claim".to_owned(),
        "answer" => "answer".to_owned(),
        "passage" => "passage".to_owned(),
        other => format!("{other} of the answer"),
    };
    if text.is_empty() {
        noun
    } else {
        format!("{noun} {}", super::fields::quote(&text, 70))
    }
}

/// Why nothing in `now` judges `was` any more: what changed about it.
fn why_dropped(was: &Judged, now: &[Judged]) -> String {
    let field = subject_field(&was.family);
    let same_family: Vec<&Judged> = now.iter().filter(|j| j.family == was.family).collect();
    let fields = |j: &Judged| -> Vec<String> {
        let (Some(a), Some(b)) = (was.what.as_object(), j.what.as_object()) else {
            return Vec::new();
        };
        let mut names: BTreeSet<&String> = a.keys().collect();
        names.extend(b.keys());
        names
            .into_iter()
            .filter(|k| a.get(*k) != b.get(*k))
            .cloned()
            .collect()
    };
    let against = |names: &[String]| -> String {
        let named: Vec<String> = names
            .iter()
            .map(|n| match n.as_str() {
                "passages" => "the passages".to_owned(),
                "query" => "the question".to_owned(),
                "expected" => "the expected answer".to_owned(),
                "criteria" => "the criteria".to_owned(),
                "response" => "the answer".to_owned(),
                other => format!("`{other}`"),
            })
            .collect();
        named.join(" and ")
    };
    // The same claim (answer, passage) judged against something else now.
    if let Some(other) = same_family
        .iter()
        .find(|j| j.what.get(field).is_some() && j.what.get(field) == was.what.get(field))
    {
        let changed = fields(other);
        return format!("{} it was judged against changed", against(&changed));
    }
    // Against the same things, but the claim itself is no longer asked.
    let context_same = same_family.iter().any(|j| {
        let changed = fields(j);
        changed.len() == 1 && changed[0] == field
    });
    let thing = match was.family.as_str() {
        "claim" => "claim",
        "passage" => "passage",
        _ => "answer",
    };
    if context_same {
        format!("the {thing} changed: no exchange judges this {thing} any more")
    } else {
        format!(
            "no exchange judges this {thing} any more (it changed, or its test no longer asks about it)"
        )
    }
}

/// Carries the person's verdicts of `base` (the recording on disk) over to
/// `merged` (the one about to be written): a verdict stays on an exchange
/// that kept it; one whose exchange was asked afresh or went goes to the
/// first exchange of `merged` that judges the same key; the rest are
/// dropped, and returned with why.
pub(crate) fn carry_over(base: &Recording, merged: &mut Recording) -> Vec<DroppedReview> {
    let judged: Vec<Vec<Judged>> = merged.exchanges.iter().map(Exchange::judged).collect();
    let mut present: BTreeSet<String> = merged
        .exchanges
        .iter()
        .flat_map(|e| e.reviewed.iter().map(|r| r.key.clone()))
        .collect();
    let everything: Vec<Judged> = judged.iter().flatten().cloned().collect();
    let mut dropped = Vec::new();
    for e in &base.exchanges {
        for r in &e.reviewed {
            if present.contains(&r.key) {
                continue;
            }
            let target = judged
                .iter()
                .enumerate()
                .find_map(|(i, items)| items.iter().find(|j| j.key == r.key).map(|j| (i, j.item)));
            match target {
                Some((i, item)) => {
                    merged.exchanges[i]
                        .reviewed
                        .push(Reviewed { item, ..r.clone() });
                    merged.exchanges[i].reviewed.sort_by_key(|r| r.item);
                    present.insert(r.key.clone());
                }
                None => {
                    let was = e.judged().into_iter().find(|j| j.key == r.key);
                    let (what, why) = match &was {
                        Some(was) => (describe(was), why_dropped(was, &everything)),
                        None => (
                            format!("item {} of a `{}` exchange", r.item, e.task),
                            "no exchange judges it any more".to_owned(),
                        ),
                    };
                    dropped.push(DroppedReview {
                        reviewed: r.clone(),
                        task: e.task.clone(),
                        what,
                        why,
                    });
                    present.insert(r.key.clone());
                }
            }
        }
    }
    dropped
}

/// The person's verdicts `accepted` holds that `pending` no longer does,
/// with why: what `cargo ragaliq review` lists for a pending recording.
#[must_use]
pub fn dropped_between(accepted: &Recording, pending: &Recording) -> Vec<DroppedReview> {
    let mut copy = pending.clone();
    carry_over(accepted, &mut copy)
}

/// Changes the recording at `path` (a `.snap` or `.snap.new`) with `f`,
/// under the recording's lock, and writes it back atomically with its
/// insta header and its line ends (CRLF stays CRLF), unless `f` changed
/// nothing; `f`'s result is returned. The exchanges, their order and
/// their fingerprints are as they were: only what `f` changes changes.
pub fn update<R>(path: &Path, f: impl FnOnce(&mut Recording) -> R) -> Result<R, RecordingError> {
    let corrupt = |problem: String| RecordingError::Corrupt {
        path: path.to_owned(),
        problem,
    };
    // The lock of the accepted file: a test writing its pending twin takes
    // the same one.
    let lock_path = path
        .to_str()
        .and_then(|p| p.strip_suffix(".new"))
        .map_or_else(|| path.to_path_buf(), std::path::PathBuf::from);
    let _guard = run::lock::exclusive(&lock_path).map_err(|e| RecordingError::Lock {
        path: path.to_owned(),
        problem: e.to_string(),
    })?;
    let raw = std::fs::read_to_string(path).map_err(|e| corrupt(e.to_string()))?;
    let Some(mut recording) = snapfile::load(path)? else {
        return Err(corrupt("there is no such recording".into()));
    };
    let before = recording.clone();
    let result = f(&mut recording);
    // Nothing changed, nothing written: a file is rewritten only for what
    // `f` changed in it (a format-1 file is not converted on the way).
    if recording == before {
        return Ok(result);
    }
    let text = snapfile::rewritten(&raw, &recording.to_yaml());
    run::write_atomic(path, text.as_bytes()).map_err(|e| corrupt(e.to_string()))?;
    Ok(result)
}

/// Sets a person's verdict on what `key` names in `recording`: on the
/// first exchange that judges it (any other verdict on the same key is
/// removed, so one key has one verdict). Returns the verdict it replaced,
/// or `Err` when no exchange judges `key`, or `verdict` is not a word the
/// item takes.
pub fn set_verdict(
    recording: &mut Recording,
    key: &str,
    verdict: &str,
    by: Option<String>,
    note: Option<String>,
) -> Result<Option<Reviewed>, String> {
    let verdict = verdict.trim().to_lowercase();
    let target = recording.exchanges.iter().enumerate().find_map(|(i, e)| {
        e.judged()
            .into_iter()
            .find(|j| j.key == key)
            .map(|j| (i, j.item))
    });
    let Some((i, item)) = target else {
        return Err(format!("no exchange of this recording judges key {key}"));
    };
    let task = recording.exchanges[i].task.clone();
    if let Some(words) = judged::verdict_words(&task)
        && !words.contains(&verdict.as_str())
    {
        return Err(format!(
            "`{verdict}` is not a verdict for a `{task}` item: it takes {}",
            words.join(", ")
        ));
    }
    if verdict.is_empty() {
        return Err("an empty verdict".into());
    }
    let before = remove_verdict(recording, key);
    let e = &mut recording.exchanges[i];
    e.reviewed
        .push(Reviewed::new(item, verdict, key).by(by).note(note));
    e.reviewed.sort_by_key(|r| r.item);
    Ok(before)
}

/// Marks the person's verdict on `key` in `recording` as given blind, or
/// not ([`Reviewed::blind`]); false when there is no verdict on `key`.
pub fn mark_blind(recording: &mut Recording, key: &str, blind: bool) -> bool {
    let mut found = false;
    for r in recording
        .exchanges
        .iter_mut()
        .flat_map(|e| e.reviewed.iter_mut())
        .filter(|r| r.key == key)
    {
        r.blind = blind;
        found = true;
    }
    found
}

/// Removes every person's verdict on `key` from `recording`; returns the
/// first one removed.
pub fn remove_verdict(recording: &mut Recording, key: &str) -> Option<Reviewed> {
    let mut first = None;
    for e in &mut recording.exchanges {
        e.reviewed.retain(|r| {
            if r.key == key {
                first.get_or_insert_with(|| r.clone());
                false
            } else {
                true
            }
        });
    }
    first
}

#[cfg(test)]
mod tests {
    use super::super::recording::parse_yaml;
    use super::*;
    use crate::core::{JsonMode, JudgeResponse, ResponseFormat, test_request};
    use serde_json::json;

    fn exchange(task: &str, fp: char, asked: serde_json::Value, model: &str) -> Exchange {
        let mut req = test_request(model, ResponseFormat::Text);
        req.task = task.into();
        req.subject = asked;
        Exchange::new(
            "p",
            fp.to_string().repeat(64),
            &req,
            &JudgeResponse::text("no"),
            JsonMode::Object,
            false,
        )
    }

    fn claim(fp: char, claim: &str, passages: &[&str], model: &str) -> Exchange {
        exchange(
            "claim_supported",
            fp,
            json!({"claim": claim, "passages": passages}),
            model,
        )
    }

    fn reviewed(e: &mut Exchange, verdict: &str) {
        let key = e.judged()[0].key.clone();
        e.reviewed.push(Reviewed::new(1, verdict, key));
    }

    const POLICY: [&str; 2] = ["A full refund.", "Free shipping."];

    #[test]
    fn a_verdict_survives_another_model_and_is_dropped_with_its_passage() {
        let mut old = claim('a', "All your money back.", &POLICY, "small");
        reviewed(&mut old, "supported");
        let base = Recording {
            exchanges: vec![old.clone()],
            pipeline: Vec::new(),
        };
        // Re-recorded with another model: another fingerprint, same claim
        // and passages.
        let mut merged = Recording {
            exchanges: vec![claim('b', "All your money back.", &POLICY, "large")],
            pipeline: Vec::new(),
        };
        assert!(carry_over(&base, &mut merged).is_empty());
        assert_eq!(merged.exchanges[0].reviewed, old.reviewed);

        // A passage changed: nothing judges that claim against those
        // passages any more.
        let mut merged = Recording {
            exchanges: vec![claim(
                'c',
                "All your money back.",
                &["A full refund within 30 days.", "Free shipping."],
                "small",
            )],
            pipeline: Vec::new(),
        };
        let dropped = carry_over(&base, &mut merged);
        assert!(merged.exchanges[0].reviewed.is_empty());
        assert_eq!(dropped.len(), 1);
        assert_eq!(
            dropped[0].to_string(),
            format!(
                "supported on claim \"All your money back.\" (key {}): the passages it was judged against changed",
                old.reviewed[0].key
            )
        );

        // The claim changed.
        let mut merged = Recording {
            exchanges: vec![claim('d', "Most of your money back.", &POLICY, "small")],
            pipeline: Vec::new(),
        };
        let dropped = carry_over(&base, &mut merged);
        assert_eq!(
            dropped[0].why,
            "the claim changed: no exchange judges this claim any more"
        );
    }

    #[test]
    fn a_verdict_kept_on_its_exchange_is_not_copied() {
        let mut old = claim('a', "X.", &POLICY, "m");
        reviewed(&mut old, "no_evidence");
        let contradicted = exchange(
            "claim_contradicted",
            'b',
            json!({"claim": "X.", "passages": POLICY}),
            "m",
        );
        let base = Recording {
            exchanges: vec![old.clone(), contradicted.clone()],
            pipeline: Vec::new(),
        };
        let mut merged = base.clone();
        assert!(carry_over(&base, &mut merged).is_empty());
        assert_eq!(merged, base, "nothing moved, nothing doubled");
        // Its exchange asked afresh (no verdict on it): the verdict goes to
        // the first exchange that judges its key.
        let mut merged = Recording {
            exchanges: vec![claim('a', "X.", &POLICY, "m"), contradicted],
            pipeline: Vec::new(),
        };
        carry_over(&base, &mut merged);
        assert_eq!(merged.exchanges[0].reviewed, old.reviewed);
        assert!(merged.exchanges[1].reviewed.is_empty());
    }

    #[test]
    fn verdicts_read_back_and_are_checked() {
        let mut e = claim('a', "X.", &POLICY, "m");
        reviewed(&mut e, "supported");
        e.reviewed[0].by = Some("ana".into());
        e.reviewed[0].note = Some("a full refund is all of it".into());
        let r = Recording {
            exchanges: vec![e],
            pipeline: Vec::new(),
        };
        let yaml = r.to_yaml();
        assert!(
            yaml.contains("reviewed:\n  - item: 1\n    verdict: supported\n    by: ana"),
            "{yaml}"
        );
        assert_eq!(parse_yaml(&yaml).unwrap(), r);
        // Without a key: the exchange's own.
        let no_key = yaml
            .lines()
            .filter(|l| !l.trim_start().starts_with("key:"))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(parse_yaml(&no_key).unwrap(), r);
        // Another word, another key, another item: refused, saying why.
        let bad = yaml.replace("verdict: supported", "verdict: true");
        let e = parse_yaml(&bad).unwrap_err();
        assert!(e.contains("a `claim_supported` item takes supported, partially_supported, no_evidence, contradicted"), "{e}");
        let key = &r.exchanges[0].reviewed[0].key;
        let e = parse_yaml(&yaml.replace(key.as_str(), "0123456789abcdef")).unwrap_err();
        assert!(e.contains("leave `key` out"), "{e}");
        let e = parse_yaml(&yaml.replace("- item: 1\n    verdict", "- item: 2\n    verdict"))
            .unwrap_err();
        assert!(e.contains("judges 1 item"), "{e}");
    }

    #[test]
    fn a_crlf_snap_keeps_its_insta_header_and_line_ends_when_a_verdict_is_written() {
        // A `.snap` checked out on Windows with `core.autocrlf`: every line
        // ends in CRLF, the header's fences included.
        let dir = std::env::temp_dir().join(format!("ragaliq-crlf-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t__crlf.snap");
        let r = Recording {
            exchanges: vec![claim('a', "X.", &POLICY, "m")],
            pipeline: Vec::new(),
        };
        let lf = snapfile::snap_text(&r.to_yaml(), "tests/t.rs", "a recording", None);
        std::fs::write(&path, lf.replace('\n', "\r\n")).unwrap();
        let key = r.exchanges[0].judged()[0].key.clone();
        update(&path, |r| set_verdict(r, &key, "supported", None, None))
            .unwrap()
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("---\r\nsource: tests/t.rs\r\n"),
            "the insta header is kept: {text}"
        );
        assert!(
            !text.replace("\r\n", "").contains('\n'),
            "every line still ends in CRLF: {text:?}"
        );
        let back = Recording::read(&path).unwrap().unwrap();
        assert_eq!(back.exchanges[0].reviewed[0].verdict, "supported");
        // insta reads the header back (`cargo insta review` needs it).
        let snap = insta::Snapshot::from_file(&path).unwrap();
        assert_eq!(snap.metadata().source(), Some("tests/t.rs"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_update_that_changes_nothing_writes_nothing() {
        let dir = std::env::temp_dir().join(format!("ragaliq-noop-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Format 1, which a write would convert.
        let path = dir.join("t__v1.snap");
        let v1 = "---\nsource: tests/t.rs\n---\n{\"ragaliq_recording\": 1, \"exchanges\": [{\"fingerprint\": \"ab\", \"task\": \"relevance\", \"provider\": \"p\", \"model\": \"m\", \"template\": \"relevance@1+system@1\", \"asked\": {\"query\": \"q\", \"response\": \"r\"}, \"answer\": {\"score\": 1.0, \"reasoning\": \"ok\"}, \"tokens\": {\"input\": 1, \"output\": 2}}]}\n";
        std::fs::write(&path, v1).unwrap();
        assert_eq!(update(&path, |r| remove_verdict(r, "0123")).unwrap(), None);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), v1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn set_verdict_keeps_one_verdict_per_key() {
        let mut r = Recording {
            exchanges: vec![
                claim('a', "X.", &POLICY, "m"),
                exchange(
                    "claim_contradicted",
                    'b',
                    json!({"claim": "X.", "passages": POLICY}),
                    "m",
                ),
            ],
            pipeline: Vec::new(),
        };
        let key = r.exchanges[0].judged()[0].key.clone();
        assert_eq!(set_verdict(&mut r, &key, "Supported", None, None), Ok(None));
        assert_eq!(r.exchanges[0].reviewed[0].verdict, "supported");
        let before = set_verdict(&mut r, &key, "contradicted", Some("bo".into()), None).unwrap();
        assert_eq!(before.unwrap().verdict, "supported");
        assert_eq!(
            r.exchanges.iter().map(|e| e.reviewed.len()).sum::<usize>(),
            1
        );
        assert!(
            set_verdict(&mut r, &key, "yes", None, None)
                .unwrap_err()
                .contains("takes supported")
        );
        assert!(set_verdict(&mut r, "nope", "supported", None, None).is_err());
        assert!(remove_verdict(&mut r, &key).is_some());
        assert!(r.exchanges.iter().all(|e| e.reviewed.is_empty()));
    }
}
