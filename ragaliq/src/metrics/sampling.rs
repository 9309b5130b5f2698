//! The one sampling driver: how many times a question is asked, and the
//! vote over the items of every sample's answer.
//!
//! A judge is a model, and models disagree with themselves. With
//! [`Samples::Fixed`](crate::Samples::Fixed)`(n)` every question whose answer
//! decides the score is asked `n` times (each sample is its own exchange,
//! with its sample index in the fingerprint, so every sample is recorded and
//! replays offline); each claim's or passage's verdict is the majority, and a
//! split below the required agreement is *undecided*, never resolved in the
//! answer's favour. [`Samples::Auto`](crate::Samples::Auto) asks once, and
//! more only when the score lies close enough to the threshold that a re-ask
//! could flip the result.

use super::vocab::Plan;
use crate::core::Agreement;
use crate::error::Result;
use crate::stats;
use futures_util::future::join_all;
use std::future::Future;

/// Every sample's answer, and the score each gives on its own.
pub(super) struct Sampled<T> {
    pub answers: Vec<T>,
    pub scores: Vec<f64>,
}

/// Asks `ask(sample)` as the plan says: its first samples at once, then,
/// for `Samples::Auto`, up to its cap when the first sample's `score` lies
/// near the threshold.
pub(super) async fn sample<T, F, Fut>(
    plan: &Plan,
    ask: F,
    score: impl Fn(&T) -> f64,
) -> Result<Sampled<T>>
where
    F: Fn(u32) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let first = plan.samples.first();
    let mut answers: Vec<T> = every(join_all((0..first).map(&ask)).await)?;
    if first == 1 && plan.samples.wants_more(score(&answers[0]), plan.threshold) {
        answers.extend(every(join_all((1..plan.samples.max()).map(&ask)).await)?);
    }
    let scores = answers.iter().map(&score).collect();
    Ok(Sampled { answers, scores })
}

/// Every answer, or the first error in order once all have finished.
///
/// Questions asked together all run to the end, even when one fails: a
/// failure does not throw away answers already paid for (they reach the
/// recording), and in collect mode every question of the round is queued,
/// not only those before the first.
pub(super) fn every<T>(results: Vec<Result<T>>) -> Result<Vec<T>> {
    results.into_iter().collect()
}

/// One item's vote over the samples.
pub(super) struct Vote<'a, I, K> {
    /// The majority's key; ties go to the key `worse` ranks lowest.
    pub winner: K,
    /// How many samples gave it; `None` with one sample.
    pub agreement: Option<Agreement>,
    /// The vote fell short of the required agreement.
    pub undecided: bool,
    /// The samples' items that gave the winner, in sample order.
    pub agreeing: Vec<&'a I>,
}

/// The vote on each of `n` items across every sample's items (`sets[s][i]`
/// is sample `s`'s item `i`), by `key`.
pub(super) fn vote_items<'a, I, K: PartialEq + Copy>(
    sets: &'a [Vec<I>],
    n: usize,
    plan: &Plan,
    key: impl Fn(&I) -> K,
    worse: impl Fn(K) -> i32 + Copy,
) -> Vec<Vote<'a, I, K>> {
    (0..n)
        .map(|i| {
            let items: Vec<&I> = sets.iter().map(|set| &set[i]).collect();
            if let [only] = items[..] {
                return Vote {
                    winner: key(only),
                    agreement: None,
                    undecided: false,
                    agreeing: vec![only],
                };
            }
            let keys: Vec<K> = items.iter().map(|item| key(item)).collect();
            let (winner, agreement) = stats::vote(&keys, worse);
            Vote {
                winner,
                agreement: Some(agreement),
                undecided: !agreement.reaches(plan.agreement),
                agreeing: items
                    .into_iter()
                    .filter(|item| key(item) == winner)
                    .collect(),
            }
        })
        .collect()
}
