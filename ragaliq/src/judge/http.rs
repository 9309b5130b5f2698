//! What both HTTP transports share: the API key wrapper, one POST with its
//! failures classified, `Retry-After` parsing and error-body reading.

use crate::error::{TransportError, TransportErrorKind};
use reqwest::header::{HeaderMap, RETRY_AFTER};
use std::fmt;
use std::time::{Duration, SystemTime};

/// An API key. Its `Debug` and `Display` never show it, and transports strip
/// it from any server message before that message reaches an error.
///
/// ```
/// use ragaliq::judge::ApiKey;
/// let key = ApiKey::new("sk-very-secret");
/// assert_eq!(format!("{key:?}"), "ApiKey(***)");
/// assert_eq!(key.expose(), "sk-very-secret");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    #[must_use]
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for building a request header.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `***`.
    pub(crate) fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_owned();
        }
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The HTTP client both transports use: connection pooling, a connect
/// timeout, rustls (or native-tls with that feature).
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(concat!("ragaliq/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(10))
        .build()
        // Fails only when the TLS backend cannot initialise: nothing a
        // caller could do differently, and no judge can work without it.
        .expect("the HTTP client's TLS backend initialises")
}

/// POSTs `body` and returns the parsed JSON of a success response; every
/// failure becomes a classified [`TransportError`] with the key redacted.
pub(crate) async fn post_json(
    request: reqwest::RequestBuilder,
    body: &serde_json::Value,
    key: Option<&ApiKey>,
    error_message: fn(&serde_json::Value) -> Option<String>,
) -> Result<serde_json::Value, TransportError> {
    let redact = |s: String| key.map_or_else(|| s.clone(), |k| k.redact(&s));
    let response = request
        .json(body)
        .send()
        .await
        .map_err(|e| classify(e, redact))?;
    let status = response.status();
    let retry_after = retry_after(response.headers(), SystemTime::now());
    let bytes = response.bytes().await.map_err(|e| {
        TransportError::new(TransportErrorKind::Body {
            message: redact(error_chain(&e)),
        })
        .with_retry_after(retry_after)
    })?;
    let parsed: Result<serde_json::Value, _> = serde_json::from_slice(&bytes);
    if !status.is_success() {
        let message = match &parsed {
            Ok(json) => error_message(json).unwrap_or_else(|| excerpt(&bytes)),
            Err(_) => excerpt(&bytes),
        };
        return Err(
            TransportError::status(status.as_u16(), redact(message)).with_retry_after(retry_after)
        );
    }
    parsed.map_err(|e| {
        TransportError::new(TransportErrorKind::Decode {
            message: format!("not JSON ({e})"),
            body: redact(excerpt(&bytes)),
        })
    })
}

fn classify(e: reqwest::Error, redact: impl Fn(String) -> String) -> TransportError {
    let message = redact(error_chain(&e));
    let kind = if e.is_body() || e.is_decode() {
        TransportErrorKind::Body { message }
    } else if e.is_builder() {
        TransportErrorKind::Other { message }
    } else {
        TransportErrorKind::Connect { message }
    };
    TransportError::new(kind)
}

/// The response a transport hands back: `text`, with the token counts under
/// `usage.<input_key>` / `usage.<output_key>` and the `model` the server reports.
pub(crate) fn judge_response(
    text: String,
    reply: &serde_json::Value,
    input_key: &str,
    output_key: &str,
) -> crate::judge::JudgeResponse {
    let tokens = |key: &str| {
        reply
            .get("usage")
            .and_then(|u| u.get(key))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    crate::judge::JudgeResponse {
        text,
        input_tokens: tokens(input_key),
        output_tokens: tokens(output_key),
        model: reply
            .get("model")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
    }
}

/// reqwest's top-level message is terse ("error sending request"); the
/// causes say what happened (connection refused, reset, …).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// The start of a body, as text, for error messages. An HTML page is named as one.
fn excerpt(bytes: &[u8]) -> String {
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

/// `Retry-After` as a delay: delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
/// A date in the past means "now".
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
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
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
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
    fn redaction() {
        let k = ApiKey::new("sk-abcdef");
        assert_eq!(k.redact("bad key sk-abcdef given"), "bad key *** given");
    }
}
