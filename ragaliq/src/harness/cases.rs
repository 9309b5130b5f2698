//! Loading case files: YAML, JSON, JSONL and CSV, every error with its file
//! and line.
//!
//! Every format holds the same fields: `id`, `query`, `context` (a list),
//! `response`, `expected_answer`, `expected_facts` (a list), `tags` (a list),
//! the retrieval labels `retrieved_ids` (a list, best first),
//! `relevant_ids` (a list, or a map of IDs to grades) and
//! `relevant_passages` (a list, matched in the context by text),
//! `criteria` (a map of names to rules in plain words, each judged as its
//! own trial; a rule may be `{text: "…", form: scored, context: true,
//! expected: false}`, where `context` and `expected` show the judge the
//! passages and the expected answer, or not, whatever the rule's words say:
//! see [`Criteria::uses_context`](crate::Criteria::uses_context)),
//! `thresholds` (per metric) and `expect`; a follow-up's `answerable` and
//! `grounding` (see [`RagCase`]).
//!
//! A conversation is a case with `turns` instead of `query`: a list of
//! turns, each with its own `query`, `context`, `response`,
//! `expected_answer`, `expected_facts`, `retrieved_ids`, `relevant_ids`,
//! `relevant_passages` and `answerable`; `id`, `tags`, `grounding`,
//! `criteria`, `thresholds` and `expect` are the conversation's. Its
//! trials grade every turn, each read with the turns before it. In CSV, a
//! conversation is rows with a `conversation` cell (its id) and a `turn`
//! cell (1, 2, 3 …, once each), in any order; what the whole conversation
//! has (tags, grounding, criteria, thresholds, expect) is given on the row
//! of turn 1.
//!
//! In CSV, list cells are JSON arrays (`["a", "b"]`)
//! or `|`-separated, the `criteria` cell a JSON map, a graded
//! `relevant_ids` cell a JSON map (`{"policy-12": 3}`), thresholds are columns
//! named `threshold_<metric>`, and an empty `response` cell is a response
//! not given (an empty `retrieved_ids` cell, IDs not given; `[]`, a
//! retriever that returned nothing).
//!
//! `expect: fail` marks a bad answer that the metrics must catch: its trials
//! pass when the score is *below* the threshold, and fail when the answer
//! passes, when the judge cannot score it, or when it is undecided. Per
//! metric: `expect: {faithfulness: fail, relevance: pass}`; in CSV, `fail`
//! or the `|`-separated metrics that must fail. A bad answer says nothing
//! of the retriever: `expect: fail` leaves the retrieval trials expecting
//! to pass, and `expect: {retrieval: fail}` marks a bad retrieval.

use crate::core::Metric;
use crate::core::{Conversation, Grounding, RagCase, RelevantIds, Turn, deserialize_ids};
pub use crate::data_files::LoadError;

use crate::data_files::{self, Located, collect_files};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One case as loaded, with where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedCase {
    /// The case; for a conversation, its last turn read with the turns
    /// before it (its id, tags and texts).
    pub case: RagCase,
    /// A conversation (`turns:` in the file): its trials grade every turn.
    pub conversation: Option<Conversation>,
    /// Per-case thresholds, overriding the suite's.
    pub thresholds: BTreeMap<Metric, f64>,
    /// The metrics that must score the answer below their threshold.
    pub expect_fail: std::collections::BTreeSet<Metric>,
    /// The case's own criteria, each its own trial.
    pub criteria: Vec<crate::core::Criteria>,
    /// The file it came from.
    pub file: PathBuf,
    /// Its line in that file (1-based).
    pub line: usize,
}

impl LoadedCase {
    /// The case id (loaded cases always have one).
    #[must_use]
    pub fn id(&self) -> &str {
        self.case.id.as_deref().unwrap_or_default()
    }
}

/// The fields of a case in a file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    id: String,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    context: Vec<String>,
    #[serde(default)]
    response: Option<String>,
    #[serde(default)]
    expected_answer: Option<String>,
    #[serde(default)]
    expected_facts: Vec<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default, deserialize_with = "deserialize_ids")]
    retrieved_ids: Option<Vec<String>>,
    #[serde(default)]
    relevant_ids: RelevantIds,
    #[serde(default)]
    relevant_passages: Vec<String>,
    #[serde(default)]
    criteria: BTreeMap<String, RawCriteria>,
    #[serde(default)]
    thresholds: Thresholds,
    #[serde(default)]
    expect: Option<Expect>,
    /// A conversation: its turns, in order (then no `query`, `context`,
    /// `response` or labels of its own: each turn has them).
    #[serde(default)]
    turns: Option<Vec<Turn>>,
    #[serde(default)]
    grounding: Option<Grounding>,
    #[serde(default)]
    answerable: Option<bool>,
}

/// A rule in a case file: its text, or `{text, form}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawCriteria {
    Text(String),
    Full {
        text: String,
        #[serde(default)]
        form: Option<String>,
        #[serde(default)]
        context: Option<bool>,
        #[serde(default)]
        expected: Option<bool>,
    },
}

/// `expect: fail`, or `expect: {faithfulness: fail, …}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Expect {
    All(Outcome),
    Each(BTreeMap<String, Outcome>),
}

#[derive(Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Outcome {
    Pass,
    Fail,
}

impl Expect {
    fn failing(self) -> Result<std::collections::BTreeSet<Metric>, String> {
        match self {
            // A bad answer says nothing of the retriever.
            Expect::All(Outcome::Fail) => Ok(Metric::ALL
                .into_iter()
                .filter(|m| *m != Metric::Retrieval)
                .collect()),
            Expect::All(Outcome::Pass) => Ok(Default::default()),
            Expect::Each(map) => map
                .into_iter()
                .filter(|(_, o)| *o == Outcome::Fail)
                .map(|(m, _)| m.parse::<Metric>().map_err(|e| format!("expect: {e}")))
                .collect(),
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Thresholds {
    faithfulness: Option<f64>,
    hallucination: Option<f64>,
    relevance: Option<f64>,
    context_precision: Option<f64>,
    context_recall: Option<f64>,
    correctness: Option<f64>,
    criteria: Option<f64>,
    retrieval: Option<f64>,
    abstention: Option<f64>,
    consistency: Option<f64>,
    retention: Option<f64>,
}

impl Thresholds {
    fn is_empty(&self) -> bool {
        [
            self.faithfulness,
            self.hallucination,
            self.relevance,
            self.context_precision,
            self.context_recall,
            self.correctness,
            self.criteria,
            self.retrieval,
            self.abstention,
            self.consistency,
            self.retention,
        ]
        .iter()
        .all(Option::is_none)
    }

    fn into_map(self) -> BTreeMap<Metric, f64> {
        [
            (Metric::Faithfulness, self.faithfulness),
            (Metric::Hallucination, self.hallucination),
            (Metric::Relevance, self.relevance),
            (Metric::ContextPrecision, self.context_precision),
            (Metric::ContextRecall, self.context_recall),
            (Metric::Correctness, self.correctness),
            (Metric::Criteria, self.criteria),
            (Metric::Retrieval, self.retrieval),
            (Metric::Abstention, self.abstention),
            (Metric::Consistency, self.consistency),
            (Metric::Retention, self.retention),
        ]
        .into_iter()
        .filter_map(|(m, t)| t.map(|t| (m, t)))
        .collect()
    }
}

/// The case-file extensions read.
pub const EXTENSIONS: [&str; 5] = crate::data_files::EXTENSIONS;

/// Every case file under `dir` (recursively, in path order; `snapshots`
/// folders skipped), checked: ids present, well-formed and unique across the
/// folder, thresholds in [0, 1], cases valid.
pub fn load_dir(dir: &Path) -> Result<Vec<LoadedCase>, LoadError> {
    let mut files = Vec::new();
    collect_files(dir, &mut files).map_err(|e| LoadError {
        file: dir.to_owned(),
        line: None,
        column: None,
        message: format!("cannot read the case folder: {e}"),
        also: None,
    })?;
    files.sort();
    let mut all: Vec<LoadedCase> = Vec::new();
    let mut seen: BTreeMap<String, (PathBuf, usize)> = BTreeMap::new();
    for file in files {
        for case in load_file(&file)? {
            if let Some((first_file, first_line)) = seen.get(case.id()) {
                return Err(LoadError {
                    file: case.file.clone(),
                    line: Some(case.line),
                    column: None,
                    message: format!(
                        "duplicate case id `{}`: ids name the tests and recordings, so they must be unique across the folder",
                        case.id(),
                    ),
                    also: Some((first_file.clone(), *first_line)),
                });
            }
            seen.insert(case.id().to_owned(), (case.file.clone(), case.line));
            all.push(case);
        }
    }
    Ok(all)
}

/// The cases of one file, by its extension.
pub fn load_file(file: &Path) -> Result<Vec<LoadedCase>, LoadError> {
    let err = |line: Option<usize>, column: Option<usize>, message: String| LoadError {
        file: file.to_owned(),
        line,
        column,
        message,
        also: None,
    };
    let text =
        std::fs::read_to_string(file).map_err(|e| err(None, None, format!("cannot read: {e}")))?;
    let records: Vec<(Record, usize)> = match file.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => {
            data_files::yaml(&text, "case").map_err(|(l, c, m)| err(l, c, m))?
        }
        Some("json") => data_files::json(&text, "a JSON array of cases", "a case object")
            .map_err(|(l, c, m)| err(l, c, m))?,
        Some("jsonl") => data_files::jsonl(&text, "one case object per line")
            .map_err(|(l, c, m)| err(l, c, m))?,
        Some("csv") => csv_records(&text).map_err(|(l, c, m)| err(l, c, m))?,
        _ => {
            return Err(err(
                None,
                None,
                format!(
                    "not a case file; case files end in .{}",
                    EXTENSIONS.join(", .")
                ),
            ));
        }
    };
    records
        .into_iter()
        .map(|(record, line)| to_case(record, file, line))
        .collect()
}

/// A conversation's rows in a CSV file: its id, its place among the
/// file's cases, and each row's turn, line and record.
type ConversationRows = (String, usize, Vec<(usize, usize, Record)>);

fn csv_records(text: &str) -> Located<Vec<(Record, usize)>> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| (Some(1), None, format!("unreadable CSV header: {e}")))?
        .clone();
    let known = |h: &str| {
        matches!(
            h,
            "id" | "query"
                | "context"
                | "response"
                | "expected_answer"
                | "expected_facts"
                | "tags"
                | "retrieved_ids"
                | "relevant_ids"
                | "relevant_passages"
                | "criteria"
                | "expect"
                | "conversation"
                | "turn"
                | "answerable"
                | "grounding"
        ) || h
            .strip_prefix("threshold_")
            .is_some_and(|m| m.parse::<Metric>().is_ok())
    };
    if let Some(h) = headers.iter().find(|h| !known(h)) {
        return Err((
            Some(1),
            None,
            format!(
                "unknown column `{h}`; expected id, query, context, response, expected_answer, expected_facts, tags, retrieved_ids, relevant_ids, relevant_passages, criteria, expect, threshold_<metric>, or for conversations conversation, turn, answerable, grounding"
            ),
        ));
    }
    let conversations = headers.iter().any(|h| h == "conversation");
    for required in ["id", "query"] {
        // A conversation's rows are named by their `conversation` cell.
        let named = required == "id" && conversations;
        if !(named || headers.iter().any(|h| h == required)) {
            return Err((Some(1), None, format!("missing column `{required}`")));
        }
    }
    if conversations != headers.iter().any(|h| h == "turn") {
        return Err((
            Some(1),
            None,
            "a conversation's rows need both columns `conversation` (its id) and `turn` (1 for the first)".to_owned(),
        ));
    }
    // A single case's record, or a conversation's place (filled below).
    let mut out: Vec<Option<(Record, usize)>> = Vec::new();
    // A conversation's turns, by its id, in the order first met: its id,
    // its place in `out`, and each row's turn, line and record.
    let mut turns: Vec<ConversationRows> = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize);
            (line, None, format!("malformed CSV row: {e}"))
        })?;
        let line = row.position().map_or(0, |p| p.line() as usize);
        let cell = |name: &str| -> Option<&str> {
            headers
                .iter()
                .position(|h| h == name)
                .and_then(|i| row.get(i))
        };
        let text_cell = |name: &str| cell(name).unwrap_or_default().to_owned();
        let list = |name: &str| data_files::list_cell(cell(name).unwrap_or_default(), name, line);
        let mut thresholds = Thresholds::default();
        for metric in Metric::ALL {
            let column = format!("threshold_{}", metric.name());
            let Some(raw) = cell(&column).map(str::trim).filter(|r| !r.is_empty()) else {
                continue;
            };
            let t: f64 = raw.parse().map_err(|_| {
                (
                    Some(line),
                    None,
                    format!("column `{column}`: `{raw}` is not a number"),
                )
            })?;
            let slot = match metric {
                Metric::Faithfulness => &mut thresholds.faithfulness,
                Metric::Hallucination => &mut thresholds.hallucination,
                Metric::Relevance => &mut thresholds.relevance,
                Metric::ContextPrecision => &mut thresholds.context_precision,
                Metric::ContextRecall => &mut thresholds.context_recall,
                Metric::Correctness => &mut thresholds.correctness,
                Metric::Criteria => &mut thresholds.criteria,
                Metric::Retrieval => &mut thresholds.retrieval,
                Metric::Abstention => &mut thresholds.abstention,
                Metric::Consistency => &mut thresholds.consistency,
                Metric::Retention => &mut thresholds.retention,
                // A metric of one's own carries its threshold.
                _ => continue,
            };
            *slot = Some(t);
        }
        let expect = match cell("expect").map(str::trim).filter(|c| !c.is_empty()) {
            None => None,
            Some("fail") => Some(Expect::All(Outcome::Fail)),
            Some("pass") => Some(Expect::All(Outcome::Pass)),
            Some(list) => Some(Expect::Each(
                list.split('|')
                    .map(|m| (m.trim().to_owned(), Outcome::Fail))
                    .collect(),
            )),
        };
        let expected_answer = text_cell("expected_answer");
        let answerable = match cell("answerable").map(str::trim).unwrap_or_default() {
            "" => None,
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            other => {
                return Err((
                    Some(line),
                    None,
                    format!("column `answerable`: `{other}`; expected true or false"),
                ));
            }
        };
        let grounding = match cell("grounding").map(str::trim).unwrap_or_default() {
            "" => None,
            raw => {
                let mut g = Grounding::NONE;
                for part in raw.split('|').map(str::trim) {
                    match part {
                        "earlier_passages" => g.earlier_passages = true,
                        "user_messages" => g.user_messages = true,
                        other => {
                            return Err((
                                Some(line),
                                None,
                                format!(
                                    "column `grounding`: `{other}`; expected earlier_passages, user_messages, or both separated by `|`"
                                ),
                            ));
                        }
                    }
                }
                Some(g)
            }
        };
        let record = Record {
                id: text_cell("id"),
                query: Some(text_cell("query")),
                context: list("context")?,
                // An empty cell is a response not given (CSV cannot tell
                // an empty string from a missing one).
                response: cell("response")
                    .map(str::to_owned)
                    .filter(|r| !r.trim().is_empty()),
                expected_answer: (!expected_answer.is_empty()).then_some(expected_answer),
                expected_facts: list("expected_facts")?,
                tags: list("tags")?,
                // An empty cell gives no IDs; `[]`, a retriever that
                // returned nothing.
                retrieved_ids: match cell("retrieved_ids").map(str::trim) {
                    None | Some("") => None,
                    Some(_) => Some(list("retrieved_ids")?),
                },
                relevant_ids: match cell("relevant_ids").map(str::trim) {
                    Some(json) if json.starts_with('{') => {
                        serde_json::from_str(json).map_err(|e| {
                            (
                                Some(line),
                                None,
                                format!(
                                    "column `relevant_ids`: a JSON map of IDs to grades, a JSON array or `|`-separated IDs ({e})"
                                ),
                            )
                        })?
                    }
                    _ => RelevantIds::from_ids(list("relevant_ids")?),
                },
                relevant_passages: list("relevant_passages")?,
                criteria: match cell("criteria").map(str::trim).filter(|c| !c.is_empty()) {
                    None => BTreeMap::new(),
                    Some(json) => serde_json::from_str(json).map_err(|e| {
                        (
                            Some(line),
                            None,
                            format!("column `criteria`: a JSON map of names to rules ({e})"),
                        )
                    })?,
                },
                thresholds,
                expect,
                turns: None,
                grounding,
                answerable,
            };
        let conversation = cell("conversation").map(str::trim).unwrap_or_default();
        if conversation.is_empty() {
            out.push(Some((record, line)));
            continue;
        }
        let turn: usize = cell("turn")
            .map(str::trim)
            .unwrap_or_default()
            .parse()
            .ok()
            .filter(|t| *t >= 1)
            .ok_or_else(|| {
                (
                    Some(line),
                    None,
                    format!(
                        "column `turn`: `{}`; expected the turn's number in conversation `{conversation}` (1 for the first)",
                        cell("turn").unwrap_or_default()
                    ),
                )
            })?;
        match turns.iter_mut().find(|(c, _, _)| c == conversation) {
            Some((_, _, rows)) => rows.push((turn, line, record)),
            None => {
                turns.push((
                    conversation.to_owned(),
                    out.len(),
                    vec![(turn, line, record)],
                ));
                out.push(None);
            }
        }
    }
    for (id, at, mut rows) in turns {
        rows.sort_by_key(|(turn, _, _)| *turn);
        let first_line = rows.iter().map(|(_, l, _)| *l).min().unwrap_or(0);
        for (expected, (turn, line, _)) in rows.iter().enumerate() {
            if *turn != expected + 1 {
                return Err((
                    Some(*line),
                    None,
                    format!(
                        "conversation `{id}`: turn {turn} {}; its turns are numbered 1, 2, 3 … once each",
                        if *turn <= expected {
                            "is given twice"
                        } else {
                            "follows a missing turn"
                        }
                    ),
                ));
            }
        }
        let mut records = rows.into_iter();
        let Some((_, _, first)) = records.next() else {
            continue;
        };
        let mut conversation = Record {
            id: id.clone(),
            query: None,
            context: Vec::new(),
            response: None,
            expected_answer: None,
            expected_facts: Vec::new(),
            tags: first.tags.clone(),
            retrieved_ids: None,
            relevant_ids: RelevantIds::default(),
            relevant_passages: Vec::new(),
            criteria: first.criteria,
            thresholds: first.thresholds,
            expect: first.expect,
            turns: None,
            grounding: first.grounding,
            answerable: None,
        };
        let as_turn = |r: Record| {
            let mut t = Turn::new(r.query.unwrap_or_default());
            t.context = r.context;
            t.response = r.response;
            t.expected_answer = r.expected_answer;
            t.expected_facts = r.expected_facts;
            t.retrieved_ids = r.retrieved_ids;
            t.relevant_ids = r.relevant_ids;
            t.relevant_passages = r.relevant_passages;
            t.answerable = r.answerable;
            t
        };
        let first_turn = Record {
            criteria: BTreeMap::new(),
            thresholds: Thresholds::default(),
            expect: None,
            tags: Vec::new(),
            grounding: None,
            ..first
        };
        let mut all = vec![as_turn(first_turn)];
        for (turn, line, r) in records {
            let extra = [
                ("id", !r.id.trim().is_empty()),
                ("tags", !r.tags.is_empty()),
                ("criteria", !r.criteria.is_empty()),
                ("expect", r.expect.is_some()),
                ("grounding", r.grounding.is_some()),
                ("threshold_<metric>", !r.thresholds.is_empty()),
            ];
            if let Some((column, _)) = extra.iter().find(|(_, given)| *given) {
                return Err((
                    Some(line),
                    None,
                    format!(
                        "conversation `{id}`, turn {turn}: column `{column}` holds what the whole conversation has: give it on the row of turn 1"
                    ),
                ));
            }
            all.push(as_turn(r));
        }
        conversation.turns = Some(all);
        out[at] = Some((conversation, first_line));
    }
    Ok(out.into_iter().flatten().collect())
}

fn to_case(record: Record, file: &Path, line: usize) -> Result<LoadedCase, LoadError> {
    let err = |message: String| LoadError {
        file: file.to_owned(),
        line: Some(line),
        column: None,
        message,
        also: None,
    };
    let id = record.id.trim().to_owned();
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(err(format!(
            "case id `{id}` must be non-empty and made of letters, digits, `_`, `-` and `.` (it names the case's test and recording)"
        )));
    }
    let thresholds = record.thresholds.into_map();
    if let Some((metric, t)) = thresholds.iter().find(|(_, t)| !(0.0..=1.0).contains(*t)) {
        return Err(err(format!(
            "case `{id}`: threshold of {metric} is {t}; expected a number from 0 to 1"
        )));
    }
    let expect_fail = match record.expect {
        Some(e) => e.failing().map_err(|m| err(format!("case `{id}`: {m}")))?,
        None => Default::default(),
    };
    let mut criteria = Vec::new();
    for (name, raw) in record.criteria {
        let (text, form, context, expected) = match raw {
            RawCriteria::Text(text) => (text, None, None, None),
            RawCriteria::Full {
                text,
                form,
                context,
                expected,
            } => (text, form, context, expected),
        };
        if name.trim().is_empty() || text.trim().is_empty() {
            return Err(err(format!(
                "case `{id}`: criteria `{name}` needs a name and a rule in plain words"
            )));
        }
        let form = match form.as_deref() {
            None => crate::core::CriteriaForm::YesNo,
            Some(f) => crate::core::CriteriaForm::from_name(f).ok_or_else(|| {
                err(format!(
                    "case `{id}`: criteria `{name}`: form `{f}`; expected one of {}",
                    crate::core::CriteriaForm::NAMES
                ))
            })?,
        };
        let mut rule = crate::core::Criteria::new(text).named(name).with_form(form);
        if let Some(shown) = context {
            rule = rule.with_context(shown);
        }
        if let Some(shown) = expected {
            rule = rule.with_expected(shown);
        }
        criteria.push(rule);
    }
    let (case, conversation) = match (record.query, record.turns) {
        (Some(_), Some(_)) => {
            return Err(err(format!(
                "case `{id}` has both `query` and `turns`: a single question has a query, a conversation has turns (each with its own query)"
            )));
        }
        (None, None) => {
            return Err(err(format!(
                "case `{id}`: missing field `query` (a single question; or `turns`, for a conversation)"
            )));
        }
        (Some(query), None) => {
            let case = RagCase {
                id: Some(id.clone()),
                query,
                context: record.context,
                response: record.response,
                expected_answer: record.expected_answer,
                expected_facts: record.expected_facts,
                tags: record.tags,
                retrieved_ids: record.retrieved_ids,
                relevant_ids: record.relevant_ids,
                relevant_passages: record.relevant_passages,
                history: Vec::new(),
                answerable: record.answerable,
                grounding: record.grounding.unwrap_or_default(),
            };
            case.validate().map_err(|e| err(e.to_string()))?;
            (case, None)
        }
        (None, Some(turns)) => {
            let own = [
                ("context", !record.context.is_empty()),
                ("response", record.response.is_some()),
                ("expected_answer", record.expected_answer.is_some()),
                ("expected_facts", !record.expected_facts.is_empty()),
                ("retrieved_ids", record.retrieved_ids.is_some()),
                ("relevant_ids", !record.relevant_ids.is_empty()),
                ("relevant_passages", !record.relevant_passages.is_empty()),
                ("answerable", record.answerable.is_some()),
            ];
            if let Some((field, _)) = own.iter().find(|(_, given)| *given) {
                return Err(err(format!(
                    "case `{id}` is a conversation (it has `turns`): `{field}` belongs to a turn, not to the conversation"
                )));
            }
            let conversation = Conversation::new(turns)
                .id(id.clone())
                .tags(record.tags)
                .grounding(record.grounding.unwrap_or_default());
            conversation.validate().map_err(|e| err(e.to_string()))?;
            let last = conversation
                .case(conversation.turns.len())
                .map_err(|e| err(e.to_string()))?;
            (last, Some(conversation))
        }
    };
    Ok(LoadedCase {
        case,
        conversation,
        thresholds,
        expect_fail,
        criteria,
        file: file.to_owned(),
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ragaliq-cases-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn yaml_cases_with_lines() {
        let path = write(
            "ok.yaml",
            "- id: a\n  query: Q?\n  context: [P1, P2]\n  response: R.\n  thresholds:\n    faithfulness: 0.9\n- id: b\n  query: Q2?\n",
        );
        let cases = load_file(&path).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!((cases[0].line, cases[1].line), (1, 7));
        assert_eq!(cases[0].case.context, ["P1", "P2"]);
        assert_eq!(cases[0].thresholds[&Metric::Faithfulness], 0.9);
    }

    #[test]
    fn criteria_in_a_case_file_with_their_form_and_what_the_judge_is_shown() {
        let path = write(
            "criteria.yaml",
            "- id: a\n  query: Q?\n  response: R.\n  criteria:\n    no-promise: Never promises a refund\n    cites:\n      text: Cites the policy\n      form: scored\n      context: true\n      expected: false\n    figures: {text: Every figure is in the passages, context: false}\n",
        );
        let case = &load_file(&path).unwrap()[0];
        let by_name = |n: &str| {
            case.criteria
                .iter()
                .find(|c| c.name() == n)
                .unwrap_or_else(|| panic!("{n}: {:?}", case.criteria))
        };
        let plain = by_name("no-promise");
        assert_eq!(plain.text(), "Never promises a refund");
        assert!(!plain.uses_context() && !plain.uses_expected());
        let cites = by_name("cites");
        assert_eq!(cites.form(), crate::core::CriteriaForm::Scored);
        assert!(
            cites.uses_context(),
            "set, though the rule names no passage"
        );
        assert!(!cites.uses_expected());
        assert!(
            !by_name("figures").uses_context(),
            "set off, though the rule says \"passages\""
        );
        let csv = write(
            "criteria.csv",
            "id,query,response,criteria\nc,Q?,R.,\"{\"\"cites\"\": {\"\"text\"\": \"\"Cites the policy\"\", \"\"context\"\": true}}\"\n",
        );
        assert!(load_file(&csv).unwrap()[0].criteria[0].uses_context());
    }

    #[test]
    fn retrieval_labels_in_every_format() {
        let yaml = write(
            "retrieval.yaml",
            "- id: a\n  query: Q?\n  retrieved_ids: [d3, 12, d1]\n  relevant_ids: {d1: 2, d9: 0}\n  thresholds: {retrieval: 0.5}\n- id: b\n  query: Q?\n  context: [P1]\n  relevant_passages: [p1]\n- id: c\n  query: Q?\n  retrieved_ids: []\n  relevant_ids: [d1]\n",
        );
        let cases = load_file(&yaml).unwrap();
        assert_eq!(
            cases[0].case.retrieved_ids.as_deref(),
            Some(&["d3".to_owned(), "12".to_owned(), "d1".to_owned()][..])
        );
        assert_eq!(cases[0].case.relevant_ids.grade("d1"), Some(2.0));
        assert_eq!(cases[0].thresholds[&Metric::Retrieval], 0.5);
        assert_eq!(cases[1].case.relevant_passages, ["p1"]);
        assert_eq!(cases[2].case.retrieved_ids.as_deref(), Some(&[][..]));
        let csv = write(
            "retrieval.csv",
            "id,query,retrieved_ids,relevant_ids,threshold_retrieval\na,Q?,d3 | d1,\"{\"\"d1\"\": 3}\",0.4\nb,Q?,[],d1 | d2,\nc,Q?,,d1,\n",
        );
        let cases = load_file(&csv).unwrap();
        assert_eq!(cases[0].case.relevant_ids.grade("d1"), Some(3.0));
        assert_eq!(cases[0].thresholds[&Metric::Retrieval], 0.4);
        assert_eq!(
            cases[1].case.retrieved_ids.as_deref(),
            Some(&[][..]),
            "`[]`: nothing retrieved"
        );
        assert_eq!(cases[1].case.relevant_ids.len(), 2);
        assert_eq!(
            cases[2].case.retrieved_ids, None,
            "an empty cell: not given"
        );
        let twice = write(
            "twice.yaml",
            "- id: a\n  query: Q?\n  retrieved_ids: [d1]\n  relevant_ids: [d1, d1]\n",
        );
        let e = load_file(&twice).unwrap_err();
        assert!(
            e.to_string().contains("relevant ID `d1` is labelled twice"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_answer_expects_no_bad_retrieval() {
        let path = write(
            "expect.yaml",
            "- id: a\n  query: Q?\n  expect: fail\n- id: b\n  query: Q?\n  expect: {retrieval: fail}\n",
        );
        let cases = load_file(&path).unwrap();
        assert!(cases[0].expect_fail.contains(&Metric::Faithfulness));
        assert!(!cases[0].expect_fail.contains(&Metric::Retrieval));
        assert!(cases[1].expect_fail.contains(&Metric::Retrieval));
    }

    #[test]
    fn conversations_are_checked_where_they_are_written() {
        let both = write(
            "both.yaml",
            "- id: c\n  query: Q?\n  turns:\n  - query: Q1?\n",
        );
        let e = load_file(&both).unwrap_err().to_string();
        assert!(e.contains("has both `query` and `turns`"), "{e}");
        let neither = write("neither.yaml", "- id: c\n  response: R.\n");
        let e = load_file(&neither).unwrap_err().to_string();
        assert!(e.contains("missing field `query`"), "{e}");
        let misplaced = write(
            "misplaced.yaml",
            "- id: c\n  response: R.\n  turns:\n  - query: Q1?\n",
        );
        let e = load_file(&misplaced).unwrap_err().to_string();
        assert!(
            e.contains("`response` belongs to a turn, not to the conversation"),
            "{e}"
        );
        let unanswered = write(
            "unanswered.yaml",
            "- id: c\n  turns:\n  - query: Q1?\n  - query: Q2?\n    response: R2.\n",
        );
        let e = load_file(&unanswered).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(
            e.message
                .contains("turn 1 has no answer: turn 2 is read with it"),
            "{e}"
        );
        let twice = write(
            "twice.csv",
            "conversation,turn,query,response\nc,1,Q1?,R1.\nc,1,Q1 again?,R.\n",
        );
        let e = load_file(&twice).unwrap_err();
        assert!(e.message.contains("turn 1 is given twice"), "{e}");
        let gap = write(
            "gap.csv",
            "conversation,turn,query,response\nc,1,Q1?,R1.\nc,3,Q3?,R3.\n",
        );
        let e = load_file(&gap).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("turn 3 follows a missing turn"), "{e}");
        let tags_late = write(
            "late.csv",
            "conversation,turn,query,response,tags\nc,1,Q1?,R1.,\nc,2,Q2?,R2.,a\n",
        );
        let e = load_file(&tags_late).unwrap_err();
        assert!(e.message.contains("give it on the row of turn 1"), "{e}");
        let mixed = write(
            "mixed.csv",
            "id,conversation,turn,query,response,answerable\nsolo,,,Q?,R.,\n,c,1,Q1?,R1.,\n,c,2,Q2?,I don't know.,false\n",
        );
        let cases = load_file(&mixed).unwrap();
        assert_eq!(cases.len(), 2);
        assert!(cases[0].conversation.is_none());
        let c = cases[1].conversation.as_ref().unwrap();
        assert_eq!(c.turns[1].answerable, Some(false));
        assert_eq!(
            cases[1].case.query, "Q2?",
            "the last turn, read with the first"
        );
        assert_eq!(cases[1].case.history.len(), 1);
    }

    #[test]
    fn csv_lists_both_ways() {
        let path = write(
            "ok.csv",
            "id,query,context,response,tags,threshold_relevance\nc1,Q?,\"[\"\"P1\"\", \"\"P2, with comma\"\"]\",R.,a|b,0.5\nc2,Q2?,P1 | P2,R2.,,\n",
        );
        let cases = load_file(&path).unwrap();
        assert_eq!(cases[0].case.context, ["P1", "P2, with comma"]);
        assert_eq!(cases[0].case.tags, ["a", "b"]);
        assert_eq!(cases[1].case.context, ["P1", "P2"]);
        assert_eq!(cases[1].line, 3);
    }
}
