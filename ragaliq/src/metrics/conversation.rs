//! Evaluating a conversation: every turn (or one) as a case read with the
//! turns before it, through the same [`evaluate_here`](super::evaluate_here)
//! as a single case, then one evaluation over the turns
//! ([`Evaluation::of_turns`]).

use super::{EvalOptions, Judges, Subject, evaluate_here};
use crate::core::{Assessed, Conversation, Evaluation};
use crate::error::{Error, Result};
use futures_util::future::BoxFuture;

/// `subject` on `assessed` (a case, a conversation, or one turn of it),
/// asked through the judges, with `options` over their defaults. A
/// conversation's turns are asked at once (each turn's questions depend on
/// its history as given, not on another turn's verdicts); the first turn
/// that could not be evaluated is the error, naming it.
///
/// Boxed here, as are [`verify_claim`](super::verify_claim) and
/// [`extract_claims`](super::extract_claims): the future is made into a
/// trait object inside ragaliq, so the evaluation's state machines (every
/// metric, the session, the client) are compiled once, in this crate,
/// instead of again in every test crate that awaits them (measured in
/// BENCHMARKS.md, "A lean build").
pub(crate) fn evaluate<'a>(
    judges: Judges<'a>,
    subject: Subject<'a>,
    assessed: Assessed<'a>,
    options: &'a EvalOptions,
) -> BoxFuture<'a, Result<Evaluation>> {
    Box::pin(async move {
        match assessed {
            Assessed::Case(case) => evaluate_here(judges, subject, case, options, false).await,
            Assessed::Turn(conversation, n) => {
                turn(judges, subject, conversation, n, options).await
            }
            Assessed::Conversation(conversation) => {
                conversation.validate()?;
                // Every turn runs to its end (in collect mode each queues
                // its questions in the same round), then the first turn
                // that could not be evaluated is the error.
                let turns = futures_util::future::join_all(
                    (1..=conversation.turns.len())
                        .map(|n| turn(judges, subject, conversation, n, options)),
                )
                .await
                .into_iter()
                .collect::<Result<Vec<_>>>()?;
                Ok(Evaluation::of_turns(turns))
            }
        }
    })
}

/// Turn `n` of `conversation`, read with the turns before it.
async fn turn(
    judges: Judges<'_>,
    subject: Subject<'_>,
    conversation: &Conversation,
    n: usize,
    options: &EvalOptions,
) -> Result<Evaluation> {
    let case = conversation.case(n)?;
    let mut evaluation = evaluate_here(judges, subject, &case, options, true)
        .await
        .map_err(|e| match e {
            // A follow-up's case names its turn; a first turn's is named here.
            Error::Case(mut c) => {
                if n == 1 {
                    c.problem = format!("turn 1: {}", c.problem);
                }
                Error::Case(c)
            }
            e => Error::InTurn {
                turn: n,
                source: Box::new(e),
            },
        })?;
    evaluation.question = Some(case.query);
    Ok(evaluation)
}
