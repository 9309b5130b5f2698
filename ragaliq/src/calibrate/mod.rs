//! How far a judge agrees with people: labelled items of five kinds judged
//! through the judge, and the agreement reported. Claims (verified, as
//! faithfulness verifies them), answers (relevance), passages (context
//! precision), graded answers (correctness against a reference) and judged
//! responses (criteria).
//!
//! A folder of labelled claims (see [`load_dir`] for the formats) is
//! verified in batches through the normal judge path — the same prompt,
//! samples and vote as `assert_faithful!`, recorded and replayed like any
//! test — and compared with the labels: accuracy, Cohen's kappa with a
//! bootstrap 95% interval, macro-F1, per-label precision and recall, and the
//! confusion matrix, for the four verdicts and collapsed to supported / not
//! supported (partial support counts as not supported there). Several
//! judges side by side give one comparison table: agreement, calls, tokens,
//! cost and time per judge.
//!
//! What the figures count:
//!
//! - Only *decided* claims are in the agreement figures. A claim whose
//!   samples split below the required agreement, or whose verdict cites
//!   evidence found in no passage even when asked again (*ungrounded*), is
//!   *undecided*: counted and listed apart, never folded into kappa with a
//!   tie-broken verdict. A judge that leaves many claims undecided shows it
//!   in its own column.
//! - A claim the judge could not verify at all (a reply error after the
//!   re-asks) is *not verified*: listed, and the run fails.
//! - Kappa's interval resamples the groups of claims that share their
//!   passages (and so their judge calls), not single claims; see
//!   [`agreement_grouped`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let report = ragaliq::calibration("tests/labelled_claims")
//!     .with_judge_file("small", "judges/small.toml")
//!     .with_judge_file("large", "judges/large.toml")
//!     .with_min_kappa(0.6)
//!     .run()
//!     .await?;
//! println!("{report}");
//! std::fs::write("calibration.md", report.to_markdown())?;
//! assert!(report.passed(), "{}", report.failures().join("\n"));
//! # Ok(()) }
//! ```
//!
//! `cargo ragaliq calibrate <DIR>` runs the same from the command line.
//!
//! A folder of answers (`query`, `response`, `label: relevant | partial |
//! irrelevant`) calibrates answer relevance: the judge's verdict is its
//! score against its relevance threshold. A folder of passages (`query`,
//! `passage`, `label: relevant | not_relevant`) calibrates the passage
//! verdicts of context precision. Their figures are two-way (relevant or
//! not; a partial answer is not relevant). A folder of graded answers
//! (`query`, `reference`, `response`, `label: correct | partial |
//! incorrect`) calibrates answer correctness, correct or not (partial is
//! not correct), beside plain matching's floor; a folder of judged
//! responses (`query`, `response`, `criteria`, optionally `context`,
//! `label: meets | fails`) calibrates criteria, in the judge's criteria
//! form.
//!
//! [`Calibration::with_fit`] also finds, per judge, the threshold on the
//! judge's probability (P(supported) for claims, the relevance score for
//! answers, P(relevant) for passages, the correctness score for graded
//! answers, the criteria score for judged responses) that agrees best with
//! the labels:
//! `cargo ragaliq calibrate --fit` writes it into the judge's file, to be
//! checked on the other half of the set.
//!
//! Recordings: one per judge and labelled file, beside the file at
//! `snapshots/<judge>/<file name>.snap`, reviewed with `cargo insta review`
//! and replayed with `CI=true`, like `#[rag_test]`'s. So a folder and any
//! folder inside it (a `dev/` and a `test/` half) calibrate from the same
//! recordings.
//!
//! # Known limitations
//!
//! - Claims that share their passages are verified together, in calls of
//!   the judge's `verify_batch` claims (`[judge] verify_batch` in its file),
//!   so a judge sees the other claims of its call, as it does in
//!   `assert_faithful!`.
//! - A claim the judge could not verify (a reply error after the re-asks)
//!   is left out of the figures and listed; the run then fails.
//! - With `samples = "auto"`, every claim is asked the cap: calibration has
//!   no threshold to sample near.

mod band_fit;
mod html;
mod labels;
mod report;

pub use crate::stats::{
    AgreementStats, DEFAULT_RESAMPLES, LabelStats, agreement, agreement_grouped, auc,
};
pub use band_fit::{BandFit, DEFAULT_ALPHA, DEFAULT_DELTA, Side, fewest, fit_band, fit_band_from};
pub use labels::{ItemKind, Label, LabelledClaim, load_dir, load_file};
pub use report::{
    AreaAgreement, CalibrationReport, ContradictionFit, Disagreement, Fit, Halves, JudgeResult,
    LeftOut, MIN_SEPARATING_AUC, NotJudged,
};

use crate::config::Config;
use crate::core::Verdict;
use crate::core::{ConfigError, Mode};
use crate::core::{Metric, Usage};
use crate::data_files::LoadError;
use crate::judge::Judge;
use crate::record::{Location, Recorder, Site, assert_snapshot};
use futures_util::{StreamExt, stream};
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The bootstrap's seed: the same report for the same verdicts.
pub const DEFAULT_SEED: u64 = 0x5EED_CA1B;

/// The four verdicts, in the order of the matrix.
const FOUR: [Verdict; 4] = [
    Verdict::Supported,
    Verdict::PartiallySupported,
    Verdict::NoEvidence,
    Verdict::Contradicted,
];

/// A calibration run over the labelled claims in `dir` (relative to the
/// package root, as for [`suite`](crate::suite())). Add judges with
/// [`Calibration::with_judge`] or [`Calibration::with_judge_file`]; with
/// none, the judge `ragaliq.toml` and the environment configure, named
/// `default`.
#[must_use = "a calibration does nothing until `run` is awaited"]
pub fn calibration(dir: impl AsRef<Path>) -> Calibration {
    Calibration {
        dir: dir.as_ref().to_owned(),
        more: Vec::new(),
        judges: Vec::new(),
        min_kappa: None,
        resamples: DEFAULT_RESAMPLES,
        mode: None,
        snapshot_dir: None,
        record_command: None,
        root: None,
        fit: false,
        guarantee: (DEFAULT_ALPHA, DEFAULT_DELTA),
    }
}

enum JudgeSource {
    Built(Judge),
    File(PathBuf),
}

/// A calibration run being set up; see [`calibration`].
#[must_use = "a calibration does nothing until `run` is awaited"]
pub struct Calibration {
    dir: PathBuf,
    more: Vec<PathBuf>,
    judges: Vec<(String, JudgeSource)>,
    min_kappa: Option<f64>,
    resamples: usize,
    mode: Option<Mode>,
    snapshot_dir: Option<PathBuf>,
    record_command: Option<String>,
    root: Option<PathBuf>,
    fit: bool,
    guarantee: (f64, f64),
}

/// Why a calibration could not run (a low agreement is not an error: see
/// [`CalibrationReport::passed`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrationError {
    /// A labelled-claims file cannot be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A judge's configuration, or the calibration's own, is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl Calibration {
    /// Adds another folder of labelled items of the same kind, calibrated
    /// with the first as one set (a dev half of ours and of a public set,
    /// say). Ids must be unique across them.
    pub fn with_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.more.push(dir.as_ref().to_owned());
        self
    }

    /// Adds a judge. `name` names it in the tables and its recordings'
    /// folder (letters, digits, `_`, `-`, `.`).
    pub fn with_judge(mut self, name: impl Into<String>, judge: Judge) -> Self {
        self.judges.push((name.into(), JudgeSource::Built(judge)));
        self
    }

    /// Adds a judge configured by a TOML file in `ragaliq.toml`'s format
    /// (relative to the package root). The file alone configures it: the
    /// `RAGALIQ_*` variables are not applied, except `RAGALIQ_MODE`, so two
    /// files compare what they say. API keys are read from the variables the
    /// file names.
    pub fn with_judge_file(mut self, name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        self.judges
            .push((name.into(), JudgeSource::File(path.into())));
        self
    }

    /// Fails the run when a judge's headline kappa is below `floor` (or
    /// undefined): over the four verdicts for claims whose labels give
    /// more than supported / not, else supported / not; relevant / not,
    /// correct / not or meets / fails for the other kinds.
    pub fn with_min_kappa(mut self, floor: f64) -> Self {
        self.min_kappa = Some(floor);
        self
    }

    /// Also fits, per judge, the threshold on its probability that agrees
    /// best with the labels ([`JudgeResult::fit`]), and the band with its
    /// guarantee ([`JudgeResult::band_fit`]).
    pub fn with_fit(mut self, fit: bool) -> Self {
        self.fit = fit;
        self
    }

    /// What a fitted band promises: decided agreement at least `1 − alpha`
    /// with probability `1 − delta` (defaults [`DEFAULT_ALPHA`],
    /// [`DEFAULT_DELTA`]; see [`fit_band`]).
    pub fn with_guarantee(mut self, alpha: f64, delta: f64) -> Self {
        self.guarantee = (alpha, delta);
        self
    }

    /// Bootstrap resamples for kappa's interval (default
    /// [`DEFAULT_RESAMPLES`]; 0 leaves the interval out).
    pub fn with_resamples(mut self, resamples: usize) -> Self {
        self.resamples = resamples;
        self
    }

    /// The recording mode, instead of the configured one. Under `CI` a
    /// mode that calls the judge is ignored, as a file's `mode` is, with
    /// one line on stderr ([`Config::set_mode`]), unless every judge was
    /// built in code ([`with_judge`](Self::with_judge)): their caller
    /// chose what they call.
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// One folder for every recording (`<folder>/<judge>/<file path>.snap`)
    /// instead of `snapshots/` beside each labelled file.
    pub fn with_snapshot_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.snapshot_dir = Some(dir.into());
        self
    }

    /// The folder that relative paths and `ragaliq.toml` are found from,
    /// instead of the package root (`CARGO_MANIFEST_DIR`, else the current
    /// folder). A command-line tool sets the current folder: under
    /// `cargo run`, `CARGO_MANIFEST_DIR` names the tool's own package.
    pub fn with_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.root = Some(root.into());
        self
    }

    /// The command that records afresh, for the messages of missing and
    /// stale recordings (default: `cargo ragaliq calibrate <dir>` in record
    /// mode).
    pub fn with_record_command(mut self, command: impl Into<String>) -> Self {
        self.record_command = Some(command.into());
        self
    }

    /// Verifies every labelled claim with every judge, one judge after the
    /// other, and reports the agreement.
    ///
    /// # Errors
    ///
    /// A labelled file that cannot be loaded, or an invalid configuration.
    /// Judge errors are not errors of the run: the claims concerned are
    /// listed in the report, which then does not pass.
    pub async fn run(self) -> Result<CalibrationReport, CalibrationError> {
        let env = |name: &str| std::env::var(name).ok();
        let root = self.root.clone().unwrap_or_else(|| {
            env("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from)
        });
        let root = root.canonicalize().unwrap_or(root);
        let mut config = Config::load_from(&root, &env)?;
        // Judges built in code over transports of the caller's (a server on
        // 127.0.0.1, a canned one) take the mode asked for whatever CI says,
        // as a suite's do: the caller chose what they call. Otherwise a
        // mode set in code is a committed setting like a file's, which
        // under CI may only ask for replay.
        let built_in_code = !self.judges.is_empty()
            && self
                .judges
                .iter()
                .all(|(_, s)| matches!(s, JudgeSource::Built(j) if !j.configured()));
        if let Some(mode) = self.mode {
            if built_in_code {
                config.set_mode_for_own_judges(mode);
            } else {
                config.set_mode(mode);
            }
        }
        let mode = config.mode;
        if let Some(floor) = self.min_kappa
            && !(-1.0..=1.0).contains(&floor)
        {
            return Err(ConfigError::Invalid {
                origin: "min_kappa".into(),
                value: floor.to_string(),
                expected: "a number from -1 to 1".into(),
            }
            .into());
        }
        let mut claims: Vec<LabelledClaim> = Vec::new();
        for folder in std::iter::once(&self.dir).chain(&self.more) {
            let loaded = load_dir(&root.join(folder)).map_err(|mut e| {
                e.relativize(&root);
                e
            })?;
            claims.extend(loaded.into_iter().map(|mut c| {
                c.file = c
                    .file
                    .strip_prefix(&root)
                    .map(Path::to_path_buf)
                    .unwrap_or(c.file);
                c
            }));
        }
        check_together(&claims)?;
        let mut judges = Vec::new();
        if self.judges.is_empty() {
            judges.push(("default".to_owned(), Judge::from_config(&config)?));
        }
        for (name, source) in self.judges {
            if !valid_judge_name(&name) {
                return Err(ConfigError::Invalid {
                    origin: "judge name".into(),
                    value: name,
                    expected:
                        "letters, digits, `_`, `-` and `.`, starting with a letter or digit (it names the judge's recordings folder)"
                            .into(),
                }
                .into());
            }
            let judge = match source {
                JudgeSource::Built(judge) => judge,
                JudgeSource::File(path) => judge_from_file(&root.join(path), &root)?,
            };
            judges.push((name, judge));
        }
        // Recordings beside each labelled file, unless a folder is named.
        let snapshots = self.snapshot_dir.map(|d| root.join(d)).or_else(|| {
            env("RAGALIQ_SNAPSHOT_DIR")
                .filter(|d| !d.is_empty())
                .map(|d| root.join(d))
        });
        let setup = Setup {
            root: &root,
            snapshots: snapshots.as_deref(),
            mode,
            record_command: self.record_command.unwrap_or_else(|| {
                format!(
                    "RAGALIQ_MODE=record cargo ragaliq calibrate {}",
                    self.dir.display()
                )
            }),
            guarantee: self.guarantee,
        };
        let mut results = Vec::new();
        for (name, judge) in judges {
            results.push(
                calibrate_one(&setup, &name, &judge, &claims, self.resamples, self.fit).await,
            );
        }
        Ok(CalibrationReport::new(&claims, self.min_kappa, results))
    }
}

/// Items of several folders calibrated together: one kind, ids unique.
fn check_together(claims: &[LabelledClaim]) -> Result<(), LoadError> {
    let mut seen: BTreeMap<&str, &LabelledClaim> = BTreeMap::new();
    for c in claims {
        if let Some(first) = seen.get(c.id.as_str()) {
            return Err(LoadError {
                file: c.file.clone(),
                line: Some(c.line),
                column: None,
                message: format!(
                    "duplicate id `{}` across the folders: ids name the items in reports and recordings",
                    c.id
                ),
                also: Some((first.file.clone(), first.line)),
            });
        }
        if let Some(first) = claims.first().filter(|f| f.kind != c.kind) {
            return Err(LoadError {
                file: c.file.clone(),
                line: Some(c.line),
                column: None,
                message: format!(
                    "`{}` is one of the labelled {}, but the first folder holds labelled {}: one kind per run",
                    c.id,
                    c.kind.plural(),
                    first.kind.plural()
                ),
                also: Some((first.file.clone(), first.line)),
            });
        }
        seen.insert(&c.id, c);
    }
    Ok(())
}

/// Whether `name` can name a judge's recordings folder: letters, digits,
/// `_`, `-` and `.`, starting with a letter or digit (so never `.` or `..`).
fn valid_judge_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Where judge `judge`'s recording of the labelled file `file` (relative to
/// the root) lives: `snapshots/<judge>/<file name>.snap` beside the file —
/// the whole file name, so `x.yaml` and `x.json` keep apart — or, in a
/// named folder, `<folder>/<judge>/<path, with / as __>.snap`.
fn recording_path(setup: &Setup<'_>, judge: &str, file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match setup.snapshots {
        Some(dir) => {
            let flat = file
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("__");
            dir.join(judge).join(format!("{flat}.snap"))
        }
        None => setup
            .root
            .join(file)
            .parent()
            .unwrap_or(setup.root)
            .join("snapshots")
            .join(judge)
            .join(format!("{name}.snap")),
    }
}

/// A judge configured by `path` alone (plus `RAGALIQ_MODE` and the key
/// variables it names).
fn judge_from_file(path: &Path, root: &Path) -> Result<Judge, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::File {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let env = |name: &str| {
        if name.starts_with("RAGALIQ_") && name != "RAGALIQ_MODE" {
            return None;
        }
        std::env::var(name).ok()
    };
    let config = Config::from_sources(Some((&text, path)), root, &env)?;
    Judge::from_config(&config)
}

struct Setup<'a> {
    root: &'a Path,
    /// A folder for every recording, instead of `snapshots/` beside each file.
    snapshots: Option<&'a Path>,
    mode: Mode,
    record_command: String,
    /// A fitted band's `alpha` and `delta`.
    guarantee: (f64, f64),
}

/// Items of one file about the same passages (claims) or the same question
/// (answers, passages): asked together, and one group in the bootstrap.
struct Group {
    file: PathBuf,
    members: Vec<usize>,
}

/// The groups, in order of appearance.
fn groups(claims: &[LabelledClaim]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, c) in claims.iter().enumerate() {
        let same = |g: &&mut Group| {
            let first = &claims[g.members[0]];
            g.file == c.file
                && match c.kind {
                    ItemKind::Claim => first.passages == c.passages,
                    ItemKind::Judged => first.criteria == c.criteria && first.query == c.query,
                    _ => first.query == c.query,
                }
        };
        match groups.iter_mut().find(same) {
            Some(group) => group.members.push(i),
            None => groups.push(Group {
                file: c.file.clone(),
                members: vec![i],
            }),
        }
    }
    groups
}

/// A group's items, their outcomes (or the group's error) and its usage.
type GroupResult = (Vec<usize>, Result<Vec<Outcome>, String>, Usage);

/// One item's outcome: the judge's decided label, or why there is none.
enum Outcome {
    Judged {
        /// The judge's label: a verdict, or `relevant` / `not_relevant`.
        label: &'static str,
        /// Supported (or relevant) by the judge.
        positive: bool,
        /// For claims, the verdict.
        verdict: Option<Verdict>,
        /// What the judge's verdict was read from: P(supported), the
        /// relevance score, P(relevant).
        probability: Option<f64>,
        /// For claims asked whether they are contradicted: P(contradicted).
        contradiction: Option<f64>,
        agreement: Option<String>,
        undecided: bool,
        ungrounded: bool,
        evidence: String,
        /// The passage the evidence was found in (1-based).
        evidence_in: Option<usize>,
        /// Decided by a rule with no call (the found rule): no judge's
        /// reading, so no probability; a decision all the same.
        by_rule: bool,
    },
    NotJudged(String),
}

/// The two labels of the two-way figures, per kind.
fn two_way(kind: ItemKind) -> [&'static str; 2] {
    match kind {
        ItemKind::Claim => ["supported", "not_supported"],
        ItemKind::Answer | ItemKind::Passage => ["relevant", "not_relevant"],
        ItemKind::Graded => ["correct", "not_correct"],
        ItemKind::Judged => ["meets", "fails"],
    }
}

/// One group asked of `judge`.
async fn judge_group(
    judge: &Judge,
    claims: &[LabelledClaim],
    group: &Group,
) -> Result<(Vec<Outcome>, Usage), String> {
    let first = &claims[group.members[0]];
    match first.kind {
        ItemKind::Claim => {
            let texts: Vec<String> = group
                .members
                .iter()
                .map(|&i| claims[i].claim.clone())
                .collect();
            let (voted, usage) = judge
                .verify_labelled(&texts, &first.passages)
                .await
                .map_err(|e| e.to_string())?;
            let outcomes = voted
                .into_iter()
                .map(|v| Outcome::Judged {
                    label: v.verdict.verdict.label(),
                    positive: v.verdict.verdict == Verdict::Supported,
                    verdict: Some(v.verdict.verdict),
                    probability: v.probability,
                    contradiction: v.contradiction,
                    agreement: v.agreement.map(|a| a.to_string()),
                    undecided: v.undecided,
                    ungrounded: v.ungrounded,
                    evidence: v.verdict.evidence,
                    evidence_in: v.found.map(|f| f.passage + 1),
                    by_rule: false,
                })
                .collect();
            Ok((outcomes, usage))
        }
        _ => {
            let query = first.query.clone().unwrap_or_default();
            let mut outcomes = Vec::new();
            let mut usage = Usage::default();
            for &i in &group.members {
                let item = &claims[i];
                let outcome = match item.kind {
                    ItemKind::Answer => judge.relevance_labelled(&query, &item.claim).await,
                    ItemKind::Graded => {
                        judge
                            .correctness_labelled(
                                &query,
                                &item.claim,
                                item.reference.as_deref().unwrap_or_default(),
                            )
                            .await
                    }
                    ItemKind::Judged => {
                        judge
                            .criteria_labelled(
                                &query,
                                &item.passages,
                                &item.claim,
                                item.criteria.as_deref().unwrap_or_default(),
                            )
                            .await
                    }
                    _ => judge.passage_labelled(&query, &item.claim).await,
                };
                let eval = match outcome {
                    Ok(eval) => eval,
                    Err(e) => {
                        outcomes.push(Outcome::NotJudged(e.to_string()));
                        continue;
                    }
                };
                usage += eval.usage;
                // The found rule's 1.0 is no reading of the judge's: kept
                // out of what probabilities say (AUC, fits), counted as
                // decided.
                let by_rule = eval.graded.as_ref().is_some_and(|g| g.by_rule);
                let (positive, probability, evidence) = match eval.passages.first() {
                    Some(p) => (p.relevant, p.probability, p.reason.clone()),
                    None => (
                        eval.passed,
                        (!by_rule).then_some(eval.score),
                        eval.reasoning.clone(),
                    ),
                };
                let [yes, no] = two_way(item.kind);
                outcomes.push(Outcome::Judged {
                    label: if positive { yes } else { no },
                    positive,
                    verdict: None,
                    probability,
                    contradiction: None,
                    agreement: eval
                        .passages
                        .first()
                        .and_then(|p| p.agreement)
                        .map(|a| a.to_string()),
                    undecided: eval.undecided,
                    ungrounded: false,
                    evidence,
                    evidence_in: None,
                    by_rule,
                });
            }
            Ok((outcomes, usage))
        }
    }
}

async fn calibrate_one(
    setup: &Setup<'_>,
    name: &str,
    judge: &Judge,
    claims: &[LabelledClaim],
    resamples: usize,
    fit: bool,
) -> JudgeResult {
    let started = Instant::now();
    let kind = claims.first().map_or(ItemKind::Claim, |c| c.kind);
    let mut recorders: BTreeMap<PathBuf, Arc<Recorder>> = BTreeMap::new();
    for c in claims {
        recorders.entry(c.file.clone()).or_insert_with(|| {
            Arc::new(Recorder::new(
                Location::at(
                    recording_path(setup, name, &c.file),
                    format!("calibration of judge `{name}` on {}", c.file.display()),
                    setup.record_command.clone(),
                ),
                setup.mode,
            ))
        });
    }
    let samples = judge.samples();
    let work = groups(claims);
    // Each item's group, for the bootstrap.
    let mut group_of = vec![0; claims.len()];
    for (g, group) in work.iter().enumerate() {
        for &i in &group.members {
            group_of[i] = g;
        }
    }
    let done: Vec<GroupResult> = stream::iter(work)
        .map(|group| {
            let judge = judge.with_recorder(recorders[&group.file].clone());
            async move {
                match judge_group(&judge, claims, &group).await {
                    Ok((outcomes, usage)) => (group.members, Ok(outcomes), usage),
                    Err(e) => (group.members, Err(e), Usage::default()),
                }
            }
        })
        .buffer_unordered(judge.concurrency().max(1))
        .collect()
        .await;
    let mut usage = Usage::default();
    let mut outcomes: Vec<Option<Outcome>> = claims.iter().map(|_| None).collect();
    let mut failed_files = std::collections::BTreeSet::new();
    for (members, result, group_usage) in done {
        usage += group_usage;
        match result {
            Ok(list) => {
                for (i, o) in members.into_iter().zip(list) {
                    if matches!(o, Outcome::NotJudged(_)) {
                        failed_files.insert(claims[i].file.clone());
                    }
                    outcomes[i] = Some(o);
                }
            }
            Err(message) => {
                failed_files.insert(claims[members[0]].file.clone());
                for i in members {
                    outcomes[i] = Some(Outcome::NotJudged(message.clone()));
                }
            }
        }
    }
    let mut pending = Vec::new();
    for (file, recorder) in &recorders {
        if let Some(path) = commit(
            setup.root,
            file,
            name,
            recorder,
            !failed_files.contains(file),
        ) {
            pending.push(
                path.strip_prefix(setup.root)
                    .map(Path::to_path_buf)
                    .unwrap_or(path),
            );
        }
    }
    let info = JudgeInfo {
        name: name.to_owned(),
        judge: match kind {
            // The line names the claim rule; graded answers are decided by
            // the correctness measure, which it must name too.
            ItemKind::Graded => match judge.correctness_measure() {
                crate::core::Correctness::Direct => format!(
                    "{}; answers correct at P(yes) >= {} to the direct question",
                    judge.describe(),
                    judge.default_threshold(Metric::Correctness)
                ),
                measure => format!(
                    "{}; answers graded by claims both ways ({measure}) at >= {}",
                    judge.describe(),
                    judge.default_threshold(Metric::Correctness)
                ),
            },
            _ => judge.describe(),
        },
        model: judge.model().to_owned(),
        samples: samples.to_string(),
        current: match kind {
            ItemKind::Claim => judge.claim_threshold(),
            ItemKind::Answer => judge.default_threshold(Metric::Relevance),
            ItemKind::Passage => judge.passage_threshold(),
            ItemKind::Graded => judge.default_threshold(Metric::Correctness),
            ItemKind::Judged => judge.default_threshold(Metric::Criteria),
        },
        asks_contradiction: judge.asks_contradiction(),
        contradiction_ratio: judge.contradiction_ratio(),
        cost_usd: judge.price().map(|p| p.cost(&usage)),
        band: judge.band(kind.band_kind()),
        guarantee: setup.guarantee,
    };
    let seconds = started.elapsed().as_secs_f64();
    figures(
        &info, claims, outcomes, &group_of, usage, pending, resamples, fit, seconds,
    )
}

/// What a report says of a judge beside its figures.
struct JudgeInfo {
    name: String,
    judge: String,
    model: String,
    samples: String,
    /// The judge's threshold now, for the kind of item.
    current: f64,
    asks_contradiction: bool,
    contradiction_ratio: f64,
    cost_usd: Option<f64>,
    /// The judge's uncertainty band for the kind of item.
    band: crate::core::Band,
    /// With a fit: the decided agreement a fitted band promises (`alpha`)
    /// and the chance the promise fails (`delta`).
    guarantee: (f64, f64),
}

/// The agreement of a judge's outcomes with the labels: the figures, the
/// disagreements, and the fit when asked for.
#[allow(
    clippy::too_many_arguments,
    reason = "one caller per way of getting outcomes; each argument is a part of the result"
)]
fn figures(
    info: &JudgeInfo,
    claims: &[LabelledClaim],
    outcomes: Vec<Option<Outcome>>,
    group_of: &[usize],
    usage: Usage,
    pending: Vec<PathBuf>,
    resamples: usize,
    fit: bool,
    seconds: f64,
) -> JudgeResult {
    let kind = claims.first().map_or(ItemKind::Claim, |c| c.kind);
    let four: Vec<&str> = FOUR.iter().map(|v| v.label()).collect();
    let index = |v: Verdict| FOUR.iter().position(|f| *f == v).unwrap_or(0);
    let mut pairs = Vec::new();
    let mut groups_of_pairs = Vec::new();
    let mut collapsed = Vec::new();
    let mut groups_of_collapsed = Vec::new();
    // Plain matching on the items this judge decided, so the floor and
    // the judge's kappa are read over the same items.
    let mut matched_pairs = Vec::new();
    let mut scored: Vec<(bool, f64)> = Vec::new();
    // For passages, plain word overlap on the same items as `scored`: the
    // floor the judge's AUC is set beside.
    let mut overlap: Vec<(bool, f64)> = Vec::new();
    // What a rule decided with no call: each label's side and the rule's.
    let mut ruled: Vec<(bool, bool)> = Vec::new();
    let mut scored_four: Vec<(Verdict, f64, Option<f64>)> = Vec::new();
    let mut not_judged = Vec::new();
    let mut disagreements = Vec::new();
    let mut undecided_claims = Vec::new();
    let mut areas: BTreeMap<String, AreaAgreement> = BTreeMap::new();
    for ((i, c), outcome) in claims.iter().enumerate().zip(outcomes) {
        match outcome {
            Some(Outcome::Judged {
                label,
                positive,
                verdict,
                probability,
                contradiction,
                agreement,
                undecided,
                ungrounded,
                evidence,
                evidence_in,
                by_rule,
            }) => {
                let area = areas
                    .entry(c.area.clone())
                    .or_insert_with(|| AreaAgreement {
                        area: c.area.clone(),
                        claims: 0,
                        agreeing: 0,
                        undecided: 0,
                    });
                let row = Disagreement {
                    id: c.id.clone(),
                    area: c.area.clone(),
                    claim: c.claim.clone(),
                    label: c.label.label().to_owned(),
                    verdict: label.to_owned(),
                    agreement,
                    undecided,
                    ungrounded,
                    evidence,
                    evidence_in,
                    probability,
                    passages: c.passages.clone(),
                    note: c.note.clone(),
                    place: format!("{}:{}", c.file.display(), c.line),
                };
                // An undecided claim has no verdict to compare: it is
                // counted apart, with the verdict it leaned to.
                if undecided {
                    area.undecided += 1;
                    undecided_claims.push(row);
                    continue;
                }
                if by_rule {
                    ruled.push((c.label.positive(), positive));
                }
                if let Some(p) = probability {
                    scored.push((c.label.positive(), p));
                    if kind == ItemKind::Passage {
                        let words = crate::evidence::question_words_in(
                            c.query.as_deref().unwrap_or_default(),
                            &c.claim,
                        );
                        overlap.push((c.label.positive(), words));
                    }
                    if let Some(person) = c.four_way_verdict() {
                        scored_four.push((person, p, contradiction));
                    }
                }
                collapsed.push((usize::from(!c.label.positive()), usize::from(!positive)));
                groups_of_collapsed.push(group_of[i]);
                if kind == ItemKind::Graded {
                    let matched =
                        report::plain_match(c.reference.as_deref().unwrap_or_default(), &c.claim);
                    matched_pairs.push((usize::from(!c.label.positive()), usize::from(!matched)));
                }
                // The four verdicts, where the person gave one.
                let agrees = match (c.four_way_verdict(), verdict) {
                    (Some(person), Some(judge)) => {
                        pairs.push((index(person), index(judge)));
                        groups_of_pairs.push(group_of[i]);
                        person == judge
                    }
                    _ => c.label.positive() == positive,
                };
                area.claims += 1;
                if agrees {
                    area.agreeing += 1;
                } else {
                    disagreements.push(row);
                }
            }
            Some(Outcome::NotJudged(error)) => not_judged.push(NotJudged {
                id: c.id.clone(),
                place: format!("{}:{}", c.file.display(), c.line),
                error,
            }),
            None => not_judged.push(NotJudged {
                id: c.id.clone(),
                place: format!("{}:{}", c.file.display(), c.line),
                error: "no verdict was returned for this item".into(),
            }),
        }
    }
    let two = two_way(kind);
    let collapsed_stats = agreement_grouped(
        &two,
        &collapsed,
        &groups_of_collapsed,
        resamples,
        DEFAULT_SEED,
    );
    let verdicts = if kind == ItemKind::Claim {
        agreement_grouped(&four, &pairs, &groups_of_pairs, resamples, DEFAULT_SEED)
    } else {
        collapsed_stats.clone()
    };
    let current = info.current;
    let (fitted, unfitted) = match fit.then(|| fit_threshold(kind, &scored, current)) {
        Some(Ok(f)) => (Some(f), None),
        Some(Err(why)) => (None, Some(why)),
        None => (None, None),
    };
    let left_out = LeftOut {
        undecided: undecided_claims.len(),
        word_read: collapsed.len() - scored.len(),
        not_verified: not_judged.len(),
    };
    let matching =
        (kind == ItemKind::Graded).then(|| crate::stats::agreement(&two, &matched_pairs, 0, 0));
    let banded = banded(&two, &scored, &ruled, info.band, current);
    let band_fit = fit.then(|| {
        fit_band_from(
            &scored,
            current,
            info.band,
            info.guarantee.0,
            info.guarantee.1,
        )
    });
    JudgeResult {
        name: info.name.clone(),
        judge: info.judge.clone(),
        matching,
        model: info.model.clone(),
        samples: info.samples.clone(),
        judged: collapsed.len(),
        undecided: undecided_claims.len(),
        ungrounded: undecided_claims.iter().filter(|d| d.ungrounded).count(),
        auc: crate::stats::auc(&scored),
        word_overlap_auc: crate::stats::auc(&overlap),
        verdicts,
        collapsed: collapsed_stats,
        areas: areas.into_values().collect(),
        cost_usd: info.cost_usd,
        usage,
        seconds,
        pending,
        not_judged,
        disagreements,
        undecided_claims,
        banded,
        band_fit,
        fit: fitted.map(|mut f| {
            f.left_out = left_out;
            if kind == ItemKind::Claim && info.asks_contradiction {
                fit_contradiction(f, &scored_four, info.contradiction_ratio)
            } else {
                f
            }
        }),
        unfitted,
    }
}

/// The agreement over the items the judge's `band` decides at `threshold`
/// (of `scored`: each label's side and the judge's probability) and those
/// a rule decided with no call (`ruled`: each label's side and the rule's),
/// and how many are decided. `None` with neither.
fn banded(
    two: &[&str; 2],
    scored: &[(bool, f64)],
    ruled: &[(bool, bool)],
    band: crate::core::Band,
    threshold: f64,
) -> Option<report::Banded> {
    use crate::core::Decision;
    if scored.is_empty() && ruled.is_empty() {
        return None;
    }
    let by_band: Vec<(usize, usize)> = scored
        .iter()
        .filter_map(|&(label, p)| match band.decide(p, threshold) {
            Decision::Uncertain => None,
            d => Some((usize::from(!label), usize::from(d != Decision::Yes))),
        })
        .collect();
    let by_rule = ruled
        .iter()
        .map(|&(label, yes)| (usize::from(!label), usize::from(!yes)));
    let pairs: Vec<(usize, usize)> = by_band.iter().copied().chain(by_rule).collect();
    Some(report::Banded {
        band: band.at(threshold),
        decided: pairs.len(),
        by_rule: ruled.len(),
        of: scored.len() + ruled.len(),
        stats: crate::stats::agreement(two, &pairs, 0, 0),
    })
}

/// The person's verdicts in a project's recordings, read as labelled sets
/// against the judge's reading beside them ([`reviewed`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReviewedCalibration {
    /// One report per model and kind of item (claims, answers, passages,
    /// judged responses, graded answers), each with one judge: the model
    /// as recorded.
    pub reports: Vec<CalibrationReport>,
    /// Recordings read.
    pub recordings: usize,
    /// Person's verdicts found in them.
    pub verdicts: usize,
    /// How many of them were given blind ([`crate::record::Reviewed::blind`]).
    pub blind: usize,
    /// Person's verdicts not used as labels, and why (a kind no threshold
    /// is fitted for: scored criteria, metrics of one's own).
    pub not_used: Vec<String>,
}

/// The person's verdicts in `recordings` (each a path and the recording
/// read from it) as labelled sets, one per model and kind of item, each
/// compared with the judge's reading in the same exchanges at `judge`'s
/// thresholds: the same figures, interval and `--fit` as [`calibration`],
/// with no call (nothing is asked: the judge's token probabilities are in
/// the recording).
///
/// ```
/// use ragaliq::calibrate::reviewed;
/// let judge = ragaliq::Judge::builder(ragaliq::judge::OpenAiTransport::new("http://127.0.0.1:9/v1"))
///     .build()
///     .unwrap();
/// let set = reviewed(&[], &judge, 0, None, false, (0.1, 0.05));
/// assert_eq!((set.verdicts, set.reports.len()), (0, 0));
/// ```
#[must_use]
pub fn reviewed(
    recordings: &[(PathBuf, crate::record::Recording)],
    judge: &Judge,
    resamples: usize,
    min_kappa: Option<f64>,
    fit: bool,
    guarantee: (f64, f64),
) -> ReviewedCalibration {
    use crate::review::{Thresholds, items};
    let thresholds = Thresholds::of(judge);
    // (model, kind) → (labelled items, the judge's outcomes, group of each)
    type Set = (Vec<LabelledClaim>, Vec<Option<Outcome>>, Vec<usize>);
    let mut sets: BTreeMap<(String, u8), Set> = BTreeMap::new();
    let mut not_used: BTreeMap<String, usize> = BTreeMap::new();
    let mut no_claims = 0usize;
    let mut verdicts = 0;
    let mut blind = 0;
    for (g, (path, recording)) in recordings.iter().enumerate() {
        for item in items(recording, &thresholds) {
            let Some(person) = &item.person else {
                continue;
            };
            verdicts += 1;
            blind += usize::from(person.blind);
            let family = item.judged.family.as_str();
            let (kind, rank) = match family {
                "claim" => (ItemKind::Claim, 0),
                "answer" => (ItemKind::Answer, 1),
                "passage" => (ItemKind::Passage, 2),
                "criteria_met" => (ItemKind::Judged, 3),
                "answer_correct" => (ItemKind::Graded, 4),
                other => {
                    *not_used.entry(other.to_owned()).or_default() += 1;
                    continue;
                }
            };
            if kind == ItemKind::Claim && person.verdict == crate::judged::NOT_A_CLAIM {
                // Neither supported nor not: no label for the judge's reading.
                no_claims += 1;
                continue;
            }
            let yes = person.verdict == "yes";
            let label = match kind {
                ItemKind::Claim => match Verdict::from_label(&person.verdict) {
                    Some(v) => Label::Verdict(v),
                    None => continue,
                },
                ItemKind::Answer if yes => Label::Relevant,
                ItemKind::Answer => Label::Irrelevant,
                ItemKind::Passage if yes => Label::Relevant,
                ItemKind::Passage => Label::NotRelevant,
                ItemKind::Graded if yes => Label::Correct,
                ItemKind::Graded => Label::Incorrect,
                _ if yes => Label::Meets,
                _ => Label::Fails,
            };
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let area = name
                .strip_suffix(".snap.new")
                .or_else(|| name.strip_suffix(".snap"))
                .unwrap_or(&name)
                .to_owned();
            let claim = LabelledClaim {
                id: format!("{area}#{}", item.judged.key),
                kind,
                area,
                query: item.field("query").map(str::to_owned),
                reference: (kind == ItemKind::Graded)
                    .then(|| item.field("expected").map(str::to_owned))
                    .flatten(),
                criteria: item.field("criteria").map(str::to_owned),
                passages: item.passages(),
                claim: item.subject(),
                label,
                note: person.note.clone(),
                file: path.clone(),
                line: item.exchange + 1,
                two_way: false,
            };
            let outcome = match &item.judge.verdict {
                None => Outcome::NotJudged(format!(
                    "the judge's recorded reply to this {} cannot be read",
                    kind.plural().trim_end_matches('s')
                )),
                Some(v) => {
                    let positive = item.judge.positive == Some(true);
                    let [yes_label, no_label] = two_way(kind);
                    let verdict = (kind == ItemKind::Claim)
                        .then(|| Verdict::from_label(v))
                        .flatten();
                    Outcome::Judged {
                        label: match verdict {
                            Some(v) => v.label(),
                            None if positive => yes_label,
                            None => no_label,
                        },
                        positive,
                        verdict,
                        probability: item.judge.probability,
                        contradiction: item.judge.contradiction,
                        agreement: None,
                        undecided: false,
                        ungrounded: false,
                        evidence: String::new(),
                        evidence_in: None,
                        by_rule: item.judge.rule.is_some(),
                    }
                }
            };
            let set = sets.entry((item.model.clone(), rank)).or_default();
            set.0.push(claim);
            set.1.push(Some(outcome));
            set.2.push(g);
        }
    }
    let mut reports = Vec::new();
    for ((model, _), (claims, outcomes, group_of)) in sets {
        let kind = claims[0].kind;
        let recordings = group_of
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let info = JudgeInfo {
            name: model.clone(),
            judge: format!(
                "its answers as recorded, read at the thresholds configured now; verdicts given by a person in {recordings} recording{}, no call",
                if recordings == 1 { "" } else { "s" }
            ),
            model,
            samples: "1".into(),
            current: match kind {
                ItemKind::Claim => thresholds.claim,
                ItemKind::Answer => thresholds.relevance,
                ItemKind::Passage => thresholds.passage,
                ItemKind::Graded => thresholds.correctness,
                _ => thresholds.criteria,
            },
            asks_contradiction: judge.asks_contradiction(),
            contradiction_ratio: thresholds.contradiction_ratio,
            cost_usd: Some(0.0),
            band: thresholds.bands.get(kind.band_kind()),
            guarantee,
        };
        let result = figures(
            &info,
            &claims,
            outcomes,
            &group_of,
            Usage::default(),
            Vec::new(),
            resamples,
            fit,
            0.0,
        );
        reports.push(CalibrationReport::new(&claims, min_kappa, vec![result]));
    }
    ReviewedCalibration {
        reports,
        recordings: recordings.len(),
        blind,
        verdicts,
        not_used: not_used
            .into_iter()
            .map(|(family, n)| {
                format!(
                    "{n} on `{family}` items (no threshold is fitted for them, so they are not read as labels)"
                )
            })
            .chain((no_claims > 0).then(|| {
                format!(
                    "{no_claims} `not_a_claim` on claims (neither supported nor not, so not read as labels)"
                )
            }))
            .collect(),
    }
}

/// The ratios `--fit` tries for the contradiction rule.
const RATIOS: [f64; 11] = [1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0];

/// Adds to a claim fit the contradiction ratio for the labels, the claim
/// threshold fitted: a claim at or above it is supported, one below it
/// contradicted when it was asked and P(contradicted) is at least the
/// ratio times P(supported), else no evidence (the one rule,
/// `metrics::claims::rule`). Of the ratios tried ([`RATIOS`] and the
/// current one) that call claims contradicted rightly at least 60% of the
/// time (an accusation must earn it, as for the default), the one with the
/// best four-verdict kappa, the current one where it is as good; when none
/// does, the best kappa of all. Unchanged when no claim was asked.
fn fit_contradiction(fit: Fit, scored: &[(Verdict, f64, Option<f64>)], current: f64) -> Fit {
    let asked = scored
        .iter()
        .filter(|(_, p, q)| *p < fit.threshold && q.is_some())
        .count();
    if asked == 0 {
        return fit;
    }
    let four: Vec<&str> = FOUR.iter().map(|v| v.label()).collect();
    let index = |v: Verdict| FOUR.iter().position(|f| *f == v).unwrap_or(0);
    let supported_at = fit.threshold;
    let judged = |ratio: f64| -> Vec<(Verdict, Verdict)> {
        scored
            .iter()
            .map(|(person, p, q)| {
                let reading = crate::metrics::Reading {
                    supported: *p,
                    contradicted: *q,
                };
                (*person, reading.decide(supported_at, ratio).0)
            })
            .collect()
    };
    let kappa_at = |ratio: f64| {
        let pairs: Vec<(usize, usize)> = judged(ratio)
            .into_iter()
            .map(|(person, judge)| (index(person), index(judge)))
            .collect();
        crate::stats::agreement(&four, &pairs, 0, 0).kappa
    };
    let precision_at = |ratio: f64| {
        let called: Vec<Verdict> = judged(ratio)
            .into_iter()
            .filter(|(_, judge)| *judge == Verdict::Contradicted)
            .map(|(person, _)| person)
            .collect();
        (!called.is_empty()).then(|| {
            called
                .iter()
                .filter(|p| **p == Verdict::Contradicted)
                .count() as f64
                / called.len() as f64
        })
    };
    let ratios = with_current(RATIOS.to_vec(), current);
    let earned: Vec<f64> = ratios
        .iter()
        .copied()
        .filter(|r| precision_at(*r).is_some_and(|p| p >= 0.6))
        .collect();
    let chosen = if earned.is_empty() {
        best_of(ratios, current, kappa_at)
    } else {
        best_of(earned, current, kappa_at)
    };
    match chosen {
        Some((ratio, kappa)) => fit.with_contradiction(
            ratio,
            kappa,
            precision_at(ratio),
            current,
            kappa_at(current),
            asked,
        ),
        None => fit,
    }
}

/// Every threshold that decides `values` differently, each written as the
/// shortest decimal inside its gap: `p >= t` holds for the same values
/// whatever `t` in the gap, so the value a judge file gets is the value
/// whose kappa is reported (a rounded midpoint could cross a value).
fn written_cuts(values: &[f64]) -> Vec<f64> {
    let mut values = values.to_vec();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let mut cuts = vec![0.0];
    cuts.extend(values.windows(2).map(|w| short_decimal_in(w[0], w[1])));
    if let Some(&max) = values.last()
        && max < 1.0
    {
        cuts.push(short_decimal_in(max, 1.0));
    }
    cuts
}

/// The shortest decimal `t` with `lo < t <= hi` (at most 6 places; `hi`
/// itself when no shorter one fits).
fn short_decimal_in(lo: f64, hi: f64) -> f64 {
    for places in 1..=6 {
        let scale = 10f64.powi(places);
        // The tolerance keeps 0.3494 * 10000 = 3493.99… from reading as
        // 3493: the next decimal up must be past `lo`, not equal to it.
        let t = ((lo * scale + 1e-7).floor() + 1.0) / scale;
        if t > lo && t <= hi {
            return t;
        }
    }
    hi
}

/// `candidates` and `current` itself (when it is a number), so that where
/// the labels cannot tell the current value from the best one they keep
/// it: a cut written inside the current value's gap decides the items
/// alike, yet would move the threshold for everything else on no evidence.
fn with_current(mut candidates: Vec<f64>, current: f64) -> Vec<f64> {
    if current.is_finite() && !candidates.contains(&current) {
        candidates.push(current);
    }
    candidates
}

/// Of `candidates`, the one whose kappa is highest; of equally good ones,
/// the nearest to `current`.
fn best_of(
    candidates: Vec<f64>,
    current: f64,
    kappa_at: impl Fn(f64) -> Option<f64>,
) -> Option<(f64, f64)> {
    let mut best: Option<(f64, f64)> = None;
    for t in candidates {
        let Some(k) = kappa_at(t) else { continue };
        let better = match best {
            None => true,
            Some((bt, bk)) => {
                k > bk + 1e-12
                    || ((k - bk).abs() <= 1e-12 && (t - current).abs() < (bt - current).abs())
            }
        };
        if better {
            best = Some((t, k));
        }
    }
    best
}

/// Fewer decided items than this, and a fitted threshold is said to be too
/// few to mean anything: with 30, one item more on either side of the cut
/// moves two-way kappa by about 0.07.
pub const MIN_FIT_ITEMS: usize = 30;

/// Fewer items than this of either label (supported or not, relevant or
/// not), and a fitted threshold is said to be too few to mean anything: the
/// cut is placed between the two sides, and a side of a handful places it
/// by a handful of scores.
pub const MIN_FIT_SIDE: usize = 10;

/// Random halves a fit is repeated on to see how far it moves.
pub const HALVES: usize = 200;

/// Why `scored` is too few for a fitted threshold to mean anything, if it
/// is (see [`MIN_FIT_ITEMS`], [`MIN_FIT_SIDE`]).
fn too_few(kind: ItemKind, scored: &[(bool, f64)]) -> Option<String> {
    let yes = scored.iter().filter(|(p, _)| *p).count();
    let no = scored.len() - yes;
    let [yes_label, no_label] = two_way(kind);
    let mut short = Vec::new();
    if scored.len() < MIN_FIT_ITEMS {
        short.push(format!(
            "{} items (a fit wants {MIN_FIT_ITEMS})",
            scored.len()
        ));
    }
    for (n, label) in [(yes, yes_label), (no, no_label)] {
        if n < MIN_FIT_SIDE {
            short.push(format!("{n} {label} (a fit wants {MIN_FIT_SIDE} of each)"));
        }
    }
    (!short.is_empty()).then(|| {
        format!(
            "{}; give more verdicts (`cargo ragaliq review --all`) before trusting it over the current threshold",
            short.join(", ")
        )
    })
}

/// The threshold fitted on [`HALVES`] random halves of `scored` (seeded):
/// `None` when fewer than four items.
fn halves(scored: &[(bool, f64)], current: f64) -> Option<Halves> {
    if scored.len() < 4 {
        return None;
    }
    let mut rng = crate::stats::SplitMix64(DEFAULT_SEED);
    let half = scored.len() / 2;
    let mut fitted: Vec<f64> = Vec::new();
    for _ in 0..HALVES {
        // A partial Fisher-Yates shuffle: the first `half` are the half.
        let mut order: Vec<usize> = (0..scored.len()).collect();
        for i in 0..half {
            let j = i + rng.below(scored.len() - i);
            order.swap(i, j);
        }
        let part: Vec<(bool, f64)> = order[..half].iter().map(|&i| scored[i]).collect();
        if let Ok((t, _)) = best_threshold(&part, current) {
            fitted.push(t);
        }
    }
    if fitted.is_empty() {
        return None;
    }
    fitted.sort_by(f64::total_cmp);
    let at =
        |q: f64| fitted[((q * fitted.len() as f64).ceil() as usize).clamp(1, fitted.len()) - 1];
    Some(Halves {
        drawn: HALVES,
        fitted: fitted.len(),
        min: fitted[0],
        max: fitted[fitted.len() - 1],
        low: at(0.05),
        high: at(0.95),
    })
}

/// The threshold on the judge's probability that agrees best with the
/// labels (two-way kappa over the decided items that have one), and the
/// kappa at `current`. Candidates are a value inside each gap between
/// neighbouring probabilities (and 0 and 1), and `current` itself; of
/// equally good ones, the nearest to `current` (so `current` when no other
/// does better on these items). Why not, without probabilities (the word strategy), without
/// both labels, or when every item scored the same.
fn fit_threshold(kind: ItemKind, scored: &[(bool, f64)], current: f64) -> Result<Fit, String> {
    let (threshold, kappa) = best_threshold(scored, current)?;
    let kappa_at = |t: f64| {
        let pairs: Vec<(usize, usize)> = scored
            .iter()
            .map(|(person, p)| (usize::from(!*person), usize::from(*p < t)))
            .collect();
        crate::stats::agreement(&["yes", "no"], &pairs, 0, 0).kappa
    };
    let mut fit = Fit::new(
        kind,
        threshold,
        kappa,
        scored.len(),
        current,
        kappa_at(current),
    );
    fit.too_few = too_few(kind, scored);
    fit.halves = halves(scored, current);
    Ok(fit)
}

/// The best threshold for `scored` and its kappa, or why there is none.
fn best_threshold(scored: &[(bool, f64)], current: f64) -> Result<(f64, f64), String> {
    if scored.is_empty() {
        return Err("its verdicts came with no probabilities or scores".into());
    }
    let has = |side: bool| scored.iter().any(|(p, _)| *p == side);
    if !has(true) || !has(false) {
        return Err("the labels of the items it decided hold one side only".into());
    }
    let mut values: Vec<f64> = scored.iter().map(|(_, p)| *p).collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    if let [only] = values[..] {
        return Err(format!(
            "every item it decided scored {only:.2}, so no threshold separates them"
        ));
    }
    let kappa_at = |t: f64| {
        let pairs: Vec<(usize, usize)> = scored
            .iter()
            .map(|(person, p)| (usize::from(!*person), usize::from(*p < t)))
            .collect();
        crate::stats::agreement(&["yes", "no"], &pairs, 0, 0).kappa
    };
    best_of(
        with_current(written_cuts(&values), current),
        current,
        kappa_at,
    )
    .ok_or_else(|| "no threshold gives a defined kappa".to_owned())
}

/// Hands one recording to insta, as a suite trial does; the pending file
/// when it is new or changed.
fn commit(
    root: &Path,
    file: &Path,
    judge: &str,
    recorder: &Recorder,
    complete: bool,
) -> Option<PathBuf> {
    let snapshot = recorder.location().snapshot.clone();
    let description = recorder.description();
    let manifest_dir = root.display().to_string();
    let workspace = crate::record::workspace_root(&manifest_dir);
    let source = root
        .join(file)
        .strip_prefix(&workspace)
        .map_or_else(|_| file.to_path_buf(), Path::to_path_buf)
        .display()
        .to_string();
    let function = format!("calibration::{judge}");
    let site = Site {
        file: &source,
        module_path: "calibration",
        function: &function,
        line: 1,
        manifest_dir: &manifest_dir,
    };
    let asserted = catch_unwind(AssertUnwindSafe(|| {
        recorder.commit(None, complete, |recording| {
            assert_snapshot(&snapshot, &recording.to_yaml(), &description, site);
        })
    }));
    match asserted {
        Ok(_) => None,
        Err(_) => Some(crate::record::pending_path(&snapshot)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_the_band_counts_what_the_found_rule_decided() {
        use crate::core::Band;
        let two = two_way(ItemKind::Graded);
        // 38 answers the judge read (its band decides none of them) and 22
        // the found rule decided with no call, 21 of them right.
        let scored: Vec<(bool, f64)> = (0..38).map(|i| (i % 2 == 0, 0.6)).collect();
        let ruled: Vec<(bool, bool)> = (0..22).map(|i| (i != 0, true)).collect();
        let b = banded(&two, &scored, &ruled, Band::All, 0.5).unwrap();
        assert_eq!((b.decided, b.by_rule, b.of), (22, 22, 60));
        assert!((b.stats.accuracy - 21.0 / 22.0).abs() < 1e-9);
        assert!(
            b.to_string().starts_with(
                "decided 22 of 60 (coverage 0.37; 22 by the found rule with no call), band all (nothing decided): accuracy 0.955"
            ),
            "{b}"
        );
        // A band that decides readings adds them to the rule's.
        let b = banded(
            &two,
            &[(true, 0.9), (false, 0.1)],
            &ruled[..1],
            Band::Off,
            0.5,
        )
        .unwrap();
        assert_eq!((b.decided, b.by_rule, b.of), (3, 1, 3));
        // Nothing read and nothing ruled: no line.
        assert!(banded(&two, &[], &[], Band::All, 0.5).is_none());
    }

    #[test]
    fn the_fitted_threshold_separates_what_people_said() {
        // People: supported at 0.4 and above, whatever the judge's 0.5.
        let scored = [
            (true, 0.9),
            (true, 0.45),
            (true, 0.41),
            (false, 0.38),
            (false, 0.1),
        ];
        let fit = fit_threshold(ItemKind::Claim, &scored, 0.5).unwrap();
        assert!(fit.threshold > 0.38 && fit.threshold <= 0.41, "{fit:?}");
        assert_eq!(fit.kappa, 1.0);
        assert!(fit.kappa_at_current.unwrap() < 1.0);
        assert_eq!(fit.items, 5);
        // One side only: nothing to fit.
        assert!(fit_threshold(ItemKind::Claim, &[(true, 0.2), (true, 0.9)], 0.5).is_err());
        assert_eq!(
            fit_threshold(ItemKind::Graded, &[(true, 0.0), (false, 0.0)], 0.7).unwrap_err(),
            "every item it decided scored 0.00, so no threshold separates them"
        );
    }

    #[test]
    fn the_threshold_written_is_inside_its_gap_and_its_kappa_is_the_one_reported() {
        // 0.3496 and 0.3504 are people's no and yes: a threshold rounded
        // to three decimals from their midpoint (0.35) still separates
        // them, but one from 0.3494/0.3498 would not (0.35 > 0.3498).
        let scored = [(true, 0.9), (true, 0.3498), (false, 0.3494), (false, 0.1)];
        let fit = fit_threshold(ItemKind::Claim, &scored, 0.5).unwrap();
        assert!(fit.threshold > 0.3494 && fit.threshold <= 0.3498, "{fit:?}");
        assert_eq!(fit.kappa, 1.0, "the kappa at the value written");
        assert_eq!(short_decimal_in(0.38, 0.41), 0.4);
        assert_eq!(short_decimal_in(0.3494, 0.3498), 0.3495);
        assert_eq!(short_decimal_in(0.2, 0.9), 0.3);
        assert_eq!(short_decimal_in(0.99, 1.0), 1.0);
        assert_eq!(written_cuts(&[0.5, 0.2, 0.5]), vec![0.0, 0.3, 0.6]);
    }

    /// Verdicts that cannot tell a threshold from the current one never
    /// move it: 0.33 and 0.3 decide these four items alike, and a fit that
    /// wrote 0.3 moved a team's threshold on no evidence (26 of 780 fits
    /// from 30 reviewed claims did, scripts/simulate-reviews.py).
    #[test]
    fn a_fit_the_items_cannot_tell_from_the_current_threshold_keeps_it() {
        let halves = |low: f64, high: f64| report::Halves {
            drawn: 200,
            fitted: 200,
            min: low,
            max: high,
            low,
            high,
        };
        let mut fit = Fit::new(ItemKind::Claim, 0.45, 0.6, 120, 0.33, Some(0.5));
        fit.halves = Some(halves(0.30, 0.50));
        let why = fit.keeps_current().expect("0.33 is inside 0.30 to 0.50");
        assert!(why.contains("inside the middle 90%"), "{why}");
        fit.halves = Some(halves(0.40, 0.50));
        assert_eq!(fit.keeps_current(), None, "0.33 is outside 0.40 to 0.50");
        fit.too_few = Some("10 items (a fit wants 30)".into());
        assert!(
            fit.keeps_current()
                .unwrap()
                .starts_with("the items are too few")
        );
    }

    #[test]
    fn a_fit_no_better_than_the_current_threshold_keeps_it() {
        let scored = [(true, 0.9), (true, 0.6), (false, 0.2), (false, 0.1)];
        let fit = fit_threshold(ItemKind::Claim, &scored, 0.33).unwrap();
        assert_eq!(
            (fit.threshold, fit.kappa, fit.kappa_at_current),
            (0.33, 1.0, Some(1.0)),
            "{fit:?}"
        );
        // Strictly better elsewhere: the fit moves, into the gap.
        let fit = fit_threshold(ItemKind::Claim, &scored, 0.7).unwrap();
        assert!(fit.threshold > 0.2 && fit.threshold <= 0.6, "{fit:?}");
        // The same for a contradiction ratio that is not one of those tried.
        use Verdict::*;
        let four = [
            (Supported, 0.9, None),
            (Contradicted, 0.05, Some(0.5)),
            (NoEvidence, 0.2, Some(0.1)),
        ];
        let fit = Fit::new(ItemKind::Claim, 0.5, 1.0, 3, 0.5, Some(1.0));
        let c = fit_contradiction(fit, &four, 2.2).contradiction.unwrap();
        assert_eq!((c.ratio, c.kappa), (2.2, 1.0), "{c:?}");
    }

    #[test]
    fn the_contradiction_ratio_earns_its_accusations() {
        use Verdict::*;
        let scored = [
            (Supported, 0.9, None),
            (Supported, 0.7, None),
            (Contradicted, 0.05, Some(0.5)),
            (Contradicted, 0.1, Some(0.35)),
            (NoEvidence, 0.2, Some(0.3)),
            (NoEvidence, 0.1, Some(0.12)),
            // Recorded as supported (not asked), now below the threshold:
            // no evidence.
            (NoEvidence, 0.55, None),
        ];
        let fit = Fit::new(ItemKind::Claim, 0.6, 1.0, 7, 0.5, Some(0.7));
        let fit = fit_contradiction(fit, &scored, 1.0);
        let c = fit.contradiction.unwrap();
        // 1.25 already calls 2 of 3 rightly, but from 1.5 on only the two
        // people call contradicted are: the best kappa among the earned,
        // the nearest to the current of equals.
        assert_eq!(c.ratio, 1.5, "{c:?}");
        assert_eq!((c.kappa, c.precision), (1.0, Some(1.0)));
        assert!(
            c.kappa_at_current.unwrap() < 1.0,
            "at 1 every asked claim is contradicted"
        );
        assert_eq!(c.asked, 4);
        // None asked: the fit is as it was.
        let none = [(Supported, 0.9, None), (NoEvidence, 0.1, None)];
        let fit = Fit::new(ItemKind::Claim, 0.5, 1.0, 2, 0.5, Some(1.0));
        assert!(fit_contradiction(fit, &none, 3.0).contradiction.is_none());
    }

    #[test]
    fn a_fit_says_when_its_items_are_too_few_and_how_far_halves_move_it() {
        // People say yes at 0.4 and above: well separated, 20 a side.
        let separated: Vec<(bool, f64)> = (0..40)
            .map(|i| {
                let yes = i % 2 == 0;
                let p = if yes {
                    0.4 + i as f64 / 100.0
                } else {
                    0.35 - i as f64 / 200.0
                };
                (yes, p)
            })
            .collect();
        let fit = fit_threshold(ItemKind::Claim, &separated, 0.33).unwrap();
        assert_eq!(fit.too_few, None, "{fit:?}");
        let h = fit.halves.clone().unwrap();
        assert_eq!(h.drawn, HALVES);
        assert!(h.fitted > HALVES * 9 / 10, "{h:?}");
        // Every half's threshold lies between its highest no and its
        // lowest yes (the shortest decimal there).
        assert!(h.min > 0.15 && h.max <= 0.4, "{h:?}");
        assert!(h.low >= h.min && h.high <= h.max && h.low <= h.high);
        let again = fit_threshold(ItemKind::Claim, &separated, 0.33).unwrap();
        assert_eq!(again.halves, fit.halves, "seeded: the same report");

        // The newcomer's ten claims: too few, and said why.
        let few = [
            (true, 0.28),
            (true, 0.31),
            (true, 0.30),
            (true, 0.31),
            (false, 0.05),
            (false, 0.03),
            (false, 0.15),
            (false, 0.02),
            (false, 0.05),
            (false, 0.03),
        ];
        let fit = fit_threshold(ItemKind::Claim, &few, 0.33).unwrap();
        assert_eq!(
            fit.too_few.as_deref(),
            Some(
                "10 items (a fit wants 30), 4 supported (a fit wants 10 of each), 6 not_supported (a fit wants 10 of each); give more verdicts (`cargo ragaliq review --all`) before trusting it over the current threshold"
            )
        );
        let line = report::fit_line(&fit);
        assert!(
            line.contains("\n  TOO FEW to mean anything: 10 items"),
            "{line}"
        );
        assert!(line.contains("random halves could be fitted"), "{line}");

        // Noisy labels: halves move the threshold further than clean ones do.
        let noisy: Vec<(bool, f64)> = (0..40)
            .map(|i| (i % 3 == 0, (i as f64 * 0.618).fract()))
            .collect();
        let n = fit_threshold(ItemKind::Claim, &noisy, 0.33)
            .unwrap()
            .halves
            .unwrap();
        assert!(n.high - n.low > h.high - h.low, "{n:?} vs {h:?}");
    }

    #[test]
    fn judge_names_cannot_leave_the_snapshots_folder() {
        for bad in [".", "..", ".hidden", "", "a/b", "a b"] {
            assert!(!valid_judge_name(bad), "{bad:?}");
        }
        for good in ["qwen05", "gpt-4o-mini", "scripted.v2", "x_1"] {
            assert!(valid_judge_name(good), "{good:?}");
        }
    }

    #[test]
    fn files_of_one_stem_keep_their_own_recordings() {
        let root = Path::new("/r");
        let setup = Setup {
            root,
            snapshots: None,
            mode: Mode::Replay,
            record_command: String::new(),
            guarantee: (DEFAULT_ALPHA, DEFAULT_DELTA),
        };
        let yaml = recording_path(&setup, "j", Path::new("labels/x.yaml"));
        let json = recording_path(&setup, "j", Path::new("labels/x.json"));
        assert_eq!(yaml, Path::new("/r/labels/snapshots/j/x.yaml.snap"));
        assert_ne!(yaml, json);
        let flat = Setup {
            snapshots: Some(Path::new("/s")),
            ..setup
        };
        assert_eq!(
            recording_path(&flat, "j", Path::new("labels/dev/x.yaml")),
            Path::new("/s/j/labels__dev__x.yaml.snap")
        );
    }
}
