//! [`Verdict`]s on claims and the [`VerdictWeights`] that turn them into scores.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What the judge concluded about one claim, given the context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// The context states the claim or it follows directly.
    Supported,
    /// Part of the claim is supported; the rest has no evidence.
    PartiallySupported,
    /// The context neither supports nor contradicts the claim.
    NoEvidence,
    /// The context says otherwise.
    Contradicted,
}

impl Verdict {
    /// Reads a judge's label: trimmed, outer punctuation and quotes
    /// dropped, upper-cased, spaces and hyphens made `_`, then one of:
    ///
    /// | verdict | spellings |
    /// | --- | --- |
    /// | supported | `SUPPORTED`, `SUPPORTS`, `YES`, `ENTAILMENT`, `ENTAILED`, `TRUE`, `1` |
    /// | contradicted | `CONTRADICTED`, `CONTRADICTS`, `CONTRADICTION`, `REFUTED` |
    /// | no evidence | `NO_EVIDENCE`, `NOT_ENOUGH_INFO`, `NOT_ENOUGH_INFORMATION`, `NEI`, `IDK`, `NEUTRAL` |
    /// | partially supported | `PARTIALLY_SUPPORTED` |
    ///
    /// Everything else has more than one reading and is refused: `no`,
    /// `false`, `0`, `null`, `NOT SUPPORTED`, `unsupported`, a label with a
    /// qualifier.
    ///
    /// ```
    /// use ragaliq::Verdict;
    /// assert_eq!(Verdict::from_label("Partially Supported"), Some(Verdict::PartiallySupported));
    /// assert_eq!(Verdict::from_label(" 'not-enough-info'. "), Some(Verdict::NoEvidence));
    /// assert_eq!(Verdict::from_label("unsupported"), None);
    /// assert_eq!(Verdict::from_label("NOT SUPPORTED"), None);
    /// ```
    #[must_use]
    pub fn from_label(label: &str) -> Option<Verdict> {
        let trimmed = label.trim().trim_matches(|c: char| {
            c.is_ascii_punctuation() || c.is_whitespace() || "“”‘’«»".contains(c)
        });
        let key: String = trimmed
            .chars()
            .map(|c| match c {
                ' ' | '-' => '_',
                c => c.to_ascii_uppercase(),
            })
            .collect();
        Some(match key.as_str() {
            "SUPPORTED" | "SUPPORTS" | "YES" | "ENTAILMENT" | "ENTAILED" | "TRUE" | "1" => {
                Verdict::Supported
            }
            "CONTRADICTED" | "CONTRADICTS" | "CONTRADICTION" | "REFUTED" => Verdict::Contradicted,
            "NO_EVIDENCE"
            | "NOT_ENOUGH_INFO"
            | "NOT_ENOUGH_INFORMATION"
            | "NEI"
            | "IDK"
            | "NEUTRAL" => Verdict::NoEvidence,
            "PARTIALLY_SUPPORTED" => Verdict::PartiallySupported,
            _ => return None,
        })
    }

    /// The canonical snake_case label, as the prompts spell it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::PartiallySupported => "partially_supported",
            Verdict::NoEvidence => "no_evidence",
            Verdict::Contradicted => "contradicted",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The weight of each verdict in a claim-based score. The score is the mean
/// weight over all claims, clamped to [0, 1].
///
/// ```
/// use ragaliq::{Verdict, VerdictWeights};
/// let w = VerdictWeights::STRICT;
/// assert_eq!(w.weight(Verdict::NoEvidence), -1.0);
/// assert_eq!(VerdictWeights::RATIO.score([Verdict::Supported, Verdict::NoEvidence]), 0.5);
/// // Negative weights can push the mean below zero; the score is clamped.
/// assert_eq!(w.score([Verdict::Contradicted]), 0.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerdictWeights {
    /// Weight of [`Verdict::Supported`].
    pub supported: f64,
    /// Weight of [`Verdict::PartiallySupported`].
    pub partially_supported: f64,
    /// Weight of [`Verdict::NoEvidence`].
    pub no_evidence: f64,
    /// Weight of [`Verdict::Contradicted`].
    pub contradicted: f64,
}

impl VerdictWeights {
    /// The default: 1, 0.5, 0, 0 (the share of supported claims).
    pub const RATIO: VerdictWeights = VerdictWeights::new(1.0, 0.5, 0.0, 0.0);
    /// 1, 0.5, 0, -1: a contradiction costs more than a gap.
    pub const WEIGHTED: VerdictWeights = VerdictWeights::new(1.0, 0.5, 0.0, -1.0);
    /// 1, 0.5, -1, -1: an unsupported claim is as bad as a contradicted one.
    pub const STRICT: VerdictWeights = VerdictWeights::new(1.0, 0.5, -1.0, -1.0);

    /// A custom table, in the order supported, partially supported, no evidence, contradicted.
    #[must_use]
    pub const fn new(
        supported: f64,
        partially_supported: f64,
        no_evidence: f64,
        contradicted: f64,
    ) -> Self {
        VerdictWeights {
            supported,
            partially_supported,
            no_evidence,
            contradicted,
        }
    }

    /// A preset by name: `ratio`, `weighted` or `strict`.
    #[must_use]
    pub fn preset(name: &str) -> Option<VerdictWeights> {
        match name {
            "ratio" => Some(Self::RATIO),
            "weighted" => Some(Self::WEIGHTED),
            "strict" => Some(Self::STRICT),
            _ => None,
        }
    }

    /// The weight of one verdict.
    #[must_use]
    pub fn weight(&self, verdict: Verdict) -> f64 {
        match verdict {
            Verdict::Supported => self.supported,
            Verdict::PartiallySupported => self.partially_supported,
            Verdict::NoEvidence => self.no_evidence,
            Verdict::Contradicted => self.contradicted,
        }
    }

    /// The mean weight of `verdicts`, clamped to [0, 1]; 1.0 for no verdicts
    /// (nothing was claimed, so nothing is unfaithful).
    #[must_use]
    pub fn score(&self, verdicts: impl IntoIterator<Item = Verdict>) -> f64 {
        let (sum, n) = verdicts
            .into_iter()
            .fold((0.0, 0usize), |(s, n), v| (s + self.weight(v), n + 1));
        if n == 0 {
            return 1.0;
        }
        clamp_score(sum / n as f64)
    }

    /// Whether every weight is a finite number.
    #[must_use]
    pub fn is_finite(&self) -> bool {
        [
            self.supported,
            self.partially_supported,
            self.no_evidence,
            self.contradicted,
        ]
        .iter()
        .all(|w| w.is_finite())
    }
}

impl Default for VerdictWeights {
    fn default() -> Self {
        Self::RATIO
    }
}

/// Clamps to [0, 1]; NaN (which no caller should produce) becomes 0 rather
/// than leaking into a report.
pub(crate) fn clamp_score(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;

    #[test]
    fn labels_round_trip() {
        for v in [Supported, PartiallySupported, NoEvidence, Contradicted] {
            assert_eq!(Verdict::from_label(v.label()), Some(v));
            assert_eq!(Verdict::from_label(&v.label().to_uppercase()), Some(v));
        }
    }

    #[test]
    fn label_variants_and_refusals() {
        assert_eq!(Verdict::from_label(" Supported. "), Some(Supported));
        assert_eq!(Verdict::from_label("no-evidence"), Some(NoEvidence));
        assert_eq!(Verdict::from_label("NO_EVIDENCE"), Some(NoEvidence));
        assert_eq!(Verdict::from_label("not enough info"), Some(NoEvidence));
        assert_eq!(Verdict::from_label("maybe"), None);
        assert_eq!(Verdict::from_label(""), None);
    }

    #[test]
    fn presets_score_as_the_spec_says() {
        let mixed = [Supported, PartiallySupported, NoEvidence, Contradicted];
        assert_eq!(VerdictWeights::RATIO.score(mixed), 1.5 / 4.0);
        assert_eq!(VerdictWeights::WEIGHTED.score(mixed), 0.5 / 4.0);
        assert_eq!(VerdictWeights::STRICT.score(mixed), 0.0);
        assert_eq!(VerdictWeights::RATIO.score([]), 1.0);
    }

    #[test]
    fn custom_weights_are_clamped_not_nan() {
        let w = VerdictWeights::new(5.0, 0.0, 0.0, 0.0);
        assert_eq!(w.score([Supported]), 1.0);
        assert_eq!(clamp_score(f64::NAN), 0.0);
        assert!(!VerdictWeights::new(f64::NAN, 0.0, 0.0, 0.0).is_finite());
    }
}
