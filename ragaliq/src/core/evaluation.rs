//! What an evaluator returns: [`Evaluation`], its per-claim and per-passage
//! details, the [`Metric`] it measured and the [`Usage`] it cost.

use super::band::{Uncertain, Unsure};
use super::conversation::Shown;
use super::judged::Person;
use super::retrieved::Retrieved;
use super::samples::{Agreement, Spread};
use super::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The metrics ragaliq computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Metric {
    /// Share of the response's claims that the context supports.
    Faithfulness,
    /// 1 - share of claims that are not supported by the context.
    Hallucination,
    /// How well the response answers the query.
    Relevance,
    /// Rank-weighted share of retrieved passages that are relevant.
    ContextPrecision,
    /// Share of expected facts the context covers.
    ContextRecall,
    /// The response graded against the expected answer: by default P(yes)
    /// to one direct question (does the response give the expected answer
    /// without contradicting it?); or, as a named option, claims checked
    /// both ways ([`Correctness`](crate::Correctness)).
    Correctness,
    /// A team's own rule in plain words ([`Criteria`](crate::Criteria)).
    Criteria,
    /// A metric of one's own ([`CustomMetric`](crate::CustomMetric)).
    Custom,
    /// Retrieval measured against labelled IDs or passages, with no judge:
    /// hit rate, recall, precision, MRR, average precision, nDCG
    /// ([`retrieval`](crate::retrieval)); the evaluation's name says which
    /// (`recall@5`).
    Retrieval,
    /// A turn whose passages cannot answer it is answered by saying so,
    /// not by inventing: per turn, P(yes) that the response says it cannot
    /// answer, or 1 where the passages answer the question (labelled, or
    /// as the judge reads them).
    Abstention,
    /// No answer contradicts an earlier answer of the conversation: per
    /// follow-up turn, 1 − P(yes) that the response contradicts what the
    /// assistant said before (a first turn has nothing to contradict).
    Consistency,
    /// What the user said earlier is not asked again or contradicted: per
    /// follow-up turn, 1 − P(yes) that the response does either.
    Retention,
}

impl Metric {
    /// Every metric, in a fixed order.
    pub const ALL: [Metric; 12] = [
        Metric::Faithfulness,
        Metric::Hallucination,
        Metric::Relevance,
        Metric::ContextPrecision,
        Metric::ContextRecall,
        Metric::Correctness,
        Metric::Criteria,
        Metric::Custom,
        Metric::Retrieval,
        Metric::Abstention,
        Metric::Consistency,
        Metric::Retention,
    ];

    /// The metrics a suite can run by name on every case (criteria, metrics
    /// of one's own and retrieval metrics need their text, definition or
    /// measure).
    pub const BUILTIN: [Metric; 9] = [
        Metric::Faithfulness,
        Metric::Hallucination,
        Metric::Relevance,
        Metric::ContextPrecision,
        Metric::ContextRecall,
        Metric::Correctness,
        Metric::Abstention,
        Metric::Consistency,
        Metric::Retention,
    ];

    /// The snake_case name used in configuration, reports and test names.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Metric::Faithfulness => "faithfulness",
            Metric::Hallucination => "hallucination",
            Metric::Relevance => "relevance",
            Metric::ContextPrecision => "context_precision",
            Metric::ContextRecall => "context_recall",
            Metric::Correctness => "correctness",
            Metric::Criteria => "criteria",
            Metric::Custom => "custom",
            Metric::Retrieval => "retrieval",
            Metric::Abstention => "abstention",
            Metric::Consistency => "consistency",
            Metric::Retention => "retention",
        }
    }

    /// The default pass threshold: 0.8 for hallucination; 0.5 for
    /// correctness (P(yes) to the direct question, the even odds chosen
    /// leave-one-source-out on public sets, BENCHMARKS.md); 0.45 for
    /// criteria (fitted on three sources' dev halves: at 0.7 a small judge
    /// fails nearly every response); 0 for retrieval (measured, and failed
    /// only at a threshold a team gives: no one number suits hit rate,
    /// precision@10 and nDCG alike); 0.5 for the conversation checks
    /// (abstention, consistency, retention: the even odds of one yes/no
    /// question, not yet fitted on labelled conversations); else 0.7.
    ///
    /// ```
    /// use ragaliq::Metric;
    /// assert_eq!(Metric::Correctness.default_threshold(), 0.5);
    /// assert_eq!(Metric::Criteria.default_threshold(), 0.45);
    /// assert_eq!(Metric::Faithfulness.default_threshold(), 0.7);
    /// assert_eq!(Metric::Retrieval.default_threshold(), 0.0);
    /// ```
    #[must_use]
    pub fn default_threshold(self) -> f64 {
        match self {
            Metric::Hallucination => 0.8,
            Metric::Correctness => 0.5,
            Metric::Criteria => 0.45,
            Metric::Retrieval => 0.0,
            Metric::Abstention | Metric::Consistency | Metric::Retention => 0.5,
            _ => 0.7,
        }
    }

    /// The metric's position in [`Metric::ALL`].
    #[must_use]
    pub fn index(self) -> usize {
        match self {
            Metric::Faithfulness => 0,
            Metric::Hallucination => 1,
            Metric::Relevance => 2,
            Metric::ContextPrecision => 3,
            Metric::ContextRecall => 4,
            Metric::Correctness => 5,
            Metric::Criteria => 6,
            Metric::Custom => 7,
            Metric::Retrieval => 8,
            Metric::Abstention => 9,
            Metric::Consistency => 10,
            Metric::Retention => 11,
        }
    }

    /// Whether the metric reads the case's response.
    #[must_use]
    pub fn needs_response(self) -> bool {
        matches!(
            self,
            Metric::Faithfulness
                | Metric::Hallucination
                | Metric::Relevance
                | Metric::Correctness
                | Metric::Criteria
                | Metric::Abstention
                | Metric::Consistency
                | Metric::Retention
        )
    }

    /// Whether the metric verifies claims (and so counts their verdicts).
    #[must_use]
    pub fn verifies_claims(self) -> bool {
        matches!(
            self,
            Metric::Faithfulness
                | Metric::Hallucination
                | Metric::ContextRecall
                | Metric::Correctness
        )
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Metric {
    type Err = String;

    /// ```
    /// use ragaliq::Metric;
    /// assert_eq!("context_recall".parse::<Metric>(), Ok(Metric::ContextRecall));
    /// assert!("recall".parse::<Metric>().unwrap_err().contains("faithfulness"));
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Metric::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "unknown metric `{s}`; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}

/// Judge calls and tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Requests answered by the judge's transport (retries not counted twice).
    pub calls: u64,
    /// Prompt tokens the server reported.
    pub input_tokens: u64,
    /// Completion tokens the server reported.
    pub output_tokens: u64,
    /// Exchanges answered from a recording: no call, nothing spent.
    #[serde(default)]
    pub replayed: u64,
    /// Exchanges answered by an earlier evaluation's answer in this process
    /// (the memo): no call, nothing spent.
    #[serde(default)]
    pub shared: u64,
    /// Tokens the replayed exchanges cost when they were recorded (what a
    /// live run of the same judge would spend again); not spent now.
    #[serde(default)]
    pub replayed_tokens: u64,
    /// Verdicts that came from a person (given in review and kept in the
    /// recording) instead of the judge's reading.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reviewed: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Input plus output tokens (saturating: never overflows).
    #[must_use]
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

/// Adds counts, saturating at `u64::MAX`: token counts come from servers and
/// recordings, and a sum of them must never panic or wrap.
///
/// ```
/// use ragaliq::Usage;
/// let mut u = Usage { input_tokens: u64::MAX - 1, ..Usage::default() };
/// u += Usage { input_tokens: 5, ..Usage::default() };
/// assert_eq!(u.input_tokens, u64::MAX);
/// ```
impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        self.calls = self.calls.saturating_add(rhs.calls);
        self.input_tokens = self.input_tokens.saturating_add(rhs.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(rhs.output_tokens);
        self.replayed = self.replayed.saturating_add(rhs.replayed);
        self.shared = self.shared.saturating_add(rhs.shared);
        self.replayed_tokens = self.replayed_tokens.saturating_add(rhs.replayed_tokens);
        self.reviewed = self.reviewed.saturating_add(rhs.reviewed);
    }
}

/// One claim and the judge's verdict on it.
///
/// What [`confidence`](Self::confidence) and [`evidence`](Self::evidence)
/// hold depends on how the judge was asked ([`Strategy`](crate::Strategy)):
///
/// | field | short questions, read from token probabilities | short questions, read from the word written | JSON prompts |
/// | --- | --- | --- | --- |
/// | `confidence` | the judge's probability for the verdict given: P(supported) for a supported claim, P(contradicted) for a contradicted one, 1 − P(supported) for one with no evidence | none: the word carries no degree | the confidence the judge wrote, if any |
/// | `probability` | P(supported) | none | none |
/// | `evidence` | the passage sentence closest to the claim, **found by ragaliq** (`located`), never a quote of the judge's | the same | the judge's quote, checked against the passages (`evidence_in`) |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClaimVerdict {
    /// The claim, as extracted (or the expected fact, for context recall;
    /// or the reference's claim, for answer correctness's recall).
    pub claim: String,
    /// The judge's verdict.
    pub verdict: Verdict,
    /// The evidence shown for the verdict (see the table above): a quote
    /// the judge gave, or the passage sentence ragaliq found closest to the
    /// claim (`located`); empty when there is none.
    pub evidence: String,
    /// How sure the judge is of the verdict, in [0, 1], when that is known
    /// (see the table above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Whether this claim counts against the metric (not supported for
    /// faithfulness, hallucination, recall and correctness).
    pub failed: bool,
    /// With several samples: how many agreed on the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
    /// With several samples: the samples split below the required
    /// agreement, so the verdict shown is only the plurality. Also set for
    /// an ungrounded verdict.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undecided: bool,
    /// The passage (1-based, in the context's order) the evidence was found
    /// in, when it was looked for and found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_in: Option<usize>,
    /// The verdict needs evidence (supported, partially supported,
    /// contradicted) and its quote is in no passage, even asked again:
    /// it decides nothing, and the claim is undecided.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ungrounded: bool,
    /// P(supported), when the verdict was read from the judge's token
    /// probabilities ([`Strategy::Probability`](crate::Strategy)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// The evidence is the passage sentence closest to the claim, found by
    /// ragaliq, not a quote the judge gave (it was asked a yes/no
    /// question); empty evidence then means no passage speaks to the claim.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub located: bool,
    /// Answer correctness: the claim is the reference's (the expected
    /// answer's), checked against the response; `false` for the response's
    /// own claims, checked against the reference.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_reference: bool,
    /// The verdict is a person's, given in review and kept in the
    /// recording: `verdict` is theirs, `probability` still the judge's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
    /// What was judged ([`judged::key`](crate::judged::key)): the key a
    /// person's verdict on this claim is kept under (`cargo ragaliq review
    /// FILE --key KEY --verdict supported`); `None` where nothing was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_key: Option<String>,
    /// The claim is uncertain, and why: the last judge's reading fell in
    /// its band (or its samples split, or its evidence is in no passage),
    /// and no person has given a verdict. `verdict` is then what the
    /// threshold alone would read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsure: Option<Unsure>,
    /// The judge the verdict is from, when the cascade escalated the claim
    /// to another (`None`: the judge itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The item states no fact to check, and why (`a person's verdict`,
    /// `ragaliq's rule: a greeting`): it leaves the score, counted neither
    /// supported nor unsupported, and never fails it. `verdict` is then the
    /// judge's reading, shown beside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_claim: Option<String>,
}

impl ClaimVerdict {
    /// A claim with its verdict and nothing else known: no evidence, no
    /// confidence, failed unless supported. For metrics of one's own and
    /// tests; the judge fills in the rest.
    ///
    /// ```
    /// use ragaliq::{ClaimVerdict, Verdict};
    /// let c = ClaimVerdict::new("Refunds take 30 days.", Verdict::NoEvidence);
    /// assert!(c.failed);
    /// assert_eq!(c.evidence, "");
    /// ```
    #[must_use]
    pub fn new(claim: impl Into<String>, verdict: Verdict) -> ClaimVerdict {
        ClaimVerdict {
            claim: claim.into(),
            verdict,
            evidence: String::new(),
            confidence: None,
            failed: verdict != Verdict::Supported,
            agreement: None,
            undecided: false,
            evidence_in: None,
            ungrounded: false,
            probability: None,
            located: false,
            from_reference: false,
            person: None,
            review_key: None,
            unsure: None,
            judge: None,
            no_claim: None,
        }
    }
}

/// How many claims got each verdict, for the metrics that verify claims
/// (faithfulness, hallucination, context recall).
///
/// ```
/// use ragaliq::{ClaimCounts, ClaimVerdict, Verdict};
/// let claim = |verdict, undecided| {
///     let mut c = ClaimVerdict::new("c", verdict);
///     c.undecided = undecided;
///     c
/// };
/// let counts = ClaimCounts::of(
///     &[claim(Verdict::Supported, false), claim(Verdict::Contradicted, false), claim(Verdict::NoEvidence, true)],
///     1,
/// );
/// assert_eq!((counts.supported, counts.contradicted, counts.undecided, counts.dropped), (1, 1, 1, 1));
/// assert_eq!(counts.no_evidence, 0, "an undecided claim is counted as undecided only");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClaimCounts {
    /// Decided supported.
    pub supported: usize,
    /// Decided partially supported.
    pub partially_supported: usize,
    /// Decided with no evidence.
    pub no_evidence: usize,
    /// Decided contradicted.
    pub contradicted: usize,
    /// Undecided (samples split, or evidence in no passage).
    pub undecided: usize,
    /// Claims the judge wrote that were dropped (not in the response, or
    /// repeats).
    pub dropped: usize,
}

impl ClaimCounts {
    /// The counts of `claims`, with `dropped` claims set aside before them.
    #[must_use]
    pub fn of(claims: &[ClaimVerdict], dropped: usize) -> ClaimCounts {
        let mut c = ClaimCounts {
            dropped,
            ..ClaimCounts::default()
        };
        for claim in claims {
            if claim.undecided {
                c.undecided += 1;
                continue;
            }
            match claim.verdict {
                Verdict::Supported => c.supported += 1,
                Verdict::PartiallySupported => c.partially_supported += 1,
                Verdict::NoEvidence => c.no_evidence += 1,
                Verdict::Contradicted => c.contradicted += 1,
            }
        }
        c
    }
}

/// One retrieved passage and whether the judge found it relevant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PassageVerdict {
    /// 1-based rank of the passage in the context.
    pub rank: usize,
    /// Whether it helps answer the query.
    pub relevant: bool,
    /// The judge's short reason (with short questions: how its answer was
    /// read).
    pub reason: String,
    /// P(relevant), when read from the judge's token probabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// With several samples: how many agreed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
    /// With several samples: split below the required agreement.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undecided: bool,
    /// Whether it is relevant is a person's verdict, kept in the recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
    /// The key a person's verdict on this passage is kept under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_key: Option<String>,
    /// The passage is uncertain, and why (as for a claim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsure: Option<Unsure>,
    /// The judge the verdict is from, when the cascade escalated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
}

/// Answer correctness asked as one direct question
/// ([`Correctness::Direct`](crate::Correctness::Direct)): what the judge
/// was shown, and whether the expected answer was found in the response.
///
/// Found with nothing in the response that casts doubt on it, the answer
/// is correct with no call (the found rule,
/// [`evidence::answer`](crate::evidence::answer)), kept in the recording
/// as an item a person can overrule; found with a doubt ("It is not 30
/// days; it is 14.", "Maybe 30 days."), or not found, the judge decides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Graded {
    /// The question.
    pub query: String,
    /// The expected answer, as the case gives it.
    pub expected: String,
    /// The response.
    pub response: String,
    /// Where the expected answer (or one of its accepted answers) was
    /// found in the response, as whole words
    /// ([`evidence::find_answer`](crate::evidence::find_answer)); `None`
    /// when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<AnswerFound>,
    /// Found, and something in the response casts doubt on it (a denial, a
    /// hedge, another number, …): the judge decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubt: Option<Doubt>,
    /// Decided correct by the found rule with no call (found, no doubt,
    /// the rule on); a person's verdict may still overrule it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_rule: bool,
}

/// Where an expected answer was found in a response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AnswerFound {
    /// The accepted answer found: the whole expected answer, or one of
    /// those an `Accepted answers: "A"; "B"` line lists.
    pub answer: String,
    /// The response's own words there, from the first word found to the
    /// last.
    pub text: String,
    /// The first and last word it covers, counted from 1 over the
    /// response's words (runs of letters and digits).
    pub words: (usize, usize),
    /// The bytes of the response it covers.
    pub span: std::ops::Range<usize>,
}

/// `«30 days» (words 3–4)`: the response's words and where they stand.
///
/// ```
/// let found = ragaliq::evidence::find_answer("30 days", "Up to thirty days.").unwrap();
/// assert_eq!(found.to_string(), "«thirty days» (words 3–4)");
/// ```
impl fmt::Display for AnswerFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.words {
            (first, last) if first == last => write!(f, "«{}» (word {first})", self.text),
            (first, last) => write!(f, "«{}» (words {first}–{last})", self.text),
        }
    }
}

/// What in a response casts doubt on the expected answer found in it, so
/// that the found rule leaves the answer to the judge: the kind of doubt,
/// and the response's own words (or mark) that raise it.
///
/// ```
/// let r = ragaliq::evidence::answer_in("How long is the refund window?", "30 days", "Maybe 30 days.");
/// assert_eq!(r.doubt.unwrap().to_string(), "«Maybe»: a hedge, a guess or a condition");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Doubt {
    /// What kind of doubt.
    pub kind: DoubtKind,
    /// The words or mark that raise it, as the response writes them (the
    /// accepted answer, for [`DoubtKind::Echoes`]).
    pub words: String,
}

/// The kinds of [`Doubt`] the found rule knows (bench/bands/README.md,
/// "The found rule", lists the words of each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DoubtKind {
    /// The question holds the answer's words: finding them proves nothing.
    Echoes,
    /// A yes or no answer that does not open the response on its own
    /// (`No charge at all.` is no "no").
    NotFirst,
    /// The opposite of a yes or no answer stands in the response.
    Opposes,
    /// A question mark.
    Questions,
    /// Quotation marks: the answer may be someone's words.
    Quotes,
    /// A denial (`not`, `wrong`, `myth`).
    Denies,
    /// A hedge, a guess or a condition (`maybe`, `about`, `if`, `only`).
    Hedges,
    /// A contrast, a correction or a change over time (`but`, `until`,
    /// `used to`).
    Contrasts,
    /// Reported speech (`says`, `according to`).
    Reports,
    /// Options (`or`, `either`, `between`).
    Offers,
    /// A limit, a comparison, a rate or a part (`at least`, `up to`,
    /// `per`, `twice`), or a unit after a number the question lacks.
    Qualifies,
    /// For a name: a relation that makes the answer someone else
    /// (`student`, `wife`).
    Relates,
    /// `'s` after the answer: something of it, not it.
    Possessive,
    /// `is the year …` after the answer: it names the value of something
    /// else.
    Describes,
    /// Another number (or month, for a date) than the answer's.
    AnotherNumber,
    /// Another name than the answer's, or a word that makes it a longer
    /// name.
    AnotherName,
    /// A word beside an answer that is neither a number nor a name, that is
    /// not the question's: it may change the answer (after a yes or no:
    /// what follows shares no word with the question).
    Beside,
}

impl DoubtKind {
    /// What the kind of doubt is, in words.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            DoubtKind::Echoes => "the question holds it: finding it proves nothing",
            DoubtKind::NotFirst => "a yes or no that does not open the response on its own",
            DoubtKind::Opposes => "the opposite answer stands beside it",
            DoubtKind::Questions => "a question",
            DoubtKind::Quotes => "quotation marks: someone's words, perhaps",
            DoubtKind::Denies => "a denial",
            DoubtKind::Hedges => "a hedge, a guess or a condition",
            DoubtKind::Contrasts => "a contrast, a correction or a change over time",
            DoubtKind::Reports => "reported speech",
            DoubtKind::Offers => "options",
            DoubtKind::Qualifies => "a limit, a comparison, a rate or a part",
            DoubtKind::Relates => "a relation: someone else",
            DoubtKind::Possessive => "something of the answer, not the answer",
            DoubtKind::Describes => "the answer named as the value of something else",
            DoubtKind::AnotherNumber => "another number",
            DoubtKind::AnotherName => "another name",
            DoubtKind::Beside => "a word beside it that may change it",
        }
    }
}

impl fmt::Display for Doubt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "«{}»: {}", self.words, self.kind.describe())
    }
}

/// The result of one metric on one case.
///
/// `score` is always a finite number in [0, 1]: an evaluation that cannot be
/// computed is an [`Error`](crate::Error), never a NaN score. `Display` reads
/// like a review: the score against the threshold, then every failing claim
/// with its verdict and evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Evaluation {
    /// What was measured.
    pub metric: Metric,
    /// Which criteria or metric of one's own: its name (for criteria
    /// without one, its text); `None` for the built-in metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The score, in [0, 1].
    pub score: f64,
    /// The pass threshold applied.
    pub threshold: f64,
    /// `score >= threshold`, and the judge not undecided.
    pub passed: bool,
    /// With several samples: the judge disagreed with itself below the
    /// required agreement on something that decides the score. The
    /// evaluation then fails, as its own outcome.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undecided: bool,
    /// Why the score is what it is, in a sentence or two.
    pub reasoning: String,
    /// Per-claim details (faithfulness, hallucination, context recall).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimVerdict>,
    /// Per-passage details (context precision).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<PassageVerdict>,
    /// How many claims got each verdict (the metrics that verify claims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<ClaimCounts>,
    /// Judge calls and tokens this evaluation caused (calls answered from the
    /// judge's memo, e.g. shared with another metric, cost nothing here).
    pub usage: Usage,
    /// With several samples: the spread of the per-sample scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// Answer correctness: the share of the response's claims the
    /// reference backs (its precision) and of the reference's claims the
    /// response states (its recall); the score is one of them or their F1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// See [`precision`](Self::precision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<f64>,
    /// For a metric decided by one answer (relevance, criteria, a metric of
    /// one's own): the person's verdict that decided it, kept in the
    /// recording, in place of the judge's reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
    /// For a metric decided by one answer: the key a person's verdict on
    /// it is kept under. Claims and passages carry their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_key: Option<String>,
    /// Answer correctness asked as one direct question: the question, the
    /// expected answer and the response the judge was shown, and where the
    /// expected answer was found in the response (found and not denied:
    /// correct, with no call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graded: Option<Graded>,
    /// A retrieval metric: each relevant label and the rank it came at,
    /// the top of the list, repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<Retrieved>,
    /// The evaluation awaits a person: some items are uncertain, and the
    /// score, counted with them each way, falls on both sides of the
    /// threshold. `passed` is then false (`uncertain = "fail"`, the
    /// default) or true (`"pass"`); `score` is what the threshold alone
    /// would read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    /// For a metric decided by one answer: why the answer is uncertain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsure: Option<Unsure>,
    /// With a cascade of judges (`[[escalate]]`): how many items each
    /// judge decided and what each cost, the judge itself first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<JudgeShare>,
    /// A turn of a conversation (1 for the first): the turn this
    /// evaluation graded, read with the turns before it. `None` for a
    /// single question, and for a whole conversation (see `turns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    /// A turn of a conversation: the user's message, as graded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// What the judge was shown of the conversation before the turn, for
    /// a follow-up whose questions showed it; `None` for a first turn, a
    /// single question, and a follow-up whose questions were all asked
    /// bare or decided by a rule with no question at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Shown>,
    /// A whole conversation: one evaluation per turn graded, in order. The
    /// conversation passes when every turn does; its score is its lowest
    /// turn's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<Evaluation>,
    /// Abstention: whether the turn's passages answer its question, as
    /// labelled or as the judge read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answerable: Option<Answerable>,
}

/// Abstention's first question, in an [`Evaluation`]: whether a turn's
/// passages can answer it (a turn they cannot answer must be answered by
/// saying so).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Answerable {
    /// Whether the passages answer the question, as decided (a person's
    /// verdict, a label, the judge's reading outside its band; under
    /// uncertainty, what the threshold alone reads).
    pub answerable: bool,
    /// The turn's label said so (`answerable:` in the case): nothing asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub labelled: bool,
    /// P(yes) that the passages contain the answer, as the judge read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// A person's verdict on it, kept in the recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
    /// The key a person's verdict on it is kept under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_key: Option<String>,
    /// The judge is unsure whether the passages answer it, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsure: Option<Unsure>,
}

/// What awaits a person in an [`Evaluation`]: the score counted with the
/// uncertain items each way.
///
/// ```
/// use ragaliq::{Awaiting, Uncertain};
/// let a = Awaiting { low: 0.5, high: 1.0, items: 1, meanwhile: Uncertain::Fail };
/// assert_eq!(a.to_string(), "0.50 to 1.00 with 1 uncertain item counted each way");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Awaiting {
    /// The score with every uncertain item counted against the answer.
    pub low: f64,
    /// The score with every uncertain item counted for it.
    pub high: f64,
    /// How many items are uncertain.
    pub items: usize,
    /// What the test does meanwhile: fails (`fail`) or passes (`pass`).
    pub meanwhile: Uncertain,
}

impl fmt::Display for Awaiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.2} to {:.2} with {} uncertain item{} counted each way",
            self.low,
            self.high,
            self.items,
            if self.items == 1 { "" } else { "s" }
        )
    }
}

/// One judge of a cascade, in an [`Evaluation`]: what it decided and cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JudgeShare {
    /// The judge's model.
    pub model: String,
    /// Items it was asked about.
    pub asked: usize,
    /// Items whose verdict is its reading (not uncertain when it read them).
    pub decided: usize,
    /// What asking it cost.
    pub usage: Usage,
}

impl Evaluation {
    /// What was measured, as a report names it: the metric, and for
    /// criteria and metrics of one's own, which (`criteria "Cites the
    /// policy number"`, `tone`).
    #[must_use]
    pub fn title(&self) -> String {
        match (&self.name, self.metric) {
            (Some(name), Metric::Custom | Metric::Retrieval) => name.clone(),
            (Some(name), metric) => format!("{metric} {name:?}"),
            (None, metric) => metric.to_string(),
        }
    }

    /// The claims that count against the metric.
    pub fn failed_claims(&self) -> impl Iterator<Item = (usize, &ClaimVerdict)> {
        self.claims
            .iter()
            .enumerate()
            .filter(|(_, c)| c.failed)
            .map(|(i, c)| (i + 1, c))
    }

    /// Why an undecided evaluation decided nothing, in a few words: "the
    /// judge disagrees with itself" (samples split), "the judge's evidence
    /// is in no passage" (ungrounded verdicts), or both. `None` when it is
    /// decided.
    pub(crate) fn undecided_reason(&self) -> Option<&'static str> {
        if !self.undecided {
            return None;
        }
        if self.claims.is_empty() && self.passages.is_empty() && self.counts.is_some() {
            return Some("the judge listed no claim in a response that states something");
        }
        let ungrounded = self.claims.iter().any(|c| c.ungrounded);
        let split = self.claims.iter().any(|c| c.undecided && !c.ungrounded)
            || self.passages.iter().any(|p| p.undecided)
            || !ungrounded;
        Some(match (split, ungrounded) {
            (true, true) => {
                "the judge disagrees with itself, and cites evidence found in no passage"
            }
            (false, true) => "the judge cites evidence found in no passage",
            _ => "the judge disagrees with itself",
        })
    }
}

impl Evaluation {
    /// A whole conversation's evaluation from its turns' (in order, each
    /// with its `turn`): it passes when every turn passes, and its score is
    /// its lowest turn's. A turn that failed on its score fails it; else a
    /// turn undecided leaves it undecided; else a turn awaiting a person
    /// leaves it awaiting, counted each way over every turn.
    ///
    /// # Panics
    ///
    /// Never on a conversation's turns; `turns` must not be empty (a
    /// conversation without turns is refused before it is evaluated).
    pub(crate) fn of_turns(turns: Vec<Evaluation>) -> Evaluation {
        let first = &turns[0];
        let decided_fail = |t: &Evaluation| !t.passed && t.awaiting.is_none() && !t.undecided;
        let failed = turns.iter().any(decided_fail);
        let undecided = !failed && turns.iter().any(|t| t.undecided);
        let awaiting =
            (!failed && !undecided && turns.iter().any(|t| t.awaiting.is_some())).then(|| {
                let ends =
                    |t: &Evaluation| t.awaiting.map_or((t.score, t.score), |a| (a.low, a.high));
                let low = turns.iter().map(|t| ends(t).0).fold(1.0, f64::min);
                let high = turns.iter().map(|t| ends(t).1).fold(1.0, f64::min);
                let open = turns.iter().filter_map(|t| t.awaiting);
                Awaiting {
                    low,
                    high,
                    items: open.clone().map(|a| a.items).sum(),
                    meanwhile: open.map(|a| a.meanwhile).next().unwrap_or_default(),
                }
            });
        let score = turns.iter().map(|t| t.score).fold(1.0, f64::min);
        let mut usage = Usage::default();
        for t in &turns {
            usage += t.usage;
        }
        let mut judges: Vec<JudgeShare> = Vec::new();
        for t in &turns {
            for (k, share) in t.judges.iter().enumerate() {
                match judges.get_mut(k) {
                    Some(j) => {
                        j.asked += share.asked;
                        j.decided += share.decided;
                        j.usage += share.usage;
                    }
                    None => judges.push(share.clone()),
                }
            }
        }
        let passed_turns = turns.iter().filter(|t| t.passed).count();
        let mut reasoning = format!(
            "{passed_turns} of {} passed.",
            plural(turns.len(), "turn", "turns")
        );
        let named = |pick: &dyn Fn(&Evaluation) -> bool| -> Vec<String> {
            turns
                .iter()
                .filter(|t| pick(t))
                .filter_map(|t| t.turn.map(|n| n.to_string()))
                .collect()
        };
        for (what, which) in [
            ("failed", named(&decided_fail)),
            ("undecided", named(&|t: &Evaluation| t.undecided)),
            (
                "awaiting a person",
                named(&|t: &Evaluation| t.awaiting.is_some()),
            ),
        ] {
            if !which.is_empty() {
                reasoning.push_str(&format!(
                    " {} {}: {what}.",
                    if which.len() == 1 { "Turn" } else { "Turns" },
                    which.join(", ")
                ));
            }
        }
        Evaluation {
            metric: first.metric,
            name: first.name.clone(),
            score,
            threshold: first.threshold,
            passed: turns.iter().all(|t| t.passed),
            undecided,
            reasoning,
            claims: Vec::new(),
            passages: Vec::new(),
            counts: None,
            usage,
            spread: None,
            precision: None,
            recall: None,
            person: None,
            review_key: None,
            graded: None,
            retrieval: None,
            awaiting,
            unsure: None,
            judges,
            turn: None,
            question: None,
            history: None,
            turns,
            answerable: None,
        }
    }

    /// A whole conversation's evaluation, as [`Display`](fmt::Display)
    /// writes it: the outcome over its turns, a line per turn that passed,
    /// and each other turn in full (its question, what the judge was shown
    /// before it, the turn's own evaluation).
    fn fmt_conversation(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.turns.len();
        let passed = self
            .turns
            .iter()
            .filter(|t| t.passed && t.awaiting.is_none() && !t.undecided)
            .count();
        let lowest = self
            .turns
            .iter()
            .min_by(|a, b| a.score.total_cmp(&b.score))
            .and_then(|t| t.turn);
        let at = lowest.map(|t| format!(" at turn {t}")).unwrap_or_default();
        let outcome = if self.undecided {
            "UNDECIDED"
        } else if self.awaiting.is_some() {
            "AWAITING A PERSON"
        } else if self.passed {
            "passed"
        } else {
            "FAILED"
        };
        let rel = if self.score >= self.threshold {
            ">="
        } else {
            "<"
        };
        writeln!(
            f,
            "{}: {passed} of {} passed; lowest {:.2}{at} {rel} threshold {:.2} ({outcome})",
            self.title(),
            plural(n, "turn", "turns"),
            self.score,
            self.threshold,
        )?;
        for t in &self.turns {
            let number = t.turn.unwrap_or_default();
            if t.passed && t.awaiting.is_none() && !t.undecided {
                writeln!(f, "  turn {number}: {:.2} passed", t.score)?;
                continue;
            }
            match &t.question {
                Some(q) => writeln!(f, "  turn {number} of {n}: {:?}", q.trim())?,
                None => writeln!(f, "  turn {number} of {n}:")?,
            }
            let body = t.without_usage();
            for line in body.lines() {
                writeln!(f, "    {line}")?;
            }
        }
        self.fmt_usage(f)
    }

    /// [`Display`](fmt::Display) without its last line, the judge's usage
    /// (a conversation says it once, for all its turns).
    fn without_usage(&self) -> String {
        let text = self.to_string();
        match text.rsplit_once('\n') {
            Some((body, last)) if last.trim_start().starts_with("judge:") => body.to_owned(),
            _ => text,
        }
    }

    /// What the judge was shown of the conversation before a follow-up.
    fn fmt_history(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(shown) = self.history.as_ref().filter(|h| !h.is_empty()) else {
            return Ok(());
        };
        let first = shown.said.first().map_or(0, |s| s.turn);
        let last = shown.said.last().map_or(0, |s| s.turn);
        let turns = if first == last {
            format!("turn {first}")
        } else {
            format!("turns {first}–{last}")
        };
        let left_out = match shown.left_out {
            0 => String::new(),
            k => format!("; {} left out", plural(k, "older turn", "older turns")),
        };
        writeln!(
            f,
            "  the judge was shown the conversation before it ({turns}, {} characters{left_out}):",
            shown.chars()
        )?;
        for said in &shown.said {
            writeln!(f, "    User: {}", said.user)?;
            writeln!(f, "    Assistant: {}", said.assistant)?;
        }
        Ok(())
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl fmt::Display for Evaluation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.turns.is_empty() {
            return self.fmt_conversation(f);
        }
        if let Some(reason) = self.undecided_reason() {
            let split = self
                .claims
                .iter()
                .filter(|c| c.undecided && !c.ungrounded)
                .count()
                + self.passages.iter().filter(|p| p.undecided).count();
            let ungrounded = self.claims.iter().filter(|c| c.ungrounded).count();
            write!(
                f,
                "{}: UNDECIDED: {reason} (score {:.2}, threshold {:.2})",
                self.title(),
                self.score,
                self.threshold
            )?;
            if split > 0 {
                write!(
                    f,
                    "; {split} {} split below the required agreement",
                    match (self.passages.is_empty(), split) {
                        (true, 1) => "claim is",
                        (true, _) => "claims are",
                        (false, 1) => "passage is",
                        (false, _) => "passages are",
                    }
                )?;
            }
            if ungrounded > 0 {
                write!(
                    f,
                    "; {ungrounded} {} evidence in no passage, even asked again",
                    if ungrounded == 1 {
                        "claim's verdict cites its"
                    } else {
                        "claims' verdicts cite their"
                    }
                )?;
            }
            writeln!(f)?;
        } else if let Some(a) = &self.awaiting {
            let items = self.claims.iter().filter(|c| c.unsure.is_some()).count()
                + self.passages.iter().filter(|p| p.unsure.is_some()).count();
            let what = match (self.claims.is_empty(), self.passages.is_empty(), items) {
                (false, _, 1) => "1 claim".to_owned(),
                (false, _, n) => format!("{n} claims"),
                (_, false, 1) => "1 passage".to_owned(),
                (_, false, n) => format!("{n} passages"),
                _ => "the answer".to_owned(),
            };
            writeln!(
                f,
                "{}: AWAITING A PERSON: the judge is unsure of {what}; counted each way the score is {:.2} to {:.2}, on both sides of the threshold {:.2}{}",
                self.title(),
                a.low,
                a.high,
                self.threshold,
                match a.meanwhile {
                    super::band::Uncertain::Pass => " (passes meanwhile: `uncertain = \"pass\"`)",
                    // What a test does until then, said where it happens.
                    _ =>
                        " (a test fails on it until a person gives the verdict: `uncertain = \"fail\"`)",
                }
            )?;
            if let Some(u) = &self.unsure {
                writeln!(f, "  uncertain: {u}")?;
            }
        } else {
            let (rel, outcome) = if self.passed {
                (">=", "passed")
            } else {
                ("<", "FAILED")
            };
            writeln!(
                f,
                "{}: {:.2} {rel} threshold {:.2} ({outcome})",
                self.title(),
                self.score,
                self.threshold
            )?;
        }
        if !self.reasoning.is_empty() {
            writeln!(f, "  reasoning: {}", self.reasoning)?;
        }
        self.fmt_history(f)?;
        if let Some(g) = &self.graded {
            writeln!(f, "  question: {:?}", g.query.trim())?;
            writeln!(f, "  reference: {:?}", g.expected.trim())?;
            writeln!(f, "  response: {:?}", g.response.trim())?;
            match (&g.found, &g.doubt) {
                (Some(found), Some(doubt)) => writeln!(
                    f,
                    "  the reference was found in the response, {found}, but {doubt}; the judge decides"
                )?,
                (Some(found), None) if g.by_rule => writeln!(
                    f,
                    "  the reference was found in the response, {found}, with nothing against it: decided correct with no question asked (the found rule)"
                )?,
                (Some(found), None) => writeln!(
                    f,
                    "  the reference was found in the response, {found}, with nothing against it; the found rule is off, so the judge decides"
                )?,
                (None, _) => writeln!(
                    f,
                    "  the reference was not found in the response (normalised, as whole words)"
                )?,
            }
        }
        // Answer correctness shows the response's claims the reference
        // does not back, then the reference's the response does not state.
        for from_reference in [false, true] {
            let group: Vec<(usize, &ClaimVerdict)> = self
                .claims
                .iter()
                .enumerate()
                .filter(|(_, c)| c.from_reference == from_reference)
                .collect();
            let shown: Vec<_> = group
                .iter()
                .filter(|(_, c)| c.failed || c.undecided)
                .collect();
            // Claims a person's verdict decided in the answer's favour are
            // listed too: never a silent pass.
            let by_person: Vec<_> = group
                .iter()
                .filter(|(_, c)| !(c.failed || c.undecided) && c.person.is_some())
                .collect();
            if !by_person.is_empty() {
                writeln!(
                    f,
                    "  {} decided by a person's verdict:",
                    if by_person.len() == 1 {
                        "1 claim".to_owned()
                    } else {
                        format!("{} claims", by_person.len())
                    }
                )?;
                for (i, c) in &by_person {
                    if let Some(p) = &c.person {
                        writeln!(f, "    [{}] \"{}\" — {p}", i + 1, c.claim)?;
                    }
                }
            }
            if shown.is_empty() {
                continue;
            }
            let (noun, against) = match (self.metric, from_reference) {
                (Metric::ContextRecall, _) => ("facts not covered by the context", "passage"),
                (Metric::Hallucination, _) => ("hallucinated claims", "passage"),
                (Metric::Correctness, false) => (
                    "of the answer's claims not backed by the reference",
                    "reference",
                ),
                (Metric::Correctness, true) => (
                    "of the reference's claims the answer does not state",
                    "answer",
                ),
                _ => ("claims not supported by the context", "passage"),
            };
            let unsure = group
                .iter()
                .filter(|(_, c)| c.unsure.is_some() && c.person.is_none())
                .count();
            // A person's verdict decides a claim the judge was unsure of:
            // it is counted, and listed, with the decided ones.
            let decided = |c: &ClaimVerdict| c.unsure.is_none() || c.person.is_some();
            let failed = group.iter().filter(|(_, c)| c.failed && decided(c)).count();
            // Each header, then the claims it counts: the decided ones,
            // then those awaiting a person.
            let headers = [
                (
                    true,
                    (failed > 0).then(|| format!("  {failed} of {} {noun}:", group.len())),
                ),
                (
                    false,
                    (unsure > 0).then(|| {
                        format!(
                            "  {unsure} of {} {} the judge is unsure of (awaiting a person):",
                            group.len(),
                            if group.len() == 1 { "claim" } else { "claims" }
                        )
                    }),
                ),
            ];
            for (decided_here, header) in headers {
                if let Some(header) = header {
                    writeln!(f, "{header}")?;
                }
                for (i, c) in shown.iter().filter(|(_, c)| decided(c) == decided_here) {
                    write!(f, "    [{}] \"{}\" — ", i + 1, c.claim)?;
                    if let Some(p) = &c.person {
                        writeln!(f, "{p}")?;
                        continue;
                    }
                    if let Some(u) = &c.unsure {
                        write!(f, "uncertain: {u}")?;
                        if let Some(a) = c.agreement {
                            write!(f, " ({a} samples agree)")?;
                        }
                        if c.ungrounded {
                            write!(f, "; it said {}", c.verdict)?;
                        } else {
                            write!(f, "; the threshold alone reads {}", c.verdict)?;
                        }
                    } else {
                        if c.ungrounded {
                            write!(
                                f,
                                "undecided: the judge said {} but its evidence is in no passage",
                                c.verdict
                            )?;
                        } else if c.undecided {
                            write!(f, "undecided (most said {}", c.verdict)?;
                        } else if self.metric == Metric::Correctness
                            && c.verdict == Verdict::Contradicted
                        {
                            write!(f, "contradicted by the {against}")?;
                        } else {
                            write!(f, "{}", c.verdict)?;
                        }
                        match (c.agreement, c.undecided && !c.ungrounded) {
                            (Some(a), true) => write!(f, ", {a})")?,
                            (None, true) => write!(f, ")")?,
                            (_, false) if c.ungrounded => {}
                            (Some(a), false) => write!(f, " ({a} samples agree)")?,
                            (None, false) => {}
                        }
                        match (c.probability, c.confidence) {
                            (Some(p), _) => write!(f, " (P(supported) {p:.2})")?,
                            (None, Some(conf)) => write!(f, " (confidence {conf:.2})")?,
                            (None, None) => {}
                        }
                    }
                    if let Some(judge) = &c.judge {
                        write!(f, " [by `{judge}`, escalated]")?;
                    }
                    writeln!(f)?;
                    match (c.evidence_in, c.evidence.is_empty()) {
                        // Correctness: both sides quoted, the claim above and
                        // what the other text says here.
                        (_, false) if self.metric == Metric::Correctness && c.located => writeln!(
                            f,
                            "        the {against} says (closest sentence, found by ragaliq): \"{}\"",
                            c.evidence
                        )?,
                        (_, true) if self.metric == Metric::Correctness && c.located => writeln!(
                            f,
                            "        the {against} says nothing that shares a word with it"
                        )?,
                        (Some(p), _) if c.located => writeln!(
                            f,
                            "        closest passage sentence (found by ragaliq): P{p} \"{}\"",
                            c.evidence
                        )?,
                        (None, true) if c.located => writeln!(
                            f,
                            "        no passage speaks to it (no sentence shares a word of the claim)"
                        )?,
                        (Some(p), _) => writeln!(f, "        evidence: P{p} \"{}\"", c.evidence)?,
                        (None, false) if c.ungrounded => {
                            writeln!(f, "        evidence (in no passage): \"{}\"", c.evidence)?;
                        }
                        (None, false) => writeln!(f, "        evidence: \"{}\"", c.evidence)?,
                        (None, true) if c.ungrounded => {
                            writeln!(f, "        evidence: none quoted")?
                        }
                        (None, true) => {}
                    }
                }
            }
        }
        let by_person: Vec<_> = self
            .passages
            .iter()
            .filter(|p| p.relevant && !p.undecided && p.person.is_some())
            .collect();
        if !by_person.is_empty() {
            writeln!(f, "  relevant by a person's verdict:")?;
            for p in by_person {
                writeln!(f, "    [passage {}] {}", p.rank, p.reason)?;
            }
        }
        let shown: Vec<_> = self
            .passages
            .iter()
            .filter(|p| !p.relevant || p.undecided)
            .collect();
        if !shown.is_empty() {
            let irrelevant = self.passages.iter().filter(|p| !p.relevant).count();
            writeln!(
                f,
                "  {irrelevant} of {} passages not relevant:",
                self.passages.len()
            )?;
            for p in shown {
                write!(f, "    [passage {}] {}", p.rank, p.reason)?;
                if let Some(a) = p.agreement {
                    write!(
                        f,
                        " ({a} samples{})",
                        if p.undecided { ", undecided" } else { " agree" }
                    )?;
                }
                if let Some(u) = &p.unsure {
                    write!(f, "; uncertain: {u}")?;
                }
                if let Some(judge) = &p.judge {
                    write!(f, " [by `{judge}`, escalated]")?;
                }
                writeln!(f)?;
            }
        }
        if let Some(spread) = &self.spread {
            writeln!(f, "  spread: {spread}")?;
        }
        if let Some(retrieved) = &self.retrieval {
            retrieved.lines(f)?;
            return write!(f, "  no judge: computed from the case's labels");
        }
        self.fmt_usage(f)
    }
}

impl Evaluation {
    /// The last line: what the judge was asked, and what it cost.
    fn fmt_usage(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.turns.iter().all(|t| t.retrieval.is_some()) && !self.turns.is_empty() {
            return write!(f, "  no judge: computed from the turns' labels");
        }
        let u = &self.usage;
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        match (u.calls, u.replayed, u.shared) {
            (0, 0, 0) => write!(f, "  judge: no call needed")?,
            (0, 0, s) => write!(
                f,
                "  judge: no new calls ({} shared with an earlier evaluation)",
                plural(s, "answer", "answers")
            )?,
            (0, r, _) => write!(
                f,
                "  judge: {} replayed from the recording, no tokens spent",
                plural(r, "answer", "answers")
            )?,
            (c, r, _) => {
                write!(
                    f,
                    "  judge: {}, {} tokens ({} in, {} out)",
                    plural(c, "call", "calls"),
                    u.total_tokens(),
                    u.input_tokens,
                    u.output_tokens
                )?;
                if r > 0 {
                    write!(f, "; {r} replayed from the recording")?;
                }
            }
        }
        if u.reviewed > 0 {
            write!(
                f,
                "; {} from a person",
                plural(u.reviewed, "verdict", "verdicts")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval() -> Evaluation {
        Evaluation {
            metric: Metric::Faithfulness,
            score: 0.5,
            threshold: 0.7,
            passed: false,
            reasoning: "1 of 2 claims supported.".into(),
            counts: None,
            claims: vec![
                ClaimVerdict {
                    claim: "Refunds take 30 days.".into(),
                    verdict: Verdict::Supported,
                    evidence: "within 30 days".into(),
                    confidence: Some(0.95),
                    failed: false,
                    agreement: None,
                    undecided: false,
                    evidence_in: Some(1),
                    ungrounded: false,
                    probability: None,
                    located: false,
                    from_reference: false,
                    person: None,
                    review_key: None,
                    unsure: None,
                    judge: None,
                    no_claim: None,
                },
                ClaimVerdict {
                    claim: "Shipping is free.".into(),
                    verdict: Verdict::Contradicted,
                    evidence: "Shipping costs $5.".into(),
                    confidence: None,
                    failed: true,
                    agreement: None,
                    undecided: false,
                    evidence_in: None,
                    ungrounded: false,
                    probability: None,
                    located: false,
                    from_reference: false,
                    person: None,
                    review_key: None,
                    unsure: None,
                    judge: None,
                    no_claim: None,
                },
            ],
            passages: vec![],
            usage: Usage {
                calls: 2,
                input_tokens: 900,
                output_tokens: 100,
                ..Usage::default()
            },
            undecided: false,
            spread: None,
            name: None,
            precision: None,
            recall: None,
            person: None,
            review_key: None,
            graded: None,
            retrieval: None,
            awaiting: None,
            unsure: None,
            judges: Vec::new(),
            turn: None,
            question: None,
            history: None,
            turns: Vec::new(),
            answerable: None,
        }
    }

    #[test]
    fn display_reads_like_a_review() {
        let text = eval().to_string();
        assert_eq!(
            text,
            "faithfulness: 0.50 < threshold 0.70 (FAILED)\n  reasoning: 1 of 2 claims supported.\n  1 of 2 claims not supported by the context:\n    [2] \"Shipping is free.\" — contradicted\n        evidence: \"Shipping costs $5.\"\n  judge: 2 calls, 1000 tokens (900 in, 100 out)"
        );
    }

    /// Issue 49's docs audit: a claim decided against the answer and one
    /// awaiting a person printed both headers first, then both claims, so
    /// the first header listed nothing. Each header lists its own.
    #[test]
    fn each_header_lists_the_claims_it_counts() {
        let mut e = eval();
        e.claims[0].failed = true;
        e.claims[0].undecided = true;
        e.claims[0].unsure = Some(crate::core::Unsure {
            kind: crate::core::Kind::Claims,
            judge: "small".into(),
            probability: Some(0.31),
            band: crate::core::Band::between(0.1, 0.5).unwrap(),
            why: crate::core::UnsureWhy::InBand,
        });
        let text = e.to_string();
        let decided = text.find("  1 of 2 claims not supported by the context:\n    [2]");
        let unsure =
            text.find("  1 of 2 claims the judge is unsure of (awaiting a person):\n    [1]");
        assert!(
            matches!((decided, unsure), (Some(d), Some(u)) if d < u),
            "{text}"
        );
    }

    #[test]
    fn undecided_reads_as_its_own_outcome() {
        let mut e = eval();
        e.undecided = true;
        e.claims[1].undecided = true;
        e.claims[1].agreement = Some(Agreement { votes: 2, of: 5 });
        e.spread = Some(Spread {
            samples: 5,
            min: 0.5,
            median: 0.5,
            max: 1.0,
            flips: 2,
        });
        let text = e.to_string();
        assert!(text.starts_with("faithfulness: UNDECIDED: the judge disagrees with itself (score 0.50, threshold 0.70); 1 claim is split below the required agreement"), "{text}");
        assert!(
            text.contains("[2] \"Shipping is free.\" — undecided (most said contradicted, 2 of 5)"),
            "{text}"
        );
        assert!(text.contains("spread: 5 samples: min 0.50, median 0.50, max 1.00; 2 of 5 on the other side of the threshold"), "{text}");
    }

    #[test]
    fn usage_lines_tell_no_call_from_shared_answers() {
        let mut e = eval();
        e.usage = Usage::default();
        assert!(e.to_string().ends_with("judge: no call needed"));
        e.usage.shared = 2;
        assert!(
            e.to_string()
                .ends_with("judge: no new calls (2 answers shared with an earlier evaluation)")
        );
        e.usage = Usage {
            replayed: 1,
            ..Usage::default()
        };
        assert!(
            e.to_string()
                .ends_with("judge: 1 answer replayed from the recording, no tokens spent")
        );
    }

    #[test]
    fn serde_round_trip() {
        let e = eval();
        let json = serde_json::to_string(&e).unwrap();
        assert!(json.contains(r#""metric":"faithfulness""#));
        assert_eq!(serde_json::from_str::<Evaluation>(&json).unwrap(), e);
    }
}
