//! The one step where a reading becomes a decision, entered once by every
//! metric (built-in, criteria, and metrics of one's own).
//!
//! A metric says how one judge reads a set of its items (a claim's
//! P(supported), a passage's P(yes), an answer's P(yes) or score: with its
//! samples asked and voted) and how a person's verdict on an item is looked
//! up. [`decide`] does the rest, the same way for every metric:
//!
//! 1. The first judge reads every item. A reading outside the judge's
//!    [`Band`](crate::Band) for the kind decides; one inside it, or a vote
//!    split below the required agreement, or a verdict whose evidence is in
//!    no passage, is *uncertain*.
//! 2. Each uncertain item is read by the next judge of the cascade
//!    (`[[escalate]]`), with that judge's band, and so on. A judge escalated
//!    to whose reply no parser reads decides nothing: the item stays as the
//!    judge before it read it, uncertain (never a judge error of the whole
//!    evaluation), and goes on.
//! 3. A person's verdict kept in the recording decides the item, whatever
//!    the judges read (looked up after every judge has been asked, so a
//!    verdict never changes what is asked).
//! 4. An item still uncertain awaits a person; with `uncertain = "decide"`
//!    the last judge whose reply was read decides at its threshold instead.
//!
//! Which questions reach the first judge never depends on a band. Which
//! items reach a later judge does: widening a band in replay asks a later
//! judge what it was not asked when recording, and that fails as a missing
//! recording with the command that records it.

use super::vocab::{Asker, Plan, Scoring};
use crate::core::judged::Person;
use crate::core::{Band, Decision, Kind, Uncertain, Unsure, UnsureWhy};
use crate::error::{Error, Result};
use std::future::Future;

/// One judge's reading of one item.
pub(super) struct Read<T> {
    /// The metric's own value (a voted claim verdict, a passage's
    /// relevance, a yes/no answer).
    pub value: T,
    /// P(yes): P(supported) for a claim, the score for a scored answer
    /// (with several samples, the deciding samples' mean).
    pub p: f64,
    /// Whether `p` was read from token probabilities; a word the judge
    /// wrote is 1 or 0 and decides by the threshold (no band).
    pub from_probabilities: bool,
    /// Why the reading decides nothing, whatever `p` says.
    pub unsettled: Option<UnsureWhy>,
}

/// What [`decide`] made of one item.
pub(super) struct Decided<T> {
    /// The reading of the judge that decided it, or of the last judge asked
    /// (`None`: its reply could not be read, and a person decided).
    pub value: Option<T>,
    /// The reading's P(yes), as [`Read::p`].
    pub p: f64,
    /// Yes or no when a judge decided (or the threshold, under
    /// `uncertain = "decide"`); uncertain otherwise. A person's verdict is
    /// in `person`, and the metric reads it in its own words.
    pub decision: Decision,
    /// The judge whose reading `value` is: 0 for the judge itself, 1 for
    /// the first it escalates to.
    pub stage: usize,
    /// How many judges of the cascade were asked about it: `stage + 1`,
    /// or more when a judge escalated to gave a reply no parser reads (it
    /// decided nothing, and the reading before it stands).
    pub asked: usize,
    /// Why it is still uncertain (no person's verdict, `uncertain` is
    /// `fail` or `pass`).
    pub unsure: Option<Unsure>,
    /// A person's verdict on the item, kept in the recording: it decides.
    pub person: Option<Person>,
    /// The key a person's verdict on the item is kept under.
    pub review_key: Option<String>,
}

/// How the kind's threshold is taken from a judge's scoring: its own
/// per-item threshold (`claim_threshold`, `passage_threshold`: each judge's
/// readings at its own), or the evaluation's (a metric decided by one
/// answer: the test's threshold, the same for every judge).
#[derive(Clone, Copy)]
pub(super) enum Threshold {
    Claim,
    Passage,
    Test(f64),
}

impl Threshold {
    fn of(self, scoring: &Scoring) -> f64 {
        match self {
            Threshold::Claim => scoring.verification.claim_threshold,
            Threshold::Passage => scoring.verification.passage_threshold,
            Threshold::Test(t) => t,
        }
    }
}

/// Each of `n` items decided: read by `read` (given a judge and the items
/// it reads, in order; one result per item), escalated while uncertain,
/// then a person's verdict looked up by `lookup` (given an item and its
/// last reading; it returns the item's key, and the person's verdict when
/// the plan lets persons decide). See the module for the order.
///
/// `read` fails as a whole when no item can be read (a batch the judge
/// could not answer); an item it could not read alone is its own error,
/// which a person's verdict on that item overrides.
pub(super) async fn decide<'a, T, R, Fut, L>(
    ask: &Asker<'a>,
    kind: Kind,
    threshold: Threshold,
    plan: &Plan,
    n: usize,
    read: R,
    lookup: L,
) -> Result<Vec<Decided<T>>>
where
    R: Fn(Asker<'a>, Vec<usize>) -> Fut,
    Fut: Future<Output = Result<Vec<Result<Read<T>>>>>,
    L: Fn(usize, Option<&T>) -> Result<(Option<String>, Option<Person>)>,
{
    let mut out: Vec<Option<Decided<T>>> = (0..n).map(|_| None).collect();
    let mut failed: Vec<Option<Error>> = (0..n).map(|_| None).collect();
    let mut pending: Vec<usize> = (0..n).collect();
    for stage in 0..ask.judges() {
        if pending.is_empty() {
            break;
        }
        let judge = ask.at(stage);
        let scoring = judge.scoring();
        let band = scoring.bands.get(kind);
        let t = threshold.of(scoring);
        let model = judge.model().to_owned();
        let reads = match read(judge, pending.clone()).await {
            Ok(reads) => reads,
            // A judge escalated to whose replies no parser reads decides
            // none of them: each stays as the judges before it left it.
            Err(e) if stage > 0 && e.is_judge_reply() => {
                pending.retain(|&i| unread_by(&mut out[i], stage, &model));
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut next = Vec::new();
        for (i, r) in pending.iter().copied().zip(reads) {
            let r = match r {
                Ok(r) => r,
                Err(e) if stage > 0 && e.is_judge_reply() => {
                    if unread_by(&mut out[i], stage, &model) {
                        next.push(i);
                    }
                    continue;
                }
                Err(e) => {
                    failed[i] = Some(e);
                    out[i] = None;
                    continue;
                }
            };
            let (decision, why) = match r.unsettled {
                Some(why) => (Decision::Uncertain, why),
                None if r.from_probabilities => (band.decide(r.p, t), UnsureWhy::InBand),
                None => (Band::Off.decide(r.p, t), UnsureWhy::InBand),
            };
            let unsure = (decision == Decision::Uncertain).then(|| Unsure {
                kind,
                judge: model.clone(),
                probability: r.from_probabilities.then_some(r.p),
                band: band.at(t),
                why,
            });
            if unsure.is_some() {
                next.push(i);
            }
            out[i] = Some(Decided {
                value: Some(r.value),
                p: r.p,
                decision,
                stage,
                asked: stage + 1,
                unsure,
                person: None,
                review_key: None,
            });
        }
        pending = next;
    }
    let mut decided = Vec::with_capacity(n);
    for (i, (slot, error)) in out.into_iter().zip(failed).enumerate() {
        let (review_key, person) = lookup(i, slot.as_ref().and_then(|d| d.value.as_ref()))?;
        let mut d = match (slot, error) {
            (Some(d), _) => d,
            // A reply no parser could read decides nothing, unless a
            // person's verdict on the item does.
            (None, Some(e)) if person.is_none() || !e.is_judge_reply() => return Err(e),
            (None, _) => Decided {
                value: None,
                p: 0.0,
                decision: Decision::Uncertain,
                stage: 0,
                asked: 1,
                unsure: None,
                person: None,
                review_key: None,
            },
        };
        d.review_key = review_key;
        d.person = person;
        if d.person.is_none() && d.unsure.is_some() && plan.uncertain == Uncertain::Decide {
            // The last judge's reading, at its threshold, as before bands.
            let scoring = ask.at(d.stage).scoring();
            d.decision = Band::Off.decide(d.p, threshold.of(scoring));
            d.unsure = None;
        }
        decided.push(d);
    }
    Ok(decided)
}

/// An item the judge at `stage` (escalated to, `model`) was asked about
/// and whose reply no parser reads: that judge decided nothing, so the
/// item stays uncertain as the judge before it read it (its key kept, for
/// a person; under `uncertain = "decide"` that reading decides), said to
/// be so, and goes on to the next judge, if there is one. `false` when no
/// judge before it read the item.
fn unread_by<T>(slot: &mut Option<Decided<T>>, stage: usize, model: &str) -> bool {
    let Some(d) = slot.as_mut() else {
        return false;
    };
    d.asked = stage + 1;
    if let Some(u) = d.unsure.as_mut() {
        model.clone_into(&mut u.judge);
        u.why = UnsureWhy::Unreadable;
    }
    true
}

/// One item: [`decide`] over a single answer.
pub(super) async fn decide_one<'a, T, R, Fut, L>(
    ask: &Asker<'a>,
    kind: Kind,
    threshold: Threshold,
    plan: &Plan,
    read: R,
    lookup: L,
) -> Result<Decided<T>>
where
    R: Fn(Asker<'a>) -> Fut,
    Fut: Future<Output = Result<Read<T>>>,
    L: Fn() -> Result<(Option<String>, Option<Person>)>,
{
    let mut all = decide(
        ask,
        kind,
        threshold,
        plan,
        1,
        |judge, _| {
            let reading = read(judge);
            async move { Ok(vec![reading.await]) }
        },
        |_, _| lookup(),
    )
    .await?;
    Ok(all.remove(0))
}

/// A metric decided by one answer, as one judge gave it: the answer of the
/// median sample, and every sample's score.
pub(super) struct Answer<T> {
    pub chosen: T,
    pub scores: Vec<f64>,
}

/// One judge's reading of a metric decided by one answer: its samples
/// asked as the plan says (`ask(sample)`), the median sample's answer, and
/// whether the samples split (their sides of the threshold short of the
/// required agreement).
pub(super) async fn answer<T, F, Fut>(
    plan: &Plan,
    ask: F,
    score: impl Fn(&T) -> f64,
    from_probabilities: impl Fn(&T) -> bool,
) -> Result<Read<Answer<T>>>
where
    F: Fn(u32) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let sampled = super::sampling::sample(plan, ask, &score).await?;
    let scores = sampled.scores;
    let median = crate::stats::median(&scores);
    let at = scores.iter().position(|s| *s == median).unwrap_or(0);
    let mut answers = sampled.answers;
    let chosen = answers.swap_remove(at);
    let split = scores.len() > 1 && {
        let sides: Vec<bool> = scores.iter().map(|s| *s >= plan.threshold).collect();
        !crate::stats::vote(&sides, i32::from)
            .1
            .reaches(plan.agreement)
    };
    Ok(Read {
        p: median,
        from_probabilities: from_probabilities(&chosen),
        unsettled: split.then_some(UnsureWhy::Split),
        value: Answer { chosen, scores },
    })
}

/// Per judge of the cascade, for a metric decided by one answer: asked
/// (every judge up to the one whose reading stands, and those after it
/// whose replies could not be read), decided (that judge, unless the
/// answer is still uncertain or a person decided).
pub(super) fn judges_of<T>(d: &Decided<T>, judges: usize) -> Vec<(usize, usize)> {
    (0..judges)
        .map(|k| {
            let asked = usize::from(k < d.asked && d.value.is_some());
            let decided = usize::from(k == d.stage && d.person.is_none() && d.unsure.is_none());
            (asked, decided)
        })
        .collect()
}
