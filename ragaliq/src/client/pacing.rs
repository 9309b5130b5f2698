//! One pace per run: how many requests may be in flight, and when the next
//! one may start.
//!
//! Two mechanisms, both kept per run (in the run's folder when the run
//! spans processes, like the budget):
//!
//! - **An in-flight limit that adapts** (AIMD). It starts at the configured
//!   `concurrency`. A response saying the provider is overloaded or the
//!   caller is over its limit (429, 503, 529) cuts it to 80% (never below
//!   1), once per episode: further overloads within the cooldown (10 s, or
//!   the server's `Retry-After` if longer) do not cut again. Every request
//!   waits out the `Retry-After` (not only the one that got it). After the
//!   cooldown, each success grows the limit by `1 / limit`: about one more
//!   request in flight per `limit` successes, up to `concurrency`.
//! - **Pacing** from the provider's own numbers. OpenAI's
//!   `x-ratelimit-*` and Anthropic's `anthropic-ratelimit-*` headers, or
//!   `[judge] rpm` / `tpm`, give a window of requests and of tokens that
//!   refills over time: a bucket per window, mirrored here (refilled at the
//!   window's rate, drawn down as requests start, and lowered to what the
//!   provider says remains). A request starts only when both buckets hold
//!   what it needs: one request, and its tokens (its prompt's characters /
//!   4, plus its `max_tokens`, as OpenAI counts them at admission). So a
//!   run spends its burst, then goes at the rate the limits allow, instead
//!   of running into 429s and backing off.
//!
//! Nothing here is needed for correctness: a state file that cannot be used
//! is reported once and the process paces on its own.

use crate::core::sync::lock;
use crate::core::{JudgeRequest, RateLimits, RateWindow};
use crate::run::{self, Slot, Slots};
use crate::transport::limits::{MAX_RATE_RESET, MAX_RETRY_AFTER};
use crate::transport::{TransportError, TransportErrorKind};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};
use tokio::sync::Notify;

/// Each overload episode cuts the in-flight limit to this share.
const CUT: f64 = 0.8;

/// How long after a cut the limit does not grow (or cut again).
const COOLDOWN: Duration = Duration::from_secs(10);

/// The wait after an overload that gave no `Retry-After`.
const DEFAULT_PAUSE: Duration = Duration::from_secs(1);

/// Longest single sleep while waiting to start: the state is looked at
/// again after it (another process may have changed it).
const MAX_NAP: Duration = Duration::from_millis(500);

/// Configured rates, per minute.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Rates {
    pub rpm: Option<f64>,
    pub tpm: Option<f64>,
}

/// A window's budget, mirrored: refilled at `per_sec` up to `capacity`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Bucket {
    capacity: f64,
    level: f64,
    per_sec: f64,
    /// When `level` was last brought up to date (ms since the epoch).
    at: u64,
    /// Where the window's numbers come from, for a message when its wait
    /// is too long (`the provider's x-ratelimit-*-tokens headers`).
    #[serde(default)]
    source: String,
}

impl Bucket {
    fn full(capacity: f64, per_sec: f64, now: u64, source: &str) -> Bucket {
        Bucket {
            capacity,
            level: capacity,
            per_sec,
            at: now,
            source: source.to_owned(),
        }
    }

    fn refill(&mut self, now: u64) {
        let secs = now.saturating_sub(self.at) as f64 / 1000.0;
        self.level = (self.level + secs * self.per_sec).min(self.capacity);
        self.at = now.max(self.at);
    }

    /// Time until `need` is in the bucket (zero when it is).
    fn wait_for(&self, need: f64) -> Duration {
        // More than the whole window never fits: waiting for a full window
        // is the most that helps.
        let need = need.min(self.capacity);
        if self.level >= need || self.per_sec <= 0.0 {
            return Duration::ZERO;
        }
        // A window's numbers come from a server: however slow they say it
        // refills, the wait is a finite duration (never a panic), at most
        // the longest reset a header is taken at.
        Duration::try_from_secs_f64((need - self.level) / self.per_sec)
            .unwrap_or(MAX_RATE_RESET)
            .min(MAX_RATE_RESET)
    }

    /// What the provider says: the window's size and refill rate, and its
    /// remaining budget when that is lower than the mirror's.
    fn sync(&mut self, w: &RateWindow, now: u64) {
        self.refill(now);
        if let Some(limit) = w.limit {
            self.capacity = limit as f64;
        }
        if let Some(rate) = w.per_second() {
            self.per_sec = rate;
        }
        self.level = self.level.min(w.remaining as f64);
    }
}

/// The run's pace, as kept in its state file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct PaceState {
    /// The in-flight limit; `None` until first cut (the configured one).
    limit: Option<f64>,
    /// No growth (nor another cut) before this time (ms since the epoch).
    cooldown_until: u64,
    /// No request starts before this time.
    not_before: u64,
    /// What set `not_before` (`a Retry-After of 30 s`), for the message of
    /// a call that cannot wait that long.
    #[serde(default)]
    pause_why: String,
    requests: Option<Bucket>,
    tokens: Option<Bucket>,
    /// Overload responses seen by the run.
    overloads: u64,
    /// Requests (and their tokens) let through before the provider's first
    /// headers told the window: when those headers arrive, the others of
    /// them still in flight are not counted in the remaining budget they
    /// report, so the mirror takes them off, instead of overshooting the
    /// window by up to the in-flight limit.
    #[serde(default)]
    unmetered: (f64, f64),
}

/// What a request may do now.
enum Admit {
    Go,
    /// Wait this long, for this reason.
    Wait(Duration, String),
}

impl PaceState {
    fn limit(&self, max: usize) -> usize {
        self.limit
            .map_or(max, |l| (l.floor() as usize).clamp(1, max.max(1)))
    }

    fn admit(&mut self, now: u64, tokens: f64, rates: Rates) -> Admit {
        if self.requests.is_none()
            && let Some(rpm) = rates.rpm
        {
            self.requests = Some(Bucket::full(rpm, rpm / 60.0, now, "[judge] rpm"));
        }
        if self.tokens.is_none()
            && let Some(tpm) = rates.tpm
        {
            self.tokens = Some(Bucket::full(tpm, tpm / 60.0, now, "[judge] tpm"));
        }
        if now < self.not_before {
            return Admit::Wait(
                Duration::from_millis(self.not_before - now),
                self.pause_why.clone(),
            );
        }
        let mut wait = (Duration::ZERO, String::new());
        for (bucket, need) in [(&mut self.requests, 1.0), (&mut self.tokens, tokens)] {
            if let Some(b) = bucket {
                b.refill(now);
                let d = b.wait_for(need);
                if d > wait.0 {
                    let why = format!(
                        "{} say the window of {:.0} refills at {:.3e} a second",
                        b.source, b.capacity, b.per_sec
                    );
                    wait = (d, why);
                }
            }
        }
        if !wait.0.is_zero() {
            return Admit::Wait(wait.0, wait.1);
        }
        match &mut self.requests {
            Some(b) => b.level -= 1.0,
            None => self.unmetered.0 += 1.0,
        }
        match &mut self.tokens {
            Some(b) => b.level -= tokens.min(b.capacity),
            None => self.unmetered.1 += tokens,
        }
        Admit::Go
    }

    fn succeeded(&mut self, now: u64, rate: Option<&RateLimits>, max: usize) {
        if let Some(rate) = rate {
            // This answer's own request is in what the headers count.
            let others = (self.unmetered.0 - 1.0).max(0.0);
            let share = if self.unmetered.0 > 0.0 {
                self.unmetered.1 * others / self.unmetered.0
            } else {
                0.0
            };
            let requests = "the provider's rate-limit headers for requests";
            let tokens = "the provider's rate-limit headers for tokens";
            if sync(
                &mut self.requests,
                rate.requests.as_ref(),
                now,
                others,
                requests,
            ) {
                self.unmetered.0 = 0.0;
            }
            if sync(&mut self.tokens, rate.tokens.as_ref(), now, share, tokens) {
                self.unmetered.1 = 0.0;
            }
        }
        if now >= self.cooldown_until
            && let Some(limit) = self.limit
        {
            let grown = limit + 1.0 / limit.max(1.0);
            self.limit = (grown < max as f64).then_some(grown);
        }
    }

    fn overloaded(&mut self, now: u64, pause: Duration, why: String, max: usize) {
        self.overloads += 1;
        let pause_ms = u64::try_from(pause.min(MAX_RETRY_AFTER).as_millis()).unwrap_or(u64::MAX);
        let until = now.saturating_add(pause_ms);
        if until > self.not_before {
            self.not_before = until;
            self.pause_why = why;
        }
        if now >= self.cooldown_until {
            let current = self.limit.unwrap_or(max as f64);
            self.limit = Some((current * CUT).max(1.0));
            self.cooldown_until = now.saturating_add((COOLDOWN.as_millis() as u64).max(pause_ms));
        }
    }
}

/// Brings `bucket` in line with what the provider reports; returns whether
/// this created it (the provider's first word), taking off `in_flight`:
/// what was let through unmetered and is not in the report yet.
fn sync(
    bucket: &mut Option<Bucket>,
    window: Option<&RateWindow>,
    now: u64,
    in_flight: f64,
    source: &str,
) -> bool {
    let Some(w) = window else {
        return false;
    };
    match bucket {
        Some(b) => {
            b.sync(w, now);
            if !b.source.starts_with("the provider") {
                b.source = source.to_owned();
            }
            false
        }
        None => {
            // First word from the provider: a window it reports in full.
            if let (Some(limit), Some(rate)) = (w.limit, w.per_second()) {
                let mut b = Bucket::full(limit as f64, rate, now, source);
                b.level = b.level.min(w.remaining as f64) - in_flight;
                *bucket = Some(b);
                true
            } else {
                false
            }
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Whether a failed attempt says the provider is overloaded, or the
/// caller over its limits.
pub(crate) fn is_overload(e: &TransportError) -> bool {
    matches!(
        e.kind,
        TransportErrorKind::Status {
            status: 429 | 503 | 529,
            ..
        }
    )
}

/// A run's pace for one judge configuration.
pub(crate) struct Pacer {
    max: usize,
    rates: Rates,
    /// The longest single wait a call accepts (the retry budget): a pause
    /// longer than it fails the call, naming its cause.
    longest_wait: Duration,
    shared: Option<PathBuf>,
    local: Mutex<PaceState>,
    warned: AtomicBool,
    in_flight: AtomicUsize,
    freed: Notify,
    slots: Option<Slots>,
}

/// A place in flight; given back when dropped.
pub(crate) struct Permit<'a> {
    pacer: &'a Pacer,
    _slot: Option<Slot>,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.pacer.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.pacer.freed.notify_waiters();
    }
}

impl Pacer {
    /// The pace of the current run for the configuration `key`: kept in
    /// the run's folder when the run spans processes.
    pub(crate) fn for_run(key: &str, max: usize, rates: Rates, longest_wait: Duration) -> Pacer {
        let spans = run::current().spans_processes();
        let shared = spans
            .then(|| run::run_dir().ok())
            .flatten()
            .map(|d| d.join("pace").join(format!("{}.json", run::key_hash(key))));
        Pacer::new(max, rates, shared, Slots::for_run(key, max), longest_wait)
    }

    fn new(
        max: usize,
        rates: Rates,
        shared: Option<PathBuf>,
        slots: Option<Slots>,
        longest_wait: Duration,
    ) -> Pacer {
        Pacer {
            max: max.max(1),
            rates,
            longest_wait,
            shared,
            local: Mutex::new(PaceState::default()),
            warned: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            freed: Notify::new(),
            slots,
        }
    }

    /// Changes the run's state (or this process's, when the run's file
    /// cannot be used).
    async fn update<R: Send + 'static>(
        &self,
        change: impl FnOnce(&mut PaceState) -> R + Clone + Send + 'static,
    ) -> R {
        if let Some(path) = self.shared.clone() {
            let shared = change.clone();
            let result = super::off_runtime(move || {
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                run::state::update(&path, shared).map_err(|e| e.to_string())
            })
            .await;
            match result {
                Ok(r) => return r,
                Err(e) => {
                    if !self.warned.swap(true, Ordering::SeqCst) {
                        eprintln!(
                            "warning: the run's pace cannot be shared ({e}); this process paces its own requests"
                        );
                    }
                }
            }
        }
        change(&mut lock(&self.local))
    }

    /// The in-flight limit now.
    pub(crate) fn limit(&self) -> usize {
        let state = match &self.shared {
            Some(path) => {
                run::state::read::<PaceState>(path).unwrap_or_else(|_| lock(&self.local).clone())
            }
            None => lock(&self.local).clone(),
        };
        state.limit(self.max)
    }

    /// Waits for a place in flight under the run's limit, then until the
    /// pace lets `request` start. A single pause longer than the retry
    /// budget (a `Retry-After` of a day, a window that refills at a
    /// trickle) is not waited out: the call fails at once, naming it.
    pub(crate) async fn enter(&self, request: &JudgeRequest) -> Result<Permit<'_>, Refused> {
        // Counted against a tokens-per-minute limit as the provider would
        // at most: the prompt and the whole reply limit.
        let (input, output) = request.estimated_tokens();
        self.enter_tokens((input + output) as f64).await
    }

    /// [`enter`](Self::enter) for a request of `tokens` (estimated) that
    /// is no judge request: a call of the pipeline under test, when the
    /// judge's limits cover it too.
    pub(crate) async fn enter_tokens(&self, tokens: f64) -> Result<Permit<'_>, Refused> {
        // In this process: under the current limit.
        loop {
            let limit = self.limit();
            let now = self.in_flight.load(Ordering::SeqCst);
            if now < limit
                && self
                    .in_flight
                    .compare_exchange(now, now + 1, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            {
                break;
            }
            let freed = self.freed.notified();
            // A limit raised by another process is seen within a nap.
            let _ = tokio::time::timeout(MAX_NAP, freed).await;
        }
        let mut permit = Permit {
            pacer: self,
            _slot: None,
        };
        // In the run: one of its first `limit` slots.
        if let Some(slots) = &self.slots {
            permit._slot = Some(slots.take(|| self.limit()).await.map_err(Refused::Slots)?);
        }
        let rates = self.rates;
        loop {
            let now = now_ms();
            match self.update(move |s| s.admit(now, tokens, rates)).await {
                Admit::Go => return Ok(permit),
                Admit::Wait(d, why) if d > self.longest_wait => {
                    return Err(Refused::Paused(TransportError::new(
                        TransportErrorKind::Paused {
                            wait_secs: d.as_secs(),
                            why,
                            budget_secs: self.longest_wait.as_secs(),
                        },
                    )));
                }
                Admit::Wait(d, _) => tokio::time::sleep(d.min(MAX_NAP)).await,
            }
        }
    }

    /// A response arrived: what it says about the limits, and a success for
    /// the in-flight limit.
    pub(crate) async fn succeeded(&self, rate: Option<RateLimits>) {
        let (now, max) = (now_ms(), self.max);
        self.update(move |s| s.succeeded(now, rate.as_ref(), max))
            .await;
    }

    /// An attempt failed; an overload cuts the limit and pauses the run.
    pub(crate) async fn failed(&self, e: &TransportError) {
        if !is_overload(e) {
            return;
        }
        let pause = e.retry_after.unwrap_or(DEFAULT_PAUSE);
        let status = match &e.kind {
            TransportErrorKind::Status { status, .. } => *status,
            _ => 0,
        };
        let why = match e.retry_after {
            Some(after) => format!(
                "an HTTP {status} whose Retry-After (or retry-after-ms) header asks for {:.0} s",
                after.as_secs_f64()
            ),
            None => format!("an HTTP {status} with no Retry-After"),
        };
        let (now, max) = (now_ms(), self.max);
        self.update(move |s| s.overloaded(now, pause, why, max))
            .await;
    }
}

/// Why a call may not start.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The run's slot files cannot be locked.
    Slots(std::io::Error),
    /// The pace asks for a longer wait than the retry budget.
    Paused(TransportError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(limit: u64, remaining: u64) -> RateWindow {
        RateWindow {
            limit: Some(limit),
            remaining,
            reset: None,
        }
    }

    #[test]
    fn buckets_pace_requests_after_the_burst() {
        let mut s = PaceState::default();
        let rates = Rates {
            rpm: Some(60.0),
            tpm: None,
        };
        let t0 = 1_000_000;
        for _ in 0..60 {
            assert!(matches!(s.admit(t0, 10.0, rates), Admit::Go));
        }
        // The burst is spent: the next waits a second (60 a minute).
        match s.admit(t0, 10.0, rates) {
            Admit::Wait(d, _) => assert_eq!(d, Duration::from_secs(1)),
            Admit::Go => panic!("over the limit"),
        }
        assert!(matches!(s.admit(t0 + 1000, 10.0, rates), Admit::Go));
    }

    #[test]
    fn tokens_bound_too_and_the_provider_can_only_lower_the_mirror() {
        let mut s = PaceState::default();
        let now = 5_000;
        s.succeeded(
            now,
            Some(&RateLimits {
                requests: None,
                tokens: Some(window(40_000, 1_000)),
            }),
            8,
        );
        let b = s.tokens.clone().unwrap();
        assert_eq!((b.capacity, b.level), (40_000.0, 1_000.0));
        // A request of 2,000 tokens waits for 1,000 more: 1.5 s at 40,000 a minute.
        match s.admit(now, 2_000.0, Rates::default()) {
            Admit::Wait(d, _) => assert_eq!(d, Duration::from_millis(1500)),
            Admit::Go => panic!("not enough tokens"),
        }
        // The provider reporting more than the mirror holds does not raise it.
        s.succeeded(
            now,
            Some(&RateLimits {
                requests: None,
                tokens: Some(window(40_000, 39_000)),
            }),
            8,
        );
        assert_eq!(s.tokens.as_ref().unwrap().level, 1_000.0);
    }

    #[test]
    fn requests_sent_before_the_first_headers_are_taken_off_the_window() {
        let mut s = PaceState::default();
        let now = 5_000;
        // Four requests go out before any header is known.
        for _ in 0..4 {
            assert!(matches!(s.admit(now, 100.0, Rates::default()), Admit::Go));
        }
        // The first answer says 11 of 12 remain: the three others in flight
        // are not counted there yet, so 8 remain in truth.
        s.succeeded(
            now,
            Some(&RateLimits {
                requests: Some(window(12, 11)),
                tokens: Some(window(40_000, 39_900)),
            }),
            8,
        );
        assert_eq!(s.requests.as_ref().unwrap().level, 8.0);
        assert_eq!(s.tokens.as_ref().unwrap().level, 39_600.0);
        // Counted once: later answers only lower the mirror, as before.
        s.succeeded(
            now,
            Some(&RateLimits {
                requests: Some(window(12, 10)),
                tokens: None,
            }),
            8,
        );
        assert_eq!(s.requests.as_ref().unwrap().level, 8.0);
    }

    #[test]
    fn overloads_cut_once_per_episode_then_successes_grow_it_back() {
        let mut s = PaceState::default();
        let t = 1_000_000;
        s.overloaded(t, Duration::from_secs(2), String::new(), 10);
        assert_eq!(s.limit(10), 8);
        assert_eq!(s.not_before, t + 2000, "everyone waits out Retry-After");
        // Within the cooldown: no second cut, no growth.
        s.overloaded(t + 100, Duration::from_secs(1), String::new(), 10);
        assert_eq!(s.limit(10), 8);
        s.succeeded(t + 200, None, 10);
        assert_eq!(s.limit(10), 8);
        // After it: about one more in flight per `limit` successes (each
        // adds 1/limit, as TCP's congestion window grows): 8 are not quite
        // enough, the 9th is.
        let later = t + COOLDOWN.as_millis() as u64;
        for _ in 0..8 {
            s.succeeded(later, None, 10);
        }
        assert_eq!(s.limit(10), 8);
        s.succeeded(later, None, 10);
        assert_eq!(s.limit(10), 9);
        // Never below one, never above the configured limit.
        let mut low = PaceState::default();
        for k in 0..40 {
            low.overloaded(k * 20_000, Duration::ZERO, String::new(), 3);
        }
        assert_eq!(low.limit(3), 1);
        for _ in 0..1000 {
            low.succeeded(10_000_000, None, 3);
        }
        assert_eq!((low.limit(3), low.limit), (3, None));
    }

    #[tokio::test]
    async fn the_in_flight_limit_is_held_in_the_process() {
        let pacer = Pacer::new(2, Rates::default(), None, None, Duration::from_secs(120));
        let request = crate::core::test_request("x", crate::core::ResponseFormat::Text);
        let a = pacer.enter(&request).await.unwrap();
        let _b = pacer.enter(&request).await.unwrap();
        let third = tokio::time::timeout(Duration::from_millis(50), pacer.enter(&request)).await;
        assert!(third.is_err(), "a third waits");
        drop(a);
        let c = tokio::time::timeout(Duration::from_secs(2), pacer.enter(&request)).await;
        assert!(c.is_ok(), "a freed place is taken");
    }
    #[test]
    fn absurd_windows_and_pauses_give_bounded_waits_not_panics() {
        let now = 1_000_000;
        for reset in [
            Duration::MAX,
            Duration::from_secs(u64::MAX / 2),
            MAX_RATE_RESET,
        ] {
            // A window of 10 tokens, all used, refilled over `reset`: the
            // wait for 10 is `reset` itself, which for `Duration::MAX` is
            // 2^64 s as a float, past what a `Duration` holds (before the
            // caps, `Duration::from_secs_f64` panicked there).
            let mut s = PaceState::default();
            s.succeeded(
                now,
                Some(&RateLimits {
                    requests: None,
                    tokens: Some(RateWindow {
                        limit: Some(10),
                        remaining: 0,
                        reset: Some(reset),
                    }),
                }),
                8,
            );
            match s.admit(now, 50.0, Rates::default()) {
                Admit::Wait(d, why) => {
                    assert!(d <= MAX_RATE_RESET, "{d:?}");
                    assert!(why.contains("rate-limit headers for tokens"), "{why}");
                }
                Admit::Go => panic!("the window is empty"),
            }
        }
        // A Retry-After of a year is a day at most, and says what it was.
        let mut p = PaceState::default();
        p.overloaded(
            now,
            Duration::from_secs(365 * 86_400),
            "a Retry-After".into(),
            4,
        );
        match p.admit(now, 1.0, Rates::default()) {
            Admit::Wait(d, why) => {
                assert_eq!(d, MAX_RETRY_AFTER);
                assert_eq!(why, "a Retry-After");
            }
            Admit::Go => panic!("paused"),
        }
        // Saturating, at the end of time.
        p.overloaded(u64::MAX - 5, Duration::from_secs(60), "x".into(), 4);
        assert_eq!(p.not_before, u64::MAX);
    }

    #[tokio::test]
    async fn a_pause_longer_than_the_retry_budget_fails_the_call_at_once() {
        let pacer = Pacer::new(2, Rates::default(), None, None, Duration::from_secs(120));
        let mut e = TransportError::status(429, "slow down");
        e.retry_after = Some(Duration::from_secs(86_400));
        pacer.failed(&e).await;
        let request = crate::core::test_request("x", crate::core::ResponseFormat::Text);
        let started = std::time::Instant::now();
        let refused = tokio::time::timeout(Duration::from_secs(5), pacer.enter(&request))
            .await
            .expect("never hangs");
        match refused {
            Err(Refused::Paused(e)) => {
                let message = e.to_string();
                assert!(message.contains("Retry-After"), "{message}");
                assert!(message.contains("86400 s"), "{message}");
                assert!(message.contains("retry budget of 120 s"), "{message}");
            }
            _ => panic!("the call must fail, not wait a day"),
        }
        assert!(started.elapsed() < Duration::from_secs(2));
        // A pause within the budget is waited out.
        let short = Pacer::new(2, Rates::default(), None, None, Duration::from_secs(120));
        let mut e = TransportError::status(429, "slow down");
        e.retry_after = Some(Duration::from_millis(300));
        short.failed(&e).await;
        assert!(short.enter(&request).await.is_ok());
    }
}
