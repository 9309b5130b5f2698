//! [`Ranking`]: a case's retrieved list matched against its labels, and
//! every measure computed from it.

use super::text::{self, normalise};
use crate::core::{CaseError, MatchedBy, Place, RagCase, RelevantAt, Repeat, Retrieved};
use std::collections::HashMap;

/// How nDCG turns a grade into gain.
///
/// ```
/// use ragaliq::RagCase;
/// use ragaliq::retrieval::{Gain, Ranking};
/// let case = RagCase::new("q").retrieved_ids(["b", "a"]).graded_relevance([("a", 3.0), ("b", 1.0)]);
/// let r = Ranking::of(&case).unwrap();
/// // The grade 3 document second costs more when it is worth 7 than 3.
/// assert!(r.ndcg(None, Gain::Exponential) < r.ndcg(None, Gain::Linear));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Gain {
    /// The grade itself (Järvelin and Kekäläinen; trec_eval, scikit-learn
    /// and LlamaIndex's default).
    #[default]
    Linear,
    /// 2^grade − 1 (Burges et al.): a grade 3 document is worth seven grade
    /// 1 ones, not three. Equal to linear for binary labels.
    Exponential,
}

/// The largest gain, as a power of two, that DCG adds up unscaled: a list
/// of a million such gains still sums to a finite number.
const UNSCALED_BELOW: f64 = 960.0;

impl Gain {
    /// The gain of `grade`, divided by 2^`scale` (exact: a power of two).
    fn of(self, grade: f64, scale: i32) -> f64 {
        match self {
            // In two steps: 2^-1024 is no normal number, and powi
            // forms it as 1 / 2^1024 = 0.
            Gain::Linear => grade * 2f64.powi(-(scale / 2)) * 2f64.powi(-(scale - scale / 2)),
            // (2^g − 1) / 2^s, without forming 2^g, which overflows past
            // g = 1023.
            Gain::Exponential => (grade - f64::from(scale)).exp2() - (-f64::from(scale)).exp2(),
        }
    }

    /// The power of two a list's gains are divided by when its highest
    /// grade is `top`: 0 for every ordinary grade (the gains as they are),
    /// else enough to bring the largest gain to at most 1, so that DCG and
    /// the ideal DCG stay finite and their ratio keeps the ranking (nDCG is
    /// the same whatever power of two both are divided by).
    fn scale(self, top: f64) -> i32 {
        let log2 = match self {
            Gain::Linear => top.log2(),
            Gain::Exponential => top,
        };
        if log2 < UNSCALED_BELOW {
            0
        } else {
            // At most 1024 (the largest finite grade's log2, or a grade of
            // 1024 and up with exponential gain, capped).
            log2.ceil().min(f64::from(i32::MAX / 2)) as i32
        }
    }
}

/// One place of the list: which relevant label it earns (at its first
/// place only), or which place it repeats.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Slot {
    /// Index into `relevant`, at the label's first place.
    label: Option<usize>,
    /// For a repeat: the 0-based place it first came at.
    repeat_of: Option<usize>,
}

/// A case's retrieved list, in rank order, matched against its relevant
/// labels: what every retrieval measure is computed from.
///
/// Built once per case ([`Ranking::of`]), borrowing the case; each measure
/// then reads it in one pass over the top of the list. Ranks count from 1.
/// A label counts at the first place its ID (or passage) comes; a later
/// place holding the same one is a *repeat*, which takes its place and
/// earns nothing.
///
/// ```
/// use ragaliq::RagCase;
/// use ragaliq::retrieval::{Gain, Ranking};
///
/// let case = RagCase::new("What is the refund window?")
///     .retrieved_ids(["faq-3", "policy-12", "terms-1", "policy-7"])
///     .relevant_ids(["policy-12", "policy-7", "faq-9"]);
/// let r = Ranking::of(&case).unwrap();
/// assert_eq!(r.hit_rate(Some(1)), 0.0);
/// assert_eq!(r.recall(Some(3)), 1.0 / 3.0);
/// assert_eq!(r.precision(Some(4)), 0.5);
/// assert_eq!(r.reciprocal_rank(None), 0.5);
/// assert_eq!(r.average_precision(None), (1.0 / 2.0 + 2.0 / 4.0) / 3.0);
/// let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
/// let ideal = 1.0 + 1.0 / 3f64.log2() + 1.0 / 4f64.log2();
/// assert!((r.ndcg(None, Gain::Linear) - dcg / ideal).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking<'a> {
    matched_by: MatchedBy,
    slots: Vec<Slot>,
    /// The retrieved IDs in rank order (matched by ID); empty when matched
    /// by text, whose places messages call `passage N`.
    ids: Vec<&'a str>,
    /// Relevant labels (grade above 0) in the order labelled: the ID, or
    /// the passage as labelled; its grade; the 0-based place it first came.
    relevant: Vec<(&'a str, f64, Option<usize>)>,
    /// The relevant grades, highest first: the ideal list nDCG divides by.
    ideal: Vec<f64>,
}

/// Above this many IDs a lookup table beats scanning.
const SCAN: usize = 24;

/// The first place of each key, in a table.
fn first_places<'k>(keys: impl Iterator<Item = &'k str>) -> Vec<Option<usize>> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    keys.enumerate()
        .map(|(place, key)| {
            let first = *seen.entry(key).or_insert(place);
            (first != place).then_some(first)
        })
        .collect()
}

impl<'a> Ranking<'a> {
    /// Matches `case`'s retrieved list against its labels: `retrieved_ids`
    /// against `relevant_ids` (the same ID, surrounding whitespace aside),
    /// or, for a case labelled with `relevant_passages`, its context
    /// against those passages by normalised text (the same words in the
    /// same order; case, punctuation and spacing aside).
    ///
    /// Input errors, never a score: no relevant label (none at all, or
    /// only grade 0); both kinds of label; relevant IDs with no retrieved
    /// IDs; relevant passages beside retrieved IDs; two relevant passages
    /// that are one text once normalised, or one with no words; anything
    /// [`RagCase::validate`] refuses.
    ///
    /// ```
    /// use ragaliq::RagCase;
    /// use ragaliq::retrieval::Ranking;
    /// let unlabelled = RagCase::new("q").id("c1").retrieved_ids(["a"]);
    /// let err = Ranking::of(&unlabelled).unwrap_err();
    /// assert!(err.to_string().starts_with("invalid case `c1`: no relevant IDs"), "{err}");
    /// ```
    pub fn of(case: &'a RagCase) -> Result<Ranking<'a>, CaseError> {
        case.validate()?;
        let err = |problem: String| CaseError {
            id: case.id.clone(),
            problem,
        };
        let by_text = !case.relevant_passages.is_empty();
        if by_text && !case.relevant_ids.is_empty() {
            return Err(err("the case labels both relevant IDs and relevant passages; give one: relevant_ids are found in retrieved_ids, relevant_passages in the context by text".into()));
        }
        if by_text {
            if case.retrieved_ids.is_some() {
                return Err(err("the case labels relevant passages, which are found in the context by text, but also gives retrieved_ids: label relevant_ids to rank the IDs, or leave retrieved_ids out to rank the context".into()));
            }
            return Ranking::by_text(case).map_err(err);
        }
        if case.relevant_ids.relevant().next().is_none() {
            return Err(err(if case.relevant_ids.is_empty() {
                "no relevant IDs: a retrieval metric needs the case's relevant_ids (or relevant_passages, found in the context by text); without them every measure would be 0 or 1 by definition, so this is an input error, not a score".into()
            } else {
                "no relevant IDs: every labelled ID has grade 0 (judged not relevant); a retrieval metric needs at least one relevant ID, so this is an input error, not a score".into()
            }));
        }
        let Some(retrieved) = &case.retrieved_ids else {
            return Err(err(format!(
                "relevant IDs but no retrieved_ids: give the IDs the retriever returned, best first (an empty list if it returned nothing){}",
                if case.context.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; the context's {} passages carry no IDs (to find them by text, label relevant_passages instead)",
                        case.context.len()
                    )
                }
            )));
        };
        let labels: Vec<(&'a str, f64)> = case
            .relevant_ids
            .relevant()
            .map(|(id, g)| (id.trim(), g))
            .collect();
        let ids: Vec<&'a str> = retrieved.iter().map(|id| id.trim()).collect();
        let table: Option<HashMap<&str, usize>> = (labels.len() > SCAN).then(|| {
            labels
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (*k, i))
                .collect()
        });
        let label_at = |place: usize| match &table {
            Some(map) => map.get(ids[place]).copied(),
            None => labels.iter().position(|(k, _)| *k == ids[place]),
        };
        let firsts = (ids.len() > SCAN).then(|| first_places(ids.iter().copied()));
        let repeat_of = |place: usize| match &firsts {
            Some(firsts) => firsts[place],
            None => ids[..place].iter().position(|k| *k == ids[place]),
        };
        let mut ranking = Ranking::build(MatchedBy::Ids, &labels, ids.len(), label_at, repeat_of);
        ranking.ids = ids;
        Ok(ranking)
    }

    fn by_text(case: &'a RagCase) -> Result<Ranking<'a>, String> {
        let normal: Vec<String> = case
            .relevant_passages
            .iter()
            .map(|p| normalise(p))
            .collect();
        for (i, n) in normal.iter().enumerate() {
            if n.is_empty() {
                return Err(format!(
                    "relevant passage {} has no words to find in the context",
                    i + 1
                ));
            }
            if let Some(first) = normal[..i].iter().position(|o| o == n) {
                return Err(format!(
                    "relevant passages {} and {} are one text once normalised (case, punctuation and spacing aside)",
                    first + 1,
                    i + 1
                ));
            }
        }
        // Messages name a relevant passage as it was labelled.
        let labels: Vec<(&'a str, f64)> = case
            .relevant_passages
            .iter()
            .map(|p| (p.as_str(), 1.0))
            .collect();
        let context = &case.context;
        let label_at = |place: usize| normal.iter().position(|n| text::is(&context[place], n));
        // Long contexts are normalised once, for a table; short ones are
        // compared as they are read.
        let firsts = (context.len() > SCAN).then(|| {
            let normalised: Vec<String> = context.iter().map(|p| normalise(p)).collect();
            first_places(normalised.iter().map(String::as_str))
        });
        let repeat_of = |place: usize| match &firsts {
            Some(firsts) => firsts[place],
            None => (0..place).find(|q| text::same(&context[*q], &context[place])),
        };
        Ok(Ranking::build(
            MatchedBy::Text,
            &labels,
            context.len(),
            label_at,
            repeat_of,
        ))
    }

    /// Matches `n` places against `labels` (each relevant one with its
    /// grade, none twice): `label_at` says which label a place holds,
    /// `repeat_of` which earlier place holds the same.
    fn build(
        matched_by: MatchedBy,
        labels: &[(&'a str, f64)],
        n: usize,
        label_at: impl Fn(usize) -> Option<usize>,
        repeat_of: impl Fn(usize) -> Option<usize>,
    ) -> Ranking<'a> {
        let mut relevant: Vec<(&'a str, f64, Option<usize>)> =
            labels.iter().map(|(k, g)| (*k, *g, None)).collect();
        let mut slots = Vec::with_capacity(n);
        for place in 0..n {
            if let Some(first) = repeat_of(place) {
                slots.push(Slot {
                    label: None,
                    repeat_of: Some(first),
                });
                continue;
            }
            let label = label_at(place);
            if let Some(l) = label {
                relevant[l].2 = Some(place);
            }
            slots.push(Slot {
                label,
                repeat_of: None,
            });
        }
        let mut ideal: Vec<f64> = labels.iter().map(|(_, g)| *g).collect();
        ideal.sort_by(|a, b| b.total_cmp(a));
        Ranking {
            matched_by,
            slots,
            ids: Vec::new(),
            relevant,
            ideal,
        }
    }

    /// How many places the retriever returned (repeats included).
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the retriever returned nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// How many relevant labels the case has (grade above 0).
    #[must_use]
    pub fn relevant_count(&self) -> usize {
        self.relevant.len()
    }

    /// The places within the cutoff `k` (the whole list without one).
    fn top(&self, k: Option<usize>) -> &[Slot] {
        &self.slots[..k.map_or(self.slots.len(), |k| k.min(self.slots.len()))]
    }

    /// The grades earned within the cutoff, with their 1-based ranks.
    fn earned(&self, k: Option<usize>) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.top(k)
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.label.map(|l| (i + 1, self.relevant[l].1)))
    }

    /// 1 when a relevant label is within the top `k`, else 0.
    #[must_use]
    pub fn hit_rate(&self, k: Option<usize>) -> f64 {
        if self.earned(k).next().is_some() {
            1.0
        } else {
            0.0
        }
    }

    /// The share of relevant labels within the top `k`.
    #[must_use]
    pub fn recall(&self, k: Option<usize>) -> f64 {
        self.earned(k).count() as f64 / self.relevant.len() as f64
    }

    /// The share of the top `k` places that hold a relevant label (at its
    /// first place): divided by `k` even when fewer were retrieved (an
    /// empty place is not relevant), by the list's length without a
    /// cutoff; 0 for an empty list.
    #[must_use]
    pub fn precision(&self, k: Option<usize>) -> f64 {
        let places = k.unwrap_or(self.slots.len());
        if places == 0 {
            return 0.0;
        }
        self.earned(k).count() as f64 / places as f64
    }

    /// 1 / the rank of the first relevant label within the top `k`; 0 when
    /// none is. Averaged over cases, the mean reciprocal rank.
    #[must_use]
    pub fn reciprocal_rank(&self, k: Option<usize>) -> f64 {
        self.earned(k)
            .next()
            .map_or(0.0, |(rank, _)| 1.0 / rank as f64)
    }

    /// The precision at each relevant label's rank within the top `k`,
    /// summed and divided by the number of relevant labels (all of them,
    /// retrieved or not).
    #[must_use]
    pub fn average_precision(&self, k: Option<usize>) -> f64 {
        // Folded from +0: an empty sum of floats is -0, which reports
        // would print as "-0".
        let sum = self
            .earned(k)
            .enumerate()
            .map(|(found, (rank, _))| (found + 1) as f64 / rank as f64)
            .fold(0.0, |a, b| a + b);
        sum / self.relevant.len() as f64
    }

    /// The power of two this list's gains are divided by (see
    /// [`Gain::scale`]): 0 unless a grade is huge.
    fn scale(&self, gain: Gain) -> i32 {
        self.ideal.first().map_or(0, |top| gain.scale(*top))
    }

    /// Discounted cumulative gain within the top `k`: each relevant
    /// label's gain over log2(rank + 1), divided by 2^`scale`.
    fn dcg(&self, k: Option<usize>, gain: Gain, scale: i32) -> f64 {
        self.earned(k)
            .map(|(rank, grade)| gain.of(grade, scale) / (rank as f64 + 1.0).log2())
            .fold(0.0, |a, b| a + b)
    }

    /// The best DCG within the top `k`: the relevant grades, highest first,
    /// at ranks 1 to min(k, relevant labels); all of them without a cutoff.
    /// Divided by 2^`scale`.
    fn ideal_dcg(&self, k: Option<usize>, gain: Gain, scale: i32) -> f64 {
        let n = k.map_or(self.ideal.len(), |k| k.min(self.ideal.len()));
        self.ideal[..n]
            .iter()
            .enumerate()
            .map(|(i, g)| gain.of(*g, scale) / (i as f64 + 2.0).log2())
            .fold(0.0, |a, b| a + b)
    }

    /// DCG within the top `k` over the ideal DCG within the top `k`. Finite
    /// whatever the grades: both are divided by the same power of two when
    /// a gain would overflow (a grade past 2^960, or past 960 with
    /// exponential gain).
    ///
    /// ```
    /// use ragaliq::RagCase;
    /// use ragaliq::retrieval::{Gain, Ranking};
    /// let case = RagCase::new("q").retrieved_ids(["b", "a"])
    ///     .graded_relevance([("a", 2000.0), ("b", 1999.0)]);
    /// let ndcg = Ranking::of(&case).unwrap().ndcg(None, Gain::Exponential);
    /// assert!(ndcg.is_finite() && ndcg < 1.0, "the grade 2000 document second");
    /// ```
    #[must_use]
    pub fn ndcg(&self, k: Option<usize>, gain: Gain) -> f64 {
        let scale = self.scale(gain);
        let ideal = self.ideal_dcg(k, gain, scale);
        if ideal > 0.0 {
            (self.dcg(k, gain, scale) / ideal).min(1.0)
        } else {
            0.0
        }
    }

    /// (DCG, ideal DCG, the power of two both are divided by) within the
    /// top `k`, for messages.
    pub(crate) fn dcg_pair(&self, k: Option<usize>, gain: Gain) -> (f64, f64, i32) {
        let scale = self.scale(gain);
        (
            self.dcg(k, gain, scale),
            self.ideal_dcg(k, gain, scale),
            scale,
        )
    }

    /// (rank, precision there) at each relevant label within the top `k`.
    pub(crate) fn precisions(&self, k: Option<usize>) -> Vec<(usize, f64)> {
        self.earned(k)
            .enumerate()
            .map(|(found, (rank, _))| (rank, (found + 1) as f64 / rank as f64))
            .collect()
    }

    /// What messages call place `i` (0-based).
    fn shown(&self, i: usize) -> String {
        match self.matched_by {
            MatchedBy::Ids => self.ids[i].to_owned(),
            MatchedBy::Text => format!("passage {}", i + 1),
        }
    }

    /// What messages and reports show of it under the cutoff `k`.
    pub(crate) fn retrieved(&self, k: Option<usize>) -> Retrieved {
        let relevant = self
            .relevant
            .iter()
            .map(|(id, grade, place)| RelevantAt {
                id: (*id).to_owned(),
                grade: *grade,
                rank: place.map(|p| p + 1),
            })
            .collect();
        let place = |i: usize, s: &Slot| Place {
            rank: i + 1,
            id: self.shown(i),
            grade: s.label.map_or(0.0, |l| self.relevant[l].1),
            repeat_of: s.repeat_of.map(|p| p + 1),
        };
        let top = self
            .top(k)
            .iter()
            .take(Retrieved::TOP)
            .enumerate()
            .map(|(i, s)| place(i, s))
            .collect();
        let repeats = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                s.repeat_of.map(|first| Repeat {
                    id: self.shown(i),
                    rank: i + 1,
                    first: first + 1,
                })
            })
            .collect();
        Retrieved {
            k,
            listed: self.slots.len(),
            matched_by: self.matched_by,
            relevant,
            top,
            repeats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(retrieved: &[&str], relevant: &[&str]) -> RagCase {
        RagCase::new("q")
            .retrieved_ids(retrieved.iter().copied())
            .relevant_ids(relevant.iter().copied())
    }

    #[test]
    fn a_repeat_takes_a_place_and_earns_nothing() {
        let c = case(&["x", "a", "a", "b", "x"], &["a", "b"]);
        let r = Ranking::of(&c).unwrap();
        assert_eq!(r.recall(None), 1.0);
        assert_eq!(r.precision(None), 2.0 / 5.0, "five places, two earned");
        assert_eq!(r.average_precision(None), (1.0 / 2.0 + 2.0 / 4.0) / 2.0);
        assert!(r.ndcg(None, Gain::Linear) <= 1.0);
        let seen = r.retrieved(None);
        assert_eq!(
            seen.repeats,
            [
                Repeat {
                    id: "a".into(),
                    rank: 3,
                    first: 2
                },
                Repeat {
                    id: "x".into(),
                    rank: 5,
                    first: 1
                }
            ]
        );
    }

    #[test]
    fn k_beyond_the_list_counts_empty_places_as_not_relevant() {
        let c = case(&["a", "x", "b"], &["a", "b"]);
        let r = Ranking::of(&c).unwrap();
        assert_eq!(r.precision(Some(5)), 2.0 / 5.0);
        assert_eq!(r.precision(Some(3)), 2.0 / 3.0);
        assert_eq!(r.recall(Some(100)), 1.0);
        assert_eq!(r.ndcg(Some(100), Gain::Linear), r.ndcg(None, Gain::Linear));
    }

    #[test]
    fn an_empty_list_scores_zero_everywhere() {
        for c in [case(&[], &["a"]), case(&["x"], &["a"])] {
            let r = Ranking::of(&c).unwrap();
            for score in [r.ndcg(None, Gain::Linear), r.average_precision(None)] {
                assert!(
                    score == 0.0 && score.is_sign_positive(),
                    "{score}: never -0"
                );
            }
        }
        let c = case(&[], &["a"]);
        let r = Ranking::of(&c).unwrap();
        for score in [
            r.hit_rate(None),
            r.recall(Some(5)),
            r.precision(None),
            r.precision(Some(5)),
            r.reciprocal_rank(None),
            r.average_precision(None),
            r.ndcg(None, Gain::Exponential),
        ] {
            assert_eq!(score, 0.0);
        }
    }

    #[test]
    fn ndcg_at_k_divides_by_the_ideal_top_k_only() {
        // Four relevant, two places: both relevant is the best two places can do.
        let c = case(&["a", "b"], &["a", "b", "c", "d"]);
        let r = Ranking::of(&c).unwrap();
        assert_eq!(r.ndcg(Some(2), Gain::Linear), 1.0);
        assert!(
            r.ndcg(None, Gain::Linear) < 1.0,
            "without a cutoff, all four count"
        );
    }

    #[test]
    fn graded_gain_linear_and_exponential() {
        let case = RagCase::new("q")
            .retrieved_ids(["b", "a"])
            .graded_relevance([("a", 3.0), ("b", 1.0)]);
        let r = Ranking::of(&case).unwrap();
        let log3 = 3f64.log2();
        let linear = (1.0 + 3.0 / log3) / (3.0 + 1.0 / log3);
        assert!((r.ndcg(None, Gain::Linear) - linear).abs() < 1e-12);
        let exponential = (1.0 + 7.0 / log3) / (7.0 + 1.0 / log3);
        assert!((r.ndcg(None, Gain::Exponential) - exponential).abs() < 1e-12);
        // Binary measures count every grade above 0 alike.
        assert_eq!(r.recall(Some(1)), 0.5);
    }

    /// Review finding (issue 49): with exponential gain a grade past 1023
    /// made 2^grade infinite, and nDCG inf / inf: NaN, read as 1.0 by
    /// `min`, whatever the order. Huge linear grades overflowed the sums
    /// alike.
    #[test]
    fn huge_grades_stay_finite_and_ranked() {
        let log3 = 3f64.log2();
        for (gain, top, next, expected) in [
            // 2^2000 and 2^1999: the second is worth half the first.
            (
                Gain::Exponential,
                2000.0,
                1999.0,
                (0.5 + 1.0 / log3) / (1.0 + 0.5 / log3),
            ),
            (
                Gain::Exponential,
                1100.0,
                1099.0,
                (0.5 + 1.0 / log3) / (1.0 + 0.5 / log3),
            ),
            (
                Gain::Linear,
                1e308,
                5e307,
                (0.5 + 1.0 / log3) / (1.0 + 0.5 / log3),
            ),
        ] {
            let wrong = RagCase::new("q")
                .retrieved_ids(["b", "a"])
                .graded_relevance([("a", top), ("b", next)]);
            let r = Ranking::of(&wrong).unwrap();
            let ndcg = r.ndcg(None, gain);
            assert!(ndcg.is_finite() && ndcg < 1.0, "{gain:?} {top}: {ndcg}");
            assert!((ndcg - expected).abs() < 1e-12, "{gain:?} {top}: {ndcg}");
            let (dcg, ideal, scale) = r.dcg_pair(None, gain);
            assert!(dcg.is_finite() && ideal.is_finite() && scale > 0);
            let right = RagCase::new("q")
                .retrieved_ids(["a", "b"])
                .graded_relevance([("a", top), ("b", next)]);
            assert_eq!(Ranking::of(&right).unwrap().ndcg(None, gain), 1.0);
        }
        // Ordinary grades are not scaled: the figures are the reference's.
        let case = RagCase::new("q")
            .retrieved_ids(["b", "a"])
            .graded_relevance([("a", 3.0), ("b", 1.0)]);
        assert_eq!(
            Ranking::of(&case)
                .unwrap()
                .dcg_pair(None, Gain::Exponential)
                .2,
            0
        );
    }

    #[test]
    fn grade_zero_is_labelled_but_not_relevant() {
        let case = RagCase::new("q")
            .retrieved_ids(["z", "a"])
            .graded_relevance([("a", 1.0), ("z", 0.0)]);
        let r = Ranking::of(&case).unwrap();
        assert_eq!(r.relevant_count(), 1);
        assert_eq!(r.reciprocal_rank(None), 0.5);
        let only_zero = RagCase::new("q")
            .retrieved_ids(["z"])
            .graded_relevance([("z", 0.0)]);
        assert!(
            Ranking::of(&only_zero)
                .unwrap_err()
                .problem
                .contains("every labelled ID has grade 0")
        );
    }

    #[test]
    fn long_lists_and_label_sets_use_tables_with_the_same_result() {
        let ids: Vec<String> = (0..100).map(|i| format!("d{}", i % 60)).collect();
        let labels: Vec<String> = (0..40).map(|i| format!("d{}", i * 3)).collect();
        let long_case = RagCase::new("q")
            .retrieved_ids(ids.clone())
            .relevant_ids(labels.clone());
        let long = Ranking::of(&long_case).unwrap();
        // The same matching by scanning, place by place.
        for (place, slot) in long.slots.iter().enumerate() {
            let first = ids.iter().position(|x| *x == ids[place]).unwrap();
            assert_eq!(slot.repeat_of, (first != place).then_some(first));
            let label = labels.iter().position(|l| *l == ids[place]);
            assert_eq!(slot.label, if first == place { label } else { None });
        }
    }

    #[test]
    fn long_contexts_by_text_match_as_short_ones_do() {
        // 40 passages, each written twice in other case and punctuation:
        // the second of each pair is a repeat, whether found by table or scan.
        let context: Vec<String> = (0..40)
            .map(|i| {
                if i % 2 == 0 {
                    format!("Passage {}.", i / 2)
                } else {
                    format!("PASSAGE {}", i / 2)
                }
            })
            .collect();
        for n in [40, 10] {
            let case = RagCase::new("q")
                .context(context[..n].iter().cloned())
                .relevant_passages(["passage 3", "passage 19"]);
            let r = Ranking::of(&case).unwrap();
            assert_eq!(r.slots[7].repeat_of, Some(6), "n = {n}");
            assert_eq!(r.relevant[0].2, Some(6), "n = {n}");
            assert_eq!(r.relevant[1].2, (n == 40).then_some(38), "n = {n}");
        }
    }

    #[test]
    fn input_errors_say_what_to_label() {
        let both = RagCase::new("q")
            .context(["p"])
            .relevant_ids(["a"])
            .relevant_passages(["p"]);
        assert!(
            Ranking::of(&both)
                .unwrap_err()
                .problem
                .contains("both relevant IDs and relevant passages")
        );
        let no_list = RagCase::new("q").context(["p", "q"]).relevant_ids(["a"]);
        let e = Ranking::of(&no_list).unwrap_err().problem;
        assert!(
            e.starts_with("relevant IDs but no retrieved_ids")
                && e.contains("the context's 2 passages carry no IDs"),
            "{e}"
        );
        let mixed = RagCase::new("q")
            .context(["p"])
            .retrieved_ids(["a"])
            .relevant_passages(["p"]);
        assert!(
            Ranking::of(&mixed)
                .unwrap_err()
                .problem
                .contains("also gives retrieved_ids")
        );
    }
}
