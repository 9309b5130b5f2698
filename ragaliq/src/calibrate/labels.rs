//! Loading labelled items: YAML, JSON, JSONL and CSV, every error with its
//! file and line, as for suite case files.
//!
//! Three kinds of item, one kind per folder:
//!
//! - **A claim** — `id`, `area`, `passages` (a list), `claim`, `label`
//!   (`supported`, `partially_supported`, `no_evidence`, `contradicted`,
//!   or `not_supported` when the person said only that: such a claim
//!   counts in the supported / not figures only) and an optional `note` on
//!   why the label holds — or a group of claims about the same passages:
//!   `area`, `passages` and `claims`, a list of `id`, `claim`, `label` and
//!   `note`. In CSV, one claim per row with the columns `id`, `area`,
//!   `passages` (a JSON array or `|`-separated), `claim`, `label` and
//!   `note`.
//! - **An answer** (answer relevance) — `id`, `area`, `query`, `response`,
//!   `label` (`relevant`: it answers the question, true or not;
//!   `partial`: it answers part of it; `irrelevant`) and `note`. Partial
//!   counts as not relevant in the agreement figures.
//! - **A passage** (context precision) — `id`, `area`, `query`, `passage`,
//!   `label` (`relevant`: it helps answer the question; `not_relevant`),
//!   and `note`.
//! - **A graded answer** (answer correctness) — `id`, `area`, `query`,
//!   `reference` (the expected answer), `response`, `label` (`correct`;
//!   `partial`: right in part, or with a wrong detail; `incorrect`) and
//!   `note`. Partial counts as not correct in the agreement figures.
//! - **A judged response** (criteria) — `id`, `area`, `criteria` (the rule
//!   in plain words), `query`, optional `passages`, `response`, `label`
//!   (`meets` or `fails`) and `note`.

use crate::core::Verdict;
use crate::data_files::LoadError;
use crate::data_files::{self, Located, collect_files};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a labelled item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ItemKind {
    /// A claim checked against passages.
    Claim,
    /// A response to a query (answer relevance).
    Answer,
    /// A passage retrieved for a query (context precision).
    Passage,
    /// A response graded against a reference answer (answer correctness).
    Graded,
    /// A response judged against criteria in plain words.
    Judged,
}

impl ItemKind {
    /// The kind of reading whose band decides these items.
    #[must_use]
    pub fn band_kind(self) -> crate::core::Kind {
        use crate::core::Kind;
        match self {
            ItemKind::Claim => Kind::Claims,
            ItemKind::Answer => Kind::Answers,
            ItemKind::Passage => Kind::Passages,
            ItemKind::Graded => Kind::Graded,
            ItemKind::Judged => Kind::Judged,
        }
    }

    /// `claims`, `answers`, `passages`, `graded answers`, `judged
    /// responses`: what a report counts.
    #[must_use]
    pub fn plural(self) -> &'static str {
        match self {
            ItemKind::Claim => "claims",
            ItemKind::Answer => "answers",
            ItemKind::Passage => "passages",
            ItemKind::Graded => "graded answers",
            ItemKind::Judged => "judged responses",
        }
    }

    /// The kind's one-word name, as `--fit` writes it in a judge file's
    /// `[fitted]` keys (`claims_kappa`, `graded_kappa`).
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            ItemKind::Claim => "claims",
            ItemKind::Answer => "answers",
            ItemKind::Passage => "passages",
            ItemKind::Graded => "graded",
            ItemKind::Judged => "judged",
        }
    }
}

/// A person's label of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// A claim's verdict.
    Verdict(Verdict),
    /// A claim the person called not supported, without saying how.
    NotSupported,
    /// An answer that answers the question, or a passage that helps to.
    Relevant,
    /// An answer that answers part of the question.
    Partial,
    /// An answer that does not answer the question.
    Irrelevant,
    /// A passage that does not help answer the question.
    NotRelevant,
    /// A graded answer that is correct.
    Correct,
    /// A graded answer right in part (or with a wrong detail).
    PartlyCorrect,
    /// A graded answer that is wrong.
    Incorrect,
    /// A response that meets the criteria.
    Meets,
    /// A response that fails the criteria.
    Fails,
}

impl Label {
    /// The label as written in the files.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Label::Verdict(v) => v.label(),
            Label::NotSupported => "not_supported",
            Label::Relevant => "relevant",
            Label::Partial => "partial",
            Label::Irrelevant => "irrelevant",
            Label::NotRelevant => "not_relevant",
            Label::Correct => "correct",
            Label::PartlyCorrect => "partial",
            Label::Incorrect => "incorrect",
            Label::Meets => "meets",
            Label::Fails => "fails",
        }
    }

    /// Supported, relevant, correct or meets: the positive side of the
    /// two-way figures.
    #[must_use]
    pub fn positive(self) -> bool {
        matches!(
            self,
            Label::Verdict(Verdict::Supported) | Label::Relevant | Label::Correct | Label::Meets
        )
    }

    /// The person's verdict, for a claim labelled with one of the four.
    #[must_use]
    pub fn verdict(self) -> Option<Verdict> {
        match self {
            Label::Verdict(v) => Some(v),
            _ => None,
        }
    }
}

/// An item with the label a person gave it: a claim (or, in the relevance
/// sets, an answer or a passage; see the module).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LabelledClaim {
    /// Unique across the folder.
    pub id: String,
    /// What the item is.
    pub kind: ItemKind,
    /// The subject area, for the per-area breakdown.
    pub area: String,
    /// The question, for an answer, a passage, a graded answer or a
    /// judged response.
    pub query: Option<String>,
    /// The reference answer, for a graded answer.
    pub reference: Option<String>,
    /// The criteria, for a judged response.
    pub criteria: Option<String>,
    /// What a claim is checked against; for a passage, the passage.
    pub passages: Vec<String>,
    /// The claim; for an answer, the response; for a passage, the passage.
    pub claim: String,
    /// The person's label.
    pub label: Label,
    /// Why the label holds, for the reviewer of a disagreement.
    pub note: Option<String>,
    /// The file it came from.
    pub file: PathBuf,
    /// Its line in that file (1-based).
    pub line: usize,
    /// Its file labels claims supported / not supported only (it uses
    /// `not_supported`): its `supported` is not one of four verdicts, so it
    /// counts in the two-way figures only.
    pub two_way: bool,
}

impl LabelledClaim {
    /// The person's verdict, where it is one of four: never in a two-way
    /// file, whose `supported` is only "not `not_supported`".
    #[must_use]
    pub fn four_way_verdict(&self) -> Option<Verdict> {
        self.label.verdict().filter(|_| !self.two_way)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Item {
    id: Option<String>,
    area: Option<String>,
    #[serde(default)]
    passages: Vec<String>,
    claim: Option<String>,
    label: Option<String>,
    note: Option<String>,
    claims: Option<Vec<GroupClaim>>,
    query: Option<String>,
    response: Option<String>,
    passage: Option<String>,
    reference: Option<String>,
    criteria: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupClaim {
    id: String,
    claim: String,
    label: String,
    note: Option<String>,
}

/// Every labelled claim under `dir` (recursively, in path order;
/// `snapshots` folders skipped), ids unique across the folder.
///
/// # Errors
///
/// The first file that cannot be read or holds an invalid item, with its
/// line; a duplicate id names both places.
pub fn load_dir(dir: &Path) -> Result<Vec<LabelledClaim>, LoadError> {
    let mut files = Vec::new();
    collect_files(dir, &mut files).map_err(|e| LoadError {
        file: dir.to_owned(),
        line: None,
        column: None,
        message: format!("cannot read the labelled-claims folder: {e}"),
        also: None,
    })?;
    files.sort();
    let mut all: Vec<LabelledClaim> = Vec::new();
    let mut kind: Option<(ItemKind, PathBuf, usize)> = None;
    let mut seen: BTreeMap<String, (PathBuf, usize)> = BTreeMap::new();
    for file in files {
        for claim in load_file(&file)? {
            if let Some((first_file, first_line)) = seen.get(&claim.id) {
                return Err(LoadError {
                    file: claim.file.clone(),
                    line: Some(claim.line),
                    column: None,
                    message: format!(
                        "duplicate claim id `{}`: ids name the claims in reports and recordings, so they must be unique across the folder",
                        claim.id
                    ),
                    also: Some((first_file.clone(), *first_line)),
                });
            }
            seen.insert(claim.id.clone(), (claim.file.clone(), claim.line));
            match &kind {
                None => kind = Some((claim.kind, claim.file.clone(), claim.line)),
                Some((k, first_file, first_line)) if *k != claim.kind => {
                    return Err(LoadError {
                        file: claim.file.clone(),
                        line: Some(claim.line),
                        column: None,
                        message: format!(
                            "`{}` is one of the labelled {}, but the folder's first item is one of the labelled {}: one kind per folder",
                            claim.id,
                            claim.kind.plural(),
                            k.plural()
                        ),
                        also: Some((first_file.clone(), *first_line)),
                    });
                }
                Some(_) => {}
            }
            all.push(claim);
        }
    }
    if all.is_empty() {
        return Err(LoadError {
            file: dir.to_owned(),
            line: None,
            column: None,
            message: "no labelled claims: expected .yaml, .yml, .json, .jsonl or .csv files".into(),
            also: None,
        });
    }
    Ok(all)
}

/// The labelled claims of one file, by its extension.
///
/// # Errors
///
/// The file cannot be read, is malformed, or holds an invalid item.
pub fn load_file(file: &Path) -> Result<Vec<LabelledClaim>, LoadError> {
    let err = |line: Option<usize>, column: Option<usize>, message: String| LoadError {
        file: file.to_owned(),
        line,
        column,
        message,
        also: None,
    };
    let text =
        std::fs::read_to_string(file).map_err(|e| err(None, None, format!("cannot read: {e}")))?;
    let items: Vec<(Item, usize)> = match file.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => data_files::yaml(&text, "item"),
        Some("json") => data_files::json(
            &text,
            "a JSON array of labelled claims or groups",
            "a labelled claim or group",
        ),
        Some("jsonl") => data_files::jsonl(&text, "one labelled claim or group per line"),
        Some("csv") => csv_items(&text),
        _ => Err((
            None,
            None,
            "not a labelled-claims file; expected .yaml, .yml, .json, .jsonl or .csv".into(),
        )),
    }
    .map_err(|(l, c, m)| err(l, c, m))?;
    let mut out = Vec::new();
    for (item, line) in items {
        to_claims(item, line, &text, file, &mut out)?;
    }
    let two_way = out.iter().any(|c| c.label == Label::NotSupported);
    for c in &mut out {
        c.two_way = two_way;
    }
    Ok(out)
}

fn to_claims(
    item: Item,
    line: usize,
    text: &str,
    file: &Path,
    out: &mut Vec<LabelledClaim>,
) -> Result<(), LoadError> {
    let err = |line: usize, message: String| LoadError {
        file: file.to_owned(),
        line: Some(line),
        column: None,
        message,
        also: None,
    };
    if item.reference.is_some() || item.criteria.is_some() {
        return to_graded_or_judged(item, line, file, out);
    }
    if item.response.is_some() || item.passage.is_some() {
        return to_relevance(item, line, file, out);
    }
    let area = item
        .area
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty())
        .ok_or_else(|| {
            err(
                line,
                "missing `area` (the subject the claims are about)".into(),
            )
        })?;
    let passages: Vec<String> = item
        .passages
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .collect();
    let claims: Vec<(GroupClaim, usize)> = match item.claims {
        Some(group) => {
            if item.id.is_some() || item.claim.is_some() || item.label.is_some() {
                return Err(err(
                    line,
                    "an item holds either `claims` (a group about the same passages) or one `id`, `claim` and `label`, not both".into(),
                ));
            }
            if group.is_empty() {
                return Err(err(line, "`claims` is empty".into()));
            }
            group
                .into_iter()
                .map(|c| {
                    let at = line_of(text, line, &c.id);
                    (c, at)
                })
                .collect()
        }
        None => {
            let missing: Vec<&str> = [
                ("id", item.id.is_none()),
                ("claim", item.claim.is_none()),
                ("label", item.label.is_none()),
            ]
            .into_iter()
            .filter_map(|(name, missing)| missing.then_some(name))
            .collect();
            if !missing.is_empty() {
                return Err(err(
                    line,
                    format!(
                        "missing `{}`: an item is one claim (`id`, `area`, `passages`, `claim`, `label`, `note`) or a group (`area`, `passages`, `claims`)",
                        missing.join("`, `")
                    ),
                ));
            }
            vec![(
                GroupClaim {
                    id: item.id.unwrap_or_default(),
                    claim: item.claim.unwrap_or_default(),
                    label: item.label.unwrap_or_default(),
                    note: item.note,
                },
                line,
            )]
        }
    };
    for (c, at) in claims {
        let id = c.id.trim().to_owned();
        if id.is_empty()
            || !id
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.'))
        {
            return Err(err(
                at,
                format!(
                    "claim id `{id}` must be non-empty and made of letters, digits, `_`, `-` and `.`"
                ),
            ));
        }
        if c.claim.trim().is_empty() {
            return Err(err(at, format!("claim `{id}`: the claim is empty")));
        }
        if passages.is_empty() {
            return Err(err(
                at,
                format!(
                    "claim `{id}`: no passages; a claim is labelled against the passages it is checked with"
                ),
            ));
        }
        let label = parse_label(&c.label)
            .ok_or_else(|| err(at, format!("claim `{id}`: label `{}` is not a verdict; expected supported, partially_supported, no_evidence, contradicted (or not_supported)", c.label.trim())))?;
        out.push(LabelledClaim {
            id,
            kind: ItemKind::Claim,
            area: area.clone(),
            query: None,
            reference: None,
            criteria: None,
            passages: passages.clone(),
            claim: c.claim.trim().to_owned(),
            label,
            note: c
                .note
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty()),
            file: file.to_owned(),
            line: at,
            two_way: false,
        });
    }
    Ok(())
}

/// A person's label of a claim: the four verdicts spelled exactly (a
/// judge's reply is read leniently; a label is data the team controls), or
/// `not_supported`.
fn parse_label(label: &str) -> Option<Label> {
    if label.trim() == "not_supported" {
        return Some(Label::NotSupported);
    }
    [
        Verdict::Supported,
        Verdict::PartiallySupported,
        Verdict::NoEvidence,
        Verdict::Contradicted,
    ]
    .into_iter()
    .find(|v| v.label() == label.trim())
    .map(Label::Verdict)
}

/// An answer (`query`, `response`) or a passage (`query`, `passage`).
fn to_relevance(
    item: Item,
    line: usize,
    file: &Path,
    out: &mut Vec<LabelledClaim>,
) -> Result<(), LoadError> {
    let err = |message: String| LoadError {
        file: file.to_owned(),
        line: Some(line),
        column: None,
        message,
        also: None,
    };
    let (kind, text, labels): (ItemKind, _, &[(&str, Label)]) = match (item.response, item.passage)
    {
        (Some(r), None) => (
            ItemKind::Answer,
            r,
            &[
                ("relevant", Label::Relevant),
                ("partial", Label::Partial),
                ("irrelevant", Label::Irrelevant),
            ],
        ),
        (None, Some(p)) => (
            ItemKind::Passage,
            p,
            &[
                ("relevant", Label::Relevant),
                ("not_relevant", Label::NotRelevant),
            ],
        ),
        _ => {
            return Err(err(
                "an item holds a `response` (an answer) or a `passage`, not both".into(),
            ));
        }
    };
    if item.claim.is_some() || item.claims.is_some() || !item.passages.is_empty() {
        return Err(err(format!(
            "an {} item holds `id`, `area`, `query`, `{}`, `label` and `note`, not claims or a passages list",
            if kind == ItemKind::Answer {
                "answer"
            } else {
                "passage"
            },
            if kind == ItemKind::Answer {
                "response"
            } else {
                "passage"
            }
        )));
    }
    let id = item.id.unwrap_or_default().trim().to_owned();
    if id.is_empty()
        || !id
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.'))
    {
        return Err(err(format!(
            "id `{id}` must be non-empty and made of letters, digits, `_`, `-` and `.`"
        )));
    }
    let query = item
        .query
        .map(|q| q.trim().to_owned())
        .filter(|q| !q.is_empty())
        .ok_or_else(|| err(format!("`{id}`: missing `query`")))?;
    let area = item
        .area
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty())
        .ok_or_else(|| err(format!("`{id}`: missing `area`")))?;
    if text.trim().is_empty() {
        return Err(err(format!("`{id}`: the text is empty")));
    }
    let written = item.label.unwrap_or_default();
    let label = labels
        .iter()
        .find(|(name, _)| *name == written.trim())
        .map(|(_, l)| *l)
        .ok_or_else(|| {
            err(format!(
                "`{id}`: label `{}` is not one of {}",
                written.trim(),
                labels
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    out.push(LabelledClaim {
        id,
        kind,
        area,
        query: Some(query),
        reference: None,
        criteria: None,
        passages: if kind == ItemKind::Passage {
            vec![text.trim().to_owned()]
        } else {
            Vec::new()
        },
        claim: text.trim().to_owned(),
        label,
        note: item
            .note
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty()),
        file: file.to_owned(),
        line,
        two_way: false,
    });
    Ok(())
}

/// A graded answer (`reference`, `response`) or a judged response
/// (`criteria`, `response`, optional `passages`).
fn to_graded_or_judged(
    item: Item,
    line: usize,
    file: &Path,
    out: &mut Vec<LabelledClaim>,
) -> Result<(), LoadError> {
    let err = |message: String| LoadError {
        file: file.to_owned(),
        line: Some(line),
        column: None,
        message,
        also: None,
    };
    let (kind, labels): (ItemKind, &[(&str, Label)]) = match (&item.reference, &item.criteria) {
        (Some(_), None) => (
            ItemKind::Graded,
            &[
                ("correct", Label::Correct),
                ("partial", Label::PartlyCorrect),
                ("incorrect", Label::Incorrect),
            ],
        ),
        (None, Some(_)) => (
            ItemKind::Judged,
            &[("meets", Label::Meets), ("fails", Label::Fails)],
        ),
        _ => {
            return Err(err(
                "an item holds a `reference` (a graded answer) or `criteria` (a judged response), not both".into(),
            ));
        }
    };
    if item.claim.is_some() || item.claims.is_some() || item.passage.is_some() {
        return Err(err(
            "a graded answer or judged response holds `response`, not `claim`, `claims` or `passage`".into(),
        ));
    }
    if kind == ItemKind::Graded && !item.passages.is_empty() {
        return Err(err(
            "a graded answer is graded against its `reference`, not passages".into(),
        ));
    }
    let id = item.id.unwrap_or_default().trim().to_owned();
    if id.is_empty()
        || !id
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.'))
    {
        return Err(err(format!(
            "id `{id}` must be non-empty and made of letters, digits, `_`, `-` and `.`"
        )));
    }
    let area = item
        .area
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty())
        .ok_or_else(|| err(format!("`{id}`: missing `area`")))?;
    let response = item
        .response
        .map(|r| r.trim().to_owned())
        .ok_or_else(|| err(format!("`{id}`: missing `response`")))?;
    let text_of = |v: Option<String>, what: &str| {
        v.map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| err(format!("`{id}`: `{what}` is empty")))
    };
    let (reference, criteria) = match kind {
        ItemKind::Graded => (Some(text_of(item.reference, "reference")?), None),
        _ => (None, Some(text_of(item.criteria, "criteria")?)),
    };
    let written = item.label.unwrap_or_default();
    let label = labels
        .iter()
        .find(|(name, _)| *name == written.trim())
        .map(|(_, l)| *l)
        .ok_or_else(|| {
            err(format!(
                "`{id}`: label `{}` is not one of {}",
                written.trim(),
                labels
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    out.push(LabelledClaim {
        id,
        kind,
        area,
        query: Some(item.query.unwrap_or_default().trim().to_owned()),
        reference,
        criteria,
        passages: item
            .passages
            .into_iter()
            .filter(|p| !p.trim().is_empty())
            .collect(),
        claim: response,
        label,
        note: item
            .note
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty()),
        file: file.to_owned(),
        line,
        two_way: false,
    });
    Ok(())
}

/// The line where `id` first appears at or after `from` (a group's claims
/// are located by their ids).
fn line_of(text: &str, from: usize, id: &str) -> usize {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, l)| l.contains(id))
        .map_or(from, |(i, _)| i + 1)
}

const COLUMNS: [&str; 6] = ["id", "area", "passages", "claim", "label", "note"];

fn csv_items(text: &str) -> Located<Vec<(Item, usize)>> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| (Some(1), None, format!("unreadable CSV header: {e}")))?
        .clone();
    if let Some(h) = headers.iter().find(|h| !COLUMNS.contains(h)) {
        return Err((
            Some(1),
            None,
            format!("unknown column `{h}`; expected {}", COLUMNS.join(", ")),
        ));
    }
    let mut out = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize);
            (line, None, format!("malformed CSV row: {e}"))
        })?;
        let line = row.position().map_or(0, |p| p.line() as usize);
        let cell = |name: &str| -> Option<String> {
            headers
                .iter()
                .position(|h| h == name)
                .and_then(|i| row.get(i))
                .map(str::to_owned)
                .filter(|c| !c.is_empty())
        };
        let passages =
            data_files::list_cell(&cell("passages").unwrap_or_default(), "passages", line)?;
        out.push((
            Item {
                id: cell("id"),
                area: cell("area"),
                passages,
                claim: cell("claim"),
                label: cell("label"),
                note: cell("note"),
                claims: None,
                query: None,
                reference: None,
                criteria: None,
                response: None,
                passage: None,
            },
            line,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, text: &str) -> Result<Vec<LabelledClaim>, LoadError> {
        let dir =
            std::env::temp_dir().join(format!("ragaliq-labels-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let out = load_file(&file);
        std::fs::remove_dir_all(&dir).unwrap();
        out
    }

    #[test]
    fn every_format_gives_the_same_claims() {
        let yaml = "- area: refunds\n  passages:\n    - Refunds take 30 days.\n  claims:\n    - id: r1\n      claim: Refunds take 30 days.\n      label: supported\n      note: said word for word\n    - id: r2\n      claim: Refunds take 60 days.\n      label: contradicted\n";
        let json = r#"[{"area": "refunds", "passages": ["Refunds take 30 days."], "claims": [
  {"id": "r1", "claim": "Refunds take 30 days.", "label": "supported", "note": "said word for word"},
  {"id": "r2", "claim": "Refunds take 60 days.", "label": "contradicted"}]}]"#;
        let jsonl = "{\"id\": \"r1\", \"area\": \"refunds\", \"passages\": [\"Refunds take 30 days.\"], \"claim\": \"Refunds take 30 days.\", \"label\": \"supported\", \"note\": \"said word for word\"}\n{\"id\": \"r2\", \"area\": \"refunds\", \"passages\": [\"Refunds take 30 days.\"], \"claim\": \"Refunds take 60 days.\", \"label\": \"contradicted\"}\n";
        let csv = "id,area,passages,claim,label,note\nr1,refunds,Refunds take 30 days.,Refunds take 30 days.,supported,said word for word\nr2,refunds,Refunds take 30 days.,Refunds take 60 days.,contradicted,\n";
        let strip = |v: Vec<LabelledClaim>| -> Vec<(String, Label, Option<String>, Vec<String>)> {
            v.into_iter()
                .map(|c| (c.id, c.label, c.note, c.passages))
                .collect()
        };
        let expected = strip(load("a.yaml", yaml).unwrap());
        assert_eq!(expected.len(), 2);
        assert_eq!(strip(load("a.json", json).unwrap()), expected);
        assert_eq!(strip(load("a.jsonl", jsonl).unwrap()), expected);
        assert_eq!(strip(load("a.csv", csv).unwrap()), expected);
        let lines: Vec<usize> = load("a.yaml", yaml)
            .unwrap()
            .iter()
            .map(|c| c.line)
            .collect();
        assert_eq!(lines, [5, 9], "a group's claims are located by their ids");
    }

    #[test]
    fn errors_name_the_line_and_what_is_expected() {
        let bad_label = "- id: x\n  area: a\n  passages: [p]\n  claim: c\n  label: supportd\n";
        assert_eq!(
            load("b.yaml", bad_label)
                .unwrap_err()
                .to_string()
                .rsplit_once("b.yaml")
                .unwrap()
                .1,
            ":1: claim `x`: label `supportd` is not a verdict; expected supported, partially_supported, no_evidence, contradicted (or not_supported)"
        );
        let no_passages =
            "{\"id\": \"x\", \"area\": \"a\", \"claim\": \"c\", \"label\": \"supported\"}\n";
        assert!(
            load("c.jsonl", no_passages)
                .unwrap_err()
                .message
                .contains("no passages")
        );
        let both = "- id: x\n  area: a\n  passages: [p]\n  claims: [{id: y, claim: c, label: supported}]\n";
        assert!(
            load("d.yaml", both)
                .unwrap_err()
                .message
                .contains("not both")
        );
        let missing = "[{\"area\": \"a\", \"passages\": [\"p\"], \"claim\": \"c\"}]";
        assert_eq!(
            load("e.json", missing).unwrap_err().message,
            "missing `id`, `label`: an item is one claim (`id`, `area`, `passages`, `claim`, `label`, `note`) or a group (`area`, `passages`, `claims`)"
        );
        let unknown = "id,area,passage,claim,label\n";
        assert!(
            load("f.csv", unknown)
                .unwrap_err()
                .message
                .starts_with("unknown column `passage`")
        );
        // Labels are data: a judge's lenient spellings are not accepted.
        let lenient = "- id: x\n  area: a\n  passages: [p]\n  claim: c\n  label: Supported\n";
        assert!(load("g.yaml", lenient).is_err());
    }

    #[test]
    fn answers_passages_and_two_way_claims() {
        let answers = "{\"id\": \"a1\", \"area\": \"x\", \"query\": \"q?\", \"response\": \"r\", \"label\": \"partial\"}\n";
        let a = load("a.jsonl", answers).unwrap();
        assert_eq!((a[0].kind, a[0].label), (ItemKind::Answer, Label::Partial));
        assert!(!a[0].label.positive(), "partial counts as not relevant");
        let passages = "{\"id\": \"p1\", \"area\": \"x\", \"query\": \"q?\", \"passage\": \"text\", \"label\": \"relevant\"}\n";
        let p = load("p.jsonl", passages).unwrap();
        assert_eq!((p[0].kind, p[0].passages.len()), (ItemKind::Passage, 1));
        let bad = "{\"id\": \"p1\", \"area\": \"x\", \"query\": \"q?\", \"passage\": \"t\", \"label\": \"partial\"}\n";
        assert!(
            load("b.jsonl", bad)
                .unwrap_err()
                .message
                .contains("not one of relevant, not_relevant")
        );
        let two_way = "- id: b1\n  area: a\n  passages: [p]\n  claim: c\n  label: not_supported\n- id: b2\n  area: a\n  passages: [p]\n  claim: d\n  label: supported\n";
        let c = load("c.yaml", two_way).unwrap();
        assert_eq!(
            (c[0].label, c[0].label.verdict()),
            (Label::NotSupported, None)
        );
        // The file's `supported` is one of two labels, not of four.
        assert!(c.iter().all(|c| c.two_way));
        let four = "- id: f1\n  area: a\n  passages: [p]\n  claim: c\n  label: supported\n";
        assert!(!load("f.yaml", four).unwrap()[0].two_way);
    }
}
