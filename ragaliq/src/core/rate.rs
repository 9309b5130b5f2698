//! What a provider says about its rate limits, as read from a response's
//! headers: how many requests and tokens a window allows, how many remain,
//! and when the window is full again.

use std::time::Duration;

/// One limit: requests or tokens per window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateWindow {
    /// The window's size (`x-ratelimit-limit-requests`,
    /// `anthropic-ratelimit-requests-limit`), when given.
    pub limit: Option<u64>,
    /// What remains of it now.
    pub remaining: u64,
    /// Time until it is back to its full size, when given.
    pub reset: Option<Duration>,
}

/// The limits a response reported; either may be missing.
///
/// ```
/// use ragaliq::judge::{RateLimits, RateWindow};
/// let limits = RateLimits {
///     requests: Some(RateWindow { limit: Some(60), remaining: 59, reset: None }),
///     tokens: None,
/// };
/// // Without a reset time, a per-minute window is assumed.
/// assert_eq!(limits.requests.unwrap().per_second(), Some(1.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// Requests per window.
    pub requests: Option<RateWindow>,
    /// Tokens per window (for Anthropic, the input-token limit when only
    /// that one is given).
    pub tokens: Option<RateWindow>,
}

impl RateWindow {
    /// How fast the window refills, per second: what is used of it
    /// (`limit - remaining`) over the time to reset, or `limit` per minute
    /// when the reset time says nothing (a full window, or none given).
    #[must_use]
    ///
    /// The rate is bounded both ways, whatever the headers say: at most the
    /// whole window a second, at least the whole window a day (a reset of a
    /// year is read as a day), so a wait computed from it is always finite.
    pub fn per_second(&self) -> Option<f64> {
        const DAY: f64 = 24.0 * 3600.0;
        let limit = self.limit? as f64;
        let used = (limit - self.remaining as f64).max(0.0);
        match self.reset {
            Some(reset) if used >= 1.0 && reset.as_secs_f64() > 0.0 => {
                let reset = reset.as_secs_f64().min(DAY);
                Some((used / reset).clamp(limit / DAY, limit))
            }
            _ => Some(limit / 60.0),
        }
    }
}

impl RateLimits {
    /// Whether anything was reported.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.requests.is_none() && self.tokens.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refill_rate_from_what_is_used_and_the_reset() {
        let w = |remaining, reset: Option<u64>| RateWindow {
            limit: Some(60),
            remaining,
            reset: reset.map(Duration::from_millis),
        };
        // 30 used, back in 30 s: one a second.
        assert_eq!(w(30, Some(30_000)).per_second(), Some(1.0));
        // Nothing used: a per-minute window.
        assert_eq!(w(60, Some(0)).per_second(), Some(1.0));
        // An absurdly short reset does not claim more than the whole window a second.
        assert_eq!(w(0, Some(1)).per_second(), Some(60.0));
        // An absurdly long one is read as a day: never a rate of ~0.
        let slow = w(59, Some(u64::MAX)).per_second().unwrap();
        assert!((slow - 60.0 / 86_400.0).abs() < 1e-12, "{slow}");
        let unknown = RateWindow {
            limit: None,
            remaining: 3,
            reset: None,
        };
        assert_eq!(unknown.per_second(), None);
    }
}
