//! The endpoint's HTTP side: hyper on a loopback port of the process's
//! background runtime (so a pipeline with a blocking client, or a test on a
//! one-thread runtime, is served all the same), each request looked up in
//! the recording, answered from it, forwarded upstream, or refused.

use super::State;
use super::api::{self, Api};
use crate::core::ApiKey;
use crate::record::{Call, Ordered, Tokens};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// The body of every response: whole, or streamed.
type Body = BoxBody<Bytes, std::io::Error>;

/// The most a request's body may hold.
const MAX_REQUEST_BYTES: usize = 32 << 20;
/// The most a whole answer's body may hold.
const MAX_ANSWER_BYTES: usize = 64 << 20;
/// The most a streamed answer's event may hold before it is cut.
const MAX_EVENT_BYTES: usize = 8 << 20;

/// The request headers forwarded upstream: the application's credentials
/// and the providers' version and feature headers. Never written anywhere.
const FORWARDED: [&str; 10] = [
    "authorization",
    "x-api-key",
    "api-key",
    "anthropic-version",
    "anthropic-beta",
    "openai-organization",
    "openai-project",
    "openai-beta",
    "content-type",
    "accept",
];

/// The response headers handed back from upstream besides the content
/// type: what a client's retry logic reads.
fn handed_back(name: &str) -> bool {
    name == "retry-after"
        || name == "retry-after-ms"
        || name.starts_with("x-ratelimit-")
        || name.starts_with("anthropic-ratelimit-")
}

/// Binds 127.0.0.1 on an ephemeral port and serves `state` on the
/// background runtime; the server's address, and the handle that stops it.
pub(super) fn start(state: Arc<State>) -> Result<(SocketAddr, tokio::task::AbortHandle), String> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| format!("no port of 127.0.0.1 can be bound: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("the bound port cannot be read: {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("the port cannot be made non-blocking: {e}"))?;
    let runtime = crate::client::background()
        .ok_or_else(|| "the background runtime cannot start".to_owned())?;
    let _entered = runtime.enter();
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| format!("the port cannot be served: {e}"))?;
    let task = runtime.spawn(async move {
        // Dropped with the task: every connection stops with the server.
        let mut connections = tokio::task::JoinSet::new();
        loop {
            while connections.try_join_next().is_some() {}
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of file descriptors, say: wait, then accept again.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let state = state.clone();
            connections.spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(handle(req, state).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((addr, task.abort_handle()))
}

/// One request: routed, read, looked up, then answered from the
/// recording, forwarded, or refused.
async fn handle(req: Request<Incoming>, state: Arc<State>) -> Response<Body> {
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let Some(api) = Api::route(&method, &path) else {
        let message = format!(
            "the pipeline called {method} {path}, which ragaliq's loopback endpoint does not serve (it serves {}): check the base URL given to the pipeline's client (`openai_base_url()` for OpenAI clients, `anthropic_base_url()` for Anthropic's)",
            api::ROUTES
        );
        state.fail(message.clone());
        return error(Api::Chat, StatusCode::NOT_FOUND, &message);
    };
    let headers: Vec<(hyper::header::HeaderName, hyper::header::HeaderValue)> = req
        .headers()
        .iter()
        .filter(|(name, _)| FORWARDED.contains(&name.as_str()))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let bytes = match Limited::new(req.into_body(), MAX_REQUEST_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            let message = format!(
                "the pipeline's {} request could not be read whole: {e}",
                api.path()
            );
            state.fail(message.clone());
            return error(api, StatusCode::BAD_REQUEST, &message);
        }
    };
    let json: Option<serde_json::Value> = if api.has_body() {
        match serde_json::from_slice(&bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                let message = format!(
                    "the pipeline sent a {} request whose body is not JSON ({e}): {}",
                    api.path(),
                    excerpt(&bytes, &keys(&headers))
                );
                state.fail(message.clone());
                return error(api, StatusCode::BAD_REQUEST, &message);
            }
        }
    } else {
        None
    };
    let ordered = api::ordered(&bytes);
    let fingerprint = api::fingerprint(api, json.as_ref());
    let asking = state.asking(&fingerprint);
    let model = json
        .as_ref()
        .and_then(|b| b.get("model"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let describe = || crate::record::describe_call(api.path(), &model, ordered.as_ref());
    let why = |recorded: &[Call]| {
        super::changed::why(api.path(), &fingerprint, asking, json.as_ref(), recorded)
    };
    match state.recorder.lookup_call(
        &fingerprint,
        asking,
        state.trial.as_deref(),
        &describe,
        &why,
    ) {
        Ok(Some(call)) => {
            state.replayed(call.tokens.input, call.tokens.output);
            replay(&call)
        }
        Ok(None) => {
            let call = Asked {
                api,
                headers,
                bytes,
                streamed: api::streamed(json.as_ref()),
                estimated: api::estimated_tokens(json.as_ref(), 0),
                ordered,
                model,
                fingerprint,
                asking,
            };
            forward(state, call).await
        }
        Err(e) => {
            let message = e.to_string();
            state.fail_unrecorded(message.clone());
            error(api, StatusCode::NOT_FOUND, &message)
        }
    }
}

/// A recorded answer: the same body, or the same events in the same order.
fn replay(call: &Call) -> Response<Body> {
    if call.chunks.is_empty() {
        let body = call.response.clone().unwrap_or_default();
        return respond(StatusCode::OK, "application/json", whole(Bytes::from(body)));
    }
    let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = call
        .chunks
        .iter()
        .map(|c| Ok(Frame::data(Bytes::from(format!("{c}\n\n")))))
        .collect();
    let body = StreamBody::new(futures_util::stream::iter(frames)).boxed();
    respond(StatusCode::OK, "text/event-stream", body)
}

fn whole(bytes: Bytes) -> Body {
    Full::new(bytes).map_err(|never| match never {}).boxed()
}

fn respond(status: StatusCode, content_type: &str, body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, v);
    }
    if content_type == "text/event-stream" {
        response.headers_mut().insert(
            hyper::header::CACHE_CONTROL,
            hyper::header::HeaderValue::from_static("no-cache"),
        );
    }
    response
}

/// An error the application's client reads as its provider's.
fn error(api: Api, status: StatusCode, message: &str) -> Response<Body> {
    respond(
        status,
        "application/json",
        whole(Bytes::from(api::error_body(api, status.as_u16(), message))),
    )
}

/// A request the recording does not answer, to forward.
struct Asked {
    api: Api,
    headers: Vec<(hyper::header::HeaderName, hyper::header::HeaderValue)>,
    bytes: Bytes,
    streamed: bool,
    estimated: u64,
    ordered: Option<Ordered>,
    model: String,
    fingerprint: String,
    asking: u32,
}

impl Asked {
    fn describe(&self) -> String {
        crate::record::describe_call(self.api.path(), &self.model, self.ordered.as_ref())
    }
}

/// How the upstream began to answer.
enum Head {
    /// Whole: its status, content type, handed-back headers and body.
    Whole {
        status: StatusCode,
        content_type: String,
        headers: Vec<(String, String)>,
        body: Bytes,
    },
    /// Streamed: the events follow on the channel.
    Stream {
        status: StatusCode,
        content_type: String,
    },
    /// No usable answer: what the application gets, and why.
    Failed { status: StatusCode, message: String },
}

/// Forwards `asked` upstream on a task of its own (which holds the
/// concurrency limits for as long as the answer streams) and answers the
/// application as the upstream does.
async fn forward(state: Arc<State>, asked: Asked) -> Response<Body> {
    let api = asked.api;
    let (head_tx, head_rx) = oneshot::channel();
    let (chunk_tx, chunk_rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(32);
    tokio::spawn(upstream(state.clone(), asked, head_tx, chunk_tx));
    match head_rx.await {
        Ok(Head::Whole {
            status,
            content_type,
            headers,
            body,
        }) => {
            let mut response = respond(status, &content_type, whole(body));
            for (name, value) in headers {
                if let (Ok(n), Ok(v)) = (
                    hyper::header::HeaderName::from_bytes(name.as_bytes()),
                    hyper::header::HeaderValue::from_str(&value),
                ) {
                    response.headers_mut().insert(n, v);
                }
            }
            response
        }
        Ok(Head::Stream {
            status,
            content_type,
        }) => {
            let events = futures_util::stream::unfold(chunk_rx, |mut rx| async move {
                rx.recv().await.map(|chunk| (chunk.map(Frame::data), rx))
            });
            respond(status, &content_type, StreamBody::new(events).boxed())
        }
        Ok(Head::Failed { status, message }) => {
            state.fail(message.clone());
            error(api, status, &message)
        }
        Err(_) => {
            let message = "the pipeline's call upstream stopped before it answered".to_owned();
            state.fail(message.clone());
            error(api, StatusCode::BAD_GATEWAY, &message)
        }
    }
}

/// The application's keys, to hide from any message.
fn keys(headers: &[(hyper::header::HeaderName, hyper::header::HeaderValue)]) -> Vec<ApiKey> {
    headers
        .iter()
        .filter(|(n, _)| matches!(n.as_str(), "authorization" | "x-api-key" | "api-key"))
        .filter_map(|(_, v)| v.to_str().ok())
        .flat_map(|v| {
            let bare = v.strip_prefix("Bearer ").unwrap_or(v).trim();
            [ApiKey::new(v), ApiKey::new(bare)]
        })
        .filter(|k| k.expose().len() >= 4)
        .collect()
}

/// The start of a body, for messages, with the application's keys hidden.
fn excerpt(bytes: &[u8], keys: &[ApiKey]) -> String {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    for k in keys {
        text = k.redact(&text);
    }
    let text = text.trim();
    if text.is_empty() {
        return "(empty body)".into();
    }
    let cut: String = text.chars().take(300).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// The call upstream: limits, one attempt bounded by the timeout, and the
/// answer handed back (head first, then a stream's events) and recorded.
async fn upstream(
    state: Arc<State>,
    asked: Asked,
    head: oneshot::Sender<Head>,
    chunks: mpsc::Sender<Result<Bytes, std::io::Error>>,
) {
    let settings = &state.settings;
    let what = asked.describe();
    let keys = keys(&asked.headers);
    let failed = |status: StatusCode, problem: String| Head::Failed {
        status,
        message: format!("the pipeline's call {what} failed: {problem}"),
    };
    let Ok(_own) = state.own.clone().acquire_owned().await else {
        let _ = head.send(failed(
            StatusCode::BAD_GATEWAY,
            "the endpoint's concurrency limit was closed".into(),
        ));
        return;
    };
    let shared = state.shared.clone();
    let _place = match &shared {
        Some(client) => match client
            .admit_pipeline(asked.estimated + asked.bytes.len() as u64 / 4)
            .await
        {
            Ok(place) => Some(place),
            Err(e) => {
                let _ = head.send(failed(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!("the run's limits, which the judge and the pipeline share ([pipeline] shared_limits), refused it: {e}"),
                ));
                return;
            }
        },
        None => None,
    };
    let (base, setting) = if asked.api.anthropic() {
        (
            &settings.anthropic_base_url,
            "[pipeline] anthropic_base_url (RAGALIQ_PIPELINE_ANTHROPIC_BASE_URL)",
        )
    } else {
        (
            &settings.openai_base_url,
            "[pipeline] openai_base_url (RAGALIQ_PIPELINE_OPENAI_BASE_URL)",
        )
    };
    let url = crate::transport::join_path(base, asked.api.path());
    let shown = crate::transport::endpoint_label(&url)
        .unwrap_or_else(|| crate::transport::redact_url(&url));
    let client = match crate::transport::http_client() {
        Ok(c) => c,
        Err(e) => {
            let _ = head.send(failed(StatusCode::BAD_GATEWAY, e.to_string()));
            return;
        }
    };
    let mut request = if asked.api.has_body() {
        client.post(&url).body(asked.bytes.clone())
    } else {
        client.get(&url)
    };
    for (name, value) in &asked.headers {
        request = request.header(name.as_str(), value.as_bytes());
    }
    let started = Instant::now();
    let deadline = started + settings.timeout;
    let timeout_secs = settings.timeout.as_secs_f64();
    let mut response = match tokio::time::timeout(settings.timeout, request.send()).await {
        Err(_) => {
            let _ = head.send(failed(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "{shown} gave no answer within {timeout_secs:.0} s ([pipeline] timeout_secs)"
                ),
            ));
            return;
        }
        Ok(Err(e)) => {
            let _ = head.send(failed(
                StatusCode::BAD_GATEWAY,
                format!(
                    "{shown} cannot be reached ({}); start the pipeline's model server there, or point {setting} at it",
                    crate::transport::error_chain(&e)
                ),
            ));
            return;
        }
        Ok(Ok(r)) => r,
    };
    let status =
        StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    if response.status().is_redirection() {
        let _ = head.send(failed(
            StatusCode::BAD_GATEWAY,
            format!("{shown} redirected it to another origin, which is not followed (a key would go with it)"),
        ));
        return;
    }
    let is_stream = asked.streamed && !content_type.starts_with("application/json");
    if !status.is_success() || !is_stream {
        let handed: Vec<(String, String)> = response
            .headers()
            .iter()
            .filter(|(n, _)| handed_back(n.as_str()))
            .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
        let body = match read_whole(&mut response, deadline).await {
            Ok(body) => body,
            Err(problem) => {
                let status = if problem.starts_with("did not end") {
                    StatusCode::GATEWAY_TIMEOUT
                } else {
                    StatusCode::BAD_GATEWAY
                };
                let _ = head.send(failed(status, format!("{shown}'s answer {problem}")));
                return;
            }
        };
        if !status.is_success() {
            state.note(format!(
                "the pipeline's call {what}: {shown} answered {status}: {} (handed to the application as it came; not recorded)",
                excerpt(&body, &keys)
            ));
            let _ = head.send(Head::Whole {
                status,
                content_type,
                headers: handed,
                body,
            });
            return;
        }
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&body) else {
            let _ = head.send(failed(
                StatusCode::BAD_GATEWAY,
                format!(
                    "{shown} answered {status} with a body that is not JSON: {}",
                    excerpt(&body, &keys)
                ),
            ));
            return;
        };
        let said = api::said(asked.api, &value);
        let cost = state.spent(&asked.model, said.input_tokens, said.output_tokens);
        let call = Call::new(
            asked.api.path(),
            asked.ordered.as_ref(),
            said.text,
            Some(String::from_utf8_lossy(&body).into_owned()),
            Vec::new(),
            Tokens {
                input: said.input_tokens,
                output: said.output_tokens,
            },
            asked.asking,
            asked.fingerprint.clone(),
        );
        state.recorder.store_call(call, state.trial.as_deref());
        if let (Some(client), Some(usd)) = (&shared, cost) {
            client.charge_pipeline(usd).await;
        }
        let _ = head.send(Head::Whole {
            status,
            content_type,
            headers: handed,
            body,
        });
        return;
    }
    if head
        .send(Head::Stream {
            status,
            content_type,
        })
        .is_err()
    {
        return;
    }
    let mut events = Events::default();
    // Each piece is handed on when the next arrives, and the last once the
    // call is recorded: a client stops reading at the stream's last event
    // (`[DONE]`), and its test may end right after, so the recording must
    // hold the call before the client can see that event.
    let mut held: Option<Bytes> = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let wait = settings.idle_timeout.min(left);
        let problem = match tokio::time::timeout(wait, response.chunk()).await {
            Ok(Ok(Some(bytes))) => {
                if let Err(problem) = events.push(&bytes) {
                    problem
                } else if let Some(previous) = held.replace(bytes)
                    && chunks.send(Ok(previous)).await.is_err()
                {
                    // The application stopped reading: what it saw is not
                    // the whole answer, so none of it is recorded.
                    return;
                } else {
                    continue;
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => format!("broke off ({})", crate::transport::error_chain(&e)),
            Err(_) if left <= settings.idle_timeout => {
                format!("was still streaming after {timeout_secs:.0} s ([pipeline] timeout_secs)")
            }
            Err(_) => format!(
                "stopped for {:.0} s mid-stream ([pipeline] idle_timeout_secs)",
                settings.idle_timeout.as_secs_f64()
            ),
        };
        let message =
            format!("the pipeline's call {what} failed: {shown}'s streamed answer {problem}");
        state.fail(message.clone());
        if let Some(previous) = held.take() {
            let _ = chunks.send(Ok(previous)).await;
        }
        let _ = chunks.send(Err(std::io::Error::other(message))).await;
        return;
    }
    let events = events.finish();
    let said = api::said_streamed(asked.api, &events);
    let cost = state.spent(&asked.model, said.input_tokens, said.output_tokens);
    let call = Call::new(
        asked.api.path(),
        asked.ordered.as_ref(),
        said.text,
        None,
        events,
        Tokens {
            input: said.input_tokens,
            output: said.output_tokens,
        },
        asked.asking,
        asked.fingerprint,
    );
    state.recorder.store_call(call, state.trial.as_deref());
    if let (Some(client), Some(usd)) = (&shared, cost) {
        client.charge_pipeline(usd).await;
    }
    if let Some(last) = held {
        let _ = chunks.send(Ok(last)).await;
    }
}

/// A whole body, within the deadline and [`MAX_ANSWER_BYTES`].
async fn read_whole(response: &mut reqwest::Response, deadline: Instant) -> Result<Bytes, String> {
    let mut out: Vec<u8> = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, response.chunk()).await {
            Err(_) => return Err("did not end in time ([pipeline] timeout_secs)".to_owned()),
            Ok(Err(e)) => return Err(format!("broke off ({})", crate::transport::error_chain(&e))),
            Ok(Ok(None)) => return Ok(Bytes::from(out)),
            Ok(Ok(Some(bytes))) => {
                if out.len() + bytes.len() > MAX_ANSWER_BYTES {
                    return Err(format!("is larger than {} MiB", MAX_ANSWER_BYTES >> 20));
                }
                out.extend_from_slice(&bytes);
            }
        }
    }
}

/// Server-sent events as they arrive: split at the blank line that ends
/// each, kept as the client received them.
#[derive(Default)]
struct Events {
    buffer: Vec<u8>,
    events: Vec<String>,
}

impl Events {
    fn push(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.buffer.extend_from_slice(bytes);
        while let Some((at, len)) = blank_line(&self.buffer) {
            let event: Vec<u8> = self.buffer.drain(..at + len).take(at).collect();
            let text = String::from_utf8_lossy(&event).into_owned();
            if !text.trim().is_empty() {
                self.events.push(text);
            }
        }
        if self.buffer.len() > MAX_EVENT_BYTES {
            return Err(format!(
                "sent an event larger than {} MiB",
                MAX_EVENT_BYTES >> 20
            ));
        }
        Ok(())
    }

    fn finish(mut self) -> Vec<String> {
        let rest = String::from_utf8_lossy(&self.buffer).into_owned();
        let rest = rest.trim_end_matches(['\r', '\n']);
        if !rest.trim().is_empty() {
            self.events.push(rest.to_owned());
        }
        self.events
    }
}

/// Where the first blank line (`\n\n` or `\r\n\r\n`) starts, and its length.
fn blank_line(buffer: &[u8]) -> Option<(usize, usize)> {
    let lf = buffer.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_where_they_end_even_across_chunks() {
        let mut e = Events::default();
        e.push(b"data: {\"a\":1}\n\nda").unwrap();
        e.push(b"ta: {\"b\":2}\r\n\r\nevent: x\ndata: y").unwrap();
        assert_eq!(
            e.finish(),
            ["data: {\"a\":1}", "data: {\"b\":2}", "event: x\ndata: y"]
        );
    }

    #[test]
    fn keys_never_reach_an_excerpt() {
        let headers = vec![(
            hyper::header::AUTHORIZATION,
            hyper::header::HeaderValue::from_static("Bearer sk-secret-123"),
        )];
        let text = excerpt(b"bad key sk-secret-123 given", &keys(&headers));
        assert!(!text.contains("sk-secret-123"), "{text}");
    }
}
