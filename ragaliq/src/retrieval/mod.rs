//! Retrieval measured against labels, with no judge: hit rate, recall,
//! precision, MRR, average precision and nDCG (binary or graded), for a
//! case that says which IDs it retrieved, in rank order, and which ones
//! are relevant.
//!
//! Nothing here asks a judge or records anything: a measure is a pure
//! function of the case's labels, computed in microseconds
//! (BENCHMARKS.md). Use it through [`assert_retrieved!`](crate::assert_retrieved),
//! a suite's [`retrieval`](crate::harness::Suite::retrieval) trials, or
//! [`RetrievalMetric::evaluate`] and [`Ranking`] from code.
//!
//! ```
//! use ragaliq::RagCase;
//! use ragaliq::retrieval::{mrr, ndcg_at, recall_at};
//!
//! let case = RagCase::new("What is the refund window?")
//!     .retrieved_ids(["faq-3", "policy-12", "terms-1", "policy-7"])
//!     .graded_relevance([("policy-12", 2.0), ("policy-7", 1.0)]);
//! assert_eq!(recall_at(3).evaluate(&case).unwrap().score, 0.5);
//! assert_eq!(mrr().evaluate(&case).unwrap().score, 0.5);
//! let ndcg = ndcg_at(5).evaluate(&case).unwrap().score;
//! let ideal = 2.0 + 1.0 / 3f64.log2();
//! assert!((ndcg - (2.0 / 3f64.log2() + 1.0 / 5f64.log2()) / ideal).abs() < 1e-12);
//! ```
//!
//! # Definitions
//!
//! A case's retrieved list is its `retrieved_ids`, best first, matched
//! against its `relevant_ids` (the same ID, surrounding whitespace aside;
//! case matters). A pipeline whose passages have no IDs labels
//! `relevant_passages` instead: the list is then the case's context, and a
//! passage matches a label when both have the same words in the same order
//! ([`normalise`]: case, punctuation and spacing aside). Relevant means a
//! grade above 0 (a plain list grades each ID 1). Ranks count from 1; `k`
//! is the cutoff (`recall@5`), and a metric without one reads the whole
//! list. With `R` the relevant labels:
//!
//! | measure | value for one case |
//! | --- | --- |
//! | `hit_rate@k` | 1 if a relevant label is within the top k, else 0 |
//! | `recall@k` | relevant labels within the top k / \|R\| |
//! | `precision@k` | relevant labels within the top k / k (without a cutoff: / the list's length; 0 for an empty list) |
//! | `mrr@k` | 1 / the rank of the first relevant label within the top k; 0 if none |
//! | `ap@k` | Σ over relevant labels within the top k of (precision at its rank) / \|R\| |
//! | `ndcg@k` | DCG@k / ideal DCG@k: gain(grade) / log2(rank + 1) summed over the top k, over the same for the grades of R sorted highest first, at ranks 1 to min(k, \|R\|) (all of R without a cutoff); gain = grade, or 2^grade − 1 with `.exponential()` |
//!
//! Means over cases are the familiar names: the hit rate, MRR, MAP.
//!
//! - **Ties.** The list's order is the ranking; ragaliq never re-sorts. A
//!   retriever that gives equal scores must order them (trec_eval breaks
//!   ties by document name, scikit-learn's `ndcg_score` averages over them:
//!   both can differ from the order your pipeline used).
//! - **k larger than the list.** The missing places are not relevant:
//!   `precision@5` of 3 retrieved divides by 5 (as trec_eval's `P_5`),
//!   `recall@5` and `ndcg@5` read the 3 there are.
//! - **Repeats.** An ID retrieved twice counts at its first place; the
//!   later place is kept (it is a place the generator saw) and earns
//!   nothing, so every value stays in [0, 1]. RAGAS and LlamaIndex count
//!   distinct IDs instead: see the guide for where that differs.
//! - **No relevant label** is an input error (`Err`, naming the case), not
//!   0 or 1: with nothing relevant, recall is 0/0 and every retriever
//!   would be perfect or useless by definition. So is a case that labels
//!   relevant IDs but gives no retrieved IDs; an empty retrieved list is a
//!   retriever that found nothing, and scores 0.
//! - **Grade 0** labels an ID judged not relevant: kept, counted nowhere.
//!
//! Where RAGAS's and LlamaIndex's definitions differ from these (nDCG's
//! ideal list, MRR over several relevant IDs, repeats, precision with `k`
//! beyond the list), `docs/guide/retrieval.md` says how and why, and
//! `tests/retrieval_reference.rs` compares ragaliq with both, value by
//! value, on a committed fixture.

mod mean;
mod metric;
mod ranking;
mod text;

pub use mean::Mean;
pub use metric::{Measure, RetrievalMetric};
pub use ranking::{Gain, Ranking};
pub use text::normalise;

use crate::core::{CaseError, ConfigError};

/// Why a retrieval metric could not be computed: the case cannot be
/// measured (an input error, never a score), or the metric's settings are
/// invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RetrievalError {
    /// The case's labels cannot be measured: no relevant label, relevant
    /// IDs but no retrieved IDs, labels that cannot be read.
    #[error(transparent)]
    Case(#[from] CaseError),
    /// A cutoff of 0, or a threshold outside 0 to 1.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl Measure {
    /// Every measure, in a fixed order.
    pub const ALL: [Measure; 6] = [
        Measure::HitRate,
        Measure::Recall,
        Measure::Precision,
        Measure::Mrr,
        Measure::AveragePrecision,
        Measure::Ndcg,
    ];
}

/// 1 when a relevant label is within the top `k`, else 0; averaged over
/// cases, the hit rate.
///
/// ```
/// use ragaliq::RagCase;
/// let case = RagCase::new("q").retrieved_ids(["x", "y", "a"]).relevant_ids(["a"]);
/// assert_eq!(ragaliq::retrieval::hit_rate_at(2).evaluate(&case).unwrap().score, 0.0);
/// assert_eq!(ragaliq::retrieval::hit_rate_at(3).evaluate(&case).unwrap().score, 1.0);
/// ```
#[must_use]
pub fn hit_rate_at(k: usize) -> RetrievalMetric {
    RetrievalMetric::new(Measure::HitRate, Some(k))
}

/// [`hit_rate_at`] over the whole list.
///
/// ```
/// let m = ragaliq::retrieval::hit_rate();
/// assert_eq!(m.name(), "hit_rate");
/// ```
#[must_use]
pub fn hit_rate() -> RetrievalMetric {
    RetrievalMetric::new(Measure::HitRate, None)
}

/// The share of relevant labels within the top `k`.
///
/// ```
/// use ragaliq::RagCase;
/// let case = RagCase::new("q").retrieved_ids(["a", "x", "b"]).relevant_ids(["a", "b"]);
/// assert_eq!(ragaliq::retrieval::recall_at(2).evaluate(&case).unwrap().score, 0.5);
/// ```
#[must_use]
pub fn recall_at(k: usize) -> RetrievalMetric {
    RetrievalMetric::new(Measure::Recall, Some(k))
}

/// [`recall_at`] over the whole list (RAGAS's ID-based context recall,
/// LlamaIndex's `recall`).
///
/// ```
/// assert_eq!(ragaliq::retrieval::recall().name(), "recall");
/// ```
#[must_use]
pub fn recall() -> RetrievalMetric {
    RetrievalMetric::new(Measure::Recall, None)
}

/// The share of the top `k` places that hold a relevant label; divided by
/// `k` even when fewer were retrieved.
///
/// ```
/// use ragaliq::RagCase;
/// let case = RagCase::new("q").retrieved_ids(["a", "x", "b"]).relevant_ids(["a", "b"]);
/// assert_eq!(ragaliq::retrieval::precision_at(2).evaluate(&case).unwrap().score, 0.5);
/// assert_eq!(ragaliq::retrieval::precision_at(4).evaluate(&case).unwrap().score, 0.5);
/// ```
#[must_use]
pub fn precision_at(k: usize) -> RetrievalMetric {
    RetrievalMetric::new(Measure::Precision, Some(k))
}

/// [`precision_at`] over the whole list: relevant places over the list's
/// length (RAGAS's ID-based context precision and LlamaIndex's `precision`
/// on a list without repeats).
///
/// ```
/// assert_eq!(ragaliq::retrieval::precision().name(), "precision");
/// ```
#[must_use]
pub fn precision() -> RetrievalMetric {
    RetrievalMetric::new(Measure::Precision, None)
}

/// 1 / the rank of the first relevant label; averaged over cases, the mean
/// reciprocal rank.
///
/// ```
/// use ragaliq::RagCase;
/// let case = RagCase::new("q").retrieved_ids(["x", "a", "b"]).relevant_ids(["b", "a"]);
/// assert_eq!(ragaliq::retrieval::mrr().evaluate(&case).unwrap().score, 0.5);
/// ```
#[must_use]
pub fn mrr() -> RetrievalMetric {
    RetrievalMetric::new(Measure::Mrr, None)
}

/// [`mrr`] counting only the top `k` (`MRR@10`).
///
/// ```
/// use ragaliq::RagCase;
/// let case = RagCase::new("q").retrieved_ids(["x", "y", "a"]).relevant_ids(["a"]);
/// assert_eq!(ragaliq::retrieval::mrr_at(2).evaluate(&case).unwrap().score, 0.0);
/// ```
#[must_use]
pub fn mrr_at(k: usize) -> RetrievalMetric {
    RetrievalMetric::new(Measure::Mrr, Some(k))
}

/// Average precision over the whole list; averaged over cases, MAP.
///
/// ```
/// use ragaliq::RagCase;
/// let case = RagCase::new("q").retrieved_ids(["a", "x", "b"]).relevant_ids(["a", "b", "c"]);
/// let ap = ragaliq::retrieval::average_precision().evaluate(&case).unwrap().score;
/// assert_eq!(ap, (1.0 + 2.0 / 3.0) / 3.0);
/// ```
#[must_use]
pub fn average_precision() -> RetrievalMetric {
    RetrievalMetric::new(Measure::AveragePrecision, None)
}

/// Average precision counting only the top `k` (still divided by every
/// relevant label, as trec_eval's `map_cut`).
///
/// ```
/// assert_eq!(ragaliq::retrieval::average_precision_at(10).name(), "ap@10");
/// ```
#[must_use]
pub fn average_precision_at(k: usize) -> RetrievalMetric {
    RetrievalMetric::new(Measure::AveragePrecision, Some(k))
}

/// nDCG over the top `k`: the ideal list is the relevant grades, highest
/// first, at ranks 1 to min(k, relevant labels) (trec_eval's `ndcg_cut`,
/// scikit-learn's `ndcg_score(k=…)`). Linear gain; `.exponential()` for
/// 2^grade − 1.
///
/// ```
/// use ragaliq::RagCase;
/// let case = RagCase::new("q").retrieved_ids(["a", "b"]).relevant_ids(["a", "b", "c"]);
/// assert_eq!(ragaliq::retrieval::ndcg_at(2).evaluate(&case).unwrap().score, 1.0);
/// assert!(ragaliq::retrieval::ndcg().evaluate(&case).unwrap().score < 1.0);
/// ```
#[must_use]
pub fn ndcg_at(k: usize) -> RetrievalMetric {
    RetrievalMetric::new(Measure::Ndcg, Some(k))
}

/// nDCG over the whole list, the ideal list holding every relevant label
/// (LlamaIndex's `ndcg`; trec_eval's `ndcg`): a list that misses relevant
/// labels never reaches 1.
///
/// ```
/// assert_eq!(ragaliq::retrieval::ndcg().exponential().name(), "ndcg_exp");
/// ```
#[must_use]
pub fn ndcg() -> RetrievalMetric {
    RetrievalMetric::new(Measure::Ndcg, None)
}
