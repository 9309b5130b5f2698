//! A scripted judge: an HTTP server on 127.0.0.1 that speaks OpenAI chat
//! completions (`POST /v1/chat/completions`) and Anthropic Messages
//! (`POST /v1/messages`) and answers every ragaliq task by a fixed rule, so
//! tests, committed recordings and benchmarks get real, deterministic judge
//! exchanges without a model.
//!
//! The rules (content words are lower-cased alphanumeric words of four or
//! more letters, minus a few stop words, with a plural `s` dropped):
//!
//! - extract claims: each sentence of the response is a claim;
//! - verify a claim: `supported` when at least 70% of its content words
//!   appear in one passage, `partially_supported` from 40%, else
//!   `no_evidence`; a claim whose words are all there but that contains
//!   "not" or "never" where the passage does not is `contradicted`;
//! - relevance: the share of the query's content words the response uses;
//! - passage relevance: a passage is relevant when it shares a content word
//!   with the query;
//! - case generation: one question per sentence of the document, about its
//!   first two content words, answered by the sentence;
//! - yes/no questions, answered in one word (with OpenAI's `logprobs` when
//!   the request asks for them): a claim is supported with P(yes) 0.92
//!   when the rule above says `supported`, 0.2 `partially_supported`,
//!   0.05 otherwise; contradicted with P(yes) 0.9 when the rule says
//!   `contradicted`, else 0.1; a response answers the question with
//!   P(yes) its share of the query's content words (kept within 0.01 and
//!   0.99); a document contains the answer (context precision's question
//!   of one passage, abstention's of them all) with P(yes) 0.9 when it
//!   shares a content word with the query, else 0.1; a response gives the expected
//!   answer (answer correctness's direct question) with P(yes) 0.9 when
//!   the expected answer, read as a claim against the response, is
//!   `supported` by the rule above (so a negation the expected answer
//!   lacks makes it `contradicted`), 0.3 `partially_supported`, else
//!   0.05. A model whose name ends in `-sure` answers the same word with
//!   P 0.99 (or 0.01): the stronger judge of a cascade.
//! - a conversation's follow-up (a question after a `<conversation>`
//!   block): the question's content words are its own and those of the
//!   user's last message in the block; the document contains the answer
//!   with P(yes) 0.9 when one passage shares one of them, else 0.1; a response says it cannot answer with P(yes) 0.9 when it says
//!   "don't know", "cannot answer", "no information", "does not say" or
//!   the like, else 0.05; a response contradicts the assistant (or the
//!   user) with P(yes) 0.9 when one of its sentences shares half its
//!   content words or more with an earlier sentence of the assistant's
//!   (the user's) and changes a number or a negation, else 0.1; a response
//!   asks the user again with P(yes) 0.9 when one of its questions shares
//!   half its content words or more with an earlier message of the user's.
//!
//! It also stands in for a pipeline's own model (see `app.rs`): a model
//! named `app…`, and any chat request that is none of ragaliq's questions
//! and asks for no JSON and no token probabilities, is answered with the
//! sentence of the prompt closest to the question, streamed when asked;
//! `/v1/embeddings`, `/v1/completions` and `/v1/models` are answered too.
//!
//! It also serves the providers' batch APIs (OpenAI's `POST /v1/files` +
//! `/v1/batches`, Anthropic's `/v1/messages/batches`), answering each line
//! by the same rule, with faults a batch client must survive
//! ([`BatchFaults`]).
//!
//! It counts requests and prompt characters, tracks the most requests in
//! flight at once, and can add latency to every answer. To stand in for a
//! judge that disagrees with itself, it can flip a share of its verdicts
//! (claim verdicts and passage relevance), chosen by a seeded hash of the
//! prompt and of how many times that prompt was asked before: the same run
//! of requests gets the same flips, and asking the same question again (a
//! new sample) can get another answer.
//!
//! ```no_run
//! # async fn demo() {
//! let judge = ragaliq_scripted::ScriptedJudge::start().await;
//! let url = judge.base_url(); // http://127.0.0.1:PORT/v1
//! # let _ = url;
//! assert_eq!(judge.requests(), 0);
//! # }
//! ```

#![forbid(unsafe_code)]

mod app;
mod batches;
mod limits;

pub use batches::BatchFaults;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;

#[derive(Default)]
struct Stats {
    requests: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    prompt_chars: AtomicU64,
    /// Characters of each prompt that an earlier prompt began with.
    prefix_chars: AtomicU64,
    /// Every prompt received, sorted: an earlier prompt sharing the
    /// longest beginning with a new one is one of its two neighbours.
    prompts: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// Requests answered 429 by the rate limits.
    rejected: AtomicU64,
    /// Tokens the rate limits counted for the requests they let through.
    served_tokens: AtomicU64,
    limits: std::sync::Mutex<Option<limits::Limiter>>,
    latency_ms: AtomicU64,
    fail_every: AtomicU64,
    /// Share of verdicts flipped, as f64 bits (0: none).
    flip_bits: AtomicU64,
    seed: AtomicU64,
    /// How often each prompt was asked, so a repeat can answer differently.
    asked: std::sync::Mutex<std::collections::HashMap<u64, u64>>,
    /// The fake batch APIs' files and batches.
    batches: std::sync::Mutex<batches::Store>,
}

/// A running scripted judge. The server stops when this value is dropped.
pub struct ScriptedJudge {
    addr: SocketAddr,
    stats: Arc<Stats>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedJudge {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScriptedJudge {
    /// Starts a server on an ephemeral loopback port.
    pub async fn start() -> ScriptedJudge {
        Self::start_on(0).await.expect("bind a loopback port")
    }

    /// Starts a server on 127.0.0.1:`port` (0 for any free port).
    pub async fn start_on(port: u16) -> std::io::Result<ScriptedJudge> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let stats = Arc::new(Stats::default());
        let served = stats.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let stats = served.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| handle(req, stats.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(ScriptedJudge { addr, stats, task })
    }

    /// Adds `latency` before every answer.
    pub fn set_latency(&self, latency: Duration) {
        self.stats
            .latency_ms
            .store(latency.as_millis() as u64, Ordering::SeqCst);
    }

    /// Answers every `n`th request with HTTP 500 (0: never).
    pub fn set_fail_every(&self, n: u64) {
        self.stats.fail_every.store(n, Ordering::SeqCst);
    }

    /// Flips `share` (0 to 1) of the verdicts it gives, by a hash seeded
    /// with `seed`: a judge that disagrees with itself, reproducibly.
    pub fn set_flips(&self, share: f64, seed: u64) {
        self.stats
            .flip_bits
            .store(share.clamp(0.0, 1.0).to_bits(), Ordering::SeqCst);
        self.stats.seed.store(seed, Ordering::SeqCst);
    }

    /// Enforces `rpm` requests and `tpm` tokens per minute as a provider
    /// does: every answer carries OpenAI's `x-ratelimit-*` headers, and a
    /// request beyond either limit is answered `429` with `retry-after-ms`.
    /// A request's tokens are its prompt's characters / 4 plus its
    /// `max_tokens`.
    pub fn set_rate_limits(&self, rpm: u64, tpm: u64) {
        self.set_rate_limits_over(rpm, tpm, Duration::from_secs(60));
    }

    /// [`set_rate_limits`](Self::set_rate_limits) over a window other than
    /// a minute: `requests` and `tokens` per `window`, the headers' reset
    /// times and `retry-after-ms` in proportion. A test of pacing waits
    /// for a window to refill; a window of seconds keeps that wait short.
    pub fn set_rate_limits_over(&self, requests: u64, tokens: u64, window: Duration) {
        *lock(&self.stats.limits) = Some(limits::Limiter::new(requests, tokens, window));
    }

    /// Requests answered `429` by the rate limits.
    pub fn rejected(&self) -> u64 {
        self.stats.rejected.load(Ordering::SeqCst)
    }

    /// Tokens the rate limits counted for the requests they let through.
    pub fn served_tokens(&self) -> u64 {
        self.stats.served_tokens.load(Ordering::SeqCst)
    }

    /// Injects faults into the batch APIs (see [`BatchFaults`]).
    pub fn set_batch_faults(&self, faults: BatchFaults) {
        lock(&self.stats.batches).faults = faults;
    }

    /// Batches created (both APIs), and the lines submitted in them.
    pub fn batches(&self) -> (u64, u64) {
        let store = lock(&self.stats.batches);
        (store.created, store.lines)
    }

    /// Polls of a batch's state answered (or failed on purpose).
    pub fn batch_polls(&self) -> u64 {
        lock(&self.stats.batches).polls
    }

    /// The base URL to configure a judge with, ending in `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Requests answered (or being answered).
    pub fn requests(&self) -> u64 {
        self.stats.requests.load(Ordering::SeqCst)
    }

    /// The most requests that were in flight at once.
    pub fn max_in_flight(&self) -> u64 {
        self.stats.max_in_flight.load(Ordering::SeqCst)
    }

    /// Characters of system and user prompts received.
    pub fn prompt_chars(&self) -> u64 {
        self.stats.prompt_chars.load(Ordering::SeqCst)
    }

    /// Of [`prompt_chars`](Self::prompt_chars), those at the start of a
    /// prompt that an earlier prompt (system, then user text) also began
    /// with: what a prefix cache could serve (llama.cpp's reuses any such
    /// prefix; OpenAI's and Anthropic's only beyond 1,024 tokens).
    pub fn repeated_prefix_chars(&self) -> u64 {
        self.stats.prefix_chars.load(Ordering::SeqCst)
    }
}

async fn handle(
    req: Request<Incoming>,
    stats: Arc<Stats>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let path = req.uri().path().to_owned();
    if batches::is_batch_path(&path) {
        return batch_request(req, &path, &stats).await;
    }
    let number = stats.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let now = stats.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    stats.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let body = req.into_body().collect().await?.to_bytes();
    // A pipeline's own model (answers, embeddings, the model list), not
    // the judge: answered by `app`'s rules.
    let asked = serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
    if app::is_app(&path, &asked)
        || app::is_unknown_chat(&asked, |user| {
            word_rule(user).is_some() || rule(user).is_some()
        })
    {
        let latency = stats.latency_ms.load(Ordering::SeqCst);
        if latency > 0 {
            tokio::time::sleep(Duration::from_millis(latency)).await;
        }
        let (status, kind, reply) = app::answer(&path, &asked);
        stats.in_flight.fetch_sub(1, Ordering::SeqCst);
        return Ok(Response::builder()
            .status(status)
            .header("content-type", kind)
            .body(Full::new(Bytes::from(reply)))
            .expect("a valid response"));
    }
    // Counted on arrival, as a provider counts; a refusal comes at once.
    let parsed = serde_json::from_slice::<Value>(&body);
    let decision = match (&parsed, lock(&stats.limits).as_mut()) {
        (Ok(request), Some(limiter)) => Some(limiter.take(limits::cost(request))),
        _ => None,
    };
    if let Some(d) = decision.as_ref().filter(|d| d.refused.is_none()) {
        stats
            .served_tokens
            .fetch_add(d.cost as u64, Ordering::SeqCst);
    }
    let latency = stats.latency_ms.load(Ordering::SeqCst);
    if latency > 0 && decision.as_ref().is_none_or(|d| d.refused.is_none()) {
        tokio::time::sleep(Duration::from_millis(latency)).await;
    }
    let headers = decision
        .as_ref()
        .map(|d| d.headers.clone())
        .unwrap_or_default();
    let fail_every = stats.fail_every.load(Ordering::SeqCst);
    let (status, reply) = match parsed {
        _ if decision.as_ref().is_some_and(|d| d.refused.is_some()) => {
            stats.rejected.fetch_add(1, Ordering::SeqCst);
            (
                StatusCode::TOO_MANY_REQUESTS,
                json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
            )
        }
        _ if fail_every > 0 && number.is_multiple_of(fail_every) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"message": format!("scripted failure of request {number}")}}),
        ),
        Ok(request) => answer(&path, &request, &stats),
        Err(e) => (
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": format!("bad JSON: {e}")}}),
        ),
    };
    stats.in_flight.fetch_sub(1, Ordering::SeqCst);
    let mut response = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    for (name, value) in headers {
        response = response.header(name, value);
    }
    Ok(response
        .body(Full::new(Bytes::from(reply.to_string())))
        .expect("a valid response"))
}

/// A request to the fake batch APIs. Their lines are answered by the rule
/// but are not counted as requests: a batch is not a live call.
async fn batch_request(
    req: Request<Incoming>,
    path: &str,
    stats: &Stats,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let method = req.method().as_str().to_owned();
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let content_type = header("content-type");
    let authorized =
        header("authorization").starts_with("Bearer ") || !header("x-api-key").is_empty();
    let body = req.into_body().collect().await?.to_bytes();
    let rule = |path: &str, line: &Value| {
        let (status, reply) = answer(path, line, stats);
        (status.as_u16(), reply)
    };
    let (status, reply, kind) =
        lock(&stats.batches).handle(&method, path, &content_type, &body, authorized, &rule);
    Ok(Response::builder()
        .status(status)
        .header("content-type", kind)
        .body(Full::new(Bytes::from(reply)))
        .expect("a valid response"))
}

/// The characters `prompt` shares at its start with the earlier prompt
/// that shares the most, and `prompt` kept for the next ones.
fn repeated_prefix(
    seen: &std::sync::Mutex<std::collections::BTreeSet<String>>,
    prompt: &str,
) -> u64 {
    use std::ops::Bound::{Excluded, Unbounded};
    let common = |other: &String| {
        prompt
            .chars()
            .zip(other.chars())
            .take_while(|(a, b)| a == b)
            .count() as u64
    };
    let mut seen = seen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let key = prompt.to_owned();
    let before = seen
        .range::<String, _>((Unbounded, Excluded(&key)))
        .next_back();
    let after = seen.range::<String, _>((Excluded(&key), Unbounded)).next();
    let shared = if seen.contains(&key) {
        prompt.chars().count() as u64
    } else {
        before.map_or(0, common).max(after.map_or(0, common))
    };
    seen.insert(key);
    shared
}

fn answer(path: &str, request: &Value, stats: &Stats) -> (StatusCode, Value) {
    let anthropic = path.ends_with("/messages");
    let system = request["system"].as_str().unwrap_or_default().to_owned();
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let mut prompt = String::new();
    for m in &messages {
        if m["role"] == "system" && !anthropic {
            prompt.push_str(m["content"].as_str().unwrap_or_default());
        }
    }
    prompt.push_str(&system);
    let user: String = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    prompt.push_str(&user);
    stats
        .prompt_chars
        .fetch_add(prompt.chars().count() as u64, Ordering::SeqCst);
    stats
        .prefix_chars
        .fetch_add(repeated_prefix(&stats.prompts, &prompt), Ordering::SeqCst);
    if let Some(p_yes) = word_rule(&user) {
        return word_answer(anthropic, request, p_yes, &prompt, stats);
    }
    let Some(mut reply) = rule(&user) else {
        return (
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": "the scripted judge does not know this task"}}),
        );
    };
    let share = f64::from_bits(stats.flip_bits.load(Ordering::SeqCst));
    if share > 0.0 {
        let key = hash(0, &prompt);
        let occurrence = {
            let mut asked = stats
                .asked
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let n = asked.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        flip(
            &mut reply,
            share,
            stats.seed.load(Ordering::SeqCst) ^ key,
            occurrence,
        );
    }
    let input_tokens = (prompt.len() / 4) as u64;
    let output_tokens = (reply.to_string().len() / 4) as u64;
    let model = request["model"].as_str().unwrap_or("scripted").to_owned();
    let body = if anthropic {
        json!({
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "tool_use", "id": "toolu_scripted", "name": "submit", "input": reply}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}
        })
    } else {
        json!({
            "id": "chatcmpl-scripted", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply.to_string()}}],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                      "total_tokens": input_tokens + output_tokens}
        })
    };
    (StatusCode::OK, body)
}

/// A one-word answer with P(yes) `p_yes` (flipped like a verdict when the
/// judge flips): `Yes` or `No`, and the token probabilities when asked for.
fn word_answer(
    anthropic: bool,
    request: &Value,
    p_yes: f64,
    prompt: &str,
    stats: &Stats,
) -> (StatusCode, Value) {
    // A model named `…-sure` stands in for a stronger judge of a cascade:
    // the same answers, given with near certainty.
    let sure = request["model"]
        .as_str()
        .is_some_and(|m| m.ends_with("-sure"));
    let mut p = match (sure, p_yes >= 0.5) {
        (false, _) => p_yes,
        (true, true) => 0.99,
        (true, false) => 0.01,
    };
    let share = f64::from_bits(stats.flip_bits.load(Ordering::SeqCst));
    if share > 0.0 {
        let key = hash(0, prompt);
        let occurrence = {
            let mut asked = lock(&stats.asked);
            let n = asked.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        if unit(stats.seed.load(Ordering::SeqCst) ^ key, occurrence, 0) < share {
            p = 1.0 - p;
        }
    }
    let word = if p >= 0.5 { "Yes" } else { "No" };
    let input_tokens = (prompt.len() / 4) as u64;
    let model = request["model"].as_str().unwrap_or("scripted").to_owned();
    if anthropic {
        return (
            StatusCode::OK,
            json!({
                "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": word}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": input_tokens, "output_tokens": 1}
            }),
        );
    }
    let mut choice = json!({"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": word}});
    if request["logprobs"] == true {
        let (yes, no) = (
            p.clamp(1e-6, 1.0 - 1e-6).ln(),
            (1.0 - p).clamp(1e-6, 1.0 - 1e-6).ln(),
        );
        let top = if yes >= no {
            json!([{"token": "Yes", "logprob": yes}, {"token": "No", "logprob": no}])
        } else {
            json!([{"token": "No", "logprob": no}, {"token": "Yes", "logprob": yes}])
        };
        choice["logprobs"] = json!({"content": [{"token": word,
            "logprob": if word == "Yes" { yes } else { no }, "top_logprobs": top}]});
    }
    (
        StatusCode::OK,
        json!({
            "id": "chatcmpl-scripted", "object": "chat.completion", "model": model,
            "choices": [choice],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": 1, "total_tokens": input_tokens + 1}
        }),
    )
}

/// P(yes) for one of ragaliq's yes/no questions, by the rules in the crate
/// docs; `None` for any other prompt.
pub fn word_rule(user: &str) -> Option<f64> {
    let question = user.trim_end().lines().last()?.to_owned();
    let passages = || document_passages(&section(user, "document").unwrap_or_default());
    if question.contains("supported by the document") {
        let claim = section(user, "claim")?;
        return Some(match verify(&claim, &passages()).0 {
            "supported" => 0.92,
            // Below ragaliq's default claim threshold (0.33), as a claim
            // only partly backed is not supported.
            "partially_supported" => 0.2,
            _ => 0.05,
        });
    }
    if question.contains("contradict the claim") {
        let claim = section(user, "claim")?;
        return Some(if verify(&claim, &passages()).0 == "contradicted" {
            0.9
        } else {
            0.1
        });
    }
    if question.contains("Does the response answer the question") {
        let q = asked(user)?;
        let r = words(&section(user, "response")?);
        let share = if q.is_empty() {
            0.0
        } else {
            q.intersection(&r).count() as f64 / q.len() as f64
        };
        return Some(share.clamp(0.01, 0.99));
    }
    if question.contains("give the same answer to the question as the expected answer") {
        // Correct when the response states the expected answer (its words,
        // as a claim against a passage) without a negation the expected
        // answer lacks; a half-stated answer leans no.
        let expected = section(user, "expected")?;
        let response = section(user, "response")?;
        return Some(match verify(&expected, &[response]).0 {
            "supported" => 0.9,
            "partially_supported" => 0.3,
            _ => 0.05,
        });
    }
    if question.contains("Does the document contain the answer to the question") {
        let q = asked(user)?;
        let answers = passages().iter().any(|p| !q.is_disjoint(&words(p)));
        return Some(if answers { 0.9 } else { 0.1 });
    }
    if question.contains("say that it cannot answer the question") {
        let response = section(user, "response")?.to_lowercase();
        let declines = DECLINES.iter().any(|d| response.contains(d));
        return Some(if declines { 0.9 } else { 0.05 });
    }
    if question.contains("contradict something the assistant said earlier") {
        let response = section(user, "response")?;
        let earlier = said(user, "Assistant: ");
        return Some(if conflicts(&response, &earlier) {
            0.9
        } else {
            0.1
        });
    }
    if question.contains("ask the user again for something they already said") {
        let response = section(user, "response")?;
        let earlier = said(user, "User: ");
        let asks_again = sentences_all(&response).iter().any(|s| {
            s.ends_with('?') && {
                let w = words(s);
                earlier.iter().any(|e| {
                    let shared = w.intersection(&words(e)).count();
                    !w.is_empty() && shared * 2 >= w.len()
                })
            }
        });
        return Some(if asks_again || conflicts(&response, &earlier) {
            0.9
        } else {
            0.1
        });
    }
    None
}

/// What a response says when it declines to answer (lower-cased).
const DECLINES: [&str; 9] = [
    "don't know",
    "do not know",
    "cannot answer",
    "can't answer",
    "not able to",
    "unable to",
    "no information",
    "does not say",
    "doesn't say",
];

/// The content words of the question, and, for a follow-up asked with the
/// conversation before it, of the user's last message there: the question
/// as the conversation means it.
fn asked(user: &str) -> Option<HashSet<String>> {
    let mut q = words(&section(user, "question")?);
    if let Some(last) = said(user, "User: ").last() {
        q.extend(words(last));
    }
    Some(q)
}

/// The lines of a `<conversation>` block that start with `who`, without it.
fn said(user: &str, who: &str) -> Vec<String> {
    section(user, "conversation")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix(who))
        .map(str::to_owned)
        .collect()
}

/// Whether a sentence of `response` says what a sentence of `earlier`
/// says (half its content words or more) with another number, or with a
/// negation the other lacks.
fn conflicts(response: &str, earlier: &[String]) -> bool {
    let numbers = |s: &str| -> HashSet<String> {
        s.split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let negated = |s: &str| {
        s.to_lowercase()
            .split(|ch: char| !ch.is_alphanumeric())
            .any(|w| w == "not" || w == "never" || w == "no")
    };
    sentences_all(response).iter().any(|r| {
        let w = words(r);
        earlier.iter().flat_map(|e| sentences_all(e)).any(|e| {
            let shared = w.intersection(&words(&e)).count();
            let alike = !w.is_empty() && shared * 2 >= w.len();
            let (a, b) = (numbers(r), numbers(&e));
            alike && ((!a.is_empty() && !b.is_empty() && a != b) || negated(r) != negated(&e))
        })
    })
}

/// Every sentence of `text`, questions included.
fn sentences_all(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for ch in text.chars() {
        current.push(ch);
        if matches!(ch, '.' | '!' | '?') {
            let s = current.trim();
            if !s.is_empty() {
                out.push(s.to_owned());
            }
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// The passages of a `<document>`: one per line, `[n] ` numbered when
/// there are several.
fn document_passages(document: &str) -> Vec<String> {
    document
        .lines()
        .map(|l| {
            let l = l.trim();
            match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
                Some((n, rest)) if n.bytes().all(|b| b.is_ascii_digit()) => rest.to_owned(),
                _ => l.to_owned(),
            }
        })
        .filter(|l| !l.is_empty())
        .collect()
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// FNV-1a over `text`, started from `seed`.
fn hash(seed: u64, text: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A number in [0, 1) from a seed and indexes (splitmix64's finaliser).
fn unit(seed: u64, a: u64, b: u64) -> f64 {
    let mut z = seed
        .wrapping_add(a.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(b.wrapping_mul(0xd1b5_4a32_d192_ed03));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// Flips a share of the verdicts (and passage relevance) in `reply`.
fn flip(reply: &mut Value, share: f64, seed: u64, occurrence: u64) {
    const LABELS: [&str; 4] = [
        "supported",
        "partially_supported",
        "no_evidence",
        "contradicted",
    ];
    let flip_one = |item: &mut Value, i: u64| {
        if unit(seed, occurrence, i) >= share {
            return;
        }
        if let Some(v) = item.get("verdict").and_then(Value::as_str) {
            let at = LABELS.iter().position(|l| *l == v).unwrap_or(0);
            let step = 1 + (unit(seed, occurrence, i + 1000) * 3.0) as usize;
            item["verdict"] = json!(LABELS[(at + step) % 4]);
        } else if let Some(r) = item.get("relevant").and_then(Value::as_bool) {
            item["relevant"] = json!(!r);
        }
    };
    if let Some(items) = reply.get_mut("verdicts").and_then(Value::as_array_mut) {
        for (i, item) in items.iter_mut().enumerate() {
            flip_one(item, i as u64);
        }
    } else if reply.get("verdict").is_some() {
        flip_one(reply, 0);
    }
}

/// The reply to a rendered ragaliq prompt, by the rules in the crate docs.
pub fn rule(user: &str) -> Option<Value> {
    if let Some(document) = section(user, "document") {
        let count: usize = user
            .split("Write up to ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(3);
        let cases: Vec<Value> = sentences(&document)
            .into_iter()
            .take(count)
            .map(|s| {
                let mut terms: Vec<String> = s
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| w.chars().count() >= 4)
                    .map(str::to_lowercase)
                    .filter(|w| !STOP.contains(&w.as_str()))
                    .collect();
                terms.truncate(2);
                json!({"question": format!("What does the document say about {}?", terms.join(" and ")), "answer": s})
            })
            .collect();
        return Some(json!({ "cases": cases }));
    }
    let passages = tagged(user, "passage");
    if user.contains("<claims>") {
        let verdicts: Vec<Value> = tagged(user, "claim")
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (verdict, evidence) = verify(c, &passages);
                json!({"claim": i + 1, "verdict": verdict, "evidence": evidence, "confidence": 0.9})
            })
            .collect();
        return Some(json!({ "verdicts": verdicts }));
    }
    if let Some(claim) = section(user, "claim") {
        let (verdict, evidence) = verify(&claim, &passages);
        return Some(json!({"verdict": verdict, "evidence": evidence, "confidence": 0.9}));
    }
    let query = section(user, "query")?;
    if user.contains("<expected>") {
        let q = words(&query);
        let verdicts: Vec<Value> = passages
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let relevant = !q.is_disjoint(&words(p));
                let reason = if relevant {
                    "shares terms with the query"
                } else {
                    "unrelated to the query"
                };
                json!({"passage": i + 1, "relevant": relevant, "reason": reason})
            })
            .collect();
        return Some(json!({ "verdicts": verdicts }));
    }
    let response = section(user, "response")?;
    if user.contains("atomic claims") {
        return Some(json!({ "claims": sentences(&response) }));
    }
    let q = words(&query);
    let r = words(&response);
    let score = if q.is_empty() {
        0.0
    } else {
        (q.intersection(&r).count() as f64 / q.len() as f64 * 100.0).round() / 100.0
    };
    Some(json!({
        "reasoning": format!("The response uses {} of the query's {} key terms.", q.intersection(&r).count(), q.len()),
        "score": score
    }))
}

fn verify(claim: &str, passages: &[String]) -> (&'static str, String) {
    let c = words(claim);
    if c.is_empty() {
        return ("no_evidence", String::new());
    }
    let negated = |s: &str| {
        let lower = s.to_lowercase();
        lower
            .split(|ch: char| !ch.is_alphanumeric())
            .any(|w| w == "not" || w == "never")
    };
    let best = passages
        .iter()
        .map(|p| (c.intersection(&words(p)).count() as f64 / c.len() as f64, p))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((share, p)) if share >= 0.7 => {
            let evidence = quote(p);
            if negated(claim) != negated(p) {
                ("contradicted", evidence)
            } else {
                ("supported", evidence)
            }
        }
        Some((share, p)) if share >= 0.4 => ("partially_supported", quote(p)),
        _ => ("no_evidence", String::new()),
    }
}

/// The passage's first 80 characters as evidence, ending at a word: a quote
/// cut inside a word or number ("£25,00" of "£25,000") would misquote it.
fn quote(passage: &str) -> String {
    let head: String = passage.chars().take(80).collect();
    if head.len() == passage.len() {
        return head;
    }
    let next = passage[head.len()..].chars().next();
    if next.is_some_and(char::is_whitespace) {
        return head.trim_end().to_owned();
    }
    match head.rfind(char::is_whitespace) {
        Some(end) => head[..end].trim_end().to_owned(),
        None => head,
    }
}

const STOP: &[&str] = &[
    "that", "this", "with", "from", "have", "will", "your", "they", "their", "there", "what",
    "when", "which", "were", "been", "into", "than", "then", "them", "does", "also", "about",
    "after", "only", "where", "whose", "would", "could", "should",
];

fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        // Fold plurals so "refunds" matches "refund".
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() >= 4 && !stem.ends_with('s') => stem.to_owned(),
            _ => w,
        })
        .collect()
}

fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &ch) in chars.iter().enumerate() {
        current.push(ch);
        let end =
            matches!(ch, '.' | '!' | '?') && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if end {
            let s = current.trim();
            if !s.is_empty() && !s.ends_with('?') {
                out.push(s.to_owned());
            }
            current.clear();
        }
    }
    let s = current.trim();
    if !s.is_empty() {
        out.push(s.to_owned());
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">")
}

/// The text between `<tag>` and `</tag>` (first occurrence), unescaped.
fn section(text: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.find(&open)? + open.len();
    let end = start + text[start..].find(&close)?;
    Some(unescape(text[start..end].trim()))
}

/// The contents of every `<tag n="…">…</tag>`, in order, unescaped.
fn tagged(text: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag} n=\"");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(gt) = after.find('>') else { break };
        let body = &after[gt + 1..];
        let Some(end) = body.find(&close) else { break };
        out.push(unescape(&body[..end]));
        rest = &body[end + close.len()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_counts_the_longest_beginning_an_earlier_one_shares() {
        let seen = std::sync::Mutex::default();
        assert_eq!(repeated_prefix(&seen, "passages A; claim 1"), 0);
        assert_eq!(repeated_prefix(&seen, "passages B; claim 1"), 9);
        assert_eq!(repeated_prefix(&seen, "passages A; claim 2"), 18);
        assert_eq!(repeated_prefix(&seen, "passages A; claim 2"), 19);
        assert_eq!(repeated_prefix(&seen, "other"), 0);
    }

    #[test]
    fn flips_are_seeded_and_differ_between_repeats() {
        let verdicts = || json!({"verdicts": (1..=40).map(|i| json!({"claim": i, "verdict": "supported"})).collect::<Vec<_>>()});
        let count = |v: &Value| {
            v["verdicts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| x["verdict"] != "supported")
                .count()
        };
        let (mut a, mut b, mut c) = (verdicts(), verdicts(), verdicts());
        flip(&mut a, 0.25, 7, 1);
        flip(&mut b, 0.25, 7, 1);
        flip(&mut c, 0.25, 7, 2);
        assert_eq!(a, b, "same seed, same occurrence, same flips");
        assert_ne!(a, c, "a repeat is asked anew");
        assert!(
            (4..=18).contains(&count(&a)),
            "about a quarter: {}",
            count(&a)
        );
    }

    #[test]
    fn the_direct_correctness_question_says_no_to_a_negated_reference() {
        let ask = |expected: &str, response: &str| {
            word_rule(&format!(
                "<question>How long is the refund window?</question>\n\n<expected>{expected}</expected>\n\n<response>{response}</response>\n\nDoes the response give the same answer to the question as the expected answer, without contradicting it? Answer \"yes\" or \"no\"."
            ))
        };
        let reference = "Refunds are accepted within 30 days of delivery.";
        assert_eq!(
            ask(
                reference,
                "Refunds are accepted within 30 days of delivery, yes."
            ),
            Some(0.9)
        );
        assert_eq!(
            ask(
                reference,
                "Refunds are not accepted within 30 days of delivery."
            ),
            Some(0.05)
        );
        assert_eq!(ask(reference, "Our stores open at nine."), Some(0.05));
    }

    /// The conversation questions: a follow-up's words borrow the user's
    /// last message; a changed number contradicts; a question the user
    /// answered before is asked again.
    #[test]
    fn conversation_rules() {
        let block = "<conversation>\nUser: My order number is 4417. Can I return a jacket?\nAssistant: Yes, jackets can be returned within 30 days.\n</conversation>\n\n";
        let ask = |body: &str, question: &str| {
            word_rule(&format!("{block}{body}\n\n{question}")).unwrap()
        };
        let passages = "<document>\nJackets can be returned within 30 days.\n</document>\n\n<question>And how long?</question>";
        assert_eq!(
            ask(
                passages,
                "Does the document contain the answer to the question? Answer \"yes\" or \"no\"."
            ),
            0.9
        );
        let off = "<document>\nShipping takes five days.\n</document>\n\n<question>And how long?</question>";
        assert_eq!(
            ask(
                off,
                "Does the document contain the answer to the question? Answer \"yes\" or \"no\"."
            ),
            0.1
        );
        let said = |response: &str, question: &str| {
            ask(
                &format!("<question>And how long?</question>\n\n<response>{response}</response>"),
                question,
            )
        };
        let contradicts = "Does the response contradict something the assistant said earlier in the conversation? Answer \"yes\" or \"no\".";
        assert_eq!(
            said("Jackets can be returned within 90 days.", contradicts),
            0.9
        );
        assert_eq!(
            said("Jackets can be returned within 30 days.", contradicts),
            0.1
        );
        assert_eq!(said("Jackets can not be returned.", contradicts), 0.9);
        let ignores = "Does the response ask the user again for something they already said, or contradict what the user said earlier in the conversation? Answer \"yes\" or \"no\".";
        assert_eq!(said("What is your order number?", ignores), 0.9);
        assert_eq!(
            said("Order 4417 can be returned within 30 days.", ignores),
            0.1
        );
        let declines = "Does the response say that it cannot answer the question, instead of giving an answer? Answer \"yes\" or \"no\".";
        assert_eq!(
            said("I don't know: the policy does not say.", declines),
            0.9
        );
        assert_eq!(said("Within 90 days.", declines), 0.05);
    }

    #[test]
    fn rules() {
        let verify_prompt = "<context>\n<passage n=\"1\">Refunds are accepted within 30 days of delivery.</passage>\n</context>\n<claims>\n<claim n=\"1\">Refunds are accepted within 30 days.</claim>\n<claim n=\"2\">Shipping is always free worldwide.</claim>\n<claim n=\"3\">Refunds are not accepted within 30 days.</claim>\n</claims>";
        let v = rule(verify_prompt).unwrap();
        let labels: Vec<&str> = v["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["verdict"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["supported", "no_evidence", "contradicted"]);
        let e = rule("atomic claims\n<query>\nq\n</query>\n<response>\nOne thing. Another thing! Why?\n</response>").unwrap();
        assert_eq!(e["claims"], json!(["One thing.", "Another thing!"]));
    }

    #[test]
    fn quotes_end_at_a_word() {
        let long = "Home insurance, renters policy: renters insure their contents only, up to £25,000 each year.";
        let q = quote(long);
        assert_eq!(
            q,
            "Home insurance, renters policy: renters insure their contents only, up to"
        );
        assert!(long.starts_with(&q));
        assert_eq!(quote("Short passage."), "Short passage.");
        let exact: String = "word ".repeat(16);
        assert_eq!(quote(&exact), exact, "80 characters: the whole passage");
    }
}
