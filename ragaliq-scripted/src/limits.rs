//! Rate limits enforced as a provider does: requests and tokens per window
//! (a minute, as providers state them) as two buckets that refill
//! continuously, every answer carrying OpenAI's
//! `x-ratelimit-*` headers, and a request beyond either limit answered
//! `429` with `retry-after-ms` instead of being served.

use serde_json::Value;
use std::time::{Duration, Instant};

/// The limits and what is left of them.
pub(crate) struct Limiter {
    /// Requests allowed per window.
    request_limit: f64,
    /// Tokens allowed per window.
    token_limit: f64,
    /// The window the limits are stated over, in seconds.
    window: f64,
    requests: f64,
    tokens: f64,
    at: Instant,
}

/// What the limiter decided for one request.
pub(crate) struct Decision {
    /// `None`: served; `Some(wait)`: refused, to be retried after `wait`.
    pub refused: Option<Duration>,
    /// The headers to send either way.
    pub headers: Vec<(&'static str, String)>,
    /// The tokens the request counts.
    pub cost: f64,
}

impl Limiter {
    /// Full buckets of `requests` requests and `tokens` tokens per `window`.
    pub(crate) fn new(requests: u64, tokens: u64, window: Duration) -> Limiter {
        Limiter {
            request_limit: requests.max(1) as f64,
            token_limit: tokens.max(1) as f64,
            window: window.as_secs_f64().max(0.001),
            requests: requests.max(1) as f64,
            tokens: tokens.max(1) as f64,
            at: Instant::now(),
        }
    }

    /// Takes one request and `cost` tokens when both are there.
    pub(crate) fn take(&mut self, cost: f64) -> Decision {
        let now = Instant::now();
        let elapsed = now.duration_since(self.at).as_secs_f64();
        self.at = now;
        self.requests =
            (self.requests + elapsed * self.request_limit / self.window).min(self.request_limit);
        self.tokens =
            (self.tokens + elapsed * self.token_limit / self.window).min(self.token_limit);
        // A request larger than the whole token window could never pass;
        // providers refuse it outright, here it waits for a full window.
        let cost = cost.min(self.token_limit);
        let refused = if self.requests >= 1.0 && self.tokens >= cost {
            self.requests -= 1.0;
            self.tokens -= cost;
            None
        } else {
            let for_request = (1.0 - self.requests).max(0.0) * self.window / self.request_limit;
            let for_tokens = (cost - self.tokens).max(0.0) * self.window / self.token_limit;
            Some(Duration::from_secs_f64(for_request.max(for_tokens)))
        };
        let window = self.window;
        let reset =
            |level: f64, limit: f64| format!("{:.3}s", (limit - level).max(0.0) * window / limit);
        let mut headers = vec![
            (
                "x-ratelimit-limit-requests",
                format!("{}", self.request_limit),
            ),
            (
                "x-ratelimit-remaining-requests",
                format!("{}", self.requests.floor()),
            ),
            (
                "x-ratelimit-reset-requests",
                reset(self.requests, self.request_limit),
            ),
            ("x-ratelimit-limit-tokens", format!("{}", self.token_limit)),
            (
                "x-ratelimit-remaining-tokens",
                format!("{}", self.tokens.floor()),
            ),
            (
                "x-ratelimit-reset-tokens",
                reset(self.tokens, self.token_limit),
            ),
        ];
        if let Some(wait) = refused {
            headers.push(("retry-after-ms", wait.as_millis().max(1).to_string()));
        }
        Decision {
            refused,
            headers,
            cost,
        }
    }
}

/// The tokens a request counts against the limit, as ragaliq estimates
/// them and as OpenAI counts them: the prompt (characters / 4) and the
/// reply limit.
pub(crate) fn cost(request: &Value) -> f64 {
    let system = request["system"].as_str().map_or(0, str::len);
    let messages: usize = request["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m["content"].as_str())
                .map(str::len)
                .sum()
        })
        .unwrap_or(0);
    let reply = request["max_tokens"]
        .as_u64()
        .or_else(|| request["max_completion_tokens"].as_u64())
        .unwrap_or(0);
    (system + messages) as f64 / 4.0 + reply as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_window_serves_then_refuses_with_the_wait() {
        let minute = Duration::from_secs(60);
        let mut l = Limiter::new(2, 1_000, minute);
        assert!(l.take(10.0).refused.is_none());
        assert!(l.take(10.0).refused.is_none());
        let third = l.take(10.0);
        let wait = third.refused.expect("the third request of a 2 rpm window");
        assert!(
            wait > Duration::from_secs(29) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert!(third.headers.iter().any(|(k, _)| *k == "retry-after-ms"));
        // Tokens limit too.
        let mut t = Limiter::new(100, 1_000, minute);
        assert!(t.take(900.0).refused.is_none());
        assert!(t.take(200.0).refused.is_some());
    }

    #[test]
    fn a_shorter_window_refills_and_resets_in_proportion() {
        // 12 requests every 6 s: one comes back every half second.
        let mut l = Limiter::new(12, 1_000_000, Duration::from_secs(6));
        for _ in 0..12 {
            assert!(l.take(1.0).refused.is_none());
        }
        let thirteenth = l.take(1.0);
        let wait = thirteenth
            .refused
            .expect("the 13th request of a full window");
        assert!(
            wait > Duration::from_millis(450) && wait <= Duration::from_millis(500),
            "{wait:?}"
        );
        let reset = thirteenth
            .headers
            .iter()
            .find(|(k, _)| *k == "x-ratelimit-reset-requests")
            .map(|(_, v)| v.as_str());
        // Nearly the whole window (6 s) until all 12 are back.
        assert!(
            reset.is_some_and(|r| r.starts_with("5.9") || r.starts_with("6.0")),
            "{reset:?}"
        );
    }
}
