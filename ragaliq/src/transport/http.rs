//! What both HTTP transports share: the API key wrapper, the process's one
//! HTTP client (built on the first live call, never in replay), one POST
//! with its failures classified, server-sent events, `Retry-After` parsing
//! and error-body reading.

use crate::core::ApiKey;
use crate::core::JudgeResponse;
use crate::core::{RateLimits, RateWindow};
use crate::transport::{TransportError, TransportErrorKind};
use reqwest::header::{HeaderMap, RETRY_AFTER};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// Where calls go, as messages show it: `scheme://host:port`, never a path,
/// query or user info (they can hold secrets).
///
/// ```
/// use ragaliq::judge::endpoint_label;
/// assert_eq!(endpoint_label("https://user:pw@api.example.com/v1?key=x").as_deref(),
///            Some("https://api.example.com:443"));
/// assert_eq!(endpoint_label("http://127.0.0.1:8787/v1").as_deref(), Some("http://127.0.0.1:8787"));
/// assert_eq!(endpoint_label("not a url"), None);
/// ```
#[must_use]
pub fn endpoint_label(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let host = parsed.host_str()?;
    let port = parsed.port_or_known_default()?;
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    Some(format!("{}://{host}:{port}", parsed.scheme()))
}

/// `body` as the bytes sent: compact JSON whose objects are written in an
/// order fixed here, never by the map type serde_json happens to be built
/// with. A JSON schema's `properties` are written in the order of its
/// `required` list — servers that follow a schema (llama.cpp's grammar,
/// structured outputs) write the reply's fields in that order, so it is part
/// of what the judge is asked — with `type` first and `properties` before
/// `required`; every other object's keys are sorted.
pub(crate) fn wire_json(body: &serde_json::Value) -> Vec<u8> {
    use serde_json::Value;
    fn write(v: &Value, out: &mut Vec<u8>) {
        let s = |x: &str, out: &mut Vec<u8>| {
            let _ = serde_json::to_writer(&mut *out, x);
        };
        match v {
            Value::Object(map) => {
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let is_schema = map.contains_key("properties") && !required.is_empty();
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_by_key(|k| {
                    let rank = match (is_schema, k.as_str()) {
                        (true, "type") => 0,
                        (true, "properties") => 1,
                        (true, "required") => 2,
                        _ => 3,
                    };
                    (rank, k.as_str())
                });
                out.push(b'{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    s(k, out);
                    out.push(b':');
                    match (&map[k], is_schema && k == "properties") {
                        (Value::Object(props), true) => {
                            let mut names: Vec<&String> = props.keys().collect();
                            names.sort_by_key(|n| {
                                (
                                    required.iter().position(|r| r == n).unwrap_or(usize::MAX),
                                    n.as_str(),
                                )
                            });
                            out.push(b'{');
                            for (j, n) in names.into_iter().enumerate() {
                                if j > 0 {
                                    out.push(b',');
                                }
                                s(n, out);
                                out.push(b':');
                                write(&props[n], out);
                            }
                            out.push(b'}');
                        }
                        (value, _) => write(value, out),
                    }
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write(item, out);
                }
                out.push(b']');
            }
            scalar => {
                let _ = serde_json::to_writer(&mut *out, scalar);
            }
        }
    }
    let mut out = Vec::new();
    write(body, &mut out);
    out
}

/// `url` with what may hold a secret hidden: its user name and password,
/// and its query string (`https://***:***@host/v1?***`). Text that is not a
/// URL loses everything after a `?`.
///
pub(crate) fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.query().is_some() {
                parsed.set_query(Some("***"));
            }
            if !parsed.username().is_empty() {
                let _ = parsed.set_username("***");
            }
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => match url.split_once('?') {
            Some((before, _)) => format!("{before}?***"),
            None => url.to_owned(),
        },
    }
}

/// `base_url` with `path` appended to its path, its query string (an
/// `api-version`, a gateway's token) kept after it:
/// `https://h/v1?k=x` + `chat/completions` → `https://h/v1/chat/completions?k=x`.
pub(crate) fn join_path(base_url: &str, path: &str) -> String {
    match reqwest::Url::parse(base_url) {
        Ok(mut url) => {
            let joined = format!("{}/{path}", url.path().trim_end_matches('/'));
            url.set_path(&joined);
            url.to_string()
        }
        Err(_) => format!("{}/{path}", base_url.trim_end_matches('/')),
    }
}

/// Whether `url` points at this machine (`localhost`, 127.0.0.0/8, `::1`).
pub(crate) fn is_loopback(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = parsed.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The process's HTTP client: connection pooling, a connect timeout, rustls
/// (or native-tls with that feature). Built on the first live call, so a
/// replayed test never builds one.
pub(crate) fn client() -> Result<&'static reqwest::Client, TransportError> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            super::tls::install_provider();
            reqwest::Client::builder()
                .user_agent(concat!("ragaliq/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(Duration::from_secs(10))
                .redirect(same_origin_redirects())
                .build()
                .map_err(|e| format!("the HTTP client cannot start: {}", error_chain(&e)))
        })
        .as_ref()
        .map_err(|e| TransportError::other(e.clone()))
}

/// Redirects are followed only within the origin (scheme, host and port)
/// the call was sent to, at most five times. reqwest's default follows ten
/// to anywhere and strips only `Authorization` and `Cookie` on the way, so
/// Anthropic's `x-api-key` would reach another host (or the same host over
/// plain HTTP). A redirect elsewhere comes back as the 3xx response, which
/// [`checked`] turns into [`TransportErrorKind::Redirected`].
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().map(origin);
        if first.as_ref() != Some(&origin(attempt.url())) || attempt.previous().len() > 5 {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}

/// A URL's origin: scheme, host and port (the scheme's default filled in).
fn origin(url: &reqwest::Url) -> (String, Option<String>, Option<u16>) {
    (
        url.scheme().to_owned(),
        url.host_str().map(str::to_ascii_lowercase),
        url.port_or_known_default(),
    )
}

/// One POST: the response on a success status; every failure becomes a
/// classified [`TransportError`] with the key redacted.
pub(crate) async fn send(
    url: &str,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
    key: Option<&ApiKey>,
    format_requested: bool,
    error_message: fn(&serde_json::Value) -> Option<String>,
) -> Result<reqwest::Response, TransportError> {
    let mut builder = client()?
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(wire_json(body));
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    checked(builder, url, key, format_requested, error_message).await
}

/// Sends `builder` (a request made with [`client`]) where no response
/// format is asked for (the calls around a batch: uploads, polls,
/// downloads), with [`send`]'s error classification.
#[cfg(feature = "batch")]
pub(crate) async fn send_request(
    builder: reqwest::RequestBuilder,
    url: &str,
    key: Option<&ApiKey>,
    error_message: fn(&serde_json::Value) -> Option<String>,
) -> Result<reqwest::Response, TransportError> {
    checked(builder, url, key, false, error_message).await
}

/// Sends `builder`: the response on a success status, else a classified
/// [`TransportError`] (a refused response format told apart when one was
/// asked for) with the key redacted.
async fn checked(
    builder: reqwest::RequestBuilder,
    url: &str,
    key: Option<&ApiKey>,
    format_requested: bool,
    error_message: fn(&serde_json::Value) -> Option<String>,
) -> Result<reqwest::Response, TransportError> {
    let redact = |s: String| key.map_or_else(|| s.clone(), |k| k.redact(&s));
    let response = builder.send().await.map_err(|e| classify(e, url, redact))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    if status.is_redirection() {
        // Only a redirect to another origin comes back (see
        // `same_origin_redirects`): where it points, never its path.
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| response.url().join(l).ok())
            .and_then(|u| endpoint_label(u.as_str()))
            .unwrap_or_else(|| "an address it did not give".into());
        return Err(TransportError::new(TransportErrorKind::Redirected {
            status: status.as_u16(),
            to,
        }));
    }
    let retry_after = retry_after(response.headers(), SystemTime::now());
    // The message is in the first bytes; a body without end is not read.
    let bytes = read_at_most(response, limits::MAX_ERROR_BYTES).await;
    let message = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(json) => error_message(&json)
            .map(redact)
            .unwrap_or_else(|| excerpt(&bytes, key)),
        Err(_) => excerpt(&bytes, key),
    };
    let kind =
        if format_requested && super::refusal::refuses_response_format(status.as_u16(), &message) {
            TransportErrorKind::FormatRefused {
                status: status.as_u16(),
                message,
            }
        } else {
            TransportErrorKind::Status {
                status: status.as_u16(),
                message,
            }
        };
    Err(TransportError::new(kind).with_retry_after(retry_after))
}

/// The first `cap` bytes of a body (all of it when shorter), whatever
/// breaks off: for error messages, which never need more.
async fn read_at_most(mut response: reqwest::Response, cap: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while out.len() < cap {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = cap - out.len();
                out.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            _ => break,
        }
    }
    out
}

/// A success response's body, read whole up to [`limits::MAX_REPLY_BYTES`]:
/// a longer one is an error, and the rest is not read.
async fn read_bytes(
    mut response: reqwest::Response,
    key: Option<&ApiKey>,
) -> Result<Vec<u8>, TransportError> {
    let mut out = Vec::new();
    loop {
        let chunk = response.chunk().await.map_err(|e| {
            let message = error_chain(&e);
            TransportError::new(TransportErrorKind::Body {
                message: key.map_or_else(|| message.clone(), |k| k.redact(&message)),
            })
        })?;
        let Some(chunk) = chunk else {
            return Ok(out);
        };
        if out.len() + chunk.len() > limits::MAX_REPLY_BYTES {
            return Err(TransportError::new(TransportErrorKind::TooLarge {
                what: "response body",
                limit: limits::MAX_REPLY_BYTES,
                name: "MAX_REPLY_BYTES",
            }));
        }
        out.extend_from_slice(&chunk);
    }
}

/// Reads a success response's body line by line (a batch's JSONL result
/// file), handing each line to `each` as it arrives: the file is never held
/// whole. A line longer than [`limits::MAX_BATCH_LINE_BYTES`], or no byte
/// for `idle`, is an error.
#[cfg(feature = "batch")]
pub(crate) async fn read_lines(
    mut response: reqwest::Response,
    key: Option<&ApiKey>,
    idle: Duration,
    mut each: impl FnMut(&str),
) -> Result<(), TransportError> {
    let mut line: Vec<u8> = Vec::new();
    let mut take = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\n', '\r']);
        if !text.trim().is_empty() {
            each(text);
        }
        line.clear();
    };
    loop {
        let chunk = match tokio::time::timeout(idle, response.chunk()).await {
            Err(_) => {
                return Err(TransportError::new(TransportErrorKind::IdleTimeout {
                    after: idle,
                }));
            }
            Ok(Err(e)) => {
                let message = error_chain(&e);
                return Err(TransportError::new(TransportErrorKind::Body {
                    message: key.map_or_else(|| message.clone(), |k| k.redact(&message)),
                }));
            }
            Ok(Ok(None)) => {
                take(&mut line);
                return Ok(());
            }
            Ok(Ok(Some(chunk))) => chunk,
        };
        let mut rest: &[u8] = &chunk;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            line.extend_from_slice(&rest[..=end]);
            take(&mut line);
            rest = &rest[end + 1..];
        }
        line.extend_from_slice(rest);
        if line.len() > limits::MAX_BATCH_LINE_BYTES {
            return Err(TransportError::new(TransportErrorKind::TooLarge {
                what: "result file's line",
                limit: limits::MAX_BATCH_LINE_BYTES,
                name: "MAX_BATCH_LINE_BYTES",
            }));
        }
    }
}

/// The parsed JSON of a success response's body.
pub(crate) async fn read_json(
    response: reqwest::Response,
    key: Option<&ApiKey>,
) -> Result<serde_json::Value, TransportError> {
    let bytes = read_bytes(response, key).await?;
    serde_json::from_slice(&bytes).map_err(|e| {
        TransportError::new(TransportErrorKind::Decode {
            message: format!("not JSON ({e})"),
            body: excerpt(&bytes, key),
        })
    })
}

fn classify(e: reqwest::Error, url: &str, redact: impl Fn(String) -> String) -> TransportError {
    // reqwest writes the whole URL into its messages, query string included,
    // and a base URL may carry a token there: the error says where calls
    // went by its endpoint (scheme, host, port) instead.
    let e = e.without_url();
    let message = redact(error_chain(&e));
    let e = &e;
    let refused = {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
        let mut found = false;
        while let Some(s) = source {
            if let Some(io) = s.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                found = true;
            }
            source = s.source();
        }
        found
    };
    let kind = if e.is_body() || e.is_decode() {
        TransportErrorKind::Body { message }
    } else if e.is_builder() {
        TransportErrorKind::Other { message }
    } else if refused && is_loopback(url) {
        TransportErrorKind::Unreachable { message }
    } else {
        TransportErrorKind::Connect { message }
    };
    TransportError::new(kind)
}

/// One server-sent event: its `event:` name (if any) and its `data:` lines.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub name: Option<String>,
    pub data: String,
}

/// Reads server-sent events from a streamed response, failing when no byte
/// arrives for `idle`. Dropping it closes the connection, which tells the
/// server to stop generating.
///
/// The format (a `field: value` line protocol, events ended by a blank
/// line) is small enough that a parser of its own costs less than a
/// dependency.
pub(crate) struct EventStream {
    response: reqwest::Response,
    idle: Duration,
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no line end: each chunk is
    /// scanned once, not the whole buffer again (a line that never ends
    /// would make that quadratic).
    scanned: usize,
    name: Option<String>,
    /// The event's `data:` lines so far, joined by `\n`: one string, so
    /// its length is what it holds in memory (a list of lines would hold
    /// a string's bookkeeping for each empty `data:` line, which adds no
    /// byte of data). Bounded by [`limits::MAX_EVENT_BYTES`].
    data: String,
    /// Whether a `data:` line came (an event of one empty `data:` line is
    /// an event with empty data, not no event).
    has_data: bool,
    done: bool,
}

impl EventStream {
    pub(crate) fn new(response: reqwest::Response, idle: Duration) -> Self {
        EventStream {
            response,
            idle,
            buffer: Vec::new(),
            scanned: 0,
            name: None,
            data: String::new(),
            has_data: false,
            done: false,
        }
    }

    /// The next event, or `None` at the end of the stream.
    pub(crate) async fn next(&mut self) -> Result<Option<Event>, TransportError> {
        loop {
            while let Some(at) = self.buffer[self.scanned..].iter().position(|&b| b == b'\n') {
                let end = self.scanned + at;
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                self.scanned = 0;
                let line = String::from_utf8_lossy(&line);
                let line = line.trim_end_matches(['\n', '\r']);
                if let Some(event) = self.feed(line)? {
                    return Ok(Some(event));
                }
            }
            self.scanned = self.buffer.len();
            if self.buffer.len() > limits::MAX_EVENT_LINE_BYTES {
                return Err(TransportError::new(TransportErrorKind::TooLarge {
                    what: "streamed line",
                    limit: limits::MAX_EVENT_LINE_BYTES,
                    name: "MAX_EVENT_LINE_BYTES",
                }));
            }
            if self.done {
                let rest = std::mem::take(&mut self.buffer);
                if !rest.is_empty() {
                    let line = String::from_utf8_lossy(&rest).into_owned();
                    if let Some(event) = self.feed(line.trim_end_matches('\r'))? {
                        return Ok(Some(event));
                    }
                }
                return self.feed("");
            }
            match tokio::time::timeout(self.idle, self.response.chunk()).await {
                Err(_) => {
                    return Err(TransportError::new(TransportErrorKind::IdleTimeout {
                        after: self.idle,
                    }));
                }
                Ok(Err(e)) => {
                    return Err(TransportError::new(TransportErrorKind::Body {
                        message: error_chain(&e),
                    }));
                }
                Ok(Ok(Some(bytes))) => self.buffer.extend_from_slice(&bytes),
                Ok(Ok(None)) => self.done = true,
            }
        }
    }

    /// Takes one line; returns the event a blank line completes.
    ///
    /// # Errors
    ///
    /// The event's data would grow past [`limits::MAX_EVENT_BYTES`]: a
    /// server whose `data:` lines never meet a blank line is cut off there,
    /// however short each line is.
    fn feed(&mut self, line: &str) -> Result<Option<Event>, TransportError> {
        if line.is_empty() {
            if !self.has_data && self.name.is_none() {
                return Ok(None);
            }
            self.has_data = false;
            return Ok(Some(Event {
                name: self.name.take(),
                data: std::mem::take(&mut self.data),
            }));
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.name = Some(value.to_owned()),
            "data" => {
                let joint = usize::from(self.has_data);
                if self.data.len() + joint + value.len() > limits::MAX_EVENT_BYTES {
                    return Err(TransportError::new(TransportErrorKind::TooLarge {
                        what: "streamed event",
                        limit: limits::MAX_EVENT_BYTES,
                        name: "MAX_EVENT_BYTES",
                    }));
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        Ok(None)
    }
}

/// Whether a response to a streamed request is a stream of server-sent
/// events: anything but JSON is read as one (some servers and proxies
/// label their streams loosely), and a server that ignored `stream` and
/// answered whole is read as JSON.
pub(crate) fn is_event_stream(response: &reqwest::Response) -> bool {
    !response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// The response a transport hands back: `text`, with the token counts under
/// `usage.<input_key>` / `usage.<output_key>` and the `model` the server reports.
pub(crate) fn judge_response(
    text: String,
    reply: &serde_json::Value,
    input_key: &str,
    output_key: &str,
) -> JudgeResponse {
    let tokens = |key: &str| {
        reply
            .get("usage")
            .and_then(|u| u.get(key))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    let mut response = JudgeResponse::text(text).with_tokens(tokens(input_key), tokens(output_key));
    if let Some(model) = reply.get("model").and_then(serde_json::Value::as_str) {
        response = response.with_model(model);
    }
    response
}

/// reqwest's top-level message is terse ("error sending request"); the
/// causes say what happened (connection refused, reset, …).
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// The start of a body, as text, for error messages, with `key` redacted
/// *before* it is cut (a key across the cut would otherwise leave its first
/// characters behind). An HTML page is named as one.
pub(crate) fn excerpt(bytes: &[u8], key: Option<&ApiKey>) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = match key {
        Some(k) => std::borrow::Cow::Owned(k.redact(&text)),
        None => text,
    };
    let text = text.trim();
    if text.is_empty() {
        return "(empty body)".into();
    }
    let lower = text.get(..15).unwrap_or(text).to_ascii_lowercase();
    let prefix = if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        "HTML page: "
    } else {
        ""
    };
    let mut cut = text.len().min(300);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let ellipsis = if cut < text.len() { "…" } else { "" };
    format!("{prefix}{}{ellipsis}", &text[..cut])
}

use super::limits::{self, MAX_RATE_RESET, MAX_RETRY_AFTER};

/// `Retry-After` as a delay: delta-seconds or an HTTP-date (RFC 9110
/// §10.2.3). A date in the past means "now"; an absurd value (`1e20`, a
/// 30-digit number) is capped at a day rather than trusted.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    // OpenAI also sends milliseconds, more precise than `Retry-After`.
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(
            Duration::try_from_secs_f64(ms / 1000.0)
                .unwrap_or(MAX_RETRY_AFTER)
                .min(MAX_RETRY_AFTER),
        );
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let secs = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(secs).min(MAX_RETRY_AFTER));
    }
    if let Ok(secs) = value.parse::<f64>() {
        // NaN is neither negative nor positive: refused with the negatives.
        if secs.is_nan() || secs < 0.0 {
            return None;
        }
        return Some(
            Duration::try_from_secs_f64(secs)
                .unwrap_or(MAX_RETRY_AFTER)
                .min(MAX_RETRY_AFTER),
        );
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(now)
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_AFTER),
    )
}

/// The rate limits a response's headers report: OpenAI's
/// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (resets as
/// `1s`, `6m0s`, `20ms`) and Anthropic's
/// `anthropic-ratelimit-{requests,tokens,input-tokens}-{limit,remaining,reset}`
/// (resets as RFC 3339 times). A value that does not parse is left out.
pub(crate) fn rate_limits(headers: &HeaderMap, now: SystemTime) -> RateLimits {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let number = |name: &str| get(name).and_then(|v| v.parse::<u64>().ok());
    let window = |limit: &str, remaining: &str, reset: &str| {
        Some(RateWindow {
            limit: number(limit),
            remaining: number(remaining)?,
            // A reset beyond a day is taken as a day: a window that "refills
            // in a year" would otherwise pace the run to a standstill.
            reset: get(reset)
                .and_then(|v| {
                    go_duration(v).or_else(|| {
                        rfc3339(v).map(|t| t.duration_since(now).unwrap_or(Duration::ZERO))
                    })
                })
                .map(|d| d.min(MAX_RATE_RESET)),
        })
    };
    let openai = |what: &str| {
        window(
            &format!("x-ratelimit-limit-{what}"),
            &format!("x-ratelimit-remaining-{what}"),
            &format!("x-ratelimit-reset-{what}"),
        )
    };
    let anthropic = |what: &str| {
        window(
            &format!("anthropic-ratelimit-{what}-limit"),
            &format!("anthropic-ratelimit-{what}-remaining"),
            &format!("anthropic-ratelimit-{what}-reset"),
        )
    };
    RateLimits {
        requests: openai("requests").or_else(|| anthropic("requests")),
        tokens: openai("tokens")
            .or_else(|| anthropic("tokens"))
            .or_else(|| anthropic("input-tokens")),
    }
}

/// A duration as OpenAI writes it: `1h2m3.5s`, `6m0s`, `20ms`.
fn go_duration(s: &str) -> Option<Duration> {
    let mut total = 0.0f64;
    let mut rest = s;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (unit, scale) = [("ms", 0.001), ("h", 3600.0), ("m", 60.0), ("s", 1.0)]
            .into_iter()
            .find(|(u, _)| rest.starts_with(u))?;
        total += value * scale;
        rest = &rest[unit.len()..];
    }
    Duration::try_from_secs_f64(total).ok()
}

/// An RFC 3339 time (`2024-10-17T16:21:42Z`, with fractions or an offset).
pub(crate) fn rfc3339(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (h, mi, sec) = (n(11..13)?, n(14..16)?, n(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        frac = format!("0.{}", &r[..end]).parse().ok()?;
        rest = &r[end..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && matches!(&rest[..1], "+" | "-") && &rest[3..4] == ":" => {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (rest[1..3].parse::<i64>().ok()? * 3600 + rest[4..6].parse::<i64>().ok()? * 60)
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset;
    let secs = u64::try_from(secs).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_secs_f64(frac))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn map(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn rate_limits_from_openai_and_anthropic_headers() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let openai = rate_limits(
            &map(&[
                ("x-ratelimit-limit-requests", "60"),
                ("x-ratelimit-remaining-requests", "59"),
                ("x-ratelimit-reset-requests", "1s"),
                ("x-ratelimit-limit-tokens", "40000"),
                ("x-ratelimit-remaining-tokens", "39000"),
                ("x-ratelimit-reset-tokens", "1m30.5s"),
            ]),
            now,
        );
        assert_eq!(
            openai.requests,
            Some(RateWindow {
                limit: Some(60),
                remaining: 59,
                reset: Some(Duration::from_secs(1))
            })
        );
        assert_eq!(
            openai.tokens.unwrap().reset,
            Some(Duration::from_secs_f64(90.5))
        );
        let anthropic = rate_limits(
            &map(&[
                ("anthropic-ratelimit-requests-limit", "50"),
                ("anthropic-ratelimit-requests-remaining", "0"),
                ("anthropic-ratelimit-requests-reset", "2023-11-14T22:13:30Z"),
                ("anthropic-ratelimit-input-tokens-limit", "40000"),
                ("anthropic-ratelimit-input-tokens-remaining", "100"),
            ]),
            now,
        );
        let r = anthropic.requests.unwrap();
        assert_eq!((r.limit, r.remaining), (Some(50), 0));
        // 1,700,000,000 is 2023-11-14T22:13:20Z: ten seconds later.
        assert_eq!(r.reset, Some(Duration::from_secs(10)));
        assert_eq!(anthropic.tokens.unwrap().remaining, 100);
        // Nothing, or nothing readable: nothing.
        assert!(rate_limits(&HeaderMap::new(), now).is_empty());
        let junk = rate_limits(&map(&[("x-ratelimit-remaining-requests", "many")]), now);
        assert!(junk.is_empty());
    }

    #[test]
    fn durations_and_times_as_providers_write_them() {
        assert_eq!(go_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(go_duration("1h2m3s"), Some(Duration::from_secs(3723)));
        for bad in ["", "s", "5", "5x", "1e9999s"] {
            assert_eq!(go_duration(bad), None, "{bad}");
        }
        let t = |s| {
            rfc3339(s).map(|t| {
                t.duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap()
                    .as_secs_f64()
            })
        };
        assert_eq!(t("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(t("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert_eq!(t("2000-03-01T01:00:00+01:00"), Some(951_868_800.0));
        assert_eq!(t("2000-03-01T00:00:00.25Z"), Some(951_868_800.25));
        for bad in [
            "2000-13-01T00:00:00Z",
            "yesterday",
            "2000-03-01T00:00:00",
            "1960-01-01T00:00:00Z",
        ] {
            assert_eq!(t(bad), None, "{bad}");
        }
        let ms = retry_after(
            &map(&[("retry-after-ms", "250"), ("retry-after", "7")]),
            SystemTime::now(),
        );
        assert_eq!(ms, Some(Duration::from_millis(250)), "milliseconds win");
    }

    fn headers(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn schemas_go_on_the_wire_in_the_order_of_their_required_list() {
        let schema = serde_json::json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["evidence", "verdict", "confidence"],
            "properties": {
                "verdict": {"type": "string", "enum": ["supported"]},
                "confidence": {"type": "number"},
                "evidence": {"type": "string", "maxLength": 300}
            }
        });
        let body = serde_json::json!({"model": "m", "response_format": {"schema": schema}});
        let wire = String::from_utf8(wire_json(&body)).unwrap();
        let at = |k: &str| wire.find(&format!("\"{k}\":{{")).unwrap();
        assert!(
            at("evidence") < at("verdict") && at("verdict") < at("confidence"),
            "{wire}"
        );
        assert!(
            wire.contains(r#"{"type":"object","properties":{"#),
            "{wire}"
        );
        let back: serde_json::Value = serde_json::from_slice(wire.as_bytes()).unwrap();
        assert_eq!(back, body, "the same JSON, in a fixed order");
    }

    #[test]
    fn paths_join_before_the_query_string() {
        assert_eq!(
            join_path("https://gw.example.com/v1?key=zz", "chat/completions"),
            "https://gw.example.com/v1/chat/completions?key=zz"
        );
        assert_eq!(
            join_path("http://127.0.0.1:8080/v1/", "messages"),
            "http://127.0.0.1:8080/v1/messages"
        );
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(
            retry_after(&headers("7"), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&headers("0.5"), now),
            Some(Duration::from_millis(500))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            retry_after(&headers(&later), now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(retry_after(&headers(&earlier), now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers("soon"), now), None);
        assert_eq!(retry_after(&headers("-3"), now), None);
        assert_eq!(retry_after(&headers("NaN"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn absurd_retry_after_values_are_capped_not_panicking() {
        let now = SystemTime::now();
        for v in [
            "1e20",
            "1e308",
            "inf",
            "99999999999999999999999999999",
            "18446744073709551615",
        ] {
            assert_eq!(retry_after(&headers(v), now), Some(MAX_RETRY_AFTER), "{v}");
        }
    }

    #[test]
    fn excerpts_name_html_and_cut_long_bodies() {
        assert_eq!(
            excerpt(b"<!DOCTYPE html><p>Bad Gateway</p>", None),
            "HTML page: <!DOCTYPE html><p>Bad Gateway</p>"
        );
        assert!(excerpt(&[b'x'; 1000], None).ends_with('…'));
        assert_eq!(excerpt(b"  ", None), "(empty body)");
    }

    #[test]
    fn a_key_across_the_cut_is_redacted_before_it() {
        // The key starts 10 bytes before the 300-byte cut: cutting first
        // would leave its first 10 characters, which redaction then misses.
        let key = ApiKey::new("fake-key-0123456789abcdef");
        let body = format!("{}{} and more", "x".repeat(290), key.expose());
        let shown = excerpt(body.as_bytes(), Some(&key));
        assert!(!shown.contains("fake-key"), "{shown}");
        assert!(shown.contains("***"), "{shown}");
    }

    #[test]
    fn redaction_of_every_length() {
        let k = ApiKey::new("sk-abcdef");
        assert_eq!(k.redact("bad key sk-abcdef given"), "bad key *** given");
        assert_eq!(ApiKey::new("xy").redact("key xy"), "key ***");
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("http://127.0.0.1:8787/v1"));
        assert!(is_loopback("http://localhost:11434/v1"));
        assert!(is_loopback("http://[::1]:8000/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
    }
}
