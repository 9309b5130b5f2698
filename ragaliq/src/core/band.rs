//! Where a judge's reading decides, and where it is unsure.
//!
//! A small judge is right at its extremes and wrong in its middle, and where
//! its middle lies moves with the domain. So each kind of yes/no reading (a
//! claim supported, an answer relevant, a passage relevant, an answer
//! correct, criteria met, a metric of one's own) has an uncertainty
//! [`Band`]: a reading inside it is *uncertain* and decides nothing (it goes
//! to a stronger judge, then to a person); outside it, the reading decides.
//! A band changes how a recorded answer is read, never what is asked of the
//! judge it belongs to.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The probabilities at which a judge's yes/no reading of one kind is
/// uncertain.
///
/// A reading `p` (P(yes), or P(supported) for a claim) decides **yes** at or
/// above the band's top and **no** under its bottom; between them it is
/// **uncertain**. The kind's threshold (`claim_threshold`, a metric's
/// threshold) always lies in the band: a band that does not hold it is
/// widened to it, so a threshold set above a band's top makes readings
/// between the two uncertain rather than decided yes.
///
/// Only readings from token probabilities are banded: a word the judge
/// wrote carries no probability (1 or 0), and decides by the threshold; with
/// several samples, a vote split below the required agreement is uncertain.
///
/// Each side decides on its own: a side whose readings were never shown to
/// agree with people decides **nothing**, whatever the reading (1.0
/// included: P(yes) = 1.0 is also what a reply gives when "no" is not
/// among the likeliest tokens). [`Band::NoOnly`] and [`Band::YesOnly`] are
/// such bands; `ragaliq.toml` writes the side that never decides as
/// `"never"`: `[0.075, "never"]`.
///
/// ```
/// use ragaliq::{Band, Decision};
/// let band = Band::between(0.10, 0.50).unwrap();
/// assert_eq!(band.decide(0.62, 0.33), Decision::Yes);
/// assert_eq!(band.decide(0.31, 0.33), Decision::Uncertain);
/// assert_eq!(band.decide(0.04, 0.33), Decision::No);
/// // The threshold always lies in the band: 0.6 widens its top.
/// assert_eq!(band.decide(0.55, 0.6), Decision::Uncertain);
/// assert_eq!(Band::Off.decide(0.31, 0.33), Decision::No);
/// assert_eq!(Band::All.decide(0.99, 0.33), Decision::Uncertain);
/// assert_eq!(band.to_string(), "[0.10, 0.50)");
/// assert_eq!(Band::between(0.025, 0.925).unwrap().to_string(), "[0.025, 0.925)");
/// // A side never certified decides nothing, even at 1.0.
/// let no_only = Band::sides(Some(0.075), None).unwrap();
/// assert_eq!(no_only, Band::NoOnly { low: 0.075 });
/// assert_eq!(no_only.decide(1.0, 0.33), Decision::Uncertain);
/// assert_eq!(no_only.decide(0.05, 0.33), Decision::No);
/// assert_eq!(no_only.to_string(), "[0.075, never)");
/// assert_eq!(no_only.to_toml(), "[0.075, \"never\"]");
/// // A judge nobody measured starts where it is itself 95% sure.
/// assert_eq!(Band::Unmeasured.decide(0.97, 0.33), Decision::Yes);
/// assert_eq!(Band::Unmeasured.decide(0.90, 0.33), Decision::Uncertain);
/// assert_eq!(Band::Unmeasured.to_string(), "[0.05, 0.95) (unmeasured)");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    /// No band: every reading decides, by the threshold alone (ragaliq's
    /// behaviour before bands).
    #[default]
    Off,
    /// Readings from `low` (inclusive) to `high` (exclusive) are uncertain.
    Between {
        /// The lowest uncertain reading; under it a reading decides no.
        low: f64,
        /// The lowest reading that decides yes.
        high: f64,
    },
    /// Nothing the judge reads of this kind decides: every item is
    /// uncertain (a judge that cannot separate the kind, AUC under 0.7).
    All,
    /// Only the no side decides: readings under `low` decide no, and no
    /// reading decides yes (that side was never shown to agree with
    /// people). `ragaliq.toml`: `[low, "never"]`.
    NoOnly {
        /// The lowest uncertain reading; under it a reading decides no.
        low: f64,
    },
    /// Only the yes side decides: readings at or above `high` decide yes,
    /// and no reading decides no. `ragaliq.toml`: `["never", high]`.
    YesOnly {
        /// The lowest reading that decides yes.
        high: f64,
    },
    /// The starting band of a judge nothing was measured for:
    /// [`UNMEASURED_LOW`, `UNMEASURED_HIGH`) = [0.05, 0.95), where the judge
    /// itself is at least 95% sure. It is said as unmeasured in every
    /// message, until the team's verdicts fit a band
    /// (`cargo ragaliq calibrate --reviewed --fit`) or `[bands]` sets one.
    /// Chosen from the kit models' data: on every public source and kind
    /// (both kit models, both halves), each side it decides agrees with
    /// people at least 0.9 of the time (`bench/bands/README.md`).
    /// `ragaliq.toml`: `"unmeasured"`.
    Unmeasured,
}

/// The bottom of [`Band::Unmeasured`]: a reading under it decides no.
pub const UNMEASURED_LOW: f64 = 0.05;

/// The top of [`Band::Unmeasured`]: a reading at or above it decides yes.
pub const UNMEASURED_HIGH: f64 = 0.95;

impl Band {
    /// The band from `low` to `high`: both in [0, 1], `low` at most `high`.
    ///
    /// # Errors
    ///
    /// Either bound is outside [0, 1] or not a number, or `low > high`:
    /// the message says which.
    pub fn between(low: f64, high: f64) -> Result<Band, String> {
        if !(0.0..=1.0).contains(&low) || !(0.0..=1.0).contains(&high) {
            return Err(format!(
                "[{low}, {high}]: both ends must be numbers from 0 to 1"
            ));
        }
        if low > high {
            return Err(format!(
                "[{low}, {high}]: the bottom ({low}) is above the top ({high})"
            ));
        }
        Ok(Band::Between { low, high })
    }

    /// The band whose no side decides under `low` and whose yes side
    /// decides from `high`; `None` for a side that decides nothing.
    ///
    /// ```
    /// use ragaliq::Band;
    /// assert_eq!(Band::sides(Some(0.1), Some(0.9)), Band::between(0.1, 0.9));
    /// assert_eq!(Band::sides(None, Some(0.9)), Ok(Band::YesOnly { high: 0.9 }));
    /// assert_eq!(Band::sides(None, None), Ok(Band::All));
    /// assert!(Band::sides(Some(1.5), None).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// A bound outside [0, 1] or not a number, or `low > high`.
    pub fn sides(low: Option<f64>, high: Option<f64>) -> Result<Band, String> {
        let check = |x: f64| {
            if (0.0..=1.0).contains(&x) {
                Ok(x)
            } else {
                Err(format!("{x}: a band's end must be a number from 0 to 1"))
            }
        };
        match (low, high) {
            (Some(low), Some(high)) => Band::between(low, high),
            (Some(low), None) => Ok(Band::NoOnly { low: check(low)? }),
            (None, Some(high)) => Ok(Band::YesOnly { high: check(high)? }),
            (None, None) => Ok(Band::All),
        }
    }

    /// The cuts as they apply at `threshold` (widened to hold it): a
    /// reading under the first decides no, one at or above the second
    /// decides yes; `None` for a side that decides nothing.
    ///
    /// ```
    /// use ragaliq::Band;
    /// assert_eq!(Band::between(0.1, 0.9).unwrap().cuts_at(0.33), (Some(0.1), Some(0.9)));
    /// assert_eq!(Band::YesOnly { high: 0.9 }.cuts_at(0.33), (None, Some(0.9)));
    /// assert_eq!(Band::Unmeasured.cuts_at(0.33), (Some(0.05), Some(0.95)));
    /// assert_eq!(Band::Off.cuts_at(0.33), (Some(0.33), Some(0.33)));
    /// assert_eq!(Band::All.cuts_at(0.33), (None, None));
    /// ```
    #[must_use]
    pub fn cuts_at(self, threshold: f64) -> (Option<f64>, Option<f64>) {
        let (low, high) = match self {
            Band::Off => (Some(threshold), Some(threshold)),
            Band::Between { low, high } => (Some(low), Some(high)),
            Band::NoOnly { low } => (Some(low), None),
            Band::YesOnly { high } => (None, Some(high)),
            Band::Unmeasured => (Some(UNMEASURED_LOW), Some(UNMEASURED_HIGH)),
            Band::All => (None, None),
        };
        (
            low.map(|l| l.min(threshold)),
            high.map(|h| h.max(threshold)),
        )
    }

    /// Whether this is the starting band of a judge nobody measured.
    #[must_use]
    pub fn is_unmeasured(self) -> bool {
        self == Band::Unmeasured
    }

    /// What reading `p` decides, with `threshold` held in the band.
    #[must_use]
    pub fn decide(self, p: f64, threshold: f64) -> Decision {
        // A side with no cut decides nothing, whatever the reading.
        let (low, high) = self.cuts_at(threshold);
        if high.is_some_and(|high| p >= high) {
            Decision::Yes
        } else if low.is_some_and(|low| p < low) {
            Decision::No
        } else {
            Decision::Uncertain
        }
    }

    /// The band as it applies at `threshold` (widened to hold it), for
    /// messages: `[0.10, 0.50)`.
    #[must_use]
    pub fn at(self, threshold: f64) -> Band {
        match self {
            Band::Between { low, high } => Band::Between {
                low: low.min(threshold),
                high: high.max(threshold),
            },
            Band::NoOnly { low } => Band::NoOnly {
                low: low.min(threshold),
            },
            Band::YesOnly { high } => Band::YesOnly {
                high: high.max(threshold),
            },
            other => other,
        }
    }

    /// Whether any reading can be uncertain.
    #[must_use]
    pub fn is_off(self) -> bool {
        self == Band::Off
    }

    /// The band as `ragaliq.toml` writes it: `[0.1, 0.5]`, `[0.1, "never"]`,
    /// `["never", 0.9]`, `"off"`, `"all"`, `"unmeasured"`.
    #[must_use]
    pub fn to_toml(self) -> String {
        match self {
            Band::Off => "\"off\"".to_owned(),
            Band::All => "\"all\"".to_owned(),
            Band::Unmeasured => "\"unmeasured\"".to_owned(),
            Band::Between { low, high } => format!("[{low}, {high}]"),
            Band::NoOnly { low } => format!("[{low}, \"never\"]"),
            Band::YesOnly { high } => format!("[\"never\", {high}]"),
        }
    }
}

impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Band::Off => f.write_str("off"),
            Band::All => f.write_str("all (nothing decided)"),
            Band::Unmeasured => write!(
                f,
                "[{}, {}) (unmeasured)",
                bound(UNMEASURED_LOW),
                bound(UNMEASURED_HIGH)
            ),
            Band::Between { low, high } => write!(f, "[{}, {})", bound(*low), bound(*high)),
            Band::NoOnly { low } => write!(f, "[{}, never)", bound(*low)),
            Band::YesOnly { high } => write!(f, "[never, {})", bound(*high)),
        }
    }
}

/// A band's end as people read it: two decimals, a third where it has
/// one (`0.50`, `0.025`), so a band never reads as holding a reading
/// it does not.
fn bound(x: f64) -> String {
    let three = format!("{x:.3}");
    match three.strip_suffix('0') {
        Some(two) => two.to_owned(),
        None => three,
    }
}

/// What a reading decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Supported, relevant, correct, met.
    Yes,
    /// Not.
    No,
    /// Inside the judge's band, or a split vote: decided by a stronger
    /// judge, or awaiting a person.
    Uncertain,
}

/// The kinds of reading a band is set for, as `[bands]` in `ragaliq.toml`
/// names them (the names `calibrate --fit` writes fitted thresholds under).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Kind {
    /// P(supported) of a claim (faithfulness, hallucination, context
    /// recall, correctness by claims both ways).
    Claims,
    /// P(yes) that the response answers the question (relevance).
    Answers,
    /// P(yes) that a passage is relevant (context precision).
    Passages,
    /// P(yes) that the response gives the expected answer (correctness).
    Graded,
    /// Criteria: P(yes) met, or the 1 to 5 score mapped to [0, 1].
    Judged,
    /// A metric of one's own: its first answer word's probability, or its
    /// score.
    Custom,
}

impl Kind {
    /// Every kind, in the order reports list them.
    pub const ALL: [Kind; 6] = [
        Kind::Claims,
        Kind::Answers,
        Kind::Passages,
        Kind::Graded,
        Kind::Judged,
        Kind::Custom,
    ];

    /// The name `[bands]` uses.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Kind::Claims => "claims",
            Kind::Answers => "answers",
            Kind::Passages => "passages",
            Kind::Graded => "graded",
            Kind::Judged => "judged",
            Kind::Custom => "custom",
        }
    }

    /// What one item of the kind is, for messages: "claim", "answer".
    #[must_use]
    pub fn item(self) -> &'static str {
        match self {
            Kind::Claims => "claim",
            Kind::Passages => "passage",
            Kind::Answers | Kind::Graded | Kind::Judged | Kind::Custom => "answer",
        }
    }

    /// The kind named `name`, if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A judge's bands, one per [`Kind`].
///
/// ```
/// use ragaliq::{Band, Bands, Kind};
/// let mut bands = Bands::default();
/// assert_eq!(bands.get(Kind::Claims), Band::Unmeasured);
/// bands.set(Kind::Claims, Band::between(0.1, 0.5).unwrap());
/// assert!(!bands.get(Kind::Claims).is_off());
/// assert!(Bands::OFF.all_off());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bands([Band; Kind::ALL.len()]);

impl Bands {
    /// Every kind off: every reading decides by its threshold.
    pub const OFF: Bands = Bands([Band::Off; Kind::ALL.len()]);

    /// The starting bands of a judge nothing was measured for: every kind
    /// [`Band::Unmeasured`], [0.05, 0.95): a reading decides where the judge
    /// itself is at least 95% sure, and every message says the band is
    /// unmeasured. `cargo ragaliq calibrate --reviewed --fit` fits the
    /// judge's own from a team's reviewed verdicts, or `[bands]` sets them
    /// (`"off"`: every reading decides by its threshold).
    pub const UNMEASURED: Bands = Bands([Band::Unmeasured; Kind::ALL.len()]);

    /// The bands a judge has unless configured otherwise, when it is not
    /// one of the judges measured ([`Bands::measured`]):
    /// [`UNMEASURED`](Self::UNMEASURED).
    pub const DEFAULT: Bands = Bands::UNMEASURED;

    /// The bands of the kit's Qwen2.5-Coder 1.5B Instruct, chosen
    /// leave-one-source-out on public human-labelled sources' dev halves
    /// and reported on their test halves (`bench/bands/README.md`): the
    /// largest mean coverage at which each side (decided yes, decided no)
    /// of every source's dev half agrees with people at least 0.9 of the
    /// time on its own. It decides 12% of claims on the dev halves (1–22%
    /// on the test halves) and 22% of our labelled passages' test half
    /// (chosen on the dev halves of ours, MTRAG's and MTRAG-UN's:
    /// BENCHMARKS.md, "Which question context precision asks"); no band
    /// held for answers graded against a reference (the reference found
    /// in the answer still decides it correct, with no call), and it
    /// separates criteria on no source (AUC under 0.7).
    pub const QWEN_CODER_1_5B: Bands = Bands([
        Band::Between {
            low: 0.075,
            high: 0.9,
        },
        Band::Between {
            low: 0.45,
            high: 0.5,
        },
        Band::Between {
            low: 0.1,
            high: 0.675,
        },
        Band::All,
        Band::All,
        Band::All,
    ]);

    /// The bands of the kit's Qwen2.5-Coder 0.5B Instruct, chosen as
    /// [`QWEN_CODER_1_5B`](Self::QWEN_CODER_1_5B)'s were; it decides no
    /// passage (it cannot separate our labelled passages: AUC under 0.7).
    pub const QWEN_CODER_0_5B: Bands = Bands([
        Band::Between {
            low: 0.1,
            high: 0.575,
        },
        Band::Between {
            low: 0.15,
            high: 0.47,
        },
        // Passages: it cannot separate our labelled passages (dev AUC
        // 0.57 for the question asked since `passage_relevant` version 2),
        // so none is decided, as criteria.
        Band::All,
        Band::All,
        Band::All,
        Band::All,
    ]);

    /// The default bands of the judge serving `model`: the measured bands
    /// of a kit model, else [`DEFAULT`](Self::DEFAULT) (unmeasured).
    ///
    /// A kit model is named as the kit's `--alias` and its model files name
    /// it (`qwen2.5-coder-1.5b`, `Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf`)
    /// or as Ollama does (`qwen2.5-coder:1.5b`,
    /// `qwen2.5-coder:1.5b-instruct-q4_K_M`); the base models
    /// (`qwen2.5-coder:1.5b-base`) and other sizes (`qwen2.5-coder:latest`
    /// is the 7B) were not measured.
    ///
    /// ```
    /// use ragaliq::{Band, Bands, Kind};
    /// let kit = Bands::measured("qwen2.5-coder-1.5b");
    /// assert_eq!(kit.get(Kind::Claims).to_string(), "[0.075, 0.90)");
    /// assert_eq!(kit.get(Kind::Judged), Band::All);
    /// assert_eq!(Bands::measured("qwen2.5-coder:1.5b"), kit);
    /// assert_eq!(Bands::measured("qwen2.5-coder:1.5b-instruct-q4_K_M"), kit);
    /// assert_eq!(Bands::measured("qwen2.5-coder:0.5b"), Bands::QWEN_CODER_0_5B);
    /// assert_eq!(Bands::measured("qwen2.5-coder:latest"), Bands::UNMEASURED);
    /// assert_eq!(Bands::measured("qwen2.5-coder:1.5b-base"), Bands::UNMEASURED);
    /// assert_eq!(Bands::measured("gpt-4o-mini").get(Kind::Claims), Band::Unmeasured);
    /// ```
    #[must_use]
    pub fn measured(model: &str) -> Bands {
        // Ollama writes the size as a tag (`name:1.5b`); the kit and the
        // model files with a dash.
        let model = model.to_ascii_lowercase().replace(':', "-");
        if model.contains("-base") {
            Bands::DEFAULT
        } else if model.contains("qwen2.5-coder-1.5b") {
            Bands::QWEN_CODER_1_5B
        } else if model.contains("qwen2.5-coder-0.5b") {
            Bands::QWEN_CODER_0_5B
        } else {
            Bands::DEFAULT
        }
    }

    /// The band for `kind`.
    #[must_use]
    pub fn get(&self, kind: Kind) -> Band {
        self.0[Self::index(kind)]
    }

    /// Sets the band for `kind`.
    pub fn set(&mut self, kind: Kind, band: Band) {
        self.0[Self::index(kind)] = band;
    }

    /// Whether every kind's band is off.
    #[must_use]
    pub fn all_off(&self) -> bool {
        self.0.iter().all(|b| b.is_off())
    }

    fn index(kind: Kind) -> usize {
        Kind::ALL
            .iter()
            .position(|k| *k == kind)
            .expect("every kind is in Kind::ALL")
    }
}

/// Why an item decided nothing, and what the last judge asked read.
///
/// ```
/// use ragaliq::{Band, Kind, Unsure, UnsureWhy};
/// let u = Unsure {
///     kind: Kind::Claims,
///     judge: "qwen2.5-coder-1.5b".into(),
///     probability: Some(0.31),
///     band: Band::between(0.1, 0.5).unwrap(),
///     why: UnsureWhy::InBand,
/// };
/// assert_eq!(u.to_string(), "P(supported) 0.31, inside the band [0.10, 0.50) of `qwen2.5-coder-1.5b`");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Unsure {
    /// The kind of reading.
    pub kind: Kind,
    /// The model of the last judge that read it.
    pub judge: String,
    /// What it read: P(supported), P(yes) or the score, when read from
    /// token probabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// Its band for the kind, at the threshold.
    pub band: Band,
    /// Why the reading decides nothing.
    pub why: UnsureWhy,
}

/// Why a reading decides nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UnsureWhy {
    /// Its probability lies inside the judge's band.
    InBand,
    /// The samples split below the required agreement.
    Split,
    /// The verdict's evidence is in no passage, even asked again.
    Ungrounded,
    /// The judge escalated to (`judge`) replied in a way no parser reads,
    /// so it decided nothing; `probability` and `band` are the reading of
    /// the judge before it, which stands.
    Unreadable,
}

impl fmt::Display for Unsure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            Kind::Claims => "P(supported)",
            Kind::Judged | Kind::Custom => "score",
            _ => "P(yes)",
        };
        match (self.why, self.probability, self.band) {
            (UnsureWhy::Split, _, _) => write!(f, "the samples of `{}` split", self.judge),
            (UnsureWhy::Ungrounded, _, _) => write!(
                f,
                "the evidence `{}` cites is in no passage, even asked again",
                self.judge
            ),
            (UnsureWhy::Unreadable, Some(p), band) => write!(
                f,
                "`{}`, escalated to, gave a reply no parser reads, so it decided nothing; the judge before it read {what} {p:.2}, inside its band {band}",
                self.judge
            ),
            (UnsureWhy::Unreadable, None, _) => write!(
                f,
                "`{}`, escalated to, gave a reply no parser reads, so it decided nothing; the judge before it was unsure",
                self.judge
            ),
            (UnsureWhy::InBand, Some(p), Band::All) => write!(
                f,
                "{what} {p:.2}; `{}` decides nothing of this kind (its band is all: its readings of it were not shown to agree with people; set `bands.{}` in ragaliq.toml, or fit one from your reviewed verdicts with calibrate's --reviewed --fit)",
                self.judge,
                self.kind.name()
            ),
            (UnsureWhy::InBand, Some(p), Band::Unmeasured) => write!(
                f,
                "{what} {p:.2}, inside the band {} of `{}` (nothing was measured for this judge: it decides where it is itself 95% sure until calibrate's --reviewed --fit fits its band from your verdicts, or `bands.{}` sets one)",
                Band::Unmeasured,
                self.judge,
                self.kind.name()
            ),
            (UnsureWhy::InBand, Some(p), band @ Band::NoOnly { low }) if p >= low => {
                write!(
                    f,
                    "{what} {p:.2}, inside the band {band} of `{}`: it decides no {} {} (that side was never shown to agree with people; review more verdicts and fit again with calibrate's --reviewed --fit)",
                    self.judge,
                    self.kind.item(),
                    yes_word(self.kind)
                )
            }
            (UnsureWhy::InBand, Some(p), band @ Band::YesOnly { high }) if p < high => {
                write!(
                    f,
                    "{what} {p:.2}, inside the band {band} of `{}`: it decides no {} {} (that side was never shown to agree with people; review more verdicts and fit again with calibrate's --reviewed --fit)",
                    self.judge,
                    self.kind.item(),
                    no_word(self.kind)
                )
            }
            (UnsureWhy::InBand, Some(p), band) => write!(
                f,
                "{what} {p:.2}, inside the band {band} of `{}`",
                self.judge
            ),
            (UnsureWhy::InBand, None, band) => {
                write!(f, "inside the band {band} of `{}`", self.judge)
            }
        }
    }
}

/// What a decided yes is called for `kind`, in messages.
fn yes_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Claims => "supported",
        Kind::Answers | Kind::Passages => "relevant",
        Kind::Graded => "correct",
        Kind::Judged | Kind::Custom => "met",
    }
}

/// What a decided no is called for `kind`, in messages.
fn no_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Claims => "unsupported",
        Kind::Answers | Kind::Passages => "irrelevant",
        Kind::Graded => "incorrect",
        Kind::Judged | Kind::Custom => "unmet",
    }
}

impl Default for Bands {
    fn default() -> Self {
        Bands::DEFAULT
    }
}

/// What an item still uncertain after the last judge does to its test.
///
/// ```
/// use ragaliq::Uncertain;
/// assert_eq!("decide".parse::<Uncertain>(), Ok(Uncertain::Decide));
/// assert_eq!(Uncertain::default(), Uncertain::Fail);
/// assert!("maybe".parse::<Uncertain>().unwrap_err().contains("fail, pass or decide"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Uncertain {
    /// The test awaits a person, and fails until one gives the verdict (as
    /// a pending snapshot fails until it is reviewed). The default.
    #[default]
    Fail,
    /// The test awaits a person, and passes meanwhile (said on stderr and
    /// counted in every report).
    Pass,
    /// The threshold decides the uncertain reading, as if there were no
    /// band (ragaliq's behaviour before bands).
    Decide,
}

impl Uncertain {
    /// The name `ragaliq.toml` and the macros use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Uncertain::Fail => "fail",
            Uncertain::Pass => "pass",
            Uncertain::Decide => "decide",
        }
    }
}

impl fmt::Display for Uncertain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Uncertain {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fail" => Ok(Uncertain::Fail),
            "pass" => Ok(Uncertain::Pass),
            "decide" => Ok(Uncertain::Decide),
            other => Err(format!(
                "`{other}`: expected fail, pass or decide (what a test whose judge is unsure does: await a person and fail, await a person and pass, or let the threshold decide)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_decides_outside_and_is_unsure_inside() {
        let b = Band::between(0.1, 0.5).unwrap();
        assert_eq!(b.decide(0.5, 0.33), Decision::Yes, "the top decides yes");
        assert_eq!(b.decide(0.4999, 0.33), Decision::Uncertain);
        assert_eq!(b.decide(0.1, 0.33), Decision::Uncertain, "the bottom is in");
        assert_eq!(b.decide(0.0999, 0.33), Decision::No);
        // A threshold under the band widens its bottom.
        assert_eq!(b.decide(0.04, 0.05), Decision::No);
        assert_eq!(b.decide(0.05, 0.05), Decision::Uncertain);
        assert_eq!(b.decide(0.07, 0.05), Decision::Uncertain);
        assert_eq!(b.at(0.05), Band::between(0.05, 0.5).unwrap());
        // Off is the threshold alone; an empty band too.
        let empty = Band::between(0.33, 0.33).unwrap();
        for p in [0.0, 0.32, 0.33, 1.0] {
            assert_eq!(Band::Off.decide(p, 0.33), empty.decide(p, 0.33), "{p}");
        }
    }

    #[test]
    fn a_side_never_certified_decides_nothing_even_at_one() {
        let no_only = Band::sides(Some(0.1), None).unwrap();
        for p in [0.5, 0.9, 0.999, 1.0] {
            assert_eq!(no_only.decide(p, 0.33), Decision::Uncertain, "{p}");
        }
        assert_eq!(no_only.decide(0.099, 0.33), Decision::No);
        // The threshold still widens the side that decides.
        assert_eq!(no_only.decide(0.2, 0.25), Decision::Uncertain);
        assert_eq!(no_only.decide(0.09, 0.08), Decision::Uncertain);
        assert_eq!(no_only.decide(0.07, 0.08), Decision::No);
        assert_eq!(no_only.at(0.08), Band::NoOnly { low: 0.08 });
        let yes_only = Band::sides(None, Some(0.9)).unwrap();
        for p in [0.0, 0.01, 0.5, 0.899] {
            assert_eq!(yes_only.decide(p, 0.33), Decision::Uncertain, "{p}");
        }
        assert_eq!(yes_only.decide(0.9, 0.33), Decision::Yes);
        assert_eq!(yes_only.decide(0.92, 0.95), Decision::Uncertain);
        assert_eq!(yes_only.to_string(), "[never, 0.90)");
        assert_eq!(yes_only.to_toml(), "[\"never\", 0.9]");
    }

    #[test]
    fn the_unmeasured_band_decides_where_the_judge_is_sure_and_says_so() {
        let b = Band::Unmeasured;
        assert_eq!(b.decide(0.95, 0.33), Decision::Yes);
        assert_eq!(b.decide(0.949, 0.33), Decision::Uncertain);
        assert_eq!(b.decide(0.049, 0.33), Decision::No);
        assert_eq!(b.decide(0.05, 0.33), Decision::Uncertain);
        // A threshold outside it widens it, as any band.
        assert_eq!(b.decide(0.96, 0.97), Decision::Uncertain);
        let u = Unsure {
            kind: Kind::Claims,
            judge: "gpt-4o-mini".into(),
            probability: Some(0.8),
            band: b,
            why: UnsureWhy::InBand,
        };
        let text = u.to_string();
        assert!(text.contains("[0.05, 0.95) (unmeasured)"), "{text}");
        assert!(
            text.contains("nothing was measured for this judge"),
            "{text}"
        );
        assert!(text.contains("bands.claims"), "{text}");
    }

    #[test]
    fn a_reading_on_a_side_that_decides_nothing_says_which_side() {
        let u = Unsure {
            kind: Kind::Claims,
            judge: "m".into(),
            probability: Some(1.0),
            band: Band::NoOnly { low: 0.075 },
            why: UnsureWhy::InBand,
        };
        let text = u.to_string();
        assert!(
            text.starts_with("P(supported) 1.00, inside the band [0.075, never) of `m`: it decides no claim supported"),
            "{text}"
        );
        let u = Unsure {
            probability: Some(0.01),
            band: Band::YesOnly { high: 0.9 },
            ..u
        };
        assert!(
            u.to_string().contains("it decides no claim unsupported"),
            "{u}"
        );
    }

    #[test]
    fn ollama_names_of_the_kit_models_get_their_bands() {
        for name in [
            "qwen2.5-coder:1.5b",
            "qwen2.5-coder:1.5b-instruct",
            "qwen2.5-coder:1.5b-instruct-q4_K_M",
            "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf",
            "qwen2.5-coder-1.5b",
        ] {
            assert_eq!(Bands::measured(name), Bands::QWEN_CODER_1_5B, "{name}");
        }
        for name in ["qwen2.5-coder:0.5b", "qwen2.5-coder:0.5b-instruct-q8_0"] {
            assert_eq!(Bands::measured(name), Bands::QWEN_CODER_0_5B, "{name}");
        }
        for name in [
            "qwen2.5-coder:latest",
            "qwen2.5-coder:7b",
            "qwen2.5-coder:1.5b-base",
            "qwen2.5-coder:14b",
            "llama3.2:1b",
        ] {
            assert_eq!(Bands::measured(name), Bands::UNMEASURED, "{name}");
        }
    }

    #[test]
    fn bad_bands_say_why() {
        assert!(
            Band::between(0.6, 0.5)
                .unwrap_err()
                .contains("above the top")
        );
        assert!(
            Band::between(-0.1, 0.5)
                .unwrap_err()
                .contains("from 0 to 1")
        );
        assert!(Band::between(f64::NAN, 0.5).is_err());
    }
}
