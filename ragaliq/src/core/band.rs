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
}

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

    /// What reading `p` decides, with `threshold` held in the band.
    #[must_use]
    pub fn decide(self, p: f64, threshold: f64) -> Decision {
        let (low, high) = match self {
            Band::Off => (threshold, threshold),
            Band::Between { low, high } => (low.min(threshold), high.max(threshold)),
            Band::All => return Decision::Uncertain,
        };
        if p >= high {
            Decision::Yes
        } else if p < low {
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
            other => other,
        }
    }

    /// Whether any reading can be uncertain.
    #[must_use]
    pub fn is_off(self) -> bool {
        self == Band::Off
    }

    /// The band as `ragaliq.toml` writes it: `[0.1, 0.5]`, `"off"`, `"all"`.
    #[must_use]
    pub fn to_toml(self) -> String {
        match self {
            Band::Off => "\"off\"".to_owned(),
            Band::All => "\"all\"".to_owned(),
            Band::Between { low, high } => format!("[{low}, {high}]"),
        }
    }
}

impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Band::Off => f.write_str("off"),
            Band::All => f.write_str("all (nothing decided)"),
            Band::Between { low, high } => write!(f, "[{}, {})", bound(*low), bound(*high)),
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
/// assert_eq!(bands.get(Kind::Claims), Band::Off);
/// bands.set(Kind::Claims, Band::between(0.1, 0.5).unwrap());
/// assert!(!bands.get(Kind::Claims).is_off());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bands([Band; Kind::ALL.len()]);

impl Bands {
    /// Every kind off: every reading decides by its threshold.
    pub const OFF: Bands = Bands([Band::Off; Kind::ALL.len()]);

    /// The bands a judge has unless configured otherwise, when it is not
    /// one of the judges measured ([`Bands::measured`]): off, since where a
    /// judge is sure is a property of the judge, and nothing is known of
    /// this one. `cargo ragaliq calibrate --reviewed --fit` fits its own
    /// from a team's reviewed verdicts, or `[bands]` sets them.
    pub const DEFAULT: Bands = Bands::OFF;

    /// The bands of the kit's Qwen2.5-Coder 1.5B Instruct, chosen
    /// leave-one-source-out on public human-labelled sources' dev halves
    /// and reported on their test halves (`bench/bands/README.md`): the
    /// widest coverage at which every source's dev half has decided
    /// accuracy ≥ 0.9 and kappa ≥ 0.75. It is sure of few claims (5% of
    /// them); no band held for answers graded against a reference (the
    /// reference found in the answer still decides it correct, with no
    /// call), and it separates criteria on no source (AUC under 0.7).
    pub const QWEN_CODER_1_5B: Bands = Bands([
        Band::Between {
            low: 0.025,
            high: 0.925,
        },
        Band::Between {
            low: 0.47,
            high: 0.525,
        },
        Band::Between {
            low: 0.3,
            high: 0.525,
        },
        Band::All,
        Band::All,
        Band::All,
    ]);

    /// The bands of the kit's Qwen2.5-Coder 0.5B Instruct, chosen as
    /// [`QWEN_CODER_1_5B`](Self::QWEN_CODER_1_5B)'s were.
    pub const QWEN_CODER_0_5B: Bands = Bands([
        Band::Between {
            low: 0.1,
            high: 0.575,
        },
        Band::Between {
            low: 0.15,
            high: 0.47,
        },
        Band::Between {
            low: 0.15,
            high: 0.45,
        },
        Band::All,
        Band::All,
        Band::All,
    ]);

    /// The default bands of the judge serving `model`: the measured bands
    /// of a kit model (its name holds `qwen2.5-coder-1.5b` or
    /// `qwen2.5-coder-0.5b`, as the kit's `--alias` and its model files
    /// do), else [`DEFAULT`](Self::DEFAULT).
    ///
    /// ```
    /// use ragaliq::{Band, Bands, Kind};
    /// let kit = Bands::measured("qwen2.5-coder-1.5b");
    /// assert_eq!(kit.get(Kind::Claims).to_string(), "[0.025, 0.925)");
    /// assert_eq!(kit.get(Kind::Judged), Band::All);
    /// assert!(Bands::measured("gpt-4o-mini").all_off());
    /// ```
    #[must_use]
    pub fn measured(model: &str) -> Bands {
        let model = model.to_ascii_lowercase();
        if model.contains("qwen2.5-coder-1.5b") {
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
