//! [`Ranking`]: a case's retrieved list matched against its labels, and
//! every measure computed from it.

use super::text::normalise;
use crate::core::{CaseError, MatchedBy, Place, RagCase, RelevantAt, Repeat, Retrieved};
use std::collections::HashMap;

/// How nDCG turns a grade into gain.
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

impl Gain {
    fn of(self, grade: f64) -> f64 {
        match self {
            Gain::Linear => grade,
            Gain::Exponential => grade.exp2() - 1.0,
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
/// Built once per case ([`Ranking::of`]); each measure then reads it in
/// one pass over the top of the list. Ranks count from 1. A label counts
/// at the first place its ID (or passage) comes; a later place holding
/// the same one is a *repeat*, which takes its place and earns nothing.
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
pub struct Ranking {
    matched_by: MatchedBy,
    slots: Vec<Slot>,
    /// What each place shows in messages (an ID, or `passage N`).
    shown: Vec<String>,
    /// Relevant labels (grade above 0) in the order labelled: what each
    /// is called, its grade, the 0-based place it first came at.
    relevant: Vec<(String, f64, Option<usize>)>,
    /// The relevant grades, highest first: the ideal list nDCG divides by.
    ideal: Vec<f64>,
}

/// Above this many IDs a lookup table beats scanning.
const SCAN: usize = 24;

impl Ranking {
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
    pub fn of(case: &RagCase) -> Result<Ranking, CaseError> {
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
        let labels: Vec<(&str, f64)> = case
            .relevant_ids
            .relevant()
            .map(|(id, g)| (id.trim(), g))
            .collect();
        let keys: Vec<&str> = retrieved.iter().map(|id| id.trim()).collect();
        let mut ranking = Ranking::new(MatchedBy::Ids, &labels, &keys);
        ranking.shown = keys.iter().map(|k| (*k).to_owned()).collect();
        Ok(ranking)
    }

    fn by_text(case: &RagCase) -> Result<Ranking, String> {
        let normal: Vec<String> = case.relevant_passages.iter().map(|p| normalise(p)).collect();
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
        let labels: Vec<(&str, f64)> = normal.iter().map(|n| (n.as_str(), 1.0)).collect();
        let context: Vec<String> = case.context.iter().map(|p| normalise(p)).collect();
        let keys: Vec<&str> = context.iter().map(String::as_str).collect();
        let mut ranking = Ranking::new(MatchedBy::Text, &labels, &keys);
        // Messages name a relevant passage as it was labelled.
        for (r, text) in ranking.relevant.iter_mut().zip(&case.relevant_passages) {
            r.0.clone_from(text);
        }
        ranking.shown = (1..=keys.len()).map(|i| format!("passage {i}")).collect();
        Ok(ranking)
    }

    /// Matches `keys` (the list, in rank order) against `labels` (each
    /// relevant key with its grade, no key twice).
    fn new(matched_by: MatchedBy, labels: &[(&str, f64)], keys: &[&str]) -> Ranking {
        let mut relevant: Vec<(String, f64, Option<usize>)> = labels
            .iter()
            .map(|(k, g)| ((*k).to_owned(), *g, None))
            .collect();
        let label_of: Option<HashMap<&str, usize>> = (labels.len() > SCAN)
            .then(|| labels.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect());
        let mut first_place: Option<HashMap<&str, usize>> =
            (keys.len() > SCAN).then(HashMap::new);
        let mut slots = Vec::with_capacity(keys.len());
        for (place, key) in keys.iter().enumerate() {
            let seen = match &mut first_place {
                Some(map) => {
                    let first = *map.entry(key).or_insert(place);
                    (first != place).then_some(first)
                }
                None => keys[..place].iter().position(|k| k == key),
            };
            if seen.is_some() {
                slots.push(Slot {
                    label: None,
                    repeat_of: seen,
                });
                continue;
            }
            let label = match &label_of {
                Some(map) => map.get(key).copied(),
                None => labels.iter().position(|(k, _)| k == key),
            };
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
            shown: Vec::new(),
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
        self.earned(k).next().map_or(0.0, |(rank, _)| 1.0 / rank as f64)
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

    /// Discounted cumulative gain within the top `k`: each relevant
    /// label's gain over log2(rank + 1).
    fn dcg(&self, k: Option<usize>, gain: Gain) -> f64 {
        self.earned(k)
            .map(|(rank, grade)| gain.of(grade) / (rank as f64 + 1.0).log2())
            .fold(0.0, |a, b| a + b)
    }

    /// The best DCG within the top `k`: the relevant grades, highest first,
    /// at ranks 1 to min(k, relevant labels); all of them without a cutoff.
    fn ideal_dcg(&self, k: Option<usize>, gain: Gain) -> f64 {
        let n = k.map_or(self.ideal.len(), |k| k.min(self.ideal.len()));
        self.ideal[..n]
            .iter()
            .enumerate()
            .map(|(i, g)| gain.of(*g) / (i as f64 + 2.0).log2())
            .fold(0.0, |a, b| a + b)
    }

    /// DCG within the top `k` over the ideal DCG within the top `k`.
    #[must_use]
    pub fn ndcg(&self, k: Option<usize>, gain: Gain) -> f64 {
        let ideal = self.ideal_dcg(k, gain);
        if ideal > 0.0 {
            (self.dcg(k, gain) / ideal).min(1.0)
        } else {
            0.0
        }
    }

    /// (DCG, ideal DCG) within the top `k`, for messages.
    pub(crate) fn dcg_pair(&self, k: Option<usize>, gain: Gain) -> (f64, f64) {
        (self.dcg(k, gain), self.ideal_dcg(k, gain))
    }

    /// (rank, precision there) at each relevant label within the top `k`.
    pub(crate) fn precisions(&self, k: Option<usize>) -> Vec<(usize, f64)> {
        self.earned(k)
            .enumerate()
            .map(|(found, (rank, _))| (rank, (found + 1) as f64 / rank as f64))
            .collect()
    }

    /// What messages and reports show of it under the cutoff `k`.
    pub(crate) fn retrieved(&self, k: Option<usize>) -> Retrieved {
        let relevant = self
            .relevant
            .iter()
            .map(|(id, grade, place)| RelevantAt {
                id: id.clone(),
                grade: *grade,
                rank: place.map(|p| p + 1),
            })
            .collect();
        let place = |i: usize, s: &Slot| Place {
            rank: i + 1,
            id: self.shown[i].clone(),
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
                    id: self.shown[i].clone(),
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

    fn ranking(retrieved: &[&str], relevant: &[&str]) -> Ranking {
        Ranking::of(
            &RagCase::new("q")
                .retrieved_ids(retrieved.iter().copied())
                .relevant_ids(relevant.iter().copied()),
        )
        .unwrap()
    }

    #[test]
    fn a_repeat_takes_a_place_and_earns_nothing() {
        let r = ranking(&["x", "a", "a", "b", "x"], &["a", "b"]);
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
        let r = ranking(&["a", "x", "b"], &["a", "b"]);
        assert_eq!(r.precision(Some(5)), 2.0 / 5.0);
        assert_eq!(r.precision(Some(3)), 2.0 / 3.0);
        assert_eq!(r.recall(Some(100)), 1.0);
        assert_eq!(r.ndcg(Some(100), Gain::Linear), r.ndcg(None, Gain::Linear));
    }

    #[test]
    fn an_empty_list_scores_zero_everywhere() {
        for r in [ranking(&[], &["a"]), ranking(&["x"], &["a"])] {
            for score in [r.ndcg(None, Gain::Linear), r.average_precision(None)] {
                assert!(score == 0.0 && score.is_sign_positive(), "{score}: never -0");
            }
        }
        let r = ranking(&[], &["a"]);
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
        let r = ranking(&["a", "b"], &["a", "b", "c", "d"]);
        assert_eq!(r.ndcg(Some(2), Gain::Linear), 1.0);
        assert!(r.ndcg(None, Gain::Linear) < 1.0, "without a cutoff, all four count");
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
        let long = Ranking::of(
            &RagCase::new("q")
                .retrieved_ids(ids.clone())
                .relevant_ids(labels.clone()),
        )
        .unwrap();
        // The same matching by scanning, place by place.
        for (place, slot) in long.slots.iter().enumerate() {
            let first = ids.iter().position(|x| *x == ids[place]).unwrap();
            assert_eq!(slot.repeat_of, (first != place).then_some(first));
            let label = labels.iter().position(|l| *l == ids[place]);
            assert_eq!(slot.label, if first == place { label } else { None });
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
