//! Numbers over samples and labels: the vote, the median, the spread of
//! per-sample scores, and agreement with people (kappa with a bootstrap
//! interval, macro-F1, confusion matrices, the area under the ROC curve).

#[cfg(feature = "calibration")]
mod agreement;
#[cfg(feature = "calibration")]
mod auc;

#[cfg(feature = "calibration")]
pub(crate) use agreement::SplitMix64;
#[cfg(feature = "calibration")]
pub use agreement::{AgreementStats, DEFAULT_RESAMPLES, LabelStats, agreement, agreement_grouped};
#[cfg(feature = "calibration")]
pub use auc::auc;

use crate::core::{Agreement, Spread};

/// The winner of a vote over `items`, with its agreement. Ties go to the
/// item `worse` ranks lowest, so a tie never resolves in the answer's favour.
pub(crate) fn vote<T: PartialEq + Copy>(items: &[T], worse: impl Fn(T) -> i32) -> (T, Agreement) {
    let mut best: Option<(T, u32)> = None;
    for &candidate in items {
        let count = items.iter().filter(|&&x| x == candidate).count() as u32;
        best = match best {
            None => Some((candidate, count)),
            Some((b, c)) if count > c || (count == c && worse(candidate) < worse(b)) => {
                Some((candidate, count))
            }
            keep => keep,
        };
    }
    let (winner, votes) = best.expect("a vote over at least one sample");
    (
        winner,
        Agreement {
            votes,
            of: items.len() as u32,
        },
    )
}

/// The spread of `scores` around `threshold`, for an evaluation that
/// `passed` or not: how many samples would have flipped its outcome alone.
pub(crate) fn spread(scores: &[f64], threshold: f64, passed: bool) -> Spread {
    let mut sorted: Vec<f64> = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    Spread {
        samples: sorted.len() as u32,
        min: sorted.first().copied().unwrap_or(0.0),
        median: median_of_sorted(&sorted),
        max: sorted.last().copied().unwrap_or(0.0),
        flips: scores
            .iter()
            .filter(|&&s| (s >= threshold) != passed)
            .count() as u32,
    }
}

/// The median of `scores` (any order); see [`median_of_sorted`].
pub(crate) fn median(scores: &[f64]) -> f64 {
    let mut sorted = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    median_of_sorted(&sorted)
}

/// The median of sorted numbers; the lower of the middle two for an even
/// count, so it is always a score some sample gave.
pub(crate) fn median_of_sorted(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n => sorted[(n - 1) / 2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn votes_need_agreement_and_ties_go_against_the_answer() {
        let (w, a) = vote(&[1, 1, 0, 1, 0], |x| x);
        assert_eq!((w, a), (1, Agreement { votes: 3, of: 5 }));
        assert!(a.reaches(0.6));
        let (w, a) = vote(&[1, 0], |x| x);
        assert_eq!(w, 0, "a tie goes to the worse verdict");
        assert!(!a.reaches(0.6));
        let (_, a) = vote(&[2, 1, 0, 2, 1], |x| x);
        assert!(!a.reaches(0.6), "2 of 5 is undecided");
    }

    #[test]
    fn spread_and_flips() {
        let s = spread(&[0.5, 1.0, 1.0, 0.67, 1.0], 0.7, true);
        assert_eq!((s.min, s.median, s.max, s.flips), (0.5, 1.0, 1.0, 2));
    }

    #[test]
    fn the_median_is_a_score_some_sample_gave() {
        assert_eq!(median(&[1.0, 0.0, 0.5, 0.25]), 0.25);
        assert_eq!(median(&[]), 0.0);
    }
}
