//! A team's own rule in plain words ([`Criteria`]), and how answer
//! correctness is scored ([`Correctness`]).

use serde::{Deserialize, Serialize};
use std::fmt;

/// How answer correctness is decided.
///
/// [`Direct`](Correctness::Direct), the default, asks the judge one
/// question per answer: given the question and the expected answer, does
/// the response give the same answer without contradicting it? The score
/// is P(yes). It was chosen leave-one-source-out on public sets of answers
/// people judged (BENCHMARKS.md): at one call an answer, it agreed with
/// people better than checking claims both ways on every source.
///
/// The other three check **claims both ways**, for a team that wants the
/// missing and the unbacked facts listed: the response's claims against
/// the reference (precision: what it says that is right) and the
/// reference's claims against the response (recall: what it leaves out or
/// gets wrong), each through the claim path (about seven calls an answer).
/// `f1` combines them; `claims` is another name for it.
///
/// ```
/// use ragaliq::Correctness;
/// assert_eq!(Correctness::default(), Correctness::Direct);
/// assert!(!Correctness::Direct.checks_claims());
/// assert_eq!(Correctness::F1.score(1.0, 0.5), 2.0 / 3.0);
/// assert_eq!(Correctness::Recall.score(1.0, 0.5), 0.5);
/// assert_eq!(Correctness::F1.score(0.0, 0.0), 0.0);
/// assert_eq!("precision".parse(), Ok(Correctness::Precision));
/// assert_eq!("claims".parse(), Ok(Correctness::F1));
/// assert_eq!("direct".parse(), Ok(Correctness::Direct));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Correctness {
    /// One direct question per answer; the score is P(yes) (1 or 0 from
    /// the word written). Whether the expected answer's words are found in
    /// the response is computed and shown, as evidence, not as a verdict.
    #[default]
    Direct,
    /// Claims both ways: the harmonic mean of precision and recall (0 when
    /// both are 0).
    #[serde(alias = "claims")]
    F1,
    /// Claims both ways: what the response says that the reference backs.
    Precision,
    /// Claims both ways: what of the reference the response says.
    Recall,
}

impl Correctness {
    /// Every spelling, for messages.
    pub const NAMES: &'static str = "direct, f1 (or claims), precision, recall";

    /// Whether it checks claims both ways (`f1`, `precision`, `recall`)
    /// rather than asking the direct question.
    #[must_use]
    pub fn checks_claims(self) -> bool {
        self != Correctness::Direct
    }

    /// The score from precision and recall, in [0, 1], for the measures
    /// that check claims both ways. [`Direct`](Correctness::Direct) has no
    /// halves (its score is the judge's P(yes)); given two, it combines
    /// them as F1 does.
    #[must_use]
    pub fn score(self, precision: f64, recall: f64) -> f64 {
        let score = match self {
            Correctness::Precision => precision,
            Correctness::Recall => recall,
            Correctness::F1 | Correctness::Direct if precision + recall > 0.0 => {
                2.0 * precision * recall / (precision + recall)
            }
            Correctness::F1 | Correctness::Direct => 0.0,
        };
        super::verdict::clamp_score(score)
    }

    /// Its name in configuration.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Correctness::Direct => "direct",
            Correctness::F1 => "f1",
            Correctness::Precision => "precision",
            Correctness::Recall => "recall",
        }
    }
}

impl std::str::FromStr for Correctness {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "direct" => Ok(Correctness::Direct),
            "f1" | "claims" => Ok(Correctness::F1),
            "precision" => Ok(Correctness::Precision),
            "recall" => Ok(Correctness::Recall),
            _ => Err(format!(
                "unknown correctness score `{s}`; expected one of: {}",
                Correctness::NAMES
            )),
        }
    }
}

impl fmt::Display for Correctness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How criteria are judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CriteriaForm {
    /// Does the response meet the criteria? The score is P(yes) (1 or 0
    /// from the word written), with the judge's one-sentence reason. One
    /// call per case.
    #[default]
    YesNo,
    /// G-Eval: evaluation steps written once per criteria text (one call,
    /// recorded and shared by every case with the same criteria), then a
    /// score from 1 to 5 per case, weighted by the probabilities of the
    /// score tokens where the judge gives them (the score written
    /// otherwise), mapped to [0, 1], with the judge's reason.
    Scored,
}

impl CriteriaForm {
    /// Every spelling, for messages.
    pub const NAMES: &'static str = "yes_no, scored";

    /// Its name in configuration and case files.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            CriteriaForm::YesNo => "yes_no",
            CriteriaForm::Scored => "scored",
        }
    }

    /// The form called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<CriteriaForm> {
        match name {
            "yes_no" => Some(CriteriaForm::YesNo),
            "scored" => Some(CriteriaForm::Scored),
            _ => None,
        }
    }
}

/// A team's own rule, in plain words: "Cites the policy number and never
/// promises a refund".
///
/// The judge sees the question, the response and the rule; the retrieved
/// passages and the expected answer too when the rule names them (see
/// [`Criteria::uses_context`]), or when set with
/// [`with_context`](Criteria::with_context) /
/// [`with_expected`](Criteria::with_expected).
///
/// ```
/// use ragaliq::{Criteria, CriteriaForm};
/// let c = Criteria::new("Every figure it states appears in the passages").named("figures");
/// assert_eq!(c.form(), CriteriaForm::YesNo);
/// assert!(c.uses_context(), "it names the passages");
/// assert_eq!(c.name(), "figures");
/// let s = Criteria::scored("Addresses the customer politely and offers a next step");
/// assert_eq!(s.form(), CriteriaForm::Scored);
/// assert!(!s.uses_context());
/// assert_eq!(s.name(), "Addresses the customer politely and offers a next step");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Criteria {
    text: String,
    name: Option<String>,
    form: CriteriaForm,
    context: Option<bool>,
    expected: Option<bool>,
}

/// Words that name the retrieved passages in a rule.
const CONTEXT_WORDS: [&str; 8] = [
    "passage",
    "context",
    "document",
    "source",
    "retrieved",
    "policy text",
    "knowledge",
    "provided",
];
/// Words that name the expected answer in a rule.
const EXPECTED_WORDS: [&str; 3] = ["expected answer", "reference", "gold answer"];

impl Criteria {
    /// Criteria judged yes or no ([`CriteriaForm::YesNo`]).
    #[must_use]
    pub fn new(text: impl Into<String>) -> Criteria {
        Criteria {
            text: text.into(),
            name: None,
            form: CriteriaForm::YesNo,
            context: None,
            expected: None,
        }
    }

    /// Criteria scored from 1 to 5 with evaluation steps
    /// ([`CriteriaForm::Scored`], G-Eval).
    #[must_use]
    pub fn scored(text: impl Into<String>) -> Criteria {
        Criteria::new(text).with_form(CriteriaForm::Scored)
    }

    /// A short name for reports and test names (`case::criteria:name`);
    /// the text when none is given.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Criteria {
        self.name = Some(name.into());
        self
    }

    /// How the criteria are judged.
    #[must_use]
    pub fn with_form(mut self, form: CriteriaForm) -> Criteria {
        self.form = form;
        self
    }

    /// Shows the judge the retrieved passages, or not, whatever the rule's
    /// words say.
    #[must_use]
    pub fn with_context(mut self, shown: bool) -> Criteria {
        self.context = Some(shown);
        self
    }

    /// Shows the judge the expected answer, or not, whatever the rule's
    /// words say.
    #[must_use]
    pub fn with_expected(mut self, shown: bool) -> Criteria {
        self.expected = Some(shown);
        self
    }

    /// The rule.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its name, or its text.
    #[must_use]
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.text)
    }

    /// How it is judged.
    #[must_use]
    pub fn form(&self) -> CriteriaForm {
        self.form
    }

    /// Whether the judge is shown the retrieved passages: as set, else when
    /// the rule names them ("passage", "context", "document", "source",
    /// "retrieved", "policy text", "knowledge", "provided", in any case).
    #[must_use]
    pub fn uses_context(&self) -> bool {
        self.context
            .unwrap_or_else(|| names(&self.text, &CONTEXT_WORDS))
    }

    /// Whether the judge is shown the expected answer: as set, else when
    /// the rule names it ("expected answer", "reference", "gold answer").
    #[must_use]
    pub fn uses_expected(&self) -> bool {
        self.expected
            .unwrap_or_else(|| names(&self.text, &EXPECTED_WORDS))
    }
}

fn names(text: &str, words: &[&'static str]) -> bool {
    named(text, words).is_some()
}

/// The first of `words` the text names, in any case.
fn named(text: &str, words: &[&'static str]) -> Option<&'static str> {
    let lower = text.to_lowercase();
    words.iter().copied().find(|w| lower.contains(w))
}

/// Why the judge is shown a part of the case, or is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShownBecause {
    /// Set with `with_context` / `with_expected` (or `context:` /
    /// `expected:` in a case file).
    Set,
    /// The rule names it with this word.
    Named(&'static str),
    /// The rule names none of the words that show it.
    NotNamed,
}

impl Criteria {
    /// Why the passages are shown to the judge, or are not.
    pub(crate) fn context_because(&self) -> ShownBecause {
        Self::because(self.context, &self.text, &CONTEXT_WORDS)
    }

    /// Why the expected answer is shown to the judge, or is not.
    pub(crate) fn expected_because(&self) -> ShownBecause {
        Self::because(self.expected, &self.text, &EXPECTED_WORDS)
    }

    fn because(set: Option<bool>, text: &str, words: &[&'static str]) -> ShownBecause {
        match set {
            Some(_) => ShownBecause::Set,
            None => named(text, words).map_or(ShownBecause::NotNamed, ShownBecause::Named),
        }
    }
}

impl From<&str> for Criteria {
    fn from(text: &str) -> Criteria {
        Criteria::new(text)
    }
}

impl From<String> for Criteria {
    fn from(text: String) -> Criteria {
        Criteria::new(text)
    }
}

impl From<&Criteria> for Criteria {
    fn from(c: &Criteria) -> Criteria {
        c.clone()
    }
}
