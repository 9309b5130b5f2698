//! How many times a question is asked, and how far its samples agreed.
//!
//! A judge is a model, and models disagree with themselves. With
//! [`Samples::Fixed`]`(n)` every question whose answer decides the score is
//! asked `n` times (each sample is its own exchange, with its sample index in
//! the fingerprint, so every sample is recorded and replays offline); each
//! claim's or passage's verdict is the majority, and a split below the
//! required agreement is *undecided*, never resolved in the answer's favour.
//! [`Samples::Auto`] asks once, and more only when the score lies close
//! enough to the threshold that a re-ask could flip the result.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How many times each question is asked (`scoring.samples`,
/// `RAGALIQ_SAMPLES`, `samples = …` in the assertion macros).
///
/// More than one sample needs a judge that samples: `strategy = "word"` or
/// `"json"`, with a `temperature` above 0. Under the default `strategy =
/// "probability"` each answer is read from token probabilities, which are
/// the same every time a question is asked, so `samples` above 1 (or
/// `"auto"`) is a configuration error there.
///
/// ```
/// use ragaliq::Samples;
/// assert_eq!(Samples::parse("5"), Some(Samples::Fixed(5)));
/// assert_eq!(Samples::parse("auto"), Some(Samples::Auto { max: 5 }));
/// assert_eq!(Samples::parse("auto:7"), Some(Samples::Auto { max: 7 }));
/// assert_eq!(Samples::parse("0"), None);
/// assert_eq!(Samples::default(), Samples::Fixed(1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Samples {
    /// Always ask this many times (1 to [`Samples::MAX`]).
    Fixed(u32),
    /// Ask once; when the score is within [`AUTO_BAND`] of the threshold, ask
    /// until `max` samples in all.
    Auto {
        /// The most samples in all.
        max: u32,
    },
}

/// How close to the threshold a single sample's score must be for
/// [`Samples::Auto`] to ask again.
pub const AUTO_BAND: f64 = 0.25;

/// The P(yes) at or above which a one-word answer counts as yes when no
/// threshold was fitted for the judge (passages).
pub const DEFAULT_PROBABILITY_THRESHOLD: f64 = 0.5;

/// The P(supported) at or above which a claim is supported when no
/// threshold was fitted for the judge. Not 0.5: chosen by
/// leave-one-source-out over six public labelled sources, where the
/// threshold fitted on the other sources was near a third for every source
/// left out, and 0.5 said yes to 2% of one source's claims where people
/// said 32% (BENCHMARKS.md, "Verdicts that transfer").
pub const DEFAULT_CLAIM_THRESHOLD: f64 = 0.33;

/// How many times likelier than support the judge must find contradiction
/// for a claim to be called contradicted, when no ratio was fitted for the
/// judge: the smallest ratio at which "contradicted" was right at least 60%
/// of the time on the public sources labelled with contradictions, left
/// out one at a time (BENCHMARKS.md).
pub const DEFAULT_CONTRADICTION_RATIO: f64 = 3.0;

/// Claims asked about in one verification call, unless configured
/// (`judge.verify_batch`): chosen by measured agreement with people (see
/// BENCHMARKS.md, "Verification strategies").
pub const DEFAULT_VERIFY_BATCH: usize = 4;

/// The default share of samples that must agree: 0.6, so 3 of 5 (and 2 of 3).
pub const DEFAULT_AGREEMENT: f64 = 0.6;

impl Default for Samples {
    fn default() -> Self {
        Samples::Fixed(1)
    }
}

impl Samples {
    /// The most samples allowed.
    pub const MAX: u32 = 25;

    /// What a configuration value may say.
    pub const EXPECTED: &'static str =
        "a whole number of samples from 1 to 25, \"auto\" (up to 5), or \"auto:N\"";

    /// Parses `5`, `auto` or `auto:7`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Samples> {
        let text = text.trim();
        let in_range = |n: u32| (1..=Samples::MAX).contains(&n).then_some(n);
        if text.eq_ignore_ascii_case("auto") {
            return Some(Samples::Auto { max: 5 });
        }
        if let Some(max) = text.strip_prefix("auto:") {
            return in_range(max.trim().parse().ok()?).map(|max| Samples::Auto { max });
        }
        in_range(text.parse().ok()?).map(Samples::Fixed)
    }

    /// `Err((value, expected))` when out of range.
    pub(crate) fn check(self) -> Result<(), (String, String)> {
        let n = match self {
            Samples::Fixed(n) => n,
            Samples::Auto { max } => max,
        };
        if (1..=Samples::MAX).contains(&n) {
            Ok(())
        } else {
            Err((self.to_string(), Samples::EXPECTED.into()))
        }
    }

    /// The samples asked first.
    pub(crate) fn first(self) -> u32 {
        match self {
            Samples::Fixed(n) => n,
            Samples::Auto { .. } => 1,
        }
    }

    /// The most samples in all.
    pub(crate) fn max(self) -> u32 {
        match self {
            Samples::Fixed(n) => n,
            Samples::Auto { max } => max,
        }
    }

    /// Whether more samples should be asked, after a first one that scored
    /// `score` against `threshold`.
    pub(crate) fn wants_more(self, score: f64, threshold: f64) -> bool {
        matches!(self, Samples::Auto { max } if max > 1 && (score - threshold).abs() <= AUTO_BAND)
    }
}

impl fmt::Display for Samples {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Samples::Fixed(n) => write!(f, "{n}"),
            Samples::Auto { max } => write!(f, "auto:{max}"),
        }
    }
}

impl From<u32> for Samples {
    fn from(n: u32) -> Self {
        Samples::Fixed(n)
    }
}

/// How many samples agreed on a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agreement {
    /// Samples that gave the winning verdict.
    pub votes: u32,
    /// Samples asked.
    pub of: u32,
}

impl Agreement {
    /// Whether `votes / of` reaches `required`.
    #[must_use]
    pub fn reaches(&self, required: f64) -> bool {
        self.of > 0 && f64::from(self.votes) / f64::from(self.of) + 1e-9 >= required
    }
}

impl fmt::Display for Agreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {}", self.votes, self.of)
    }
}

/// The spread of the per-sample scores and how many would have flipped the
/// outcome on their own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Samples asked.
    pub samples: u32,
    /// The lowest sample score.
    pub min: f64,
    /// The median sample score.
    pub median: f64,
    /// The highest sample score.
    pub max: f64,
    /// Samples whose own score is on the other side of the threshold from
    /// the evaluation's outcome.
    pub flips: u32,
}

impl fmt::Display for Spread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} samples: min {:.2}, median {:.2}, max {:.2}; {} of {} on the other side of the threshold",
            self.samples, self.min, self.median, self.max, self.flips, self.samples
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_asks_more_only_near_the_threshold() {
        let auto = Samples::Auto { max: 5 };
        assert!(auto.wants_more(0.67, 0.7));
        assert!(!auto.wants_more(0.1, 0.7));
        assert!(!Samples::Fixed(5).wants_more(0.7, 0.7));
    }
}
