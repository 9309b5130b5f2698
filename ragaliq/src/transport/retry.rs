//! Retrying judge calls: exponential backoff with jitter, `Retry-After`
//! honoured, bounded by attempts and by total time.

use crate::transport::TransportError;
use backon::{BackoffBuilder, ExponentialBuilder};
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// When and how often a failed judge call is tried again.
///
/// Retryable failures are 408, 425, 429 and 5xx answers, timeouts, refused
/// or reset connections (but not a refused connection to a local port:
/// nothing listens there) and broken bodies; anything else fails at once. A
/// call that timed out is tried once more at most: a server that is too slow
/// once is likely too slow again. The wait before retry *n* is
/// `initial_backoff * 2^n` (capped at `max_backoff`, with full jitter), or
/// the server's `Retry-After` when it sent one. No wait may end past
/// `total_budget` from the first attempt.
///
/// ```
/// use ragaliq::judge::RetryPolicy;
/// use std::time::Duration;
/// let patient = RetryPolicy::default()
///     .with_max_retries(8)
///     .with_total_budget(Duration::from_secs(300));
/// assert_eq!(patient.max_retries, 8);
/// assert_eq!(RetryPolicy::none().max_retries, 0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so at most `max_retries + 1` attempts).
    pub max_retries: u32,
    /// The first backoff.
    pub initial_backoff: Duration,
    /// The largest backoff (a longer `Retry-After` is still honoured).
    pub max_backoff: Duration,
    /// The most time from the first attempt to the start of the last one.
    pub total_budget: Duration,
    /// Randomise each backoff, so that parallel tests do not retry in lockstep.
    pub jitter: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            total_budget: Duration::from_secs(120),
            jitter: true,
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retries.
    #[must_use]
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// Sets [`max_retries`](Self::max_retries).
    #[must_use]
    pub fn with_max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// Sets [`initial_backoff`](Self::initial_backoff) and [`max_backoff`](Self::max_backoff).
    #[must_use]
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// Sets [`total_budget`](Self::total_budget).
    #[must_use]
    pub fn with_total_budget(mut self, budget: Duration) -> Self {
        self.total_budget = budget;
        self
    }

    /// Sets [`jitter`](Self::jitter).
    #[must_use]
    pub fn with_jitter(mut self, jitter: bool) -> Self {
        self.jitter = jitter;
        self
    }

    fn backoff(&self) -> impl Iterator<Item = Duration> + use<> {
        let builder = ExponentialBuilder::default()
            .with_min_delay(self.initial_backoff)
            .with_max_delay(self.max_backoff)
            .with_factor(2.0)
            .with_max_times(self.max_retries as usize);
        let builder = if self.jitter {
            builder.with_jitter()
        } else {
            builder
        };
        builder.build()
    }

    /// Runs `attempt` until it succeeds, fails for good, or the policy ends
    /// the retries. The error returned is the last attempt's, with
    /// `attempts` and `elapsed` filled in.
    pub(crate) async fn run<T, F, Fut>(&self, mut attempt: F) -> Result<T, TransportError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, TransportError>>,
    {
        let start = Instant::now();
        let mut delays = self.backoff();
        let mut attempts = 0u32;
        let mut timeouts = 0u32;
        loop {
            attempts += 1;
            let mut error = match attempt().await {
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            error.attempts = attempts;
            error.elapsed = start.elapsed();
            if !error.is_retryable() {
                return Err(error);
            }
            if error.is_timeout() {
                timeouts += 1;
                if timeouts > 1 {
                    return Err(error);
                }
            }
            let Some(backoff) = delays.next() else {
                return Err(error);
            };
            let wait = error.retry_after.unwrap_or(backoff);
            // Saturating: a server's `Retry-After` is never trusted to fit.
            let resume = start.elapsed().checked_add(wait).unwrap_or(Duration::MAX);
            if resume > self.total_budget {
                error.budget_exhausted = true;
                return Err(error);
            }
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn fast() -> RetryPolicy {
        RetryPolicy::default()
            .with_backoff(Duration::from_millis(1), Duration::from_millis(4))
            .with_jitter(false)
    }

    async fn count(
        policy: &RetryPolicy,
        fail: impl Fn(u32) -> Option<TransportError>,
    ) -> (Result<u32, TransportError>, u32) {
        let n = AtomicU32::new(0);
        let r = policy
            .run(|| {
                let k = n.fetch_add(1, Ordering::SeqCst) + 1;
                let outcome = fail(k).map_or(Ok(k), Err);
                async move { outcome }
            })
            .await;
        (r, n.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn retries_until_success() {
        let (r, n) = count(&fast(), |k| {
            (k < 3).then(|| TransportError::status(503, ""))
        })
        .await;
        assert_eq!((r.unwrap(), n), (3, 3));
    }

    #[tokio::test]
    async fn gives_up_after_max_retries_with_the_count() {
        let (r, n) = count(&fast().with_max_retries(2), |_| {
            Some(TransportError::status(429, "slow down"))
        })
        .await;
        let e = r.unwrap_err();
        assert_eq!((n, e.attempts), (3, 3));
        assert!(!e.budget_exhausted);
    }

    #[tokio::test]
    async fn client_errors_are_not_retried() {
        let (r, n) = count(&fast(), |_| Some(TransportError::status(401, "bad key"))).await;
        assert_eq!((n, r.unwrap_err().attempts), (1, 1));
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_past_the_budget_stops_at_once() {
        let policy = fast().with_total_budget(Duration::from_secs(5));
        let (r, n) = count(&policy, |_| {
            Some(TransportError::status(429, "").with_retry_after(Some(Duration::from_secs(60))))
        })
        .await;
        let e = r.unwrap_err();
        assert_eq!(n, 1);
        assert!(e.budget_exhausted);
    }

    #[tokio::test(start_paused = true)]
    async fn the_largest_retry_after_neither_panics_nor_waits() {
        let policy = fast().with_total_budget(Duration::from_secs(5));
        let (r, n) = count(&policy, |_| {
            Some(TransportError::status(429, "").with_retry_after(Some(Duration::MAX)))
        })
        .await;
        assert_eq!(n, 1);
        assert!(r.unwrap_err().budget_exhausted);
    }

    #[tokio::test]
    async fn a_timeout_is_retried_once_at_most() {
        let (r, n) = count(&fast(), |_| {
            Some(TransportError::new(
                crate::transport::TransportErrorKind::Timeout {
                    after: Duration::from_millis(1),
                },
            ))
        })
        .await;
        assert_eq!((n, r.unwrap_err().attempts), (2, 2));
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_is_waited() {
        let start = Instant::now();
        let (r, _) = count(&fast(), |k| {
            (k == 1).then(|| {
                TransportError::status(429, "").with_retry_after(Some(Duration::from_secs(3)))
            })
        })
        .await;
        assert!(r.is_ok());
        assert!(start.elapsed() >= Duration::from_secs(3));
    }
}
