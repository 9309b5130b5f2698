//! A band fitted from verdicts people gave, with a stated guarantee.
//!
//! What a band promises is that the readings it decides agree with people:
//! on each side (decided yes, decided no), agreement at least `1 − α`.
//! Fitted on a team's own verdicts (a labelled set, or the verdicts given in
//! review), the promise holds with probability `1 − δ` for new items like
//! them, by fixed-sequence testing (as in Jung et al., "Trust or Escalate",
//! ICLR 2025):
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
//! - A side whose verdicts certify no cut decides **nothing**, whatever the
//!   reading (1.0 included): the verdicts disagree with the judge there.
//!   When neither side certifies anything, the judge cannot tell on this
//!   text, and the band is `all`.
//! - The sequence starts at the starting band's cut (the shipped band, or
//!   the one the judge file sets), where it has one: the team's verdicts
//!   first check the band the judge has, then narrow it inwards. (Where
//!   the starting band decides nothing on a side, the sequence starts at
//!   the extreme.) Either way it is fixed by the readings and the starting
//!   band alone, before any label is read.
//! - Too few: with no error at all, a cut needs `ln(δ/2) / ln(1 − α)`
//!   items to be certified (36 at `α = 0.1`, `δ = 0.05`). While the
//!   starting cut decides fewer of the verdicts than that, the side keeps
//!   it, said as not certified; the team's first verdicts count at once on
//!   a side that has enough.
//!
//! The guarantee is about items drawn like the ones fitted on (the same
//! kind of text, the same model); it says nothing of another domain. What
//! is reviewed should be drawn without regard to what the judge read
//! (`cargo ragaliq review --sample`), or the fit is biased towards the
//! items people were shown.

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
    /// The band: each side's certified cut, the starting band's where a
    /// side had too few verdicts, none where the verdicts certified none.
    pub band: Band,
    /// The band the fit started from.
    pub start: Band,
    /// The promised error rate among decided items, on each side.
    pub alpha: f64,
    /// The chance the promise does not hold (both sides together).
    pub delta: f64,
    /// Items read (with a probability).
    pub items: usize,
    /// The yes side: decided at or above the band's top.
    pub yes: Side,
    /// The no side: decided under the band's bottom.
    pub no: Side,
    /// Why the fit cannot support the guarantee on either side, when it
    /// cannot: the band is then not to be written (the starting band
    /// stands).
    pub too_few: Option<String>,
}

/// One side of a fitted band.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Side {
    /// Items the sequence's first cut decides: the starting band's cut,
    /// or, where it has none on this side, every item on this side of the
    /// threshold.
    pub candidates: usize,
    /// The certified cut (`None`: none certified).
    pub cut: Option<f64>,
    /// Items the cut decides.
    pub decided: usize,
    /// Of them, those people said the other way.
    pub errors: usize,
    /// The binomial p-value of the cut.
    pub p_value: f64,
    /// Fewer candidates than a certificate needs: the starting band's cut
    /// is kept (`kept`), not certified.
    pub too_few: bool,
    /// The starting band's cut on this side, at the threshold (`None`: it
    /// decides nothing there): the sequence's first cut.
    pub start: Option<f64>,
    /// The starting band's cut kept on a side with too few verdicts
    /// (`None`: that side of the starting band decides nothing).
    pub kept: Option<f64>,
    /// Items the kept cut decides (not certified).
    pub kept_decided: usize,
}

impl Side {
    /// The cut the fitted band has on this side: the certified one, the
    /// kept one, or none.
    #[must_use]
    pub fn band_cut(&self) -> Option<f64> {
        if self.too_few { self.kept } else { self.cut }
    }

    /// Items this side of the fitted band decides.
    #[must_use]
    pub fn deciding(&self) -> usize {
        if self.too_few {
            self.kept_decided
        } else {
            self.decided
        }
    }
}

impl BandFit {
    /// Items the band decides (certified or kept).
    #[must_use]
    pub fn decided(&self) -> usize {
        self.yes.deciding() + self.no.deciding()
    }

    /// Items the certified sides decide.
    #[must_use]
    pub fn certified(&self) -> usize {
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

    /// Whether the band can be written: at least one side was fitted on
    /// enough verdicts.
    #[must_use]
    pub fn writable(&self) -> bool {
        self.too_few.is_none()
    }

    /// Whether the verdicts show the judge cannot tell on this text: both
    /// sides had enough verdicts and neither certified a cut.
    #[must_use]
    pub fn cannot_tell(&self) -> bool {
        self.writable()
            && !self.yes.too_few
            && !self.no.too_few
            && self.yes.cut.is_none()
            && self.no.cut.is_none()
    }

    /// One side in words: "yes from 0.900: 30 decided, 1 of them against
    /// people, certified".
    fn side_words(&self, name: &str, side: &Side, yes: bool) -> String {
        let need = fewest(self.alpha, self.delta);
        let at = |c: f64| {
            if yes {
                format!("{name} from {c:.3}")
            } else {
                format!("{name} under {c:.3}")
            }
        };
        let region = side.start.map_or_else(
            || {
                format!(
                    "read {} the threshold",
                    if yes { "at or above" } else { "under" }
                )
            },
            |k| {
                if yes {
                    format!("the starting band decided (from {k:.3})")
                } else {
                    format!("the starting band decided (under {k:.3})")
                }
            },
        );
        match (side.too_few, side.cut, side.start) {
            (true, _, Some(k)) => format!(
                "{}: {} decided by the starting band, NOT certified ({} of your verdicts there, {need} needed to check it)",
                at(k),
                side.kept_decided,
                side.candidates,
            ),
            (true, _, None) => format!(
                "{name}: never (the starting band decides nothing there; {} verdicts {region}, {need} needed to certify a cut)",
                side.candidates,
            ),
            (false, Some(c), _) => format!(
                "{}: {} decided, {} of them against people, certified",
                at(c),
                side.decided,
                side.errors
            ),
            (false, None, _) => format!(
                "{name}: never (the {} verdicts {region} do not agree with the judge at >= {:.2}; this side decides nothing)",
                side.candidates,
                1.0 - self.alpha
            ),
        }
    }
}

impl fmt::Display for BandFit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(why) = &self.too_few {
            return write!(f, "band: TOO FEW: {why}; the band {} stands", self.start);
        }
        let certified = [&self.yes, &self.no]
            .iter()
            .filter(|s| !s.too_few && s.cut.is_some())
            .count();
        write!(
            f,
            "band {} decides {} of {} (coverage {:.2}); {}; {}; ",
            self.band,
            self.decided(),
            self.items,
            self.coverage(),
            self.side_words("yes", &self.yes, true),
            self.side_words("no", &self.no, false),
        )?;
        if self.cannot_tell() {
            return write!(
                f,
                "the judge cannot tell on your text: your {} verdicts certify no cut on either side, so it decides nothing (review with a stronger judge, or set the band by hand)",
                self.items
            );
        }
        let guarantee = format!(
            "decided agreement >= {:.2} on each certified side, both together with probability {:.2} (fixed-sequence binomial tests, alpha {}, delta {})",
            1.0 - self.alpha,
            1.0 - self.delta,
            self.alpha,
            self.delta
        );
        if certified == 0 {
            write!(f, "guarantee: none yet (no side certified)")
        } else {
            write!(
                f,
                "guarantee after {} verdicts: {guarantee}; the certified sides decide {:.0}% of them",
                self.items,
                100.0 * self.certified() as f64 / self.items.max(1) as f64
            )
        }
    }
}

/// The fewest items a side needs for a cut with no error to be certified.
#[must_use]
pub fn fewest(alpha: f64, delta: f64) -> usize {
    ((delta / 2.0).ln() / (1.0 - alpha).ln()).ceil() as usize
}

/// The band fitted on `scored` (each item's label, yes or not, and the
/// judge's probability) around `threshold`, promising decided agreement of
/// `1 − alpha` with probability `1 − delta` (see the module). A side with
/// too few items decides nothing: [`fit_band_from`] keeps a starting band's
/// cut there instead.
///
/// ```
/// use ragaliq::Band;
/// use ragaliq::calibrate::fit_band;
/// // Readings people agree with at the top only.
/// let scored: Vec<(bool, f64)> = (0..100)
///     .map(|i| (i >= 60 || i % 2 == 0, f64::from(i) / 100.0))
///     .collect();
/// let fit = fit_band(&scored, 0.33, 0.1, 0.05);
/// assert_eq!(fit.no.cut, None, "half the low readings are people's yes");
/// assert!(matches!(fit.band, Band::YesOnly { .. }), "{fit}");
/// assert_eq!(fit.band.decide(0.0, 0.33), ragaliq::Decision::Uncertain);
/// ```
#[must_use]
pub fn fit_band(scored: &[(bool, f64)], threshold: f64, alpha: f64, delta: f64) -> BandFit {
    fit_band_from(scored, threshold, Band::All, alpha, delta)
}

/// [`fit_band`] starting from `start` (the band the judge has now): a side
/// with too few verdicts keeps `start`'s cut there, said as not certified.
///
/// ```
/// use ragaliq::Band;
/// use ragaliq::calibrate::fit_band_from;
/// // 50 agreeing verdicts read high, 5 read low: the yes side is fitted,
/// // the no side keeps the starting band's cut.
/// let mut scored: Vec<(bool, f64)> = (0..50).map(|i| (true, 0.9 + f64::from(i) / 1000.0)).collect();
/// scored.extend((0..5).map(|i| (false, f64::from(i) / 100.0)));
/// let fit = fit_band_from(&scored, 0.33, Band::between(0.075, 0.9).unwrap(), 0.1, 0.05);
/// assert!(fit.writable());
/// assert!(fit.no.too_few && fit.no.kept == Some(0.075));
/// assert!(fit.yes.cut.is_some());
/// assert!(fit.to_string().contains("NOT certified"), "{fit}");
/// ```
#[must_use]
pub fn fit_band_from(
    scored: &[(bool, f64)],
    threshold: f64,
    start: Band,
    alpha: f64,
    delta: f64,
) -> BandFit {
    let each = delta / 2.0;
    let need = fewest(alpha, delta);
    let (start_low, start_high) = start.cuts_at(threshold);
    // Yes side: cuts at the readings at or above the threshold, highest
    // first; an error is an item people said no to.
    let mut ups: Vec<f64> = scored
        .iter()
        .map(|&(_, p)| p)
        .filter(|p| *p >= threshold)
        .collect();
    ups.sort_by(|a, b| b.total_cmp(a));
    ups.dedup();
    let count_yes = |h: f64| {
        let decided: Vec<bool> = scored
            .iter()
            .filter(|(_, p)| *p >= h)
            .map(|(l, _)| *l)
            .collect();
        (decided.len(), decided.iter().filter(|l| !**l).count())
    };
    // From the starting cut inwards, where the starting band has one.
    if let Some(h) = start_high {
        ups.retain(|p| *p < h);
        ups.insert(0, h);
    }
    let mut yes = side(
        &ups,
        need,
        start_high.map_or_else(
            || scored.iter().filter(|(_, p)| *p >= threshold).count(),
            |h| count_yes(h).0,
        ),
        count_yes,
        alpha,
        each,
    );
    yes.start = start_high;
    if yes.too_few {
        yes.kept = start_high;
        yes.kept_decided = start_high.map_or(0, |h| count_yes(h).0);
    }
    // No side: cuts just above the readings under the threshold, lowest
    // first ("decide no at p < cut"); an error is an item people said yes to.
    let mut downs: Vec<f64> = scored
        .iter()
        .map(|&(_, p)| p)
        .filter(|p| *p < threshold)
        .collect();
    downs.sort_by(f64::total_cmp);
    downs.dedup();
    let mut cuts: Vec<f64> = downs
        .iter()
        .enumerate()
        .map(|(i, p)| downs.get(i + 1).map_or(threshold, |next| (p + next) / 2.0))
        .collect();
    if let Some(l) = start_low {
        cuts.retain(|c| *c > l);
        cuts.insert(0, l);
    }
    let count_no = |l: f64| {
        let decided: Vec<bool> = scored
            .iter()
            .filter(|(_, p)| *p < l)
            .map(|(l, _)| *l)
            .collect();
        (decided.len(), decided.iter().filter(|l| **l).count())
    };
    let mut no = side(
        &cuts,
        need,
        start_low.map_or_else(
            || scored.iter().filter(|(_, p)| *p < threshold).count(),
            |l| count_no(l).0,
        ),
        count_no,
        alpha,
        each,
    );
    no.start = start_low;
    if no.too_few {
        no.kept = start_low;
        no.kept_decided = start_low.map_or(0, |l| count_no(l).0);
    }
    let too_few = (yes.too_few && no.too_few).then(|| {
        format!(
            "{} {} and {} {} (at least {need} needed on a side): with fewer, even verdicts that all agree cannot show decided agreement >= {:.2} with probability {:.2}; review more, then fit again",
            yes.candidates,
            start_high.map_or_else(
                || format!("read at or above the threshold {threshold}"),
                |h| format!("read where the band decides yes (from {h})")
            ),
            no.candidates,
            start_low.map_or_else(
                || "under it".to_owned(),
                |l| format!("where it decides no (under {l})")
            ),
            1.0 - alpha,
            1.0 - delta
        )
    });
    let band = if too_few.is_some() {
        start
    } else {
        // A side with no cut decides nothing, whatever the reading: the
        // band has no end on that side (never a top of 1.0, which a
        // reading of exactly 1.0 would reach).
        Band::sides(
            no.band_cut().map(|l| l.min(threshold)),
            yes.band_cut().map(|h| h.max(threshold)),
        )
        .unwrap_or(Band::All)
    };
    BandFit {
        band,
        start,
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
        too_few: candidates < need,
        ..Side::default()
    };
    if out.too_few {
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
    use crate::core::Decision;

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
        let line = fit.to_string();
        assert!(
            line.contains("certified") && !line.contains("NOT"),
            "{line}"
        );
        assert!(line.contains("guarantee after 1000 verdicts"), "{line}");
    }

    #[test]
    fn too_few_verdicts_say_so_and_keep_the_starting_band() {
        let scored: Vec<(bool, f64)> = (0..20).map(|i| (i >= 10, f64::from(i) / 20.0)).collect();
        let start = Band::between(0.075, 0.9).unwrap();
        let fit = fit_band_from(&scored, 0.5, start, 0.1, 0.05);
        assert!(!fit.writable());
        assert_eq!(fit.band, start);
        assert!(
            fit.to_string().starts_with("band: TOO FEW: 2 read where the band decides yes (from 0.9) and 2 where it decides no (under 0.075) (at least 36 needed on a side)"),
            "{fit}"
        );
        assert!(
            fit.to_string().ends_with("the band [0.075, 0.90) stands"),
            "{fit}"
        );
        let fit = fit_band(&scored, 0.5, 0.1, 0.05);
        assert!(
            fit.to_string().starts_with("band: TOO FEW: 10 read at or above the threshold 0.5 and 10 under it (at least 36 needed on a side)"),
            "{fit}"
        );
    }

    #[test]
    fn a_judge_wrong_everywhere_decides_nothing_and_the_line_says_it_cannot_tell() {
        let scored: Vec<(bool, f64)> = (0..200)
            .map(|i| (i % 2 == 0, f64::from(i) / 200.0))
            .collect();
        let fit = fit_band(&scored, 0.5, 0.1, 0.05);
        assert_eq!(fit.band, Band::All, "{fit}");
        assert_eq!(fit.decided(), 0);
        assert!(fit.cannot_tell());
        assert!(
            fit.to_string()
                .contains("the judge cannot tell on your text"),
            "{fit}"
        );
    }

    /// Issue 49: 100 readings of exactly 1.0 (a reply whose "no" was not
    /// among the likeliest tokens), 40 of them wrong, and agreeing low
    /// readings: the yes side certifies nothing, so nothing decides yes,
    /// 1.0 included, and the line says which side certified what.
    #[test]
    fn an_uncertified_side_decides_nothing_even_at_one() {
        let mut scored: Vec<(bool, f64)> = (0..100).map(|i| (i >= 40, 1.0)).collect();
        scored.extend((0..100).map(|i| (false, f64::from(i) / 1000.0)));
        let fit = fit_band(&scored, 0.33, 0.1, 0.05);
        assert!(fit.writable(), "{fit}");
        assert_eq!(fit.yes.cut, None, "{fit}");
        assert!(fit.no.cut.is_some(), "{fit}");
        assert!(matches!(fit.band, Band::NoOnly { .. }), "{fit}");
        assert_eq!(fit.band.decide(1.0, 0.33), Decision::Uncertain);
        assert_eq!(fit.decided(), 100);
        let line = fit.to_string();
        assert!(
            line.contains("yes: never (the 100 verdicts read at or above the threshold do not agree with the judge at >= 0.90; this side decides nothing)"),
            "{line}"
        );
        // Every low reading agrees: the no side reaches the threshold.
        assert!(
            line.contains("no under 0.330: 100 decided, 0 of them against people, certified"),
            "{line}"
        );
        assert!(
            line.starts_with("band [0.33, never) decides 100 of 200"),
            "{line}"
        );
    }

    /// The team's first verdicts count on the side that has enough, while
    /// the other keeps the starting band's cut, said as not certified.
    #[test]
    fn a_side_with_enough_verdicts_is_fitted_while_the_other_keeps_the_start() {
        // 40 agreeing verdicts where the starting band decides yes, 20
        // more under it, 10 low ones.
        let mut scored: Vec<(bool, f64)> = (0..40)
            .map(|i| (true, 0.95 + f64::from(i) / 1000.0))
            .collect();
        scored.extend((0..20).map(|i| (true, 0.5 + f64::from(i) / 50.0)));
        scored.extend((0..10).map(|i| (false, f64::from(i) / 100.0)));
        let start = Band::between(0.075, 0.9).unwrap();
        let fit = fit_band_from(&scored, 0.33, start, 0.1, 0.05);
        assert!(fit.writable(), "{fit}");
        assert!(!fit.yes.too_few && fit.no.too_few, "{fit}");
        assert_eq!(fit.yes.cut, Some(0.5), "every high verdict agrees");
        assert_eq!(fit.band, Band::between(0.075, 0.5).unwrap());
        // The kept cut decides the 8 readings under 0.075 (0.00 to 0.07).
        assert_eq!(fit.no.kept_decided, 8);
        assert_eq!(fit.decided(), 68);
        assert_eq!(fit.certified(), 60);
        assert!(
            fit.to_string()
                .contains("yes from 0.500: 60 decided, 0 of them against people, certified"),
            "{fit}"
        );
        assert!(fit.to_string().contains("no under 0.075: 8 decided by the starting band, NOT certified (8 of your verdicts there, 36 needed to check it)"), "{fit}");
        // Verdicts that disagree where the starting band decides: that side
        // decides nothing, and the line says why.
        let mut against = scored.clone();
        for x in against.iter_mut().take(8) {
            x.0 = false;
        }
        let fit = fit_band_from(&against, 0.33, start, 0.1, 0.05);
        assert_eq!(fit.yes.cut, None, "{fit}");
        assert_eq!(fit.band, Band::NoOnly { low: 0.075 });
        assert!(fit.to_string().contains("yes: never (the 40 verdicts the starting band decided (from 0.900) do not agree with the judge at >= 0.90; this side decides nothing)"), "{fit}");
        // Started unmeasured with nothing under the threshold kept: none.
        let fit = fit_band_from(&scored, 0.33, Band::YesOnly { high: 0.95 }, 0.1, 0.05);
        assert_eq!(fit.band, Band::YesOnly { high: 0.5 });
    }

    /// The fit reproduces the simulation's port of it
    /// (`scripts/simulate-fit.py --fixture`) on readings of public claims.
    #[test]
    fn the_fit_agrees_with_the_simulations_port_of_it() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/band_fit.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let cases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert!(cases.len() >= 20);
        for c in &cases {
            let scored: Vec<(bool, f64)> = c["scored"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| (x[0].as_bool().unwrap(), x[1].as_f64().unwrap()))
                .collect();
            let start = match c["start"].as_array() {
                Some(s) => Band::between(s[0].as_f64().unwrap(), s[1].as_f64().unwrap()).unwrap(),
                None => Band::All,
            };
            let fit = fit_band_from(&scored, c["threshold"].as_f64().unwrap(), start, 0.1, 0.05);
            let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => (a - b).abs() < 1e-9,
                (None, None) => true,
                _ => false,
            };
            let (yes, no) = (fit.yes.band_cut(), fit.no.band_cut());
            assert!(
                close(yes, c["yes"].as_f64()) && close(no, c["no"].as_f64()),
                "{} of {}: {fit} vs {c:?}",
                scored.len(),
                c["source"]
            );
            assert_eq!(!fit.writable(), c["too_few"].as_bool().unwrap(), "{fit}");
        }
    }
}
