//! What both HTTP transports share: the API key wrapper, the process's one
//! HTTP client (built on the first live call, never in replay), one POST
//! with its failures classified, server-sent events, `Retry-After` parsing
//! and error-body reading.

use crate::core::ApiKey;
use crate::core::JudgeResponse;
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
                .build()
                .map_err(|e| format!("the HTTP client cannot start: {}", error_chain(&e)))
        })
        .as_ref()
        .map_err(|e| TransportError::other(e.clone()))
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
    let redact = |s: String| key.map_or_else(|| s.clone(), |k| k.redact(&s));
    let mut builder = client()?
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(wire_json(body));
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = builder.send().await.map_err(|e| classify(e, url, redact))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = retry_after(response.headers(), SystemTime::now());
    let bytes = response.bytes().await.unwrap_or_default();
    let message = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(json) => error_message(&json).unwrap_or_else(|| excerpt(&bytes)),
        Err(_) => excerpt(&bytes),
    };
    let message = redact(message);
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

/// The parsed JSON of a success response's body.
pub(crate) async fn read_json(
    response: reqwest::Response,
    key: Option<&ApiKey>,
) -> Result<serde_json::Value, TransportError> {
    let redact = |s: String| key.map_or_else(|| s.clone(), |k| k.redact(&s));
    let bytes = response.bytes().await.map_err(|e| {
        TransportError::new(TransportErrorKind::Body {
            message: redact(error_chain(&e)),
        })
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        TransportError::new(TransportErrorKind::Decode {
            message: format!("not JSON ({e})"),
            body: redact(excerpt(&bytes)),
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
    name: Option<String>,
    data: Vec<String>,
    done: bool,
}

impl EventStream {
    pub(crate) fn new(response: reqwest::Response, idle: Duration) -> Self {
        EventStream {
            response,
            idle,
            buffer: Vec::new(),
            name: None,
            data: Vec::new(),
            done: false,
        }
    }

    /// The next event, or `None` at the end of the stream.
    pub(crate) async fn next(&mut self) -> Result<Option<Event>, TransportError> {
        loop {
            while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                let line = line.trim_end_matches(['\n', '\r']);
                if let Some(event) = self.feed(line) {
                    return Ok(Some(event));
                }
            }
            if self.done {
                let rest = std::mem::take(&mut self.buffer);
                if !rest.is_empty() {
                    let line = String::from_utf8_lossy(&rest).into_owned();
                    if let Some(event) = self.feed(line.trim_end_matches('\r')) {
                        return Ok(Some(event));
                    }
                }
                return Ok(self.feed(""));
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
    fn feed(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            if self.data.is_empty() && self.name.is_none() {
                return None;
            }
            return Some(Event {
                name: self.name.take(),
                data: std::mem::take(&mut self.data).join("\n"),
            });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.name = Some(value.to_owned()),
            "data" => self.data.push(value.to_owned()),
            _ => {}
        }
        None
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

/// The start of a body, as text, for error messages. An HTML page is named as one.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
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

/// The longest `Retry-After` honoured; a server asking for more gets this,
/// and the retry time budget then decides.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// `Retry-After` as a delay: delta-seconds or an HTTP-date (RFC 9110
/// §10.2.3). A date in the past means "now"; an absurd value (`1e20`, a
/// 30-digit number) is capped at a day rather than trusted.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

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
            excerpt(b"<!DOCTYPE html><p>Bad Gateway</p>"),
            "HTML page: <!DOCTYPE html><p>Bad Gateway</p>"
        );
        assert!(excerpt(&[b'x'; 1000]).ends_with('…'));
        assert_eq!(excerpt(b"  "), "(empty body)");
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
