//! The scripted server standing in for a *pipeline's* own model (not the
//! judge): an answering model whose name starts with `app`, embeddings,
//! text completions and the model list, streamed or not, so the tests of
//! ragaliq's pipeline endpoint have an upstream that speaks both wire
//! formats and answers by a rule.
//!
//! - chat completions and Anthropic messages to a model named `app…`:
//!   the answer is the sentence of the conversation (system and user
//!   messages, the question left out) that shares the most content words
//!   with the question (the text after the last `Question:`, else the last
//!   user message), or `I don't know.` when none shares one; streamed word
//!   by word when `stream` is true, with usage at the end (OpenAI's when
//!   `stream_options.include_usage` asks);
//! - text completions: the same rule over the prompt;
//! - embeddings: each input's content words hashed into 16 dimensions,
//!   normalised to length 1 (texts sharing words point the same way);
//! - the model list: `scripted` and `app-scripted`.

use super::{sentences, words};
use serde_json::{Value, json};

/// Whether `path` and `request` ask the pipeline's model, not the judge.
pub(crate) fn is_app(path: &str, request: &Value) -> bool {
    path.ends_with("/embeddings")
        || path.ends_with("/models")
        || (path.ends_with("/completions") && !path.ends_with("/chat/completions"))
        || request["model"]
            .as_str()
            .is_some_and(|m| m.starts_with("app"))
}

/// Whether `request` is a chat request none of the judge's rules knows
/// (`knows` reads its user text) and that asks for no JSON and no token
/// probabilities, as ragaliq's questions always do: a pipeline's own
/// question to its model, whatever the model's name.
pub(crate) fn is_unknown_chat(request: &Value, knows: impl Fn(&str) -> bool) -> bool {
    let Some(messages) = request["messages"].as_array() else {
        return false;
    };
    if !request["response_format"].is_null()
        || request["logprobs"] == true
        || !request["tools"].is_null()
    {
        return false;
    }
    let user: String = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    !knows(&user)
}

/// The answer to a pipeline's request: its status, content type and body.
pub(crate) fn answer(path: &str, request: &Value) -> (u16, &'static str, String) {
    let model = request["model"]
        .as_str()
        .unwrap_or("app-scripted")
        .to_owned();
    let stream = request["stream"] == true;
    if path.ends_with("/models") {
        let body = json!({"object": "list", "data": [
            {"id": "scripted", "object": "model", "owned_by": "ragaliq"},
            {"id": "app-scripted", "object": "model", "owned_by": "ragaliq"}]});
        return (200, "application/json", body.to_string());
    }
    if path.ends_with("/embeddings") {
        let inputs: Vec<String> = match &request["input"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().unwrap_or_default().to_owned())
                .collect(),
            _ => return bad("`input` must be a string or a list of strings"),
        };
        let tokens: usize = inputs.iter().map(|i| i.split_whitespace().count()).sum();
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": embed(text)}))
            .collect();
        let body = json!({"object": "list", "data": data, "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}});
        return (200, "application/json", body.to_string());
    }
    let anthropic = path.ends_with("/messages");
    let completion = !anthropic && !path.ends_with("/chat/completions");
    let (context, question) = if completion {
        let prompt = request["prompt"].as_str().unwrap_or_default();
        split_question(prompt, prompt)
    } else {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let text = |m: &Value| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        let mut all = String::new();
        if let Some(system) = request["system"].as_str() {
            all.push_str(system);
            all.push('\n');
        }
        for m in &messages {
            if m["role"] != "assistant" {
                all.push_str(&text(m));
                all.push('\n');
            }
        }
        let last_user = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .map(text)
            .unwrap_or_default();
        split_question(&all, &last_user)
    };
    let reply = best_sentence(&context, &question);
    let input_tokens = (context.len() + question.len()) / 4;
    let pieces: Vec<String> = reply.split_inclusive(' ').map(str::to_owned).collect();
    let output_tokens = pieces.len();
    if anthropic {
        if !stream {
            let body = json!({"id": "msg_app", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": reply}], "stop_reason": "end_turn",
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}});
            return (200, "application/json", body.to_string());
        }
        let mut events = vec![
            event(
                "message_start",
                &json!({"type": "message_start", "message": {"id": "msg_app",
                "type": "message", "role": "assistant", "model": model, "content": [],
                "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
            ),
            event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ),
        ];
        for p in &pieces {
            events.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta",
                "index": 0, "delta": {"type": "text_delta", "text": p}}),
            ));
        }
        events.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        ));
        events.push(event(
            "message_delta",
            &json!({"type": "message_delta",
            "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": output_tokens}}),
        ));
        events.push(event("message_stop", &json!({"type": "message_stop"})));
        return (200, "text/event-stream", events.concat());
    }
    let usage = json!({"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens});
    let object = if completion {
        "text_completion"
    } else {
        "chat.completion"
    };
    if !stream {
        let choice = if completion {
            json!({"index": 0, "text": reply, "finish_reason": "stop"})
        } else {
            json!({"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"})
        };
        let body = json!({"id": "cmpl-app", "object": object, "created": 1_700_000_000, "model": model,
            "choices": [choice], "usage": usage});
        return (200, "application/json", body.to_string());
    }
    let chunk = |delta: Value, finish: Value| {
        let choice = if completion {
            json!({"index": 0, "text": delta["content"].as_str().unwrap_or_default(), "finish_reason": finish})
        } else {
            json!({"index": 0, "delta": delta, "finish_reason": finish})
        };
        data(
            &json!({"id": "cmpl-app", "object": format!("{object}.chunk"), "created": 1_700_000_000,
            "model": model, "choices": [choice]}),
        )
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    for p in &pieces {
        events.push(chunk(json!({"content": p}), Value::Null));
    }
    events.push(chunk(json!({}), json!("stop")));
    if request["stream_options"]["include_usage"] == true {
        events.push(data(
            &json!({"id": "cmpl-app", "object": format!("{object}.chunk"),
            "created": 1_700_000_000, "model": model, "choices": [], "usage": usage}),
        ));
    }
    events.push("data: [DONE]\n\n".to_owned());
    (200, "text/event-stream", events.concat())
}

fn bad(message: &str) -> (u16, &'static str, String) {
    (
        400,
        "application/json",
        json!({"error": {"message": message}}).to_string(),
    )
}

fn data(v: &Value) -> String {
    format!("data: {v}\n\n")
}

fn event(name: &str, v: &Value) -> String {
    format!("event: {name}\ndata: {v}\n\n")
}

/// The context (everything but the question) and the question: the text
/// after the last `Question:` in `last`, else `last` itself.
fn split_question(all: &str, last: &str) -> (String, String) {
    match last.rfind("Question:") {
        Some(at) => {
            let question = last[at + "Question:".len()..].trim().to_owned();
            let context = all.replacen(&last[at..], "", 1);
            (context, question)
        }
        None => (all.replacen(last, "", 1), last.trim().to_owned()),
    }
}

/// The sentence of `context` sharing the most content words with
/// `question` (the first of equals), or `I don't know.`.
fn best_sentence(context: &str, question: &str) -> String {
    let asked = words(question);
    let mut best: Option<(usize, String)> = None;
    for line in context.lines() {
        for s in sentences(line) {
            let shared = words(&s).intersection(&asked).count();
            if shared > 0 && best.as_ref().is_none_or(|(n, _)| shared > *n) {
                best = Some((shared, s));
            }
        }
    }
    // A passage's `[id]` label is no part of its sentence.
    best.map_or_else(
        || "I don't know.".to_owned(),
        |(_, s)| match s.strip_prefix('[').and_then(|r| r.split_once("] ")) {
            Some((_, rest)) => rest.to_owned(),
            None => s,
        },
    )
}

/// A text's content words hashed into 16 dimensions, normalised.
fn embed(text: &str) -> Vec<f64> {
    let mut v = [0.0f64; 16];
    for w in words(text) {
        let h = w.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        v[(h % 16) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter()
        .map(|x| {
            if norm > 0.0 {
                (x / norm * 1e6).round() / 1e6
            } else {
                0.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_the_sentence_closest_to_the_question() {
        let request = json!({"model": "app-scripted", "messages": [
            {"role": "system", "content": "Answer from the passages."},
            {"role": "user", "content": "Passages:\nRefunds are accepted within 30 days of delivery. Shipping is free.\nQuestion: What is the refund window?"}]});
        let (status, kind, body) = answer("/v1/chat/completions", &request);
        assert_eq!((status, kind), (200, "application/json"));
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v["choices"][0]["message"]["content"],
            "Refunds are accepted within 30 days of delivery."
        );
    }

    #[test]
    fn a_stream_spells_the_same_answer() {
        let request = json!({"model": "app-x", "stream": true, "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "Shipping is free.\nQuestion: Is shipping free?"}]});
        let (_, kind, body) = answer("/v1/chat/completions", &request);
        assert_eq!(kind, "text/event-stream");
        let text: String = body
            .split("\n\n")
            .filter_map(|e| e.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter_map(|v| {
                v["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(text, "Shipping is free.");
        assert!(body.ends_with("data: [DONE]\n\n"));
        assert!(body.contains("\"usage\""));
    }

    #[test]
    fn embeddings_of_texts_that_share_words_point_the_same_way() {
        let a = embed("refund window thirty days");
        let b = embed("the refund window");
        let c = embed("opening hours");
        let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>();
        assert!(dot(&a, &b) > dot(&a, &c));
    }
}
