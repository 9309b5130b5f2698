//! Helpers shared by the integration tests.
#![allow(dead_code)]

use ragaliq::RagCase;
use ragaliq::judge::RetryPolicy;
use std::time::Duration;

/// Awaits `f`, failing the test if it takes more than 30 s: no test may hang.
pub async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("the call did not end within the test's hard limit of 30 s")
}

/// Retries without real waiting, so attempt counts are tested, not backoff.
pub fn fast_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy::default()
        .with_max_retries(max_retries)
        .with_backoff(Duration::from_millis(1), Duration::from_millis(5))
        .with_jitter(false)
}

/// The refund case most tests grade.
pub fn refund_case() -> RagCase {
    RagCase::new("How long is the refund window?")
        .id("refund")
        .context([
            "Refunds are accepted within 30 days of delivery.",
            "Shipping takes five business days.",
        ])
        .response(
            "Refunds are accepted within 30 days of delivery. Refunds are paid in gold coins.",
        )
}

pub fn openai_reply(
    content: &str,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> serde_json::Value {
    serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-test-2026",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens}
    })
}

/// Reads one HTTP request from a raw connection: its head (lower-cased)
/// and its content-length body; `None` when the client closed it first.
pub async fn read_head_and_body(stream: &mut tokio::net::TcpStream) -> Option<(String, Vec<u8>)> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return Some((head, buf[end + 4..].to_vec()));
        }
    }
}

/// The body of one HTTP request read from a raw connection (see
/// [`read_head_and_body`]).
pub async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    read_head_and_body(stream).await.map(|(_, body)| body)
}
