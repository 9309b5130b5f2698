//! Record and replay judge exchanges as insta snapshots (SPEC §5).
//!
//! A [`Recorder`] sits at the judge's transport seam: every request is
//! fingerprinted, looked up in the test's recording, and only sent to the
//! model when the [`Mode`] allows it and the recording lacks it. Replay hands
//! the recorded reply to the same parsers and scorers as a live call.
//!
//! One recording per test, as one insta snapshot (JSON): for each exchange
//! what was asked (readably), what the judge answered, the fingerprint and
//! the tokens. `#[rag_test]` asserts it with insta in *your* crate, so
//! `cargo insta review` shows new and changed recordings, and
//! `cargo insta test --unreferenced=reject` sees every recording in use.
//!
//! | mode | lookups | live calls | written |
//! | --- | --- | --- | --- |
//! | `replay` | the accepted `.snap` | never: a miss fails, naming the exchange | nothing new |
//! | `auto` | the pending `.snap.new`, else the `.snap` | for misses | new exchanges, as a pending snapshot |
//! | `record` | none | everything | a fresh snapshot |
//! | `live` | none | everything | nothing |

mod recording;
mod snapfile;

pub use recording::{Exchange, FORMAT, Recording, Tokens};

use crate::config::Mode;
use crate::judge::{Fingerprint, JudgeRequest, JudgeResponse};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where a recording lives and how to name it in messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The `.snap` file.
    pub snapshot: PathBuf,
    /// The test, as a person would name it (`rag::refund_policy`).
    pub test: String,
    /// The command that records this test afresh.
    pub record_command: String,
}

impl Location {
    /// A recording at `snapshot`, for code outside `#[rag_test]` (examples,
    /// custom harnesses).
    #[must_use]
    pub fn at(
        snapshot: impl Into<PathBuf>,
        test: impl Into<String>,
        record_command: impl Into<String>,
    ) -> Self {
        Location {
            snapshot: snapshot.into(),
            test: test.into(),
            record_command: record_command.into(),
        }
    }
}

/// A recording that cannot serve a request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordingError {
    /// Replay mode, and the test has no recording at all.
    #[error(
        "no recording for test `{test}` (mode replay): the judge would be asked {exchange}\n  expected at: {path}\n  record it with: {command}\n  then review it with: cargo insta review",
        path = .path.display()
    )]
    Missing {
        /// The test.
        test: String,
        /// The exchange asked for, readably.
        exchange: String,
        /// The recording that does not exist.
        path: PathBuf,
        /// The command that records it.
        command: String,
    },
    /// Replay mode, and the recording does not hold this exchange: a prompt,
    /// the model, a setting or the case's input changed since it was recorded.
    #[error(
        "stale recording for test `{test}`: {exchange} is not in {path}\n  {why}\n  re-record it with: {command}\n  then review it with: cargo insta review",
        path = .path.display()
    )]
    Stale {
        /// The test.
        test: String,
        /// The exchange asked for, readably.
        exchange: String,
        /// What changed, as far as the recording tells.
        why: String,
        /// The recording.
        path: PathBuf,
        /// The command that records it afresh.
        command: String,
    },
    /// A recording file that cannot be read or parsed. It is never
    /// overwritten in replay mode.
    #[error("recording {path} is unreadable: {problem}", path = .path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The reader's or parser's message.
        problem: String,
    },
}

/// Serves and collects one test's judge exchanges according to a [`Mode`].
///
/// ```
/// use ragaliq::Mode;
/// use ragaliq::record::{Location, Recorder};
/// let dir = std::env::temp_dir().join("ragaliq-doc-recorder");
/// let at = Location::at(dir.join("doc__example.snap"), "doc::example", "RAGALIQ_MODE=record cargo test");
/// let recorder = Recorder::new(at, Mode::Auto);
/// assert_eq!(recorder.mode(), Mode::Auto);
/// assert!(recorder.new_exchanges() == 0);
/// ```
pub struct Recorder {
    location: Location,
    mode: Mode,
    /// The file the recorded exchanges were read from, if any.
    source: Option<PathBuf>,
    recorded: HashMap<String, Exchange>,
    load_error: Option<RecordingError>,
    used: Mutex<BTreeMap<String, Exchange>>,
    new: Mutex<usize>,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("snapshot", &self.location.snapshot)
            .field("mode", &self.mode)
            .field("recorded", &self.recorded.len())
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder for the recording at `location`, read now when `mode`
    /// replays (`auto` prefers a pending `.snap.new`).
    #[must_use]
    pub fn new(location: Location, mode: Mode) -> Recorder {
        let candidates: Vec<PathBuf> = match mode {
            Mode::Replay => vec![location.snapshot.clone()],
            Mode::Auto => vec![
                snapfile::pending_path(&location.snapshot),
                location.snapshot.clone(),
            ],
            Mode::Record | Mode::Live => vec![],
        };
        let mut source = None;
        let mut recorded = HashMap::new();
        let mut load_error = None;
        for path in candidates {
            match snapfile::read_contents(&path)
                .and_then(|c| c.map(|c| snapfile::parse(&c, &path)).transpose())
            {
                Ok(None) => continue,
                Ok(Some(recording)) => {
                    recorded = recording
                        .exchanges
                        .into_iter()
                        .map(|e| (e.fingerprint.clone(), e))
                        .collect();
                    source = Some(path);
                }
                Err(e) => load_error = Some(e),
            }
            break;
        }
        Recorder {
            location,
            mode,
            source,
            recorded,
            load_error,
            used: Mutex::new(BTreeMap::new()),
            new: Mutex::new(0),
        }
    }

    /// The mode.
    #[must_use]
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Where the recording lives.
    #[must_use]
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The file the recorded exchanges were read from (`.snap` or `.snap.new`).
    #[must_use]
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// Exchanges answered live and recorded during this run.
    #[must_use]
    pub fn new_exchanges(&self) -> usize {
        *lock(&self.new)
    }

    /// The recorded reply to `request`, `Ok(None)` when the judge should be
    /// asked, or why it must not be.
    pub(crate) fn lookup(
        &self,
        fingerprint: &Fingerprint,
        provider: &str,
        request: &JudgeRequest,
    ) -> Result<Option<JudgeResponse>, RecordingError> {
        if matches!(self.mode, Mode::Live | Mode::Record) {
            return Ok(None);
        }
        if let Some(e) = &self.load_error {
            return Err(e.clone());
        }
        let key = fingerprint.to_string();
        if let Some(exchange) = self.recorded.get(&key) {
            lock(&self.used).insert(key, exchange.clone());
            return Ok(Some(exchange.response()));
        }
        if self.mode == Mode::Auto {
            return Ok(None);
        }
        let exchange = recording::describe(&request.task, &request.subject);
        let Some(path) = &self.source else {
            return Err(RecordingError::Missing {
                test: self.location.test.clone(),
                exchange,
                path: self.location.snapshot.clone(),
                command: self.location.record_command.clone(),
            });
        };
        Err(RecordingError::Stale {
            test: self.location.test.clone(),
            exchange,
            why: self.why_stale(provider, request),
            path: path.clone(),
            command: self.location.record_command.clone(),
        })
    }

    fn why_stale(&self, provider: &str, request: &JudgeRequest) -> String {
        let same_question = self
            .recorded
            .values()
            .find(|e| e.task == request.task && e.asked == request.subject);
        match same_question {
            Some(e) => {
                let mut changes = Vec::new();
                if e.template != request.template_version {
                    changes.push(format!("prompt template {} → {}", e.template, request.template_version));
                }
                if e.provider != provider {
                    changes.push(format!("provider {} → {provider}", e.provider));
                }
                if e.model != request.model {
                    changes.push(format!("model {} → {}", e.model, request.model));
                }
                if changes.is_empty() {
                    "the same question was recorded with other settings (temperature, max tokens or prompt text)".into()
                } else {
                    format!("recorded with another setup: {}", changes.join(", "))
                }
            }
            None => "no recorded exchange asks this: the case's input changed, or the test asks something new".into(),
        }
    }

    /// Keeps a live answer for the recording (not in live mode).
    pub(crate) fn store(
        &self,
        fingerprint: &Fingerprint,
        provider: &str,
        request: &JudgeRequest,
        response: &JudgeResponse,
    ) {
        if self.mode == Mode::Live {
            return;
        }
        let key = fingerprint.to_string();
        let exchange = Exchange::new(provider, key.clone(), request, response);
        lock(&self.used).insert(key, exchange);
        *lock(&self.new) += 1;
    }

    /// The recording to assert after the test body ran, or `None` when
    /// nothing should be asserted.
    ///
    /// After a passing body: the exchanges the test used, exactly (an
    /// exchange recorded but no longer asked makes the snapshot differ, so a
    /// stale recording cannot pass replay). After a failing body: nothing,
    /// unless live calls were paid for, in which case they are kept along
    /// with every exchange already recorded, so nothing paid for is lost.
    #[must_use]
    pub fn finish(&self, body_passed: bool) -> Option<Recording> {
        if self.mode == Mode::Live {
            return None;
        }
        let mut used = lock(&self.used).clone();
        if !body_passed {
            if self.new_exchanges() == 0 {
                return None;
            }
            for (k, e) in &self.recorded {
                used.entry(k.clone()).or_insert_with(|| e.clone());
            }
        }
        if used.is_empty() && self.source.is_none() && !self.location.snapshot.exists() {
            return None;
        }
        Some(Recording {
            ragaliq_recording: FORMAT,
            exchanges: used.into_values().collect(),
        })
    }

    /// Writes [`finish`](Self::finish)'s recording as a pending `.snap.new`
    /// (atomically), for code that runs outside a test harness. Returns the
    /// path written, if anything new was recorded.
    pub fn save_pending(&self, source_file: &str) -> std::io::Result<Option<PathBuf>> {
        self.save_pending_after(true, source_file)
    }

    /// Like [`save_pending`](Self::save_pending), after a run that did or
    /// did not pass (see [`finish`](Self::finish)).
    pub fn save_pending_after(
        &self,
        passed: bool,
        source_file: &str,
    ) -> std::io::Result<Option<PathBuf>> {
        if self.new_exchanges() == 0 {
            return Ok(None);
        }
        let Some(recording) = self.finish(passed) else {
            return Ok(None);
        };
        let path = snapfile::pending_path(&self.location.snapshot);
        snapfile::write_atomic(&path, &recording, source_file)?;
        Ok(Some(path))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
