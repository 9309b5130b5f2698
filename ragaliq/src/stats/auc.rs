//! How well a judge's score separates what people said yes to from what
//! they said no to, whatever threshold is chosen: the area under the ROC
//! curve.

/// The area under the ROC curve of `scored` (per item: whether the person's
/// label is the positive one, and the judge's score): the chance that a
/// positive item scores above a negative one, ties counting half. 0.5 is a
/// coin; 1 separates them perfectly. `None` when either side has no item,
/// or a score is not a number.
///
/// ```
/// use ragaliq::calibrate::auc;
/// assert_eq!(auc(&[(true, 0.9), (true, 0.6), (false, 0.4), (false, 0.1)]), Some(1.0));
/// assert_eq!(auc(&[(true, 0.5), (false, 0.5)]), Some(0.5));
/// assert_eq!(auc(&[(true, 0.3), (true, 0.8), (false, 0.6)]), Some(0.5));
/// assert_eq!(auc(&[(true, 0.9)]), None);
/// ```
#[must_use]
pub fn auc(scored: &[(bool, f64)]) -> Option<f64> {
    if scored.iter().any(|(_, s)| s.is_nan()) {
        return None;
    }
    let positives: Vec<f64> = scored.iter().filter(|(p, _)| *p).map(|(_, s)| *s).collect();
    let negatives: Vec<f64> = scored
        .iter()
        .filter(|(p, _)| !*p)
        .map(|(_, s)| *s)
        .collect();
    if positives.is_empty() || negatives.is_empty() {
        return None;
    }
    // Every pair once: a few hundred items per set, so the plain count is
    // cheap and needs no ranking with its own tie rule.
    let wins: f64 = positives
        .iter()
        .flat_map(|p| negatives.iter().map(move |n| (p, n)))
        .map(|(p, n)| match p.total_cmp(n) {
            std::cmp::Ordering::Greater => 1.0,
            std::cmp::Ordering::Equal => 0.5,
            std::cmp::Ordering::Less => 0.0,
        })
        .sum();
    Some(wins / (positives.len() as f64 * negatives.len() as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judge_that_ranks_backwards_scores_below_a_coin() {
        let backwards = [(true, 0.1), (true, 0.2), (false, 0.8), (false, 0.9)];
        assert_eq!(auc(&backwards), Some(0.0));
        assert_eq!(auc(&[(true, f64::NAN), (false, 0.1)]), None);
        // Three positives, two negatives: 5 of 6 pairs ordered, one tied.
        let mixed = [
            (true, 0.9),
            (true, 0.7),
            (true, 0.4),
            (false, 0.4),
            (false, 0.2),
        ];
        assert_eq!(auc(&mixed), Some(5.5 / 6.0));
    }
}
