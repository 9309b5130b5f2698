//! Agreement between a person's labels and a judge's verdicts: accuracy,
//! Cohen's kappa with a bootstrap interval, per-label precision and recall,
//! macro-F1 and the confusion matrix.
//!
//! The bootstrap resamples *groups* of items when the items come in groups
//! ([`agreement_grouped`]): labelled claims asked about in one judge call,
//! against the same passages, are not independent (one misread passage or
//! one confused reply moves them together), and resampling them one by one
//! gives an interval narrower than the data supports.

use serde::Serialize;

/// How often the items are resampled for kappa's interval.
pub const DEFAULT_RESAMPLES: usize = 2000;

/// Agreement over one labelling scheme (the four verdicts, or supported /
/// not supported).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AgreementStats {
    /// The labels, in the order of the matrix's rows and columns.
    pub labels: Vec<String>,
    /// Items compared.
    pub n: usize,
    /// Groups the bootstrap resampled (items that share a judge call and
    /// passages); `n` when every item is its own group.
    pub groups: usize,
    /// `confusion[person][judge]`: how many items the person labelled with
    /// row's label and the judge with the column's.
    pub confusion: Vec<Vec<u64>>,
    /// Share of items where the judge gave the person's label; 0 with no items.
    pub accuracy: f64,
    /// Cohen's kappa: agreement beyond what the two label shares give by
    /// chance, from -1 to 1. `None` when undefined (no items, or both sides
    /// used one and the same label only).
    pub kappa: Option<f64>,
    /// The 95% bootstrap percentile interval of kappa (groups of items
    /// resampled with replacement, seeded), when kappa is defined in most
    /// resamples.
    pub kappa_interval: Option<(f64, f64)>,
    /// Mean F1 over the labels that either side used.
    pub macro_f1: f64,
    /// Per label, in the order of `labels`.
    pub per_label: Vec<LabelStats>,
}

/// One label's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LabelStats {
    /// The label.
    pub label: String,
    /// Items the person gave this label.
    pub support: u64,
    /// Items the judge gave this label.
    pub predicted: u64,
    /// Of the judge's, the share the person agrees with; `None` when the
    /// judge never gave it.
    pub precision: Option<f64>,
    /// Of the person's, the share the judge found; `None` when the person
    /// never gave it.
    pub recall: Option<f64>,
    /// Harmonic mean of precision and recall; 0 when either is undefined or
    /// both are 0.
    pub f1: f64,
}

/// The figures for `pairs` of (person, judge) label indices into `labels`,
/// each pair its own group in the bootstrap.
///
/// ```
/// use ragaliq::calibrate::agreement;
/// // 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: kappa 0.4.
/// let mut pairs = vec![(0, 0); 20];
/// pairs.extend([(0, 1); 5]);
/// pairs.extend([(1, 0); 10]);
/// pairs.extend([(1, 1); 15]);
/// let stats = agreement(&["yes", "no"], &pairs, 1000, 7);
/// assert!((stats.kappa.unwrap() - 0.4).abs() < 1e-9);
/// let (lo, hi) = stats.kappa_interval.unwrap();
/// assert!(lo < 0.4 && 0.4 < hi);
/// ```
#[must_use]
pub fn agreement(
    labels: &[&str],
    pairs: &[(usize, usize)],
    resamples: usize,
    seed: u64,
) -> AgreementStats {
    let groups: Vec<usize> = (0..pairs.len()).collect();
    agreement_grouped(labels, pairs, &groups, resamples, seed)
}

/// Like [`agreement`], with `groups[i]` naming the group of `pairs[i]`:
/// the bootstrap draws whole groups, so items that were judged together
/// (one call, the same passages) stay together in every resample.
///
/// ```
/// use ragaliq::calibrate::{agreement, agreement_grouped};
/// // The same 50 pairs, in 5 groups of 10 that agree or disagree together.
/// let mut pairs = Vec::new();
/// let mut groups = Vec::new();
/// for g in 0..5 {
///     let pair = if g < 3 { [(0, 0), (1, 1)] } else { [(0, 1), (1, 0)] };
///     for i in 0..10 {
///         pairs.push(pair[i % 2]);
///         groups.push(g);
///     }
/// }
/// let single = agreement(&["yes", "no"], &pairs, 2000, 7);
/// let grouped = agreement_grouped(&["yes", "no"], &pairs, &groups, 2000, 7);
/// assert_eq!(single.kappa, grouped.kappa);
/// let width = |s: &ragaliq::calibrate::AgreementStats| {
///     let (lo, hi) = s.kappa_interval.unwrap();
///     hi - lo
/// };
/// assert!(width(&grouped) > width(&single));
/// ```
///
/// # Panics
///
/// When `groups` and `pairs` differ in length (a caller's bug).
#[must_use]
pub fn agreement_grouped(
    labels: &[&str],
    pairs: &[(usize, usize)],
    groups: &[usize],
    resamples: usize,
    seed: u64,
) -> AgreementStats {
    assert_eq!(
        pairs.len(),
        groups.len(),
        "agreement_grouped: one group per pair"
    );
    let k = labels.len();
    // Each group's pairs, in order of first appearance.
    let mut members: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut index: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for (&pair, &g) in pairs.iter().zip(groups) {
        let at = *index.entry(g).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[at].push(pair);
    }
    let confusion = matrix(k, pairs);
    let n = pairs.len();
    let agreeing: u64 = (0..k).map(|i| confusion[i][i]).sum();
    let accuracy = if n == 0 {
        0.0
    } else {
        agreeing as f64 / n as f64
    };
    let per_label: Vec<LabelStats> = (0..k)
        .map(|c| {
            let support: u64 = confusion[c].iter().sum();
            let predicted: u64 = confusion.iter().map(|row| row[c]).sum();
            let hit = confusion[c][c] as f64;
            let precision = (predicted > 0).then(|| hit / predicted as f64);
            let recall = (support > 0).then(|| hit / support as f64);
            let f1 = match (precision, recall) {
                (Some(p), Some(r)) if p + r > 0.0 => 2.0 * p * r / (p + r),
                _ => 0.0,
            };
            LabelStats {
                label: labels[c].to_owned(),
                support,
                predicted,
                precision,
                recall,
                f1,
            }
        })
        .collect();
    let used: Vec<&LabelStats> = per_label
        .iter()
        .filter(|l| l.support + l.predicted > 0)
        .collect();
    let macro_f1 = if used.is_empty() {
        0.0
    } else {
        used.iter().map(|l| l.f1).sum::<f64>() / used.len() as f64
    };
    AgreementStats {
        labels: labels.iter().map(|l| (*l).to_owned()).collect(),
        n,
        groups: members.len(),
        kappa: kappa(&confusion, n),
        kappa_interval: interval(k, &members, resamples, seed),
        confusion,
        accuracy,
        macro_f1,
        per_label,
    }
}

fn matrix(k: usize, pairs: &[(usize, usize)]) -> Vec<Vec<u64>> {
    let mut m = vec![vec![0u64; k]; k];
    for &(person, judge) in pairs {
        m[person][judge] += 1;
    }
    m
}

/// Cohen's kappa of a confusion matrix over `n` items.
fn kappa(m: &[Vec<u64>], n: usize) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let observed = (0..m.len()).map(|i| m[i][i] as f64).sum::<f64>() / n;
    let chance: f64 = (0..m.len())
        .map(|c| {
            let row: u64 = m[c].iter().sum();
            let column: u64 = m.iter().map(|r| r[c]).sum();
            (row as f64 / n) * (column as f64 / n)
        })
        .sum();
    // Both sides gave one and the same label to everything: agreement by
    // chance is certain and kappa is 0/0.
    if 1.0 - chance < 1e-12 {
        return None;
    }
    Some((observed - chance) / (1.0 - chance))
}

/// The 2.5th and 97.5th percentiles of kappa over `resamples` bootstrap
/// samples of the groups (as many groups drawn as there are, with
/// replacement); `None` when kappa is undefined in half of them or more (or
/// no resampling was asked for).
fn interval(
    k: usize,
    groups: &[Vec<(usize, usize)>],
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    if groups.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64(seed);
    let mut kappas = Vec::with_capacity(resamples);
    let mut drawn = Vec::new();
    for _ in 0..resamples {
        drawn.clear();
        for _ in 0..groups.len() {
            drawn.extend_from_slice(&groups[rng.below(groups.len())]);
        }
        if let Some(kappa) = kappa(&matrix(k, &drawn), drawn.len()) {
            kappas.push(kappa);
        }
    }
    if kappas.len() * 2 <= resamples {
        return None;
    }
    kappas.sort_by(f64::total_cmp);
    let at =
        |q: f64| kappas[((q * kappas.len() as f64).ceil() as usize).clamp(1, kappas.len()) - 1];
    Some((at(0.025), at(0.975)))
}

/// A seeded generator for the bootstrap, so a report reproduces exactly
/// (SplitMix64: small, and statistically fine for resampling indices).
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by rejection so no index is favoured.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: [&str; 2] = ["yes", "no"];

    fn pairs(counts: [[usize; 2]; 2]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (p, row) in counts.iter().enumerate() {
            for (j, &c) in row.iter().enumerate() {
                out.extend(std::iter::repeat_n((p, j), c));
            }
        }
        out
    }

    #[test]
    fn kappa_matches_a_worked_example() {
        // The textbook table: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no.
        // p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4.
        let s = agreement(&TWO, &pairs([[20, 5], [10, 15]]), 0, 1);
        assert!((s.accuracy - 0.7).abs() < 1e-12);
        assert!((s.kappa.unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(s.confusion, vec![vec![20, 5], vec![10, 15]]);
        let yes = &s.per_label[0];
        assert!((yes.precision.unwrap() - 20.0 / 30.0).abs() < 1e-12);
        assert!((yes.recall.unwrap() - 0.8).abs() < 1e-12);
        let f1_yes = 2.0 * (2.0 / 3.0) * 0.8 / (2.0 / 3.0 + 0.8);
        let f1_no = 2.0 * 0.75 * 0.6 / (0.75 + 0.6);
        assert!((s.macro_f1 - (f1_yes + f1_no) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn perfect_and_chance_and_undefined_agreement() {
        let perfect = agreement(&TWO, &pairs([[10, 0], [0, 10]]), 200, 1);
        assert_eq!(perfect.kappa, Some(1.0));
        assert_eq!(perfect.kappa_interval, Some((1.0, 1.0)));
        // The judge says "yes" to everything: no better than chance.
        let constant = agreement(&TWO, &pairs([[10, 0], [10, 0]]), 0, 1);
        assert_eq!(constant.kappa, Some(0.0));
        assert_eq!(constant.per_label[1].precision, None);
        assert_eq!(constant.per_label[1].f1, 0.0);
        // Both sides say "yes" to everything: kappa is 0/0, not NaN.
        let one_label = agreement(&TWO, &pairs([[10, 0], [0, 0]]), 100, 1);
        assert_eq!(one_label.kappa, None);
        assert_eq!(one_label.kappa_interval, None);
        let none = agreement(&TWO, &[], 100, 1);
        assert_eq!((none.kappa, none.accuracy, none.macro_f1), (None, 0.0, 0.0));
    }

    #[test]
    fn groups_of_one_are_the_plain_bootstrap_and_real_groups_widen_it() {
        let p = pairs([[20, 5], [10, 15]]);
        let ones: Vec<usize> = (0..p.len()).collect();
        assert_eq!(
            agreement_grouped(&TWO, &p, &ones, 2000, 7),
            agreement(&TWO, &p, 2000, 7)
        );
        // Ten groups of five that each agree or disagree as one: the same
        // kappa, a wider interval, and the group count reported.
        let mut grouped = Vec::new();
        let mut groups = Vec::new();
        for g in 0..10 {
            for i in 0..5 {
                let agree = g % 10 < 7;
                let person = i % 2;
                grouped.push((person, if agree { person } else { 1 - person }));
                groups.push(g * 3); // ids need not be dense
            }
        }
        let one_by_one = agreement(&TWO, &grouped, 2000, 7);
        let by_group = agreement_grouped(&TWO, &grouped, &groups, 2000, 7);
        assert_eq!(by_group.kappa, one_by_one.kappa);
        assert_eq!(
            (by_group.n, by_group.groups, one_by_one.groups),
            (50, 10, 50)
        );
        let width = |s: &AgreementStats| {
            let (lo, hi) = s.kappa_interval.unwrap();
            hi - lo
        };
        assert!(
            width(&by_group) > 1.5 * width(&one_by_one),
            "{:?} vs {:?}",
            by_group.kappa_interval,
            one_by_one.kappa_interval
        );
    }

    #[test]
    fn the_interval_holds_kappa_is_seeded_and_narrows_with_more_items() {
        let small = agreement(&TWO, &pairs([[20, 5], [10, 15]]), 2000, 7);
        let (lo, hi) = small.kappa_interval.unwrap();
        assert!(lo < 0.4 && 0.4 < hi, "{lo} {hi}");
        assert_eq!(
            agreement(&TWO, &pairs([[20, 5], [10, 15]]), 2000, 7).kappa_interval,
            small.kappa_interval,
            "same seed, same interval"
        );
        let large = agreement(&TWO, &pairs([[200, 50], [100, 150]]), 2000, 7);
        let (llo, lhi) = large.kappa_interval.unwrap();
        assert!(lhi - llo < hi - lo, "{llo}..{lhi} within {lo}..{hi}");
    }

    #[test]
    fn draws_cover_every_index() {
        let mut rng = SplitMix64(3);
        let mut seen = [0usize; 7];
        for _ in 0..7000 {
            seen[rng.below(7)] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }
}
