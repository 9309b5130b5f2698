//! Context precision (are the retrieved passages relevant, best first?) and
//! context recall (does the context hold what a complete answer needs?).

use super::claims;
use super::claims::{Voted, details};
use super::decide::{Read, Threshold, decide};
use super::sampling::{sample, vote_items};
use super::vocab::{Asker, Interval, Plan, Scored, Verification, plural};
use crate::core::{Kind, Strategy, UnsureWhy};
use crate::core::{Metric, PassageVerdict, RagCase, Verdict, VerdictWeights};
use crate::error::{Error, Result};
use crate::parse::{ParseError, ParseErrorKind, ParsedRelevance, ParsedVerdict};
use crate::tasks::{MAX_REASKS, PassageRelevance, PassageRelevant};

/// Average precision over the ranked passages: the mean, over relevant
/// passages, of the precision at each one's rank. 0 when none is relevant.
/// Each passage decided, escalated or left to a person by the one decision
/// step.
pub(super) async fn precision(ask: &Asker<'_>, case: &RagCase, plan: &Plan) -> Result<Scored> {
    if case.context.is_empty() {
        return Err(Error::MissingInput {
            metric: Metric::ContextPrecision,
            what: "at least one context passage",
        });
    }
    let first_scores = std::sync::Mutex::new(Vec::new());
    let asked = std::sync::Mutex::new(Vec::new());
    let decided = decide(
        ask,
        Kind::Passages,
        Threshold::Passage,
        plan,
        case.context.len(),
        |judge: Asker<'_>, items: Vec<usize>| {
            let first_scores = &first_scores;
            let asked = &asked;
            async move {
                let how = judge.scoring().verification;
                let subset: Vec<String> = items.iter().map(|&i| case.context[i].clone()).collect();
                let subset = &subset;
                let ap =
                    |set: &Vec<ParsedRelevance>| average_precision(set.iter().map(|v| v.relevant));
                let judged = |s| async move {
                    if how.strategy == Strategy::Json {
                        judge_passages(&judge, case, subset, s).await
                    } else {
                        ask_each_passage(&judge, how, case, subset, s).await
                    }
                };
                let sampled = sample(plan, judged, ap).await?;
                if judge.stage() == 0 {
                    *crate::core::sync::lock(first_scores) = sampled.scores.clone();
                }
                crate::core::sync::lock(asked).push(subset.len());
                // A tie counts the passage as not relevant: never in the
                // retriever's favour.
                let votes = vote_items(
                    &sampled.answers,
                    subset.len(),
                    plan,
                    |v| v.relevant,
                    i32::from,
                );
                Ok(votes
                    .into_iter()
                    .map(|vote| {
                        let ps: Vec<f64> =
                            vote.agreeing.iter().filter_map(|v| v.probability).collect();
                        let probability =
                            (!ps.is_empty()).then(|| ps.iter().sum::<f64>() / ps.len() as f64);
                        Ok(Read {
                            p: probability.unwrap_or(if vote.winner { 1.0 } else { 0.0 }),
                            from_probabilities: probability.is_some(),
                            unsettled: vote.undecided.then_some(UnsureWhy::Split),
                            value: (
                                vote.winner,
                                vote.agreeing[0].reason.clone(),
                                probability,
                                vote.agreement,
                            ),
                        })
                    })
                    .collect())
            }
        },
        |i, _| {
            ask.review(
                &PassageRelevant {
                    query: &case.query,
                    expected: case.expected_answer.as_deref(),
                    passage: &case.context[i],
                    history: ask.history(),
                },
                1,
                plan.persons,
            )
        },
    )
    .await?;
    let mut judges = vec![(0, 0); ask.judges()];
    for (k, n) in crate::core::sync::lock(&asked).iter().enumerate() {
        judges[k].0 = *n;
    }
    let mut passages = Vec::with_capacity(decided.len());
    for (i, d) in decided.into_iter().enumerate() {
        if d.person.is_none() && d.unsure.is_none() {
            judges[d.stage].1 += 1;
        }
        let (relevant, reason, probability, agreement) =
            d.value.unwrap_or((false, String::new(), None, None));
        let mut p = PassageVerdict {
            rank: i + 1,
            relevant,
            reason,
            probability,
            agreement,
            undecided: d.person.is_none() && d.unsure.is_some(),
            person: None,
            review_key: d.review_key,
            unsure: if d.person.is_none() { d.unsure } else { None },
            judge: (d.stage > 0).then(|| ask.at(d.stage).model().to_owned()),
        };
        // A person's verdict on a passage decides in place of the judges'.
        if let Some(mut person) = d.person {
            let relevant = super::vocab::yes_no(&person)? >= 0.5;
            person.judge = match p.probability {
                Some(prob) => format!("P(yes) {prob:.2}"),
                None => if p.relevant { "yes" } else { "no" }.to_owned(),
            };
            p.relevant = relevant;
            p.reason = person.to_string();
            p.agreement = None;
            p.person = Some(person);
        }
        passages.push(p);
    }
    let score = average_precision(passages.iter().map(|p| p.relevant));
    let relevant = passages.iter().filter(|p| p.relevant).count();
    let open: Vec<usize> = (0..passages.len())
        .filter(|&i| passages[i].undecided)
        .collect();
    let interval = ap_interval(
        &passages.iter().map(|p| p.relevant).collect::<Vec<_>>(),
        &open,
    );
    let sample_scores = std::mem::take(&mut *crate::core::sync::lock(&first_scores));
    Ok(Scored {
        score,
        reasoning: format!(
            "{relevant} of {} relevant; average precision over their ranks {score:.2}.",
            plural(passages.len(), "passage", "passages")
        ),
        passages,
        sample_scores,
        interval,
        judges,
        ..Scored::default()
    })
}

/// Most uncertain passages whose every assignment is scored for the
/// interval; beyond it the interval is [0, 1] (said as such): average
/// precision is not monotone in a passage's relevance (a relevant passage
/// at a late rank lowers it), so its ends are found by trying each way.
const MAX_OPEN_PASSAGES: usize = 12;

/// Average precision with the `open` passages counted each way: the lowest
/// and the highest it takes over every assignment of them.
fn ap_interval(relevant: &[bool], open: &[usize]) -> Option<Interval> {
    if open.is_empty() {
        return None;
    }
    if open.len() > MAX_OPEN_PASSAGES {
        return Interval::of(open.len(), 0.0, 1.0);
    }
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut flags = relevant.to_vec();
    for mask in 0u32..(1 << open.len()) {
        for (bit, &i) in open.iter().enumerate() {
            flags[i] = mask & (1 << bit) != 0;
        }
        let ap = average_precision(flags.iter().copied());
        low = low.min(ap);
        high = high.max(ap);
    }
    Interval::of(open.len(), low, high)
}

/// Every passage's relevance from sample `sample`, one short question each:
/// relevant when P(yes) that it contains the answer to the question
/// reaches the passage threshold (ranked passages better on every labelled
/// source than asking whether it helps answer: BENCHMARKS.md, "Which
/// question context precision asks"). Asked in rank order.
async fn ask_each_passage(
    ask: &Asker<'_>,
    how: Verification,
    case: &RagCase,
    passages: &[String],
    sample: u32,
) -> Result<Vec<ParsedRelevance>> {
    let mut out = Vec::with_capacity(passages.len());
    for passage in passages {
        let read = ask
            .ask(
                &PassageRelevant {
                    query: &case.query,
                    expected: case.expected_answer.as_deref(),
                    passage,
                    history: ask.history(),
                },
                sample,
            )
            .await?;
        out.push(ParsedRelevance {
            relevant: read.p_yes >= how.passage_threshold,
            reason: read.read,
            probability: read.from_probabilities.then_some(read.p_yes),
        });
    }
    Ok(out)
}

/// Every passage's relevance from sample `sample`: one call for all of them;
/// a passage whose item cannot be read is asked about again alone (at most
/// [`MAX_REASKS`] of them), and its neighbours stand.
async fn judge_passages(
    ask: &Asker<'_>,
    case: &RagCase,
    passages: &[String],
    sample: u32,
) -> Result<Vec<ParsedRelevance>> {
    let question = |passages| PassageRelevance {
        query: &case.query,
        expected: case.expected_answer.as_deref(),
        passages,
        history: ask.history(),
    };
    let mut got = ask.ask(&question(passages), sample).await?.items;
    let missing: Vec<usize> = (0..got.len()).filter(|&i| got[i].is_none()).collect();
    if missing.len() > MAX_REASKS {
        return Err(Error::JudgeResponse {
            task: "passage_relevance",
            source: ParseError::new(
                ParseErrorKind::Unmatched {
                    unmatched: missing.len(),
                    limit: MAX_REASKS,
                },
                "",
            ),
        });
    }
    for i in missing {
        let one = std::slice::from_ref(&passages[i]);
        let mut alone = ask.ask(&question(one), sample).await?.items;
        got[i] = alone.pop().flatten();
    }
    got.into_iter()
        .map(|v| {
            v.ok_or_else(|| Error::JudgeResponse {
                task: "passage_relevance",
                source: ParseError::new(
                    ParseErrorKind::Unmatched {
                        unmatched: 1,
                        limit: MAX_REASKS,
                    },
                    "",
                ),
            })
        })
        .collect()
}

pub(super) fn average_precision(relevant: impl IntoIterator<Item = bool>) -> f64 {
    let (mut hits, mut sum, mut seen) = (0usize, 0.0, 0usize);
    for r in relevant {
        seen += 1;
        if r {
            hits += 1;
            sum += hits as f64 / seen as f64;
        }
    }
    if hits == 0 { 0.0 } else { sum / hits as f64 }
}

/// The expected facts (or the claims of the expected answer) verified
/// against the context: the weighted share covered (supported 1, partially
/// supported 0.5).
pub(super) async fn recall(ask: &Asker<'_>, case: &RagCase, plan: &Plan) -> Result<Scored> {
    let how = ask.scoring().verification;
    // Facts written by hand are taken as they are; claims extracted from
    // the expected answer keep what extraction dropped, for the counts.
    let (facts, extracted) = if !case.expected_facts.is_empty() {
        (case.expected_facts.clone(), None)
    } else if let Some(answer) = case
        .expected_answer
        .as_deref()
        .filter(|a| !a.trim().is_empty())
    {
        let extracted = claims::extract(ask, how, &case.query, answer, "reference").await?;
        (extracted.claims.clone(), Some(extracted))
    } else {
        return Err(Error::MissingInput {
            metric: Metric::ContextRecall,
            what: "expected facts or an expected answer",
        });
    };
    if facts.is_empty() {
        return Err(Error::MissingInput {
            metric: Metric::ContextRecall,
            what: "an expected answer with at least one factual claim",
        });
    }
    let score_of =
        |set: &[ParsedVerdict]| VerdictWeights::RATIO.score(set.iter().map(|v| v.verdict));
    let checked = claims::check(ask, &facts, &case.context, plan, score_of).await?;
    let interval = checked.interval(score_of);
    let claims::Checked {
        voted,
        sample_scores: scores,
        judges,
    } = checked;
    // A fact a person said is no claim leaves the score.
    let score =
        VerdictWeights::RATIO.score(voted.iter().filter(|v| v.is_claim()).map(Voted::counted));
    let details = details(&facts, voted, |v| v.verdict != Verdict::Supported);
    let facts_counted = details.iter().filter(|c| c.no_claim.is_none()).count();
    let covered = details
        .iter()
        .filter(|c| !c.failed && c.no_claim.is_none())
        .count();
    let mut reasoning = if case.context.is_empty() {
        "No context was retrieved, so no expected fact is covered.".to_owned()
    } else {
        format!(
            "The context covers {covered} of {}.",
            plural(facts_counted, "expected fact", "expected facts")
        )
    };
    let none = details.len() - facts_counted;
    if none > 0 {
        reasoning.push_str(&format!(
            " {} no claim (a person's verdict), left out.",
            plural(none, "expected fact is", "expected facts are")
        ));
    }
    if let Some(extracted) = &extracted {
        reasoning.push_str(&super::claims::dropped(extracted));
    }
    Ok(Scored {
        score,
        reasoning,
        claims: details,
        sample_scores: scores,
        dropped: extracted.map_or(0, |e| e.dropped.len()),
        interval,
        judges,
        ..Scored::default()
    })
}

#[cfg(test)]
mod tests {
    use super::average_precision;

    #[test]
    fn average_precision_rewards_relevant_passages_first() {
        assert_eq!(average_precision([true, true, false]), 1.0);
        assert_eq!(average_precision([false, true]), 0.5);
        assert!((average_precision([true, false, true]) - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-12);
        assert_eq!(average_precision([false, false]), 0.0);
    }
}
