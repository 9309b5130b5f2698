//! Claims verified with short questions (`strategy = "probability"` or
//! `"word"`): whether the passages support the claim, and, where the judge
//! answered no, whether they contradict it; read from the judge's token
//! probabilities or the word it wrote, and decided by the one rule
//! ([`super::rule`]).

use super::rule::Reading;
use crate::core::Verdict;
use crate::error::Result;
use crate::metrics::vocab::{Asker, Verification};
use crate::parse::ParsedVerdict;
use crate::tasks::{CheckedVerdict, ClaimContradicted, ClaimSupported};

/// How many claims' questions are in flight at once (the judge's own
/// concurrency limit applies on top).
const CONCURRENCY: usize = 4;

/// One verdict per claim, in claim order, from sample `sample`: each claim
/// asked alone, in order, so a server's prompt cache keeps the passages
/// between one claim's question and the next's.
pub(super) async fn verify(
    ask: &Asker<'_>,
    how: Verification,
    claims: &[String],
    passages: &[String],
    sample: u32,
) -> Result<Vec<CheckedVerdict>> {
    use futures_util::{StreamExt, stream};
    // By index: a closure over `&String` here makes the future's `Send`
    // unprovable (rust-lang/rust#102211) once it is boxed as `Send`.
    let asked = stream::iter(0..claims.len())
        .map(|i| probe(ask, how, &claims[i], passages, sample))
        .buffered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
    crate::metrics::sampling::every(asked)
}

/// One claim asked with short questions (see the module): supported, and
/// when not, contradicted; its evidence the closest passage sentence.
async fn probe(
    ask: &Asker<'_>,
    how: Verification,
    claim: &str,
    passages: &[String],
    sample: u32,
) -> Result<CheckedVerdict> {
    let chunks = chunks(passages, how.chunk_chars);
    let mut supported: Option<(f64, bool)> = None;
    let mut best = 0;
    for (c, chunk) in chunks.iter().enumerate() {
        let read = ask
            .ask(
                &ClaimSupported {
                    claim,
                    passages: chunk,
                },
                sample,
            )
            .await?;
        if supported.is_none_or(|(p, _)| read.p_yes > p) {
            supported = Some((read.p_yes, read.from_probabilities));
            best = c;
        }
    }
    let (p, from_probabilities) = supported.unwrap_or((0.0, false));
    // Asked after the judge's own "no", never because of a threshold (see
    // `rule`): editing a threshold replays from the same recording.
    let mut contradicted: Option<(f64, bool)> = None;
    if how.contradiction && Reading::asks_contradiction(p) {
        for chunk in &chunks {
            let read = ask
                .ask(
                    &ClaimContradicted {
                        claim,
                        passages: chunk,
                    },
                    sample,
                )
                .await?;
            if contradicted.is_none_or(|(q, _)| read.p_yes > q) {
                contradicted = Some((read.p_yes, read.from_probabilities));
            }
        }
    }
    let reading = Reading {
        supported: p,
        contradicted: contradicted.map(|(q, _)| q),
    };
    let (verdict, confidence) = reading.decide(how.claim_threshold, how.contradiction_ratio);
    // A probability is shown only where one was read: the word written
    // carries none.
    let read_from_probabilities = match verdict {
        Verdict::Contradicted => contradicted.is_some_and(|(_, from)| from),
        _ => from_probabilities,
    };
    let asked_contradiction = contradicted.and_then(|(q, from)| from.then_some(q));
    let verdict = (verdict, read_from_probabilities.then_some(confidence));
    let found = crate::evidence::closest_sentence(claim, passages);
    let evidence = found
        .as_ref()
        .map(|f| passages[f.passage][f.span.clone()].to_owned())
        .unwrap_or_default();
    Ok(CheckedVerdict {
        verdict: ParsedVerdict {
            verdict: verdict.0,
            evidence,
            confidence: verdict.1,
        },
        found,
        ungrounded: false,
        probability: from_probabilities.then_some(p),
        contradiction: asked_contradiction,
        located: true,
        chunk: best,
    })
}

/// The passages in chunks of at most `chars` characters (0: one chunk of
/// all): whole passages together while they fit, and a passage longer than
/// `chars` alone, cut into groups of its sentences.
pub(super) fn chunks(passages: &[String], chars: usize) -> Vec<Vec<String>> {
    let total: usize = passages.iter().map(|p| p.chars().count()).sum();
    if chars == 0 || total <= chars {
        return vec![passages.to_vec()];
    }
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut size = 0;
    for passage in passages {
        let n = passage.chars().count();
        if n > chars || size + n > chars {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            size = 0;
        }
        if n > chars {
            let mut part = String::new();
            for sentence in super::sentences(passage) {
                if !part.is_empty() && part.chars().count() + sentence.chars().count() > chars {
                    out.push(vec![std::mem::take(&mut part)]);
                }
                if !part.is_empty() {
                    part.push(' ');
                }
                part.push_str(sentence);
            }
            if !part.is_empty() {
                out.push(vec![part]);
            }
            continue;
        }
        current.push(passage.clone());
        size += n;
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::chunks;

    #[test]
    fn long_contexts_are_cut_into_chunks_of_whole_passages_or_sentences() {
        let p = |s: &str| s.to_owned();
        let short = vec![p("aaaa."), p("bbbb."), p("cccc.")];
        assert_eq!(chunks(&short, 0), vec![short.clone()], "0: never");
        assert_eq!(chunks(&short, 100), vec![short.clone()], "all fit");
        assert_eq!(
            chunks(&short, 10),
            vec![vec![p("aaaa."), p("bbbb.")], vec![p("cccc.")]]
        );
        // A passage longer than a chunk alone, by its sentences.
        let long = vec![p("One two. Three four. Five six."), p("x.")];
        assert_eq!(
            chunks(&long, 20),
            vec![
                vec![p("One two. Three four.")],
                vec![p("Five six.")],
                vec![p("x.")]
            ]
        );
        // Every character of every passage is in some chunk.
        let total: usize = chunks(&long, 5)
            .iter()
            .flatten()
            .map(|c| c.chars().filter(|c| !c.is_whitespace()).count())
            .sum();
        assert_eq!(total, "Onetwo.Threefour.Fivesix.x.".len());
    }
}
