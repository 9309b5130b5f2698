//! A person's verdict as an exchange of a recording holds it: the
//! `reviewed:` entries, read and checked against what the exchange judges.
//!
//! ```yaml
//! - task: claim_supported
//!   asked: {passages: [P1], claim: You get all your money back}
//!   reply: "no"
//!   ...
//!   reviewed:
//!   - item: 1
//!     verdict: supported
//!     by: ana
//!     note: all your money back is a full refund
//!     key: 5c1e0f0a3b7d9e21
//!   fingerprint: 157632b9…
//! ```
//!
//! The `key` is what was judged ([`judged`](crate::judged)): the claim and
//! its passages, never the exchange's position, model or prompt. Written by
//! hand, `key` may be left out: it is then the key of what the exchange
//! judges, and the next write fills it in; a `key` that is not the
//! exchange's (its claim or passages were edited) is an error.
//!
//! Below the recording format (`recording.rs` reads and writes these
//! entries with each exchange); what is done with them across recordings
//! (carried over, set by `cargo ragaliq review`) is in `reviewed.rs`.

use super::ordered::Ordered;
use crate::core::judged;
use serde::{Deserialize, Serialize};

/// A verdict a person gave on one item of an exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reviewed {
    /// The item (1 for a one-item question; the claim's number in a batch).
    pub item: usize,
    /// The verdict: one of the words [`judged::verdict_words`] gives for
    /// the exchange's task (`supported`, `yes`, `4`, a metric's own word).
    pub verdict: String,
    /// Who gave it.
    pub by: Option<String>,
    /// Why.
    pub note: Option<String>,
    /// What was judged ([`judged::key`]).
    pub key: String,
    /// Given blind: the judge's reading was hidden from the person
    /// (`cargo ragaliq review --blind`), so the verdict is not anchored on
    /// it. Agreement measured on blind verdicts only is the figure to trust.
    pub blind: bool,
}

impl Reviewed {
    /// A person's `verdict` on what `key` names, as item `item`.
    #[must_use]
    pub fn new(item: usize, verdict: impl Into<String>, key: impl Into<String>) -> Reviewed {
        Reviewed {
            item,
            verdict: verdict.into(),
            by: None,
            note: None,
            key: key.into(),
            blind: false,
        }
    }

    /// Who gave it.
    #[must_use]
    pub fn by(mut self, by: Option<String>) -> Reviewed {
        self.by = by.filter(|b| !b.trim().is_empty());
        self
    }

    /// Why.
    #[must_use]
    pub fn note(mut self, note: Option<String>) -> Reviewed {
        self.note = note.filter(|n| !n.trim().is_empty());
        self
    }
}

/// A person's verdict as written in the file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileReviewed {
    #[serde(default = "one")]
    item: usize,
    verdict: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    blind: bool,
}

fn one() -> usize {
    1
}

impl FileReviewed {
    pub(super) fn write(r: &Reviewed) -> FileReviewed {
        FileReviewed {
            item: r.item,
            verdict: r.verdict.clone(),
            by: r.by.clone(),
            note: r.note.clone(),
            key: Some(r.key.clone()),
            blind: r.blind,
        }
    }
}

/// The person's verdicts of exchange `n` (of `task`, having asked
/// `asked`), checked: each names an item the exchange judges, with one of
/// its task's words, under that item's key (filled in when left out).
pub(super) fn read_reviewed(
    task: &str,
    asked: &Ordered,
    written: Vec<FileReviewed>,
    n: usize,
) -> Result<Vec<Reviewed>, String> {
    if written.is_empty() {
        return Ok(Vec::new());
    }
    let items = judged::items(task, &asked.to_value());
    let mut out: Vec<Reviewed> = Vec::new();
    for r in written {
        let Some(it) = items.iter().find(|i| i.item == r.item) else {
            return Err(if items.is_empty() {
                format!(
                    "exchange {n}: a person's verdict on a `{task}` exchange, which decides no verdict"
                )
            } else {
                format!(
                    "exchange {n}: a person's verdict on item {}, but the exchange judges {} item{}",
                    r.item,
                    items.len(),
                    if items.len() == 1 { "" } else { "s" }
                )
            });
        };
        let verdict = r.verdict.trim().to_lowercase();
        if let Some(words) = judged::verdict_words(task)
            && !words.contains(&verdict.as_str())
        {
            return Err(format!(
                "exchange {n}: a person's verdict `{}` on item {}: a `{task}` item takes {}",
                r.verdict,
                r.item,
                words.join(", ")
            ));
        }
        if verdict.is_empty() {
            return Err(format!(
                "exchange {n}: an empty person's verdict on item {}",
                r.item
            ));
        }
        let key = match r.key {
            Some(key) if key != it.key => {
                return Err(format!(
                    "exchange {n}: the person's verdict on item {} has key {key}, but what the exchange judges has key {} (was its claim or a passage edited? leave `key` out to key the verdict to what the exchange judges now)",
                    r.item, it.key
                ));
            }
            _ => it.key.clone(),
        };
        if out.iter().any(|o| o.item == r.item) {
            return Err(format!(
                "exchange {n}: two verdicts given by people on item {}",
                r.item
            ));
        }
        out.push(Reviewed {
            item: r.item,
            verdict,
            by: r.by.filter(|b| !b.trim().is_empty()),
            note: r.note.filter(|b| !b.trim().is_empty()),
            key,
            blind: r.blind,
        });
    }
    Ok(out)
}
