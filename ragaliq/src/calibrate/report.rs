//! The agreement report: a console table, Markdown and JSON.

use super::{ItemKind, LabelledClaim};
use crate::core::Usage;
use crate::stats::AgreementStats;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::PathBuf;

/// Format of [`CalibrationReport::to_json`].
const FORMAT: u32 = 2;

/// Disagreements printed on the console per judge (every one is in the JSON
/// and Markdown).
const CONSOLE_DISAGREEMENTS: usize = 10;

/// The AUC under which a report says, before any kappa, that the judge
/// cannot separate the set: its score says little about the labels there,
/// and no threshold makes its verdicts agree with people's.
pub const MIN_SEPARATING_AUC: f64 = 0.7;

/// How far each judge agrees with the labels.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct CalibrationReport {
    /// Format of this report's JSON.
    pub format: u32,
    /// What the items are: claims, answers, passages, graded answers or
    /// judged responses.
    pub kind: ItemKind,
    /// Labelled items in the set.
    pub claims: usize,
    /// Claims per person's label.
    pub labels: BTreeMap<String, usize>,
    /// Claims per subject area.
    pub areas: BTreeMap<String, usize>,
    /// The kappa floor, when one is set.
    pub min_kappa: Option<f64>,
    /// For graded answers: how far plain matching agrees with the labels
    /// (an answer is correct when it holds the reference, normalised:
    /// lower case, no punctuation, no articles, number words as digits;
    /// for a reference listing `Accepted answers: "A"; "B"`, any of them;
    /// [`crate::evidence::find_answer`]). The floor a judge must beat:
    /// strong where references are short names and dates, weak where
    /// answers paraphrase.
    pub matching: Option<AgreementStats>,
    /// One result per judge, in the order given.
    pub judges: Vec<JudgeResult>,
}

/// One judge's agreement with the labels.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct JudgeResult {
    /// The name it was given.
    pub name: String,
    /// Provider, model, server and JSON mode.
    pub judge: String,
    /// The model asked (what `--fit` names in a judge file's `[fitted]`).
    pub model: String,
    /// Samples per question.
    pub samples: String,
    /// Claims with a decided verdict: those the agreement figures count.
    pub judged: usize,
    /// Claims without a decided verdict, counted apart and never in the
    /// agreement figures: samples that split below the required agreement,
    /// or a verdict whose evidence is in no passage (see `ungrounded`).
    pub undecided: usize,
    /// Of the undecided claims, those whose verdict cited evidence found in
    /// no passage, even asked again alone.
    pub ungrounded: usize,
    /// The area under the ROC curve of the judge's probability (or score)
    /// against the labels, over the decided items that have one: how well
    /// it separates the two sides whatever the threshold (0.5 is a coin).
    /// `None` without probabilities, or with one side of the labels only.
    pub auc: Option<f64>,
    /// For passages: the AUC of plain word overlap (the share of the
    /// question's words the passage holds) over the same items as `auc`:
    /// the floor a judge's ranking must beat to earn its calls. `None` for
    /// other items, or where `auc` is.
    pub word_overlap_auc: Option<f64>,
    /// Over the four verdicts, decided claims only.
    pub verdicts: AgreementStats,
    /// Over supported / not supported, decided claims only.
    pub collapsed: AgreementStats,
    /// For graded answers: plain matching's agreement over the same items
    /// this judge decided (the set's `matching` counts every item), so the
    /// floor and the judge are compared on the same answers.
    pub matching: Option<AgreementStats>,
    /// Agreement per subject area.
    pub areas: Vec<AreaAgreement>,
    /// Calls, tokens, and exchanges replayed (with the tokens they cost
    /// when recorded).
    pub usage: Usage,
    /// Estimated cost of the live calls, when the model's price is known.
    pub cost_usd: Option<f64>,
    /// Wall time of this judge's run.
    pub seconds: f64,
    /// Recordings new or changed, awaiting `cargo insta review`.
    pub pending: Vec<PathBuf>,
    /// Claims the judge could not verify, and why.
    pub not_judged: Vec<NotJudged>,
    /// Decided claims where the judge's verdict is not the person's.
    pub disagreements: Vec<Disagreement>,
    /// The undecided claims, with the verdict the judge leaned to.
    pub undecided_claims: Vec<Disagreement>,
    /// Over the items with a probability: how many the judge's band
    /// decides, and their agreement with the labels (the rest await a
    /// person in a test).
    pub banded: Option<Banded>,
    /// With a fit: the band fitted on these items, with its guarantee.
    pub band_fit: Option<super::BandFit>,
    /// The threshold that agrees best with the labels, when asked for
    /// ([`Calibration::with_fit`](super::Calibration::with_fit)) and the
    /// judge's verdicts come with probabilities.
    pub fit: Option<Fit>,
    /// Why no threshold was fitted, when one was asked for and none was
    /// found (no probabilities, one side of the labels only, every item
    /// scored the same).
    pub unfitted: Option<String>,
}

impl JudgeResult {
    /// Where the judge's AUC is under [`MIN_SEPARATING_AUC`], what that
    /// means for `kind`, in words: `cannot separate this set (AUC 0.64):
    /// its criteria score says little about which responses meet the
    /// criteria`. `None` where it separates the set, or was not measured.
    #[must_use]
    pub fn cannot_separate(&self, kind: ItemKind) -> Option<String> {
        let auc = self.auc.filter(|a| *a < MIN_SEPARATING_AUC)?;
        let (score, which) = match kind {
            ItemKind::Claim => ("P(supported)", "claims the passages support"),
            ItemKind::Answer => ("relevance score", "answers answer the question"),
            ItemKind::Passage => ("P(relevant)", "passages help answer the question"),
            ItemKind::Graded => ("correctness score", "answers are correct"),
            ItemKind::Judged => ("criteria score", "responses meet the criteria"),
        };
        Some(format!(
            "cannot separate this set (AUC {auc:.2}): its {score} says little about which {which}"
        ))
    }

    /// For passages, where the judge ranks them no better than plain
    /// matching does (the share of the question's words each passage
    /// holds, over the same items): what to say, before any kappa, as for
    /// [`JudgeResult::cannot_separate`]. On such a set the judge's calls
    /// earn nothing a word count does not.
    #[must_use]
    pub fn no_better_than_plain(&self) -> Option<String> {
        let (auc, words) = (self.auc?, self.word_overlap_auc?);
        (auc <= words).then(|| {
            format!(
                "ranks these passages no better than plain matching (AUC {auc:.2}; counting the question's words in each passage: {words:.2})"
            )
        })
    }

    /// Whether the four-verdict figures measure anything: the labels give
    /// at least two of the four verdicts (a set labelled supported / not
    /// supported only, as most public ones are, gives one).
    #[must_use]
    pub fn four_way_measured(&self) -> bool {
        self.verdicts
            .confusion
            .iter()
            .filter(|row| row.iter().sum::<u64>() > 0)
            .count()
            >= 2
    }

    /// The figures `--min-kappa` is held to: the four verdicts for claims
    /// where they are measured, else supported / not (relevant / not).
    #[must_use]
    pub fn headline_stats(&self, kind: ItemKind) -> &AgreementStats {
        if kind == ItemKind::Claim && !self.four_way_measured() {
            &self.collapsed
        } else {
            &self.verdicts
        }
    }
}

/// A threshold fitted to the labels: on P(supported) for claims, on the
/// relevance score for answers, on P(relevant) for passages.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Fit {
    /// What was fitted.
    pub kind: ItemKind,
    /// The threshold (rounded to three decimals).
    pub threshold: f64,
    /// The two-way kappa at it, on this set.
    pub kappa: f64,
    /// Decided items with a probability, which the fit used.
    pub items: usize,
    /// Items the fit left out: undecided ones, decided ones whose verdict
    /// came from the word written (no probability to cut), and ones not
    /// verified. Said in its line, so a fit on few of many items shows.
    pub left_out: LeftOut,
    /// The judge's threshold now.
    pub current: f64,
    /// The two-way kappa at the current threshold, on the same items.
    pub kappa_at_current: Option<f64>,
    /// For claims asked whether they are contradicted: the threshold on
    /// P(contradicted) that agrees best over the four verdicts, given
    /// [`threshold`](Fit::threshold).
    pub contradiction: Option<ContradictionFit>,
    /// Why the items are too few for the threshold to mean anything
    /// (fewer than [`MIN_FIT_ITEMS`](super::MIN_FIT_ITEMS) in all, or than
    /// [`MIN_FIT_SIDE`](super::MIN_FIT_SIDE) of either label); `None` when
    /// there are enough by that rule of thumb.
    pub too_few: Option<String>,
    /// How far the threshold moves when fitted on half of the items.
    pub halves: Option<Halves>,
}

/// The threshold fitted on random halves of the items, again and again:
/// how much a fitted threshold owes to which items happened to be labelled.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Halves {
    /// Halves drawn (seeded: the same report for the same items).
    pub drawn: usize,
    /// Of those, halves a threshold could be fitted on (both labels in it,
    /// and more than one score).
    pub fitted: usize,
    /// The lowest and highest threshold fitted on a half.
    pub min: f64,
    /// See [`min`](Self::min).
    pub max: f64,
    /// The middle 90% of the thresholds fitted on halves: from its 5th
    /// percentile ...
    pub low: f64,
    /// ... to its 95th.
    pub high: f64,
}

/// The items a [`Fit`] did not use, by why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LeftOut {
    /// Undecided (samples split, or evidence in no passage).
    pub undecided: usize,
    /// Decided from the word written, with no probability to cut.
    pub word_read: usize,
    /// Not verified (the judge's reply could not be read, no recording).
    pub not_verified: usize,
}

impl LeftOut {
    fn total(self) -> usize {
        self.undecided + self.word_read + self.not_verified
    }
}

/// The contradiction ratio fitted to the labels (a claim is contradicted
/// when P(contradicted) is more than this many times P(supported)).
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ContradictionFit {
    /// The ratio: the smallest that calls claims contradicted rightly at
    /// least 60% of the time on the labels, else the one with the best
    /// four-verdict kappa.
    pub ratio: f64,
    /// The four-verdict kappa at it (and at the fitted claim threshold).
    pub kappa: f64,
    /// Of the claims it calls contradicted, the share people call
    /// contradicted (`None` when it calls none).
    pub precision: Option<f64>,
    /// The judge's contradiction ratio now.
    pub current: f64,
    /// The four-verdict kappa at the current ratio (and the fitted claim
    /// threshold), on the same claims.
    pub kappa_at_current: Option<f64>,
    /// Claims below the fitted claim threshold that were asked whether
    /// they are contradicted.
    pub asked: usize,
}

impl Fit {
    /// A fit: `threshold` on the judge's probability for items of `kind`,
    /// with its kappa, over `items`, and the current threshold and its
    /// kappa.
    ///
    /// ```
    /// use ragaliq::calibrate::{Fit, ItemKind};
    /// let fit = Fit::new(ItemKind::Claim, 0.34, 0.56, 176, 0.5, Some(0.43));
    /// assert_eq!(fit.key(), ("judge", "claim_threshold"));
    /// ```
    #[must_use]
    pub fn new(
        kind: ItemKind,
        threshold: f64,
        kappa: f64,
        items: usize,
        current: f64,
        kappa_at_current: Option<f64>,
    ) -> Fit {
        Fit {
            kind,
            threshold,
            kappa,
            items,
            left_out: LeftOut::default(),
            current,
            kappa_at_current,
            contradiction: None,
            too_few: None,
            halves: None,
        }
    }

    /// The fit with a contradiction ratio: `ratio` (contradicted when
    /// P(contradicted) is more than `ratio` times P(supported)), its
    /// four-verdict kappa, the precision of its "contradicted" (`None`
    /// when it accuses no claim), the current ratio and its kappa, over
    /// `asked` claims the contradiction question was asked of.
    ///
    /// ```
    /// use ragaliq::calibrate::{Fit, ItemKind};
    /// let fit = Fit::new(ItemKind::Claim, 0.34, 0.56, 176, 0.33, Some(0.43))
    ///     .with_contradiction(2.0, 0.35, Some(0.71), 3.0, Some(0.31), 120);
    /// assert_eq!(fit.contradiction.unwrap().ratio, 2.0);
    /// ```
    #[must_use]
    pub fn with_contradiction(
        mut self,
        ratio: f64,
        kappa: f64,
        precision: Option<f64>,
        current: f64,
        kappa_at_current: Option<f64>,
        asked: usize,
    ) -> Fit {
        self.contradiction = Some(ContradictionFit {
            ratio,
            kappa,
            precision,
            current,
            kappa_at_current,
            asked,
        });
        self
    }

    /// The judge-file key the threshold belongs to: `judge.claim_threshold`,
    /// `thresholds.relevance` or `judge.passage_threshold`.
    #[must_use]
    pub fn key(&self) -> (&'static str, &'static str) {
        match self.kind {
            ItemKind::Claim => ("judge", "claim_threshold"),
            ItemKind::Answer => ("thresholds", "relevance"),
            ItemKind::Passage => ("judge", "passage_threshold"),
            ItemKind::Graded => ("thresholds", "correctness"),
            ItemKind::Judged => ("thresholds", "criteria"),
        }
    }

    /// Why the current threshold should stay rather than this fit, when
    /// the items cannot tell them apart: they are too few, or the
    /// thresholds fitted on random halves of them, in their middle 90%,
    /// take in the current one. `None` when the fit stands on its items.
    ///
    /// `cargo ragaliq calibrate --fit` writes nothing in that case (it
    /// says why, and `--fit-anyway` writes it): a team's 30 reviewed
    /// verdicts moved the threshold where the default was already near
    /// the source's best, and lost agreement on the rest (BENCHMARKS.md, "A
    /// team's own verdicts").
    ///
    /// ```
    /// use ragaliq::calibrate::{Fit, ItemKind};
    /// let fit = Fit::new(ItemKind::Claim, 0.34, 0.56, 176, 0.33, Some(0.55));
    /// assert_eq!(fit.keeps_current(), None, "no halves drawn, enough items");
    /// ```
    #[must_use]
    pub fn keeps_current(&self) -> Option<String> {
        if let Some(why) = &self.too_few {
            return Some(format!("the items are too few to mean anything: {why}"));
        }
        let h = self.halves.as_ref()?;
        (h.fitted > 0 && h.low <= self.current && self.current <= h.high).then(|| {
            format!(
                "the current {:.3} is inside the middle 90% of the thresholds fitted on halves of the items ({:.3} to {:.3}): they cannot tell it from {:.3}",
                self.current, h.low, h.high, self.threshold
            )
        })
    }
}

/// Agreement within one subject area.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct AreaAgreement {
    /// The area.
    pub area: String,
    /// Claims with a decided verdict.
    pub claims: usize,
    /// Of those, verdicts equal to the label.
    pub agreeing: usize,
    /// Claims left undecided.
    pub undecided: usize,
}

/// A claim without a verdict.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct NotJudged {
    /// The claim's id.
    pub id: String,
    /// `file:line`.
    pub place: String,
    /// The judge's error.
    pub error: String,
}

/// A claim where the judge and the person differ, or that the judge left
/// undecided.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Disagreement {
    /// The claim's id.
    pub id: String,
    /// Its area.
    pub area: String,
    /// The claim.
    pub claim: String,
    /// The person's verdict.
    pub label: String,
    /// The judge's (for an undecided claim, the one it leaned to).
    pub verdict: String,
    /// `k of N` samples, with several samples.
    pub agreement: Option<String>,
    /// Whether the claim is undecided.
    pub undecided: bool,
    /// Whether it is undecided because its evidence is in no passage.
    pub ungrounded: bool,
    /// The judge's evidence.
    pub evidence: String,
    /// The passage (1-based) the evidence was found in.
    pub evidence_in: Option<usize>,
    /// The claim's passages.
    pub passages: Vec<String>,
    /// The person's note.
    pub note: Option<String>,
    /// `file:line`.
    pub place: String,
    /// What the judge's verdict was read from (P(supported), the relevance
    /// score, P(relevant)), when it came with one.
    pub probability: Option<f64>,
}

impl CalibrationReport {
    pub(super) fn new(
        claims: &[LabelledClaim],
        min_kappa: Option<f64>,
        judges: Vec<JudgeResult>,
    ) -> Self {
        let mut labels = BTreeMap::new();
        let mut areas = BTreeMap::new();
        for c in claims {
            *labels.entry(c.label.label().to_owned()).or_insert(0) += 1;
            *areas.entry(c.area.clone()).or_insert(0) += 1;
        }
        let kind = claims.first().map_or(ItemKind::Claim, |c| c.kind);
        let matching = (kind == ItemKind::Graded).then(|| {
            let pairs: Vec<(usize, usize)> = claims
                .iter()
                .map(|c| {
                    let matched = plain_match(c.reference.as_deref().unwrap_or_default(), &c.claim);
                    (usize::from(!c.label.positive()), usize::from(!matched))
                })
                .collect();
            crate::stats::agreement(&["correct", "not_correct"], &pairs, 0, 0)
        });
        CalibrationReport {
            format: FORMAT,
            kind,
            claims: claims.len(),
            labels,
            areas,
            min_kappa,
            matching,
            judges,
        }
    }

    /// Whether every judge verified every claim, has no recording awaiting
    /// review, and reaches the kappa floor (when one is set).
    #[must_use]
    pub fn passed(&self) -> bool {
        self.failures().is_empty()
    }

    /// Why the run does not pass, one line per reason.
    #[must_use]
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for j in &self.judges {
            if !j.not_judged.is_empty() {
                out.push(format!(
                    "judge `{}`: {} of {} {} could not be verified (first: {} at {}: {})",
                    j.name,
                    j.not_judged.len(),
                    self.claims,
                    self.kind.plural(),
                    j.not_judged[0].id,
                    j.not_judged[0].place,
                    j.not_judged[0].error
                ));
            }
            if !j.pending.is_empty() {
                out.push(format!(
                    "judge `{}`: {} new or changed recordings await review: run `cargo insta review`, then commit them (first: {})",
                    j.name,
                    j.pending.len(),
                    j.pending[0].display()
                ));
            }
            if let Some(floor) = self.min_kappa {
                match j.headline_stats(self.kind).kappa {
                    Some(k) if k >= floor => {}
                    Some(k) => out.push(format!(
                        "judge `{}`: kappa {k:.3} is below the floor {floor:.2}",
                        j.name
                    )),
                    None => out.push(format!(
                        "judge `{}`: kappa is undefined (one label only), so it cannot reach the floor {floor:.2}",
                        j.name
                    )),
                }
            }
        }
        out
    }

    /// The report as pretty JSON.
    #[must_use]
    pub fn to_json(&self) -> String {
        // Plain data of strings and numbers: serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The report as Markdown: the comparison table, then per judge the
    /// confusion matrices, per-label figures, areas and disagreements.
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "## ragaliq: agreement with {}\n", self.set_line());
        let mut warned = false;
        for j in &self.judges {
            for why in [j.cannot_separate(self.kind), j.no_better_than_plain()]
                .into_iter()
                .flatten()
            {
                let _ = writeln!(s, "> **judge `{}` {why}**", j.name);
                warned = true;
            }
        }
        if warned {
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "| judge | samples | judged | AUC | accuracy | kappa (95% CI) | macro-F1 | supported/not kappa | undecided | ungrounded | not verified | calls | replayed | tokens¹ | cost | time |"
        );
        let _ = writeln!(
            s,
            "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        );
        for j in &self.judges {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {:.3} | {} | {:.3} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} s |",
                j.name,
                j.samples,
                j.judged,
                ratio(j.auc),
                j.verdicts.accuracy,
                kappa_text(&j.verdicts),
                j.verdicts.macro_f1,
                kappa_text(&j.collapsed),
                j.undecided,
                j.ungrounded,
                j.not_judged.len(),
                j.usage.calls,
                j.usage.replayed,
                j.usage
                    .total_tokens()
                    .saturating_add(j.usage.replayed_tokens),
                cost_text(j.cost_usd),
                j.seconds
            );
        }
        let _ = writeln!(
            s,
            "\n¹ spent now plus, for replayed exchanges, what they cost when recorded: the judges' relative price.\n\nAgreement counts decided claims only; undecided claims (split samples, or evidence in no passage: ungrounded) are counted apart. Kappa's interval resamples groups of claims that share passages and judge calls."
        );
        if let Some(floor) = self.min_kappa {
            let _ = writeln!(s, "\nkappa floor: {floor:.2}");
        }
        for j in &self.judges {
            let _ = writeln!(s, "\n### `{}`: {}\n", j.name, j.judge);
            for stats in [&j.verdicts, &j.collapsed] {
                s.push_str(&markdown_matrix(stats));
                s.push('\n');
            }
            let _ = writeln!(
                s,
                "| area | decided | agreeing | undecided |\n|---|--:|--:|--:|"
            );
            for a in &j.areas {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    a.area, a.claims, a.agreeing, a.undecided
                );
            }
            if !j.not_judged.is_empty() {
                let _ = writeln!(s, "\nNot verified:\n");
                for n in &j.not_judged {
                    let _ = writeln!(s, "- `{}` ({}): {}", n.id, n.place, one_line(&n.error));
                }
            }
            if !j.disagreements.is_empty() {
                let _ = writeln!(
                    s,
                    "\n<details><summary>{} disagreements</summary>\n\n| claim | person | judge | claim text | note |\n|---|---|---|---|---|",
                    j.disagreements.len()
                );
                for d in &j.disagreements {
                    let _ = writeln!(
                        s,
                        "| `{}` | {} | {}{} | {} | {} |",
                        d.id,
                        d.label,
                        d.verdict,
                        d.agreement
                            .as_ref()
                            .map(|a| format!(" ({a})"))
                            .unwrap_or_default(),
                        cell(&d.claim),
                        cell(d.note.as_deref().unwrap_or(""))
                    );
                }
                let _ = writeln!(s, "\n</details>");
            }
            if !j.undecided_claims.is_empty() {
                let _ = writeln!(
                    s,
                    "\n<details><summary>{} undecided ({} ungrounded)</summary>\n\n| claim | person | judge leaned to | why | claim text |\n|---|---|---|---|---|",
                    j.undecided_claims.len(),
                    j.ungrounded
                );
                for d in &j.undecided_claims {
                    let _ = writeln!(
                        s,
                        "| `{}` | {} | {} | {} | {} |",
                        d.id,
                        d.label,
                        d.verdict,
                        undecided_why(d),
                        cell(&d.claim)
                    );
                }
                let _ = writeln!(s, "\n</details>");
            }
        }
        s
    }

    fn set_line(&self) -> String {
        format!(
            "{} labelled {} over {} areas ({})",
            self.claims,
            self.kind.plural(),
            self.areas.len(),
            self.labels
                .iter()
                .map(|(l, n)| format!("{l} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl CalibrationReport {
    /// The names of the headline figures: the four verdicts and
    /// supported / not for claims; relevant / not for answers and passages,
    /// correct / not for graded answers, meets / fails for judged responses
    /// (both figures are the same there).
    fn headline(&self) -> (&'static str, &'static str) {
        match self.kind {
            ItemKind::Claim => ("four verdicts:", "supported / not:"),
            ItemKind::Answer | ItemKind::Passage => ("relevant / not:", "relevant / not:"),
            ItemKind::Graded => ("correct / not:", "correct / not:"),
            ItemKind::Judged => ("meets / fails:", "meets / fails:"),
        }
    }
}

/// "fitted: P(supported) >= 0.340 gives kappa 0.563 (now 0.50: 0.431) over 176 claims".
pub(super) fn fit_line(fit: &Fit) -> String {
    let what = match fit.kind {
        ItemKind::Claim => "P(supported)",
        ItemKind::Answer => "the relevance score",
        ItemKind::Passage => "P(relevant)",
        ItemKind::Graded => "the correctness score",
        ItemKind::Judged => "the criteria score",
    };
    let kappa = |k: Option<f64>| k.map_or_else(|| "undefined".to_owned(), |k| format!("{k:.3}"));
    let mut line = format!(
        "fitted: {what} >= {:.3} gives kappa {:.3} (at the current {:.2}: {}) over {} {}",
        fit.threshold,
        fit.kappa,
        fit.current,
        kappa(fit.kappa_at_current),
        fit.items,
        fit.kind.plural()
    );
    let left = fit.left_out;
    if left.total() > 0 {
        let mut why = Vec::new();
        for (n, what) in [
            (left.undecided, "undecided"),
            (
                left.word_read,
                "read from the word written, with no probability",
            ),
            (left.not_verified, "not verified"),
        ] {
            if n > 0 {
                why.push(format!("{n} {what}"));
            }
        }
        line.push_str(&format!(" ({} left out: {})", left.total(), why.join(", ")));
    }
    if let Some(c) = &fit.contradiction {
        line.push_str(&format!(
            "; below it, contradicted at P(contradicted) > {} x P(supported) gives four-verdict kappa {:.3} (at the current {}: {}), contradicted right {} of the time, over the {} asked",
            c.ratio,
            c.kappa,
            c.current,
            kappa(c.kappa_at_current),
            c.precision.map_or_else(|| "—".to_owned(), |p| format!("{p:.2}")),
            c.asked
        ));
    }
    if let Some(h) = &fit.halves {
        line.push_str(&format!(
            "\n  fitted on half of them ({} of {} random halves could be fitted): {:.3} to {:.3}, the middle 90% {:.3} to {:.3}",
            h.fitted, h.drawn, h.min, h.max, h.low, h.high
        ));
    }
    if let Some(why) = &fit.too_few {
        line.push_str(&format!("\n  TOO FEW to mean anything: {why}"));
    }
    line
}

/// Why a claim is undecided, in a few words.
fn undecided_why(d: &Disagreement) -> String {
    if d.ungrounded {
        format!(
            "evidence in no passage: {}",
            cell(&format!("{:?}", d.evidence))
        )
    } else {
        format!(
            "samples split ({})",
            d.agreement.as_deref().unwrap_or("below the agreement")
        )
    }
}

fn kappa_text(stats: &AgreementStats) -> String {
    match (stats.kappa, stats.kappa_interval) {
        (Some(k), Some((lo, hi))) => format!("{k:.3} ({lo:.3} to {hi:.3})"),
        (Some(k), None) => format!("{k:.3}"),
        (None, _) => "undefined".into(),
    }
}

fn cost_text(cost: Option<f64>) -> String {
    cost.map_or_else(|| "unknown price".into(), |c| format!("${c:.4}"))
}

fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "—".into(), |x| format!("{x:.2}"))
}

fn one_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_owned()
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn markdown_matrix(stats: &AgreementStats) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| person \\ judge | {} | recall |",
        stats.labels.join(" | ")
    );
    let _ = writeln!(s, "|---|{}--:|", "--:|".repeat(stats.labels.len()));
    for (row, l) in stats.confusion.iter().zip(&stats.per_label) {
        let cells: Vec<String> = row.iter().map(u64::to_string).collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            l.label,
            cells.join(" | "),
            ratio(l.recall)
        );
    }
    let precision: Vec<String> = stats.per_label.iter().map(|l| ratio(l.precision)).collect();
    let _ = writeln!(s, "| precision | {} | |", precision.join(" | "));
    s
}

/// Whether `response` holds the reference (or one of the accepted answers
/// it lists), normalised, as whole words: the rule answer correctness shows
/// as its evidence ([`crate::evidence::find_answer`]), so the floor and the
/// message read answers alike.
pub(crate) fn plain_match(reference: &str, response: &str) -> bool {
    crate::evidence::find_answer(reference, response).is_some()
}

/// The items a judge's band decides, those a rule decided with no call,
/// and their agreement with the labels.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Banded {
    /// The band, at the threshold.
    pub band: crate::core::Band,
    /// Items decided: outside the band, or by a rule with no call.
    pub decided: usize,
    /// Of them, decided by a rule with no call (the found rule of answer
    /// correctness): no judge's reading, so no band.
    pub by_rule: usize,
    /// Items with a probability, and those a rule decided.
    pub of: usize,
    /// Agreement over the decided items.
    pub stats: AgreementStats,
}

impl Banded {
    /// `decided / of`: the share a test would decide without a person.
    #[must_use]
    pub fn coverage(&self) -> f64 {
        if self.of == 0 {
            0.0
        } else {
            self.decided as f64 / self.of as f64
        }
    }
}

impl fmt::Display for Banded {
    /// `decided 812 of 1000 (coverage 0.81), band [0.10, 0.50): accuracy 0.930  kappa 0.812`,
    /// and what a rule decided: `decided 22 of 60 (coverage 0.37; 22 by the
    /// found rule with no call), band all: …`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "decided {} of {} (coverage {:.2}",
            self.decided,
            self.of,
            self.coverage(),
        )?;
        if self.by_rule > 0 {
            write!(f, "; {} by the found rule with no call", self.by_rule)?;
        }
        write!(f, "), band {}: ", self.band)?;
        if self.decided == 0 {
            f.write_str("nothing decided")
        } else {
            write!(
                f,
                "accuracy {:.3}  kappa {}",
                self.stats.accuracy,
                kappa_text(&self.stats)
            )
        }
    }
}

/// The console form: per judge the headline figures, the confusion matrix
/// and the first disagreements; then, with several judges, the comparison
/// table.
impl fmt::Display for CalibrationReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "agreement with {}", self.set_line())?;
        // Said before any kappa: a judge whose score does not separate the
        // set has kappas no threshold can mend.
        for j in &self.judges {
            for why in [j.cannot_separate(self.kind), j.no_better_than_plain()]
                .into_iter()
                .flatten()
            {
                writeln!(f, "judge `{}` {why}", j.name)?;
            }
        }
        if let Some(m) = &self.matching {
            writeln!(
                f,
                "floor: plain matching (the reference, normalised, found in the answer), all {} answers: accuracy {:.3}  kappa {}",
                self.claims,
                m.accuracy,
                kappa_text(m)
            )?;
        }
        for j in &self.judges {
            writeln!(
                f,
                "\njudge `{}`: {}; samples {}",
                j.name, j.judge, j.samples
            )?;
            let agreement = |f: &mut fmt::Formatter<'_>, label: &str, a: &AgreementStats| {
                writeln!(
                    f,
                    "  {label:<24} accuracy {:.3}  kappa {}  macro-F1 {:.3}",
                    a.accuracy,
                    kappa_text(a),
                    a.macro_f1
                )
            };
            if let Some(auc) = j.auc {
                writeln!(
                    f,
                    "  {:<24} {auc:.3}{}",
                    "AUC:",
                    if auc < MIN_SEPARATING_AUC {
                        " (under 0.7: the judge cannot separate this set)"
                    } else {
                        ""
                    }
                )?;
            }
            if let Some(words) = j.word_overlap_auc {
                writeln!(
                    f,
                    "  {:<24} AUC {words:.3} (the question's words counted in each passage)",
                    "floor, plain matching:",
                )?;
            }
            if j.four_way_measured() || self.kind != ItemKind::Claim {
                agreement(f, self.headline().0, &j.verdicts)?;
            } else {
                // The four verdicts the labels give (rows with items).
                let given: Vec<&str> = j
                    .verdicts
                    .labels
                    .iter()
                    .zip(&j.verdicts.confusion)
                    .filter(|(_, row)| row.iter().sum::<u64>() > 0)
                    .map(|(label, _)| label.as_str())
                    .collect();
                match given.as_slice() {
                    [one] => writeln!(
                        f,
                        "  {:<24} not measured: every label is `{one}`, one of the four verdicts: it takes two to measure them",
                        self.headline().0,
                    )?,
                    _ => writeln!(
                        f,
                        "  {:<24} not measured: the labels say supported or not supported only",
                        self.headline().0,
                    )?,
                }
            }
            if self.kind == ItemKind::Claim {
                agreement(f, self.headline().1, &j.collapsed)?;
            }
            // With no band every reading decides: the line would repeat
            // the one above.
            if let Some(b) = j.banded.as_ref().filter(|b| !b.band.is_off()) {
                writeln!(f, "  {:<24} {b}", "by the band:")?;
            }
            if let Some(m) = &j.matching {
                // The floor over the answers this judge decided: the same
                // items its kappa is read over.
                agreement(f, "plain matching:", m)?;
                let left_out = j.undecided + j.not_judged.len();
                writeln!(
                    f,
                    "  (both over the {} answers the judge decided; it left out {}: {} undecided, {} not verified)",
                    j.judged,
                    left_out,
                    j.undecided,
                    j.not_judged.len()
                )?;
            }
            if let Some(fit) = &j.fit {
                writeln!(f, "  {}", fit_line(fit))?;
            }
            if let Some(band) = &j.band_fit {
                writeln!(f, "  fitted {band}")?;
            }
            writeln!(f)?;
            let width = j
                .verdicts
                .labels
                .iter()
                .map(String::len)
                .max()
                .unwrap_or(0)
                .max("person \\ judge".len());
            write!(f, "  {:<width$}", "person \\ judge")?;
            for l in &j.verdicts.labels {
                write!(f, "  {l:>width$}")?;
            }
            writeln!(f, "  {:>7}", "recall")?;
            for (row, l) in j.verdicts.confusion.iter().zip(&j.verdicts.per_label) {
                write!(f, "  {:<width$}", l.label)?;
                for c in row {
                    write!(f, "  {c:>width$}")?;
                }
                writeln!(f, "  {:>7}", ratio(l.recall))?;
            }
            write!(f, "  {:<width$}", "precision")?;
            for l in &j.verdicts.per_label {
                write!(f, "  {:>width$}", ratio(l.precision))?;
            }
            writeln!(f)?;
            writeln!(
                f,
                "\n  {} decided, {} undecided ({} ungrounded), {} not verified; calls {}, replayed {}, tokens {} (replayed ones as recorded), cost {}, {:.2} s",
                j.judged,
                j.undecided,
                j.ungrounded,
                j.not_judged.len(),
                j.usage.calls,
                j.usage.replayed,
                j.usage
                    .total_tokens()
                    .saturating_add(j.usage.replayed_tokens),
                cost_text(j.cost_usd),
                j.seconds
            )?;
            if !j.disagreements.is_empty() {
                writeln!(
                    f,
                    "  {} disagreements{}:",
                    j.disagreements.len(),
                    if j.disagreements.len() > CONSOLE_DISAGREEMENTS {
                        format!(" (first {CONSOLE_DISAGREEMENTS}; all in the JSON and Markdown)")
                    } else {
                        String::new()
                    }
                )?;
                for d in j.disagreements.iter().take(CONSOLE_DISAGREEMENTS) {
                    writeln!(
                        f,
                        "    {} {}: person {}, judge {}{} — {:?}",
                        d.place,
                        d.id,
                        d.label,
                        d.verdict,
                        d.agreement
                            .as_ref()
                            .map(|a| format!(" ({a})"))
                            .unwrap_or_default(),
                        d.claim
                    )?;
                }
            }
        }
        if self.judges.len() > 1 {
            writeln!(
                f,
                "\ncomparison (decided claims; undecided and not verified apart):"
            )?;
            writeln!(
                f,
                "  {:<16} {:>7} {:>7} {:>11} {:>8} {:>26} {:>26} {:>6} {:>8} {:>9} {:>14} {:>8}",
                "judge",
                "samples",
                "decided",
                "undec.(ungr)",
                "unverif.",
                "kappa (95% CI)",
                "supported/not kappa",
                "calls",
                "replayed",
                "tokens",
                "cost",
                "time"
            )?;
            for j in &self.judges {
                writeln!(
                    f,
                    "  {:<16} {:>7} {:>7} {:>11} {:>8} {:>26} {:>26} {:>6} {:>8} {:>9} {:>14} {:>6.2} s",
                    j.name,
                    j.samples,
                    j.judged,
                    format!("{} ({})", j.undecided, j.ungrounded),
                    j.not_judged.len(),
                    kappa_text(&j.verdicts),
                    kappa_text(&j.collapsed),
                    j.usage.calls,
                    j.usage.replayed,
                    j.usage
                        .total_tokens()
                        .saturating_add(j.usage.replayed_tokens),
                    cost_text(j.cost_usd),
                    j.seconds
                )?;
            }
        }
        for failure in self.failures() {
            writeln!(f, "\nFAILED: {failure}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge_with_auc(auc: Option<f64>) -> JudgeResult {
        let stats = crate::stats::agreement(&["meets", "fails"], &[(0, 0), (1, 0)], 0, 1);
        JudgeResult {
            name: "small".into(),
            judge: "openai `m`".into(),
            model: "m".into(),
            samples: "1".into(),
            judged: 2,
            undecided: 0,
            ungrounded: 0,
            auc,
            word_overlap_auc: None,
            verdicts: stats.clone(),
            collapsed: stats,
            matching: None,
            areas: Vec::new(),
            usage: Usage::default(),
            cost_usd: None,
            seconds: 1.0,
            pending: Vec::new(),
            not_judged: Vec::new(),
            disagreements: Vec::new(),
            undecided_claims: Vec::new(),
            banded: None,
            band_fit: None,
            fit: None,
            unfitted: None,
        }
    }

    /// Where a judge's score does not separate the set, the report says so
    /// in words before any kappa, in every form; at 0.7 and above it only
    /// gives the AUC.
    #[test]
    fn a_judge_that_cannot_separate_the_set_is_said_so_before_any_kappa() {
        let said = "judge `small` cannot separate this set (AUC 0.64): its criteria score says little about which responses meet the criteria";
        let mut report = CalibrationReport::new(&[], None, vec![judge_with_auc(Some(0.64))]);
        report.kind = ItemKind::Judged;
        for text in [report.to_string(), report.to_markdown(), report.to_html()] {
            // The page names the judge in markup of its own.
            let at = text
                .find(said.split_once("` ").unwrap().1)
                .unwrap_or_else(|| panic!("not said: {text}"));
            assert!(at < text.find("kappa").unwrap(), "{text}");
        }
        assert!(report.to_string().contains(said));
        assert!(report.to_markdown().contains(said));
        assert!(report.to_string().contains(
            "  AUC:                     0.640 (under 0.7: the judge cannot separate this set)"
        ));
        report.kind = ItemKind::Claim;
        assert!(report.to_string().contains(
            "cannot separate this set (AUC 0.64): its P(supported) says little about which claims the passages support"
        ));
        let report = CalibrationReport::new(&[], None, vec![judge_with_auc(Some(0.7))]);
        let text = report.to_string();
        assert!(!text.contains("cannot separate"), "{text}");
        assert!(
            text.contains("  AUC:                     0.700\n"),
            "{text}"
        );
        let report = CalibrationReport::new(&[], None, vec![judge_with_auc(None)]);
        assert!(!report.to_string().contains("AUC"));
    }

    /// Passages carry plain matching's AUC beside the judge's: where the
    /// judge ranks them no better, every form says so before any kappa;
    /// where it ranks them better, only the figure is given.
    #[test]
    fn a_judge_no_better_than_counting_the_questions_words_is_said_so() {
        let said = "judge `small` ranks these passages no better than plain matching (AUC 0.60; counting the question's words in each passage: 0.70)";
        let mut judge = judge_with_auc(Some(0.6));
        judge.word_overlap_auc = Some(0.7);
        let mut report = CalibrationReport::new(&[], None, vec![judge.clone()]);
        report.kind = ItemKind::Passage;
        for text in [report.to_string(), report.to_markdown()] {
            let at = text
                .find(said)
                .unwrap_or_else(|| panic!("not said: {text}"));
            assert!(at < text.find("kappa").unwrap(), "{text}");
        }
        let page = report.to_html();
        assert!(
            page.contains("ranks these passages no better than plain matching (AUC 0.60; counting the question&#39;s words in each passage: 0.70)"),
            "{page}"
        );
        assert!(report.to_string().contains(
            "  floor, plain matching:   AUC 0.700 (the question's words counted in each passage)\n"
        ));
        // A tie earns nothing either.
        judge.auc = Some(0.7);
        assert!(judge.no_better_than_plain().is_some());
        judge.auc = Some(0.71);
        let report = CalibrationReport::new(&[], None, vec![judge]);
        let text = report.to_string();
        assert!(!text.contains("no better"), "{text}");
        assert!(
            text.contains("floor, plain matching:   AUC 0.700"),
            "{text}"
        );
        assert!(
            !CalibrationReport::new(&[], None, vec![judge_with_auc(Some(0.6))])
                .to_string()
                .contains("plain matching")
        );
    }

    /// Token counts come from servers: a judge that reports `u64::MAX`
    /// must not overflow the sums of the table, the page or the Markdown.
    #[test]
    fn server_given_token_counts_never_overflow_the_report() {
        let stats =
            crate::stats::agreement(&["supported", "not_supported"], &[(0, 0), (1, 1)], 0, 1);
        let judge = JudgeResult {
            name: "huge".into(),
            judge: "openai `m`".into(),
            model: "m".into(),
            samples: "1".into(),
            judged: 2,
            undecided: 0,
            ungrounded: 0,
            auc: None,
            word_overlap_auc: None,
            verdicts: stats.clone(),
            collapsed: stats,
            matching: None,
            areas: Vec::new(),
            usage: Usage {
                calls: 1,
                input_tokens: u64::MAX,
                output_tokens: u64::MAX,
                replayed_tokens: u64::MAX,
                ..Usage::default()
            },
            cost_usd: None,
            seconds: 1.0,
            pending: Vec::new(),
            not_judged: Vec::new(),
            disagreements: Vec::new(),
            undecided_claims: Vec::new(),
            banded: None,
            band_fit: None,
            fit: None,
            unfitted: None,
        };
        let report = CalibrationReport::new(&[], None, vec![judge]);
        let text = report.to_string();
        assert!(text.contains(&u64::MAX.to_string()), "{text}");
        assert!(report.to_markdown().contains(&u64::MAX.to_string()));
        assert!(report.to_html().contains(&u64::MAX.to_string()));
    }
}
