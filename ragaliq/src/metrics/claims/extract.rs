//! The claims of a text: listed by the judge (once per text, memoised and
//! recorded like any question) or the text's sentences.

use crate::error::{Error, Result};
use crate::metrics::vocab::{Asker, Verification};
use crate::parse::{ParseError, ParseErrorKind};
use crate::tasks::{ExtractClaims, Extracted};

/// The claims of `text` that come from it (see
/// [`ExtractClaims`](crate::tasks::ExtractClaims)), and those the judge
/// wrote that do not. No call for a blank text: it claims nothing. Claims
/// are extracted once (sample 0), whatever the samples: voting happens on
/// the verdicts, about the same claims.
///
/// A text that states something and gets no claim from it (none listed,
/// or every one listed dropped as not the text's) is asked once more, then
/// marked missed (undecided): scoring it as claiming nothing would call it
/// vacuously faithful. An extraction that gives claims, none of them from a
/// text that states nothing, is an error.
pub(crate) async fn extract(
    ask: &Asker<'_>,
    how: Verification,
    query: &str,
    text: &str,
    of: &'static str,
) -> Result<Extracted> {
    if text.trim().is_empty() {
        return Ok(Extracted {
            claims: Vec::new(),
            dropped: Vec::new(),
            missed: false,
            of,
        });
    }
    if how.sentences {
        // Every sentence that states something: questions are not claims.
        return Ok(Extracted {
            claims: super::sentences(text)
                .into_iter()
                .filter(|s| !s.ends_with('?'))
                .map(str::to_owned)
                .collect(),
            dropped: Vec::new(),
            missed: false,
            of,
        });
    }
    let mut extracted = ask
        .ask(
            &ExtractClaims {
                query,
                text,
                of,
                history: ask.history(),
            },
            0,
        )
        .await?;
    if extracted.claims.is_empty() && crate::evidence::states_something(text) {
        // No claim from a text that states something: asked once more (a
        // second sample), then it is undecided, never vacuously faithful.
        // Claims the judge wrote that are not the text's (a small model
        // answering the query instead) count as none: the 1.5B did so on
        // an off-topic answer. What the second ask dropped stays listed.
        extracted = ask
            .ask(
                &ExtractClaims {
                    query,
                    text,
                    of,
                    history: ask.history(),
                },
                1,
            )
            .await?;
        extracted.missed = extracted.claims.is_empty();
        if extracted.missed {
            return Ok(extracted);
        }
    }
    // Only the user's question echoed back: the text claims nothing (a
    // text that states something was asked again above).
    let only_echoes = extracted
        .dropped
        .iter()
        .all(|(_, _, why)| *why == crate::tasks::Dropped::Echoed);
    if extracted.claims.is_empty() && !extracted.dropped.is_empty() && !only_echoes {
        let listed: Vec<String> = extracted
            .dropped
            .iter()
            .map(|(_, c, _)| format!("{c:?}"))
            .collect();
        return Err(Error::JudgeResponse {
            task: "extract_claims",
            source: ParseError::new(
                ParseErrorKind::WrongShape {
                    detail: format!(
                        "none of the claims the judge extracted is in the {of}: {}",
                        listed.join(", ")
                    ),
                },
                // What the judge answered, as read (the recording keeps the
                // reply itself): a reader sees every claim it wrote.
                serde_json::json!({
                    "claims": extracted.dropped.iter().map(|(_, c, _)| c).collect::<Vec<_>>()
                })
                .to_string()
                .as_str(),
            ),
        });
    }
    Ok(extracted)
}
