//! Why a recording no longer serves a request: the closest recorded
//! exchange of the same task, and exactly what differs from it.

use super::fields::quote;
use super::ordered::Ordered;
use super::recording::Exchange;
use crate::core::JudgeRequest;

/// One difference between a recorded exchange and the request asked now.
fn differences(e: &Exchange, provider: &str, request: &JudgeRequest) -> Vec<String> {
    let mut out = Vec::new();
    if e.template != request.template_version {
        out.push(format!(
            "prompt template {} → {}",
            e.template, request.template_version
        ));
    }
    if e.provider != provider {
        out.push(format!("provider {} → {provider}", e.provider));
    }
    if e.model != request.model {
        out.push(format!("model {} → {}", e.model, request.model));
    }
    if let Some(s) = &e.settings {
        let format = request.response_format.label();
        if s.format != format {
            out.push(format!(
                "response format {} → {format} (judge.json_mode)",
                s.format
            ));
        }
        if s.temperature != request.temperature {
            out.push(format!(
                "temperature {} → {}",
                s.temperature, request.temperature
            ));
        }
        if s.max_tokens != request.max_tokens {
            out.push(format!(
                "reply token limit {} → {} (judge.max_tokens, or the input's size)",
                s.max_tokens, request.max_tokens
            ));
        }
        if s.sample != request.sample {
            out.push(format!("sample {} → {}", s.sample, request.sample));
        }
    }
    let now = Ordered::from_value(&request.subject);
    for key in ["query", "response", "expected", "document", "claim"] {
        let (a, b) = (
            e.asked.get(key).and_then(Ordered::as_str),
            now.get(key).and_then(Ordered::as_str),
        );
        if a != b {
            out.push(match (a, b) {
                (Some(a), Some(b)) => format!("{key} {} → {}", quote(a, 50), quote(b, 50)),
                (None, Some(b)) => format!("{key} added: {}", quote(b, 50)),
                (Some(a), None) => format!("{key} removed: {}", quote(a, 50)),
                (None, None) => unreachable!(),
            });
        }
    }
    for (key, noun) in [("claims", "claim"), ("passages", "passage")] {
        let list = |v: &Ordered| -> Vec<String> {
            v.get(key)
                .and_then(Ordered::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (a, b) = (list(&e.asked), list(&now));
        for i in 0..a.len().max(b.len()) {
            match (a.get(i), b.get(i)) {
                (Some(x), Some(y)) if x != y => out.push(format!(
                    "{noun} {} changed: {} → {}",
                    i + 1,
                    quote(x, 50),
                    quote(y, 50)
                )),
                (Some(x), None) => out.push(format!("{noun} {} removed: {}", i + 1, quote(x, 50))),
                (None, Some(y)) => out.push(format!("{noun} {} added: {}", i + 1, quote(y, 50))),
                _ => {}
            }
        }
    }
    out
}

/// Says what changed since the recording was made, as exactly as the
/// recording allows.
pub(crate) fn why(provider: &str, request: &JudgeRequest, recorded: &[Exchange]) -> String {
    let sample = request.sample;
    let closest = recorded
        .iter()
        .filter(|e| e.task == request.task)
        .filter(|e| e.settings.as_ref().is_none_or(|s| s.sample == sample))
        .map(|e| (differences(e, provider, request), e))
        .min_by_key(|(d, _)| d.len());
    match closest {
        None if recorded.iter().any(|e| e.task == request.task) => format!(
            "the recording holds {} exchanges, but none for sample {sample}: the number of samples changed",
            request.task
        ),
        None if graded_by_claims(request, recorded) => "the recording graded correctness by claims both ways (the reference's claims extracted and checked), ragaliq's default before correctness became one direct question; re-record it for the direct question, or keep claims both ways with `[scoring] correctness = \"f1\"` in ragaliq.toml or `assert_correct!(judge, case, correctness = Correctness::F1)`".into(),
        None => format!(
            "the recording holds no {} exchange: the test asks something it did not ask when it was recorded",
            request.task
        ),
        Some((d, e)) if d.is_empty() => match &e.settings {
            Some(_) => "the closest recorded exchange has the same input and settings, so the prompt text or the response schema changed without a new template version (a ragaliq upgrade does this)".into(),
            None => "the recording predates format 2 and keeps no settings; the prompt, a setting or ragaliq's request format changed".into(),
        },
        Some((d, _)) => format!("changed since it was recorded: {}", d.join("; ")),
    }
}

/// Whether `request` is the direct correctness question and the recording
/// graded the same answer by claims both ways: it extracted the claims of
/// the expected answer (what upgrading across the default's change shows).
fn graded_by_claims(request: &JudgeRequest, recorded: &[Exchange]) -> bool {
    if request.task != "answer_correct" {
        return false;
    }
    let now = Ordered::from_value(&request.subject);
    let Some(expected) = now.get("expected").and_then(Ordered::as_str) else {
        return false;
    };
    recorded.iter().any(|e| {
        e.task == "extract_claims"
            && e.asked.get("response").and_then(Ordered::as_str) == Some(expected)
    })
}
