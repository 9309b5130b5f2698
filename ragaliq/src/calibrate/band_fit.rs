//! A band fitted from verdicts people gave, with a stated guarantee.
//!
//! What a band promises is that the readings it decides agree with people:
//! decided agreement at least `1 − α`. Fitted on a team's own verdicts (a
//! labelled set, or the verdicts given in review), the promise holds with
//! probability `1 − δ` for new items like them, by fixed-sequence testing
//! (as in Jung et al., "Trust or Escalate", ICLR 2025):
//!
//! - Each side of the threshold is fitted on its own, at `δ / 2` each, so
//!   both hold together with probability `1 − δ`. On the yes side the
//!   candidates are the cuts `h` at the items' own readings, from the
//!   highest down: "decide yes at `p ≥ h`", from the first that decides
//!   enough items to show anything (below). For each in turn, the items it
//!   would decide and how many of them people said no to give a binomial
//!   p-value: the chance of so few errors if the true error rate were `α`.
//!   Under `δ / 2`, the cut is certified and the next is tried; the first
//!   that is not certified stops the sequence, and the last certified cut
//!   is the band's top. The no side likewise, from the lowest reading up.
//! - A side with no certified cut decides nothing: the band is `all` on it.
//! - Too few: with no error at all, a side needs `ln(δ/2) / ln(1 − α)`
//!   items to certify anything (36 at `α = 0.1`, `δ = 0.05`); a side with
//!   fewer readings is reported as TOO FEW and its band is kept.
//!
//! The guarantee is about items drawn like the ones fitted on (the same
//! kind of text, the same model); it says nothing of another domain.

use crate::core::Band;
use serde::Serialize;
use std::fmt;

/// The decided agreement a fitted band promises by default: 0.9.
pub const DEFAULT_ALPHA: f64 = 0.1;

/// The chance the promise fails that a fit allows by default: 0.05.
pub const DEFAULT_DELTA: f64 = 0.05;

/// A band fitted with a guarantee.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct BandFit {
    /// The band: `[low, high)` around the threshold, or `all` when neither
    /// side could be certified.
    pub band: Band,
    /// The promised error rate among decided items.
    pub alpha: f64,
    /// The chance the promise does not hold.
    pub delta: f64,
    /// Items read (with a probability).
    pub items: usize,
    /// The yes side: decided at or above the band's top.
    pub yes: Side,
    /// The no side: decided under the band's bottom.
    pub no: Side,
    /// Why the fit cannot support the guarantee, when it cannot: the band
    /// is then not to be written.
    pub too_few: Option<String>,
}

/// One side of a fitted band.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Side {
    /// Items on this side of the threshold.
    pub candidates: usize,
    /// The certified cut (`None`: none certified; the side decides nothing).
    pub cut: Option<f64>,
    /// Items the cut decides.
    pub decided: usize,
    /// Of them, those people said the other way.
    pub errors: usize,
    /// The binomial p-value of the cut.
    pub p_value: f64,
}

impl BandFit {
    /// Items the band decides.
    #[must_use]
    pub fn decided(&self) -> usize {
        self.yes.decided + self.no.decided
    }

    /// The share of items decided.
    #[must_use]
    pub fn coverage(&self) -> f64 {
        if self.items == 0 {
            0.0
        } else {
            self.decided() as f64 / self.items as f64
        }
    }

    /// Whether the band can be written: enough items on both sides.
    #[must_use]
    pub fn writable(&self) -> bool {
        self.too_few.is_none()
    }
}

impl fmt::Display for BandFit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(why) = &self.too_few {
            return write!(f, "band: TOO FEW: {why}");
        }
        let errors = self.yes.errors + self.no.errors;
        write!(
            f,
            "band {} decides {} of {} (coverage {:.2}), {} of them against people; guarantee: decided agreement >= {:.2} with probability {:.2} (fixed-sequence binomial tests, alpha {}, delta {})",
            self.band,
            self.decided(),
            self.items,
            self.coverage(),
            errors,
            1.0 - self.alpha,
            1.0 - self.delta,
            self.alpha,
            self.delta
        )
    }
}

/// The fewest items a side needs for a cut with no error to be certified.
#[must_use]
pub fn fewest(alpha: f64, delta: f64) -> usize {
    ((delta / 2.0).ln() / (1.0 - alpha).ln()).ceil() as usize
}

/// The band fitted on `scored` (each item's label, yes or not, and the
/// judge's probability) around `threshold`, promising decided agreement of
/// `1 − alpha` with probability `1 − delta` (see the module).
#[must_use]
pub fn fit_band(scored: &[(bool, f64)], threshold: f64, alpha: f64, delta: f64) -> BandFit {
    let each = delta / 2.0;
    let need = fewest(alpha, delta);
    // Yes side: cuts at the readings at or above the threshold, highest
    // first; an error is an item people said no to.
    let mut ups: Vec<f64> = scored
        .iter()
        .map(|&(_, p)| p)
        .filter(|p| *p >= threshold)
        .collect();
    ups.sort_by(|a, b| b.total_cmp(a));
    ups.dedup();
    let yes = side(
        &ups,
        need,
        scored.iter().filter(|(_, p)| *p >= threshold).count(),
        |h| {
            let decided: Vec<bool> = scored
                .iter()
                .filter(|(_, p)| *p >= h)
                .map(|(l, _)| *l)
                .collect();
            (decided.len(), decided.iter().filter(|l| !**l).count())
        },
        alpha,
        each,
    );
    // No side: cuts just above the readings under the threshold, lowest
    // first ("decide no at p < cut"); an error is an item people said yes to.
    let mut downs: Vec<f64> = scored
        .iter()
        .map(|&(_, p)| p)
        .filter(|p| *p < threshold)
        .collect();
    downs.sort_by(f64::total_cmp);
    downs.dedup();
    let cuts: Vec<f64> = downs
        .iter()
        .enumerate()
        .map(|(i, p)| downs.get(i + 1).map_or(threshold, |next| (p + next) / 2.0))
        .collect();
    let no = side(
        &cuts,
        need,
        scored.iter().filter(|(_, p)| *p < threshold).count(),
        |l| {
            let decided: Vec<bool> = scored
                .iter()
                .filter(|(_, p)| *p < l)
                .map(|(l, _)| *l)
                .collect();
            (decided.len(), decided.iter().filter(|l| **l).count())
        },
        alpha,
        each,
    );
    let mut short = Vec::new();
    for (name, s) in [("at or above", &yes), ("under", &no)] {
        if s.candidates < need {
            short.push(format!(
                "{} read {name} the threshold {threshold} (at least {need} needed)",
                s.candidates
            ));
        }
    }
    let too_few = (!short.is_empty()).then(|| {
        format!(
            "{}: with fewer, even verdicts that all agree cannot show decided agreement >= {:.2} with probability {:.2}; review more, then fit again",
            short.join("; "),
            1.0 - alpha,
            1.0 - delta
        )
    });
    let band = match (no.cut, yes.cut) {
        (None, None) => Band::All,
        (low, high) => Band::Between {
            low: low.unwrap_or(0.0).min(threshold),
            // A side with no certified cut decides nothing: readings up to
            // 1 stay uncertain (the top is written as 1, and a reading of
            // exactly 1 is the word written, which no band reads).
            high: high.unwrap_or(1.0).max(threshold),
        },
    };
    BandFit {
        band,
        alpha,
        delta,
        items: scored.len(),
        yes,
        no,
        too_few,
    }
}

/// One side's fixed sequence over `cuts` (most conservative first):
/// `count(cut)` gives the items the cut decides and the errors among them.
fn side(
    cuts: &[f64],
    need: usize,
    candidates: usize,
    count: impl Fn(f64) -> (usize, usize),
    alpha: f64,
    level: f64,
) -> Side {
    let mut out = Side {
        candidates,
        p_value: 1.0,
        ..Side::default()
    };
    if candidates < need {
        return out;
    }
    for &cut in cuts {
        let (n, errors) = count(cut);
        // Cuts that decide fewer items than could ever show the promise
        // are not tested: they would end the sequence before it starts.
        // (Which cuts are skipped depends on the readings alone, never on
        // what people said, so the sequence is still fixed in advance of
        // the labels.)
        if n < need {
            continue;
        }
        let p = binomial_cdf(errors, n, alpha);
        if p > level {
            break;
        }
        out.cut = Some(cut);
        out.decided = n;
        out.errors = errors;
        out.p_value = p;
    }
    out
}

/// P(X ≤ k) for X ~ Binomial(n, p), summed in logs (n in the thousands
/// underflows a plain product).
fn binomial_cdf(k: usize, n: usize, p: f64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut log_term = n as f64 * lq;
    let mut logs = vec![log_term];
    for i in 0..k.min(n) {
        log_term += ((n - i) as f64 / (i + 1) as f64).ln() + lp - lq;
        logs.push(log_term);
    }
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = logs.iter().map(|l| (l - top).exp()).sum();
    (top + sum.ln()).exp().clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binomial_tail_is_right() {
        assert!((binomial_cdf(0, 10, 0.1) - 0.9f64.powi(10)).abs() < 1e-12);
        // P(X <= 1), n = 3, p = 0.5: (1 + 3) / 8.
        assert!((binomial_cdf(1, 3, 0.5) - 0.5).abs() < 1e-12);
        assert!((binomial_cdf(5, 5, 0.3) - 1.0).abs() < 1e-9);
        assert!(binomial_cdf(0, 5000, 0.1) >= 0.0);
        assert_eq!(fewest(0.1, 0.05), 36);
    }

    /// Readings that people agree with at the extremes and not in the
    /// middle: the fit keeps the middle uncertain, and what it decides
    /// agrees with people at least as promised.
    #[test]
    fn a_fitted_band_decides_the_extremes_and_keeps_the_middle() {
        let mut scored = Vec::new();
        for i in 0..1000 {
            let p = f64::from(i) / 1000.0;
            // Right at the extremes, a coin in the middle.
            let label = if !(0.2..0.7).contains(&p) {
                p >= 0.5
            } else {
                i % 2 == 0
            };
            scored.push((label, p));
        }
        let fit = fit_band(&scored, 0.5, 0.1, 0.05);
        assert!(fit.writable(), "{fit}");
        let Band::Between { low, high } = fit.band else {
            panic!("{fit}")
        };
        // The heart of the coin stays uncertain; the sure ends decide.
        assert!(
            low > 0.2 && low < 0.45 && high > 0.55 && high < 0.7,
            "{fit}"
        );
        let decided: Vec<&(bool, f64)> = scored
            .iter()
            .filter(|(_, p)| *p < low || *p >= high)
            .collect();
        assert_eq!(decided.len(), fit.decided());
        let wrong = decided.iter().filter(|(l, p)| *l != (*p >= high)).count();
        assert_eq!(wrong, fit.yes.errors + fit.no.errors);
        assert!(wrong as f64 <= 0.1 * decided.len() as f64, "{fit}");
        assert!(fit.coverage() > 0.5 && fit.coverage() < 0.95, "{fit}");
    }

    #[test]
    fn too_few_verdicts_say_so_and_fit_nothing_to_write() {
        let scored: Vec<(bool, f64)> = (0..20).map(|i| (i >= 10, f64::from(i) / 20.0)).collect();
        let fit = fit_band(&scored, 0.5, 0.1, 0.05);
        assert!(!fit.writable());
        assert!(
            fit.to_string().starts_with("band: TOO FEW: 10 read at or above the threshold 0.5 (at least 36 needed); 10 read under"),
            "{fit}"
        );
    }

    #[test]
    fn a_judge_wrong_everywhere_decides_nothing() {
        let scored: Vec<(bool, f64)> = (0..200)
            .map(|i| (i % 2 == 0, f64::from(i) / 200.0))
            .collect();
        let fit = fit_band(&scored, 0.5, 0.1, 0.05);
        assert_eq!(fit.band, Band::All, "{fit}");
        assert_eq!(fit.decided(), 0);
    }
}
