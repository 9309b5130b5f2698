//! Record and replay judge exchanges as insta snapshots.
//!
//! A [`Recorder`] sits at the judge's transport seam: every request is
//! fingerprinted, looked up in the test's recording, and only sent to the
//! model when the [`Mode`] allows it and the recording lacks it. Replay hands
//! the recorded reply to the same parsers and scorers as a live call.
//!
//! One recording per test (per case, for a suite), as one insta snapshot
//! holding YAML (see [`recording`](self::Recording) for the layout).
//! Recordings go through insta's own snapshot assertion, so
//! `cargo insta review` shows new and changed recordings and
//! `cargo insta test --unreferenced=reject` sees every recording in use.
//!
//! | mode | lookups | live calls | written |
//! | --- | --- | --- | --- |
//! | `replay` | the accepted `.snap` | never: a miss fails, naming the exchange | nothing new |
//! | `auto` | the pending `.snap.new`, else the `.snap` | for misses | new exchanges, as a pending snapshot |
//! | `record` | none | everything | a fresh snapshot |
//! | `live` | none | everything | nothing |
//!
//! # Several writers
//!
//! Under cargo-nextest every test, and every suite trial, is a process of
//! its own, and the trials of one suite case share one recording. A write is
//! therefore a merge: under the recording's file lock, the file is read
//! again, the writing trial's exchanges replace that trial's earlier ones
//! (each exchange notes the trials that use it), everything else is kept,
//! and the result goes through insta (or an atomic rename). Within one run
//! (see [`run`]) exchanges of the same trial written by several
//! processes are all kept. So no exchange is lost, whatever the interleaving,
//! and an exchange no trial asks for any more drops out, which replay then
//! reports as a changed snapshot.
//!
//! A writer drops only exchanges it can tell are its own: ones that were in
//! the recording when it was made, that it no longer asked for, and that no
//! other recorder of the file working beside it in this process (nor, in a
//! run, another process) used. An exchange another writer added meanwhile
//! stays. For a test that is its file's one writer this changes nothing:
//! what it read is what it writes over.
//!
//! `#[rag_test]` and `recorded_judge!()` also refuse a second *binder* of a
//! file (other code, or another test, mapped to the same recording), in a
//! process and across a run's processes, naming both; see
//! [`RecordingError::Shared`].

mod assertion;
mod binding;
mod call;
mod fields;
mod insta_settings;
mod ordered;
mod peers;
mod recording;
mod reviewed;
mod reviewed_entry;
mod snapfile;
mod stale;

pub use assertion::{Site, assert_snapshot, workspace_root};
pub(crate) use binding::{Binder, bind};
pub use call::Call;
pub(crate) use call::describe as describe_call;
pub use fields::Tokens;
pub use ordered::Ordered;
pub use recording::{Exchange, FORMAT, RULE_PROVIDER, Recording, Settings};
pub use reviewed::{
    DroppedReview, dropped_between, mark_blind, remove_verdict, set_verdict, update,
};
pub use reviewed_entry::Reviewed;
pub use snapfile::pending_path;

/// What a request asks, readably (`claim_supported "…"`), for messages.
pub(crate) fn describe_exchange(request: &crate::core::JudgeRequest) -> String {
    recording::describe(&request.task, &request.subject)
}

use crate::core::sync::lock;
use crate::core::{Fingerprint, JsonMode, JudgeRequest, JudgeResponse, Mode};
use crate::run;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

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
        /// What changed, as exactly as the recording tells.
        why: String,
        /// The recording.
        path: PathBuf,
        /// The command that records it afresh.
        command: String,
    },
    /// Replay mode (or `CI` set), and the judge has no recording at all: a
    /// judge made with [`Judge::from_env`](crate::Judge::from_env) or
    /// [`from_config`](crate::Judge::from_config) and used outside
    /// `#[rag_test]` and [`recorded_judge!`](crate::recorded_judge). It never
    /// calls out in this mode.
    #[error(
        "this judge has no recording, and the mode is replay ({why}): it may not call the judge, so {exchange} was not asked\n  in a test, use #[rag_test] or `let judge = ragaliq::recorded_judge!();`, which replay from a recording; record it with: RAGALIQ_MODE=record cargo test --no-fail-fast\n  to call a real provider anyway (a nightly run), set RAGALIQ_MODE=live"
    )]
    Unrecorded {
        /// The exchange asked for, readably.
        exchange: String,
        /// Why the mode is replay ([`Config::mode_reason`](crate::Config::mode_reason)):
        /// `CI is set`, `RAGALIQ_MODE`, `ragaliq.toml's mode`, …
        why: String,
    },
    /// Replay mode, and the pipeline under test asked its model something
    /// its recording does not hold: its prompt, model, parameters or
    /// retrieved passages changed (or it asked more often), or the test
    /// has no recording yet. The judge's exchanges on the pipeline's old
    /// answer are stale too; one recording run records both.
    #[error(
        "the pipeline under test asked its model something {recording} does not hold (mode replay): {call}\n  {why}\n  the judge's exchanges on the pipeline's old answer are stale too; record both again with: {command}\n  then review it with: cargo insta review",
        recording = match .path { Some(p) => format!("the recording of test `{}` ({})", .test, p.display()), None => format!("test `{}` (it has no recording yet)", .test) }
    )]
    PipelineChanged {
        /// The test.
        test: String,
        /// The call asked for, readably.
        call: String,
        /// What changed against the closest recorded call.
        why: String,
        /// The recording read, if there is one (boxed: every
        /// [`Error`](crate::Error) carries this enum's largest variant).
        path: Option<Box<Path>>,
        /// The command that records the test afresh.
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
    /// A second judge binds a recording another binds already (see
    /// [`recorded_judge!`](crate::recorded_judge)): each would drop the
    /// other's answers when it writes the recording.
    #[error(
        "recording {path} is bound by two judges: first by {first}, and again by {second}; each would drop the other's answers when it writes the recording, and in record mode the last to write wins\n  give each judge a recording of its own (`recorded_judge!(name = \"…\")`, `#[rag_test(name = \"…\")]`), or make the judge once and pass it to the code that needs it",
        path = .path.display()
    )]
    Shared {
        /// The recording.
        path: PathBuf,
        /// The binder that holds it: where, in which function and test.
        first: String,
        /// The binder refused.
        second: String,
    },
    /// The recording cannot be locked for merging (see [`run`]
    /// on locks): writing it unlocked could lose another process's exchanges.
    #[error("recording {path} cannot be written: {problem}", path = .path.display())]
    Lock {
        /// The recording.
        path: PathBuf,
        /// Why the lock could not be taken.
        problem: String,
    },
}

/// The trial name of a test that is its own only trial.
const WHOLE: &str = "";

/// Serves and collects one test's judge exchanges according to a [`Mode`].
///
/// ```
/// use ragaliq::Mode;
/// use ragaliq::record::{Location, Recorder};
/// let dir = std::env::temp_dir().join("ragaliq-doc-recorder");
/// let at = Location::at(dir.join("doc__example.snap"), "doc::example", "RAGALIQ_MODE=record cargo test");
/// let recorder = Recorder::new(at, Mode::Auto);
/// assert_eq!(recorder.mode(), Mode::Auto);
/// assert_eq!(recorder.new_exchanges(), 0);
/// ```
pub struct Recorder {
    location: Location,
    mode: Mode,
    /// The file the recorded exchanges were read from, if any.
    source: Option<PathBuf>,
    recorded: Vec<Exchange>,
    index: HashMap<String, usize>,
    load_error: Option<RecordingError>,
    used: Mutex<BTreeMap<String, Used>>,
    /// This recorder among the file's other recorders in this process
    /// (see [`peers`]); `None` in live mode.
    peer: Option<peers::Peer>,
    new: AtomicUsize,
    /// Decisions a rule made with no call that the recording read does not
    /// list, in replay (which writes nothing).
    unlisted: AtomicUsize,
    /// The person's verdicts of the recording read, by key.
    reviewed: HashMap<String, Reviewed>,
    /// Keys two person's verdicts disagree on, with where.
    conflicts: HashMap<String, String>,
    /// Keys whose person's verdict decided something in this process.
    reviewed_used: Mutex<BTreeSet<String>>,
    /// The person's verdicts the last write dropped.
    dropped: Mutex<Vec<DroppedReview>>,
    /// The pipeline's calls of the recording read, and their index by key.
    calls: Vec<Call>,
    call_index: HashMap<String, usize>,
    /// The pipeline's calls this process used, by key.
    calls_used: Mutex<BTreeMap<String, Used<Call>>>,
    /// Whether the pipeline ran to its end, by the trial its calls are
    /// kept under (see [`calls_finished`](Self::calls_finished)).
    calls_done: Mutex<BTreeMap<String, bool>>,
}

/// An exchange (or a pipeline call) this process used, and the trials
/// that used it.
#[derive(Clone)]
struct Used<T = Exchange> {
    exchange: T,
    trials: BTreeSet<String>,
    /// Answered live now: its answer replaces a recorded one.
    fresh: bool,
    /// Replayed, and its answer checked differently from the recording
    /// (the rule changed): the recording takes the new checks.
    rechecked: bool,
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
    /// A recorder for the recording at `location`, read now: the accepted
    /// `.snap` in replay mode; the pending `.snap.new` first, else the
    /// `.snap`, in the other modes (`record` and `live` do not serve from it).
    #[must_use]
    pub fn new(location: Location, mode: Mode) -> Recorder {
        Recorder::made(location, mode, None)
    }

    /// [`new`](Self::new) for the recording `binder` bound (see
    /// [`bind`]): its recorders made again in this process (a loop, a
    /// retry) keep each other's exchanges.
    pub(crate) fn bound(location: Location, mode: Mode, binder: &Binder) -> Recorder {
        Recorder::made(location, mode, Some(binder.key()))
    }

    fn made(location: Location, mode: Mode, binder: Option<String>) -> Recorder {
        let (source, recording, load_error) = match mode {
            Mode::Live => (None, Recording::default(), None),
            // Every writer renames a whole file into place, so a read
            // needs no lock: it sees one version or the next.
            _ => match read_base(&location.snapshot, mode, false) {
                Ok(Some((path, recording))) => (Some(path), recording, None),
                Ok(None) => (None, Recording::default(), None),
                Err(e) => (None, Recording::default(), Some(e)),
            },
        };
        let Recording {
            exchanges: recorded,
            pipeline: calls,
        } = recording;
        let call_index = calls
            .iter()
            .enumerate()
            .map(|(i, c)| (c.key(), i))
            .collect();
        let index = recorded
            .iter()
            .enumerate()
            .map(|(i, e)| (e.fingerprint.clone(), i))
            .collect();
        let (reviewed, conflicts) = index_reviewed(&recorded);
        Recorder {
            mode,
            source,
            recorded,
            index,
            load_error,
            used: Mutex::new(BTreeMap::new()),
            peer: (mode != Mode::Live).then(|| peers::Peer::join(&location.snapshot, binder)),
            new: AtomicUsize::new(0),
            unlisted: AtomicUsize::new(0),
            reviewed,
            conflicts,
            reviewed_used: Mutex::new(BTreeSet::new()),
            dropped: Mutex::new(Vec::new()),
            calls,
            call_index,
            calls_used: Mutex::new(BTreeMap::new()),
            calls_done: Mutex::new(BTreeMap::new()),
            location,
        }
    }

    /// Notes that `trial` used the exchange `key`, for every recorder of
    /// this file in the process.
    fn note_use(&self, key: &str, trial: Option<&str>) {
        if let Some(peer) = &self.peer {
            peer.note(trial.unwrap_or(WHOLE), key);
        }
    }

    /// The person's verdicts the last [`commit`](Self::commit) dropped
    /// (nothing in the recording written judges their key any more), with
    /// why; they were also printed to stderr.
    #[must_use]
    pub fn dropped_reviews(&self) -> Vec<DroppedReview> {
        lock(&self.dropped).clone()
    }

    /// The person's verdict on what `key` names ([`crate::judged`]), if the
    /// recording holds one (in every mode that reads it: `record` too, so a
    /// re-recorded test is still decided by it). Noted as used.
    ///
    /// # Errors
    ///
    /// Two person's verdicts on the same key disagree.
    pub fn reviewed(&self, key: &str) -> Result<Option<Reviewed>, RecordingError> {
        if let Some(problem) = self.conflicts.get(key) {
            return Err(RecordingError::Corrupt {
                path: self
                    .source
                    .clone()
                    .unwrap_or_else(|| self.location.snapshot.clone()),
                problem: problem.clone(),
            });
        }
        let found = self.reviewed.get(key).cloned();
        if found.is_some() {
            lock(&self.reviewed_used).insert(key.to_owned());
        }
        Ok(found)
    }

    /// How many distinct person's verdicts decided something in this
    /// process.
    #[must_use]
    pub fn reviewed_used(&self) -> usize {
        lock(&self.reviewed_used).len()
    }

    /// How many person's verdicts the recording read holds.
    #[must_use]
    pub fn reviewed_held(&self) -> usize {
        self.reviewed.len()
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
        self.new.load(Ordering::SeqCst)
    }

    /// The recorded reply to `request`, `Ok(None)` when the judge should be
    /// asked, or why it must not be.
    pub(crate) fn lookup(
        &self,
        fingerprint: &Fingerprint,
        provider: &str,
        request: &JudgeRequest,
        trial: Option<&str>,
    ) -> Result<Option<JudgeResponse>, RecordingError> {
        if self.mode == Mode::Live {
            return Ok(None);
        }
        // Record mode serves nothing from the recording, but writes it
        // back (keeping its person's verdicts): one that cannot be read
        // cannot be written either, so it is said before any answer is
        // paid for.
        if let Some(e) = &self.load_error {
            return Err(e.clone());
        }
        if self.mode == Mode::Record {
            return Ok(None);
        }
        if let Some(response) = self.lookup_only(fingerprint, trial) {
            return Ok(Some(response));
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
            why: stale::why(provider, request, &self.recorded),
            path: path.clone(),
            command: self.location.record_command.clone(),
        })
    }

    /// The recorded reply to `fingerprint`, if the recording holds it
    /// (marking it used by `trial`).
    pub(crate) fn lookup_only(
        &self,
        fingerprint: &Fingerprint,
        trial: Option<&str>,
    ) -> Option<JudgeResponse> {
        if matches!(self.mode, Mode::Live | Mode::Record) {
            return None;
        }
        let key = fingerprint.to_string();
        let exchange = &self.recorded[*self.index.get(&key)?];
        let mut used = lock(&self.used);
        let entry = used.entry(key).or_insert_with(|| Used {
            exchange: exchange.clone(),
            trials: BTreeSet::new(),
            fresh: false,
            rechecked: false,
        });
        entry.trials.insert(trial.unwrap_or(WHOLE).to_owned());
        drop(used);
        self.note_use(&fingerprint.to_string(), trial);
        Some(exchange.response())
    }

    /// The recorded reply to `fingerprint` (a question asked without token
    /// probabilities) if it was recorded because the server refused them:
    /// what answers the same question asked with them. An exchange asked
    /// without them by choice (`strategy = "word"`) is not one.
    pub(crate) fn lookup_refused(
        &self,
        fingerprint: &Fingerprint,
        trial: Option<&str>,
    ) -> Option<JudgeResponse> {
        let i = *self.index.get(&fingerprint.to_string())?;
        let refused = self.recorded[i]
            .settings
            .as_ref()
            .is_some_and(|s| s.probabilities_refused);
        refused.then(|| self.lookup_only(fingerprint, trial))?
    }

    /// The JSON mode the recording's exchanges were asked in when the
    /// server refused `requested`, if it holds such exchanges.
    pub(crate) fn negotiated(&self, requested: JsonMode) -> Option<JsonMode> {
        let wanted = requested.format("t", &serde_json::Value::Null).label();
        self.recorded.iter().find_map(|e| {
            let s = e.settings.as_ref()?;
            (s.negotiated_from.as_deref() == Some(wanted)).then(|| {
                JsonMode::ALL
                    .into_iter()
                    .find(|m| m.format("t", &serde_json::Value::Null).label() == s.format)
            })?
        })
    }

    /// Keeps a live answer for the recording (not in live mode).
    #[allow(
        clippy::too_many_arguments,
        reason = "each argument is a field of the exchange written; a struct for one caller would only rename them"
    )]
    pub(crate) fn store(
        &self,
        fingerprint: &Fingerprint,
        provider: &str,
        request: &JudgeRequest,
        response: &JudgeResponse,
        requested: JsonMode,
        probabilities_refused: bool,
        trial: Option<&str>,
    ) {
        if self.mode == Mode::Live {
            return;
        }
        let key = fingerprint.to_string();
        let exchange = Exchange::new(
            provider,
            key.clone(),
            request,
            response,
            requested,
            probabilities_refused,
        );
        self.note_use(&key, trial);
        let mut used = lock(&self.used);
        let entry = used.entry(key).or_insert_with(|| Used {
            exchange: exchange.clone(),
            trials: BTreeSet::new(),
            fresh: true,
            rechecked: false,
        });
        entry.exchange = exchange;
        entry.fresh = true;
        entry.trials.insert(trial.unwrap_or(WHOLE).to_owned());
        self.new.fetch_add(1, Ordering::SeqCst);
    }

    /// Keeps a decision a rule made with no call (an exchange made by
    /// [`Exchange::by_rule`]), so that a person can overrule it: where the
    /// recording holds it, it is used as recorded; where it does not, it is
    /// added as a new exchange in `auto` and `record` (a pending recording,
    /// reviewed as any other). In `replay` a recording without it is read
    /// as it is, with nothing written: the rule's decision needs no
    /// recorded answer, and a recording made before rule decisions were
    /// kept must not fail CI. It is counted ([`unlisted`](Self::unlisted))
    /// and said when the recording is committed. Nothing in `live`.
    pub(crate) fn rule_decided(&self, exchange: Exchange, trial: Option<&str>) {
        let key = exchange.fingerprint.clone();
        match self.mode {
            Mode::Live => {}
            Mode::Replay | Mode::Auto if self.index.contains_key(&key) => {
                let recorded = &self.recorded[self.index[&key]];
                let mut used = lock(&self.used);
                let entry = used.entry(key.clone()).or_insert_with(|| Used {
                    exchange: recorded.clone(),
                    trials: BTreeSet::new(),
                    fresh: false,
                    rechecked: false,
                });
                entry.trials.insert(trial.unwrap_or(WHOLE).to_owned());
                drop(used);
                self.note_use(&key, trial);
            }
            Mode::Replay => {
                self.unlisted.fetch_add(1, Ordering::SeqCst);
            }
            Mode::Auto | Mode::Record => {
                self.note_use(&key, trial);
                let mut used = lock(&self.used);
                let entry = used.entry(key).or_insert_with(|| Used {
                    exchange: exchange.clone(),
                    trials: BTreeSet::new(),
                    fresh: true,
                    rechecked: false,
                });
                entry.exchange = exchange;
                entry.fresh = true;
                entry.trials.insert(trial.unwrap_or(WHOLE).to_owned());
                self.new.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    /// Decisions a rule made with no call in this process that the
    /// recording does not list (replay only, which writes nothing: the
    /// decision stands, and committing says so on stderr).
    #[must_use]
    pub fn unlisted(&self) -> usize {
        self.unlisted.load(Ordering::SeqCst)
    }

    /// Whether the recording read, or what this process added to it,
    /// holds an exchange that judged `key` (where a person's verdict on it
    /// can be written).
    #[must_use]
    pub fn judges_key(&self, key: &str) -> bool {
        let judges = |e: &Exchange| e.judged().iter().any(|j| j.key == key);
        self.recorded.iter().any(judges) || lock(&self.used).values().any(|u| judges(&u.exchange))
    }

    /// The recorded answer to the `occurrence`-th asking of the pipeline's
    /// call `fingerprint` in this test, `Ok(None)` when its model should be
    /// asked (and the answer kept with [`store_call`](Self::store_call)), or
    /// why it must not be: in replay, what changed against the closest
    /// recorded call. `describe` says what the call asks, readably, and
    /// `why` what changed against a recorded call (both only for a miss in
    /// replay).
    pub(crate) fn lookup_call(
        &self,
        fingerprint: &str,
        occurrence: u32,
        trial: Option<&str>,
        describe: &dyn Fn() -> String,
        why: &dyn Fn(&[Call]) -> String,
    ) -> Result<Option<Call>, RecordingError> {
        if self.mode == Mode::Live {
            return Ok(None);
        }
        if let Some(e) = &self.load_error {
            return Err(e.clone());
        }
        if self.mode == Mode::Record {
            return Ok(None);
        }
        let key = call::key(fingerprint, occurrence);
        if let Some(&i) = self.call_index.get(&key) {
            let recorded = &self.calls[i];
            let trial = trial.unwrap_or(WHOLE);
            lock(&self.calls_used)
                .entry(key.clone())
                .or_insert_with(|| Used {
                    exchange: recorded.clone(),
                    trials: BTreeSet::new(),
                    fresh: false,
                    rechecked: false,
                })
                .trials
                .insert(trial.to_owned());
            if let Some(peer) = &self.peer {
                peer.note(trial, &key);
            }
            return Ok(Some(recorded.clone()));
        }
        if self.mode == Mode::Auto {
            return Ok(None);
        }
        Err(RecordingError::PipelineChanged {
            test: self.location.test.clone(),
            call: describe(),
            why: why(&self.calls),
            path: self.source.as_deref().map(Box::from),
            command: self.location.record_command.clone(),
        })
    }

    /// Keeps a call the pipeline's model answered live, for the recording
    /// (not in live mode).
    pub(crate) fn store_call(&self, call: Call, trial: Option<&str>) {
        if self.mode == Mode::Live {
            return;
        }
        let key = call.key();
        let trial = trial.unwrap_or(WHOLE);
        if let Some(peer) = &self.peer {
            peer.note(trial, &key);
        }
        let mut used = lock(&self.calls_used);
        let entry = used.entry(key).or_insert_with(|| Used {
            exchange: call.clone(),
            trials: BTreeSet::new(),
            fresh: true,
            rechecked: false,
        });
        entry.exchange = call;
        entry.fresh = true;
        entry.trials.insert(trial.to_owned());
        self.new.fetch_add(1, Ordering::SeqCst);
    }

    /// Says whether the pipeline whose calls are kept under `trial` ran to
    /// its end (`complete`): a write then drops the calls it read at its
    /// start and no longer asked, as a trial's own exchanges are. Without
    /// it, a write only adds calls, unless it is `trial`'s own write.
    pub fn calls_finished(&self, trial: Option<&str>, complete: bool) {
        lock(&self.calls_done).insert(trial.unwrap_or(WHOLE).to_owned(), complete);
    }

    /// The pipeline calls of the recording read at the start.
    #[must_use]
    pub fn recorded_calls(&self) -> &[Call] {
        &self.calls
    }

    /// Merges the pipeline calls this process used into `recording`, for
    /// each trial they were kept under: `trial`'s own complete as the
    /// write says, another's as [`calls_finished`](Self::calls_finished)
    /// said (else only adding).
    fn merge_calls(
        &self,
        recording: &mut Recording,
        trial: &str,
        complete: bool,
        kept: &BTreeMap<String, BTreeSet<String>>,
    ) {
        let used: Vec<Used<Call>> = lock(&self.calls_used).values().cloned().collect();
        let done = lock(&self.calls_done).clone();
        let mut trials: BTreeSet<String> =
            used.iter().flat_map(|u| u.trials.iter().cloned()).collect();
        trials.extend(done.keys().cloned());
        if trials.is_empty() {
            trials.insert(trial.to_owned());
        }
        let known = |key: &str| self.call_index.contains_key(key);
        for t in trials {
            let complete = if t == trial {
                done.get(&t).copied().unwrap_or(complete) && complete
            } else {
                done.get(&t).copied().unwrap_or(false)
            };
            let mine: Vec<Used<Call>> = used
                .iter()
                .filter(|u| u.trials.contains(&t))
                .cloned()
                .collect();
            recording.pipeline =
                merge_items(&recording.pipeline, &mine, &t, complete, kept, &known);
        }
        call::sort(&mut recording.pipeline);
    }

    /// Notes what was made of an exchange's answer (where its evidence was
    /// found, what was set aside), for the recording. A replayed exchange
    /// whose checks differ from the recorded ones takes the new ones, so
    /// the recording shows what the current rules make of it.
    pub(crate) fn checked(&self, fingerprint: &Fingerprint, checks: Vec<crate::core::Check>) {
        if let Some(u) = lock(&self.used).get_mut(&fingerprint.to_string())
            && u.exchange.checks != checks
        {
            u.exchange.checks = checks;
            u.rechecked = !u.fresh;
        }
    }

    /// Whether `trial` (or the whole test, for `None`) paid for a live
    /// answer in this process.
    #[must_use]
    pub fn paid_for(&self, trial: Option<&str>) -> bool {
        let trial = trial.unwrap_or(WHOLE);
        lock(&self.used)
            .values()
            .any(|u| u.fresh && u.trials.contains(trial))
    }

    /// The recording as this process would write it for `trial` (the whole
    /// test for `None`), from what was read at the start: `complete` says
    /// whether the trial ran to its end, so that exchanges it no longer asks
    /// for may go. `None` in live mode, or when there is nothing to record
    /// and no recording exists.
    #[must_use]
    pub fn finish_trial(&self, trial: Option<&str>, complete: bool) -> Option<Recording> {
        if self.mode == Mode::Live {
            return None;
        }
        let base = Recording {
            exchanges: self.recorded.clone(),
            pipeline: self.calls.clone(),
        };
        let recording = self.merge_onto(&base, trial, complete, &BTreeMap::new());
        let exists = self.source.is_some() || self.location.snapshot.exists();
        (exists || !recording.is_empty()).then_some(recording)
    }

    /// [`finish_trial`](Self::finish_trial) for a test that is its own only trial.
    #[must_use]
    pub fn finish(&self, body_passed: bool) -> Option<Recording> {
        self.finish_trial(None, body_passed)
    }

    fn merge_onto(
        &self,
        base: &Recording,
        trial: Option<&str>,
        complete: bool,
        kept_by_run: &BTreeMap<String, BTreeSet<String>>,
    ) -> Recording {
        self.merge_reviewed(base, trial, complete, kept_by_run).0
    }

    /// [`merge_onto`](Self::merge_onto), with the person's verdicts of
    /// `base` carried over to the exchanges that judge the same things, and
    /// those no exchange judges any more.
    fn merge_reviewed(
        &self,
        base: &Recording,
        trial: Option<&str>,
        complete: bool,
        kept_by_run: &BTreeMap<String, BTreeSet<String>>,
    ) -> (Recording, Vec<DroppedReview>) {
        let trial = trial.unwrap_or(WHOLE);
        let used: Vec<Used> = lock(&self.used)
            .values()
            .filter(|u| u.trials.contains(trial))
            .cloned()
            .collect();
        let known = |fingerprint: &str| self.index.contains_key(fingerprint);
        let mut recording = merge(base, &used, trial, complete, kept_by_run, &known);
        self.merge_calls(&mut recording, trial, complete, kept_by_run);
        let dropped = reviewed::carry_over(base, &mut recording);
        (recording, dropped)
    }

    /// Merges this process's exchanges for `trial` into the recording on
    /// disk, under the recording's lock, and hands the result to `sink`
    /// (insta's assertion, or a pending-file writer) while the lock is held.
    /// `None` in live mode, or when there is nothing to record and no
    /// recording exists.
    pub fn commit<R>(
        &self,
        trial: Option<&str>,
        complete: bool,
        sink: impl FnOnce(&Recording) -> R,
    ) -> Result<Option<R>, RecordingError> {
        if self.mode == Mode::Live {
            return Ok(None);
        }
        let snapshot = &self.location.snapshot;
        let _guard = run::lock::exclusive(snapshot).map_err(|e| RecordingError::Lock {
            path: snapshot.clone(),
            problem: e.to_string(),
        })?;
        let (base, existed) = match read_base(snapshot, self.mode, true)? {
            Some((_, recording)) => (recording, true),
            None => (Recording::default(), snapshot.exists()),
        };
        // Under the lock every writer of this recording takes: a temporary
        // file of it found now was left by a writer that died.
        run::remove_left_behind(snapshot);
        run::remove_left_behind(&pending_path(snapshot));
        // Kept whatever this trial asked: what other processes of the run
        // and this recorder's peers in this process used.
        let mut kept = self.run_state(trial)?;
        if let Some(peer) = &self.peer {
            for (t, fingerprints) in peer.kept() {
                kept.entry(t).or_default().extend(fingerprints);
            }
        }
        let (recording, dropped) = self.merge_reviewed(&base, trial, complete, &kept);
        say_unlisted(&self.location.snapshot, self.unlisted());
        if recording.is_empty() && !existed {
            return Ok(None);
        }
        say_dropped(&self.location.snapshot, &dropped);
        *lock(&self.dropped) = dropped;
        Ok(Some(sink(&recording)))
    }

    /// In a run that spans processes: which exchanges each trial used in
    /// this run, including this process's (kept in the run's folder).
    fn run_state(
        &self,
        trial: Option<&str>,
    ) -> Result<BTreeMap<String, BTreeSet<String>>, RecordingError> {
        if !run::current().spans_processes() {
            return Ok(BTreeMap::new());
        }
        let snapshot = &self.location.snapshot;
        let unusable = |problem: String| RecordingError::Lock {
            path: snapshot.clone(),
            problem,
        };
        let dir = run::run_dir().map_err(|e| unusable(e.to_string()))?;
        let path = dir
            .join("recordings")
            .join(format!("{}.json", state_name(snapshot)));
        let trial = trial.unwrap_or(WHOLE);
        let mine: Vec<String> = lock(&self.used)
            .iter()
            .filter(|(_, u)| u.trials.contains(trial))
            .map(|(k, _)| k.clone())
            .collect();
        // The pipeline's calls, under the trials they were kept under.
        let calls: Vec<(String, String)> = lock(&self.calls_used)
            .iter()
            .flat_map(|(k, u)| u.trials.iter().map(move |t| (t.clone(), k.clone())))
            .collect();
        run::state::update(&path, |state: &mut BTreeMap<String, BTreeSet<String>>| {
            state.entry(trial.to_owned()).or_default().extend(mine);
            for (t, key) in calls {
                state.entry(t).or_default().insert(key);
            }
            state.clone()
        })
        .map_err(|e| unusable(e.to_string()))
    }

    /// Writes the recording as a pending `.snap.new` (atomically, merged
    /// with what is on disk), for code that runs outside a test harness.
    /// Returns the path written, or `None` when nothing differs from the
    /// accepted `.snap` (a stale pending file is then removed, as insta does).
    pub fn save_pending(&self, source_file: &str) -> std::io::Result<Option<PathBuf>> {
        self.save_pending_after(true, source_file)
    }

    /// Like [`save_pending`](Self::save_pending), after a run that did or
    /// did not complete (see [`finish_trial`](Self::finish_trial)).
    pub fn save_pending_after(
        &self,
        passed: bool,
        source_file: &str,
    ) -> std::io::Result<Option<PathBuf>> {
        self.save_pending_for(None, passed, source_file)
    }

    /// Like [`save_pending`](Self::save_pending), for one trial of a
    /// recording that several trials share (see
    /// [`Judge::for_trial`](crate::Judge::for_trial)): that trial's
    /// exchanges replace its earlier ones; other trials' stay.
    pub fn save_pending_for(
        &self,
        trial: Option<&str>,
        passed: bool,
        source_file: &str,
    ) -> std::io::Result<Option<PathBuf>> {
        if self.mode == Mode::Live || (self.mode != Mode::Record && self.new_exchanges() == 0) {
            return Ok(None);
        }
        let snapshot = self.location.snapshot.clone();
        let description = self.description();
        let written = self
            .commit(
                trial,
                passed,
                |recording| -> std::io::Result<Option<PathBuf>> {
                    let contents = recording.to_yaml();
                    let pending = snapfile::pending_path(&snapshot);
                    let accepted = snapfile::read_contents(&snapshot).ok().flatten();
                    if accepted.as_deref().map(str::trim_end) == Some(contents.trim_end()) {
                        let _ = std::fs::remove_file(&pending);
                        return Ok(None);
                    }
                    let text = snapfile::snap_text(&contents, source_file, &description, None);
                    run::write_atomic(&pending, text.as_bytes())?;
                    Ok(Some(pending))
                },
            )
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        written.transpose().map(Option::flatten)
    }

    /// Where this test's exchanges are recorded, for failure messages:
    /// `recording: tests/snapshots/rag__refund.snap (mode replay)`.
    #[must_use]
    pub(crate) fn where_line(&self) -> String {
        if self.mode == Mode::Live {
            return "recording: none (mode live)".to_owned();
        }
        let path = self.source().unwrap_or(&self.location.snapshot);
        format!("recording: {} (mode {})", path.display(), self.mode.name())
    }

    /// The description reviewers see in `cargo insta review`.
    #[must_use]
    pub fn description(&self) -> String {
        format!(
            "ragaliq recording of `{}`: what the judge was asked and what it answered, replayed in CI. Check each answer before accepting.",
            self.location.test
        )
    }
}

impl Recording {
    /// Reads the recording in the `.snap` (or `.snap.new`) file at `path`, in
    /// either format; `None` when there is no file.
    pub fn read(path: &Path) -> Result<Option<Recording>, RecordingError> {
        snapfile::load(path)
    }
}

/// The format of the recording at `path` (1 or 2), `None` when the file is
/// not a ragaliq recording.
#[must_use]
pub fn format_of(path: &Path) -> Option<u32> {
    let text = snapfile::read_contents(path).ok().flatten()?;
    let text = text.trim_start();
    if text.starts_with('{') && text.contains("\"ragaliq_recording\"") {
        Some(1)
    } else if text.starts_with("ragaliq_recording:") {
        text.lines().next()?.split(':').nth(1)?.trim().parse().ok()
    } else {
        None
    }
}

/// Rewrites the format-1 recording at `path` in format 2, keeping insta's
/// header and every exchange (fingerprints included). Returns whether the
/// file was changed; a format-2 file is left alone.
pub fn migrate(path: &Path) -> Result<bool, RecordingError> {
    if format_of(path) != Some(1) {
        return Ok(false);
    }
    let corrupt = |problem: String| RecordingError::Corrupt {
        path: path.to_owned(),
        problem,
    };
    // Read, convert and write under the recording's lock: a test writing it
    // meanwhile must not be overwritten with the older version.
    let _guard = run::lock::exclusive(path).map_err(|e| RecordingError::Lock {
        path: path.to_owned(),
        problem: e.to_string(),
    })?;
    let raw = std::fs::read_to_string(path).map_err(|e| corrupt(e.to_string()))?;
    let Some(mut recording) = snapfile::load(path)? else {
        return Ok(false);
    };
    recording.sort();
    let text = snapfile::rewritten(&raw, &recording.to_yaml());
    run::write_atomic(path, text.as_bytes()).map_err(|e| corrupt(e.to_string()))?;
    Ok(true)
}

/// The recording file to build on: the accepted `.snap` in replay mode,
/// else the pending `.snap.new` when there is one.
///
/// A pending file that cannot be read (a hand edit with a YAML typo, a
/// writer stopped mid-write by an older ragaliq or by insta, a disk that
/// filled up) holds answers that were paid for: it is reported once, and
/// the accepted `.snap` is used, so the missing exchanges are asked again.
/// When `set_aside` (the caller holds the recording's lock and is about to
/// write the pending file anew), the unreadable file is first renamed to
/// `<name>.snap.new.unreadable-<unix time>` beside it, so the new write
/// never overwrites it, and the warning says where it went. An accepted
/// `.snap` that cannot be read stays an error: it is what a person
/// reviewed.
fn read_base(
    snapshot: &Path,
    mode: Mode,
    set_aside: bool,
) -> Result<Option<(PathBuf, Recording)>, RecordingError> {
    if mode != Mode::Replay {
        let pending = snapfile::pending_path(snapshot);
        match snapfile::load(&pending) {
            Ok(Some(recording)) => return Ok(Some((pending, recording))),
            Ok(None) => {}
            Err(e) => {
                let moved = if set_aside {
                    Some(move_aside(&pending).map_err(|problem| RecordingError::Corrupt {
                        path: pending.clone(),
                        problem: format!(
                            "it cannot be read ({e}) nor moved aside ({problem}); nothing was overwritten: fix or move it yourself"
                        ),
                    })?)
                } else {
                    None
                };
                warn_lost_pending(&e, snapshot, moved.as_deref());
            }
        }
    }
    Ok(snapfile::load(snapshot)?.map(|r| (snapshot.to_path_buf(), r)))
}

/// Renames an unreadable pending recording to
/// `<name>.unreadable-<unix time>` (a counter added if that is taken);
/// returns where it went.
fn move_aside(pending: &Path) -> Result<PathBuf, String> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = pending
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 0..100 {
        let suffix = if n == 0 {
            format!("{secs}")
        } else {
            format!("{secs}-{n}")
        };
        let aside = pending.with_file_name(format!("{name}.unreadable-{suffix}"));
        if aside.exists() {
            continue;
        }
        return std::fs::rename(pending, &aside)
            .map(|()| aside)
            .map_err(|e| e.to_string());
    }
    Err("no free name beside it".into())
}

/// Says once per file and process that an unreadable pending recording is
/// set aside, and where it went when it was moved.
fn warn_lost_pending(error: &RecordingError, snapshot: &Path, moved: Option<&Path>) {
    static WARNED: std::sync::OnceLock<Mutex<BTreeSet<String>>> = std::sync::OnceLock::new();
    let key = format!("{error}{moved:?}");
    let first = lock(WARNED.get_or_init(Mutex::default)).insert(key);
    if first {
        let instead = if snapshot.exists() {
            format!(
                "the accepted recording {} is used instead, what it lacks is asked again",
                snapshot.display()
            )
        } else {
            "there is no accepted recording, so its exchanges are asked again".to_owned()
        };
        let kept = match moved {
            Some(path) => format!(
                "; it was moved to {} (its answers were paid for: copy them back if you need them), and the pending file is written anew",
                path.display()
            ),
            None => ", and it is moved aside before the pending file is written anew".to_owned(),
        };
        eprintln!("warning: {error}\n  it is set aside as lost pending work: {instead}{kept}");
    }
}

/// The person's verdicts of `exchanges` by key, and the keys two of them
/// disagree on (with a message saying where).
fn index_reviewed(exchanges: &[Exchange]) -> (HashMap<String, Reviewed>, HashMap<String, String>) {
    let mut index: HashMap<String, (usize, Reviewed)> = HashMap::new();
    let mut conflicts = HashMap::new();
    for (n, e) in exchanges.iter().enumerate() {
        for r in &e.reviewed {
            match index.get(&r.key) {
                Some((first, other)) if other.verdict != r.verdict => {
                    conflicts.insert(
                        r.key.clone(),
                        format!(
                            "two verdicts given by people on key {} disagree: `{}` (exchange {}) and `{}` (exchange {}); keep one",
                            r.key,
                            other.verdict,
                            first + 1,
                            r.verdict,
                            n + 1
                        ),
                    );
                }
                Some(_) => {}
                None => {
                    index.insert(r.key.clone(), (n, r.clone()));
                }
            }
        }
    }
    (
        index.into_iter().map(|(k, (_, r))| (k, r)).collect(),
        conflicts,
    )
}

/// Says which person's verdicts a recording being written no longer holds,
/// and why: never dropped silently.
fn say_dropped(snapshot: &Path, dropped: &[DroppedReview]) {
    if dropped.is_empty() {
        return;
    }
    let mut text = format!(
        "ragaliq: {} in {} no longer {} and {} dropped from the recording written:",
        if dropped.len() == 1 {
            "1 verdict given by a person".to_owned()
        } else {
            format!("{} verdicts given by a person", dropped.len())
        },
        snapshot.display(),
        if dropped.len() == 1 {
            "applies"
        } else {
            "apply"
        },
        if dropped.len() == 1 { "was" } else { "were" },
    );
    for d in dropped {
        text.push_str(&format!("\n  {d}"));
    }
    text.push_str("\n  review the new recording's verdicts with: cargo ragaliq review\n");
    // Outside the test harness's capture: shown even for a test that passes.
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Says, once per recording and process, that rules decided answers the
/// recording (read in replay) does not list, so no person can overrule
/// them there yet, and what lists them.
fn say_unlisted(snapshot: &Path, unlisted: usize) {
    static SAID: std::sync::OnceLock<Mutex<BTreeSet<PathBuf>>> = std::sync::OnceLock::new();
    if unlisted == 0 || !lock(SAID.get_or_init(Mutex::default)).insert(snapshot.to_path_buf()) {
        return;
    }
    let text = format!(
        "ragaliq: the found rule decided {} with no call that {} does not list (it was recorded before such decisions were kept); {} as decided, but no person can overrule {} there until it is listed: run the tests once without CI (mode auto) and accept the recording (cargo insta review)\n",
        if unlisted == 1 {
            "1 answer".to_owned()
        } else {
            format!("{unlisted} answers")
        },
        snapshot.display(),
        if unlisted == 1 {
            "it counts"
        } else {
            "they count"
        },
        if unlisted == 1 { "it" } else { "them" },
    );
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// The name of a recording's state file in the run's folder: its file name
/// and a hash of its canonical path (two suites' `x.snap` stay apart).
fn state_name(snapshot: &Path) -> String {
    run::lock::lock_file(snapshot)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `base` with `trial`'s exchanges replaced by `used` (when the trial ran to
/// its end) or joined by them (when it did not).
///
/// A writer drops only what it can tell is its own and no longer asked
/// for: an exchange of `trial` goes only when the writer read it at its
/// start (`known`: it was in the recording this recorder was made with, so
/// it would have served the question) and nobody else used it (`kept`: the
/// exchanges this run's other processes and this recorder's peers in this
/// process used, by trial: see [`peers`]). An exchange another writer added since
/// this one read the file stays. A test that is the file's one writer
/// reads at its start what it writes over, so its recording comes out as
/// before: what it used, nothing else.
fn merge(
    base: &Recording,
    used: &[Used],
    trial: &str,
    complete: bool,
    kept: &BTreeMap<String, BTreeSet<String>>,
    known: &dyn Fn(&str) -> bool,
) -> Recording {
    let mut recording = Recording {
        exchanges: merge_items(&base.exchanges, used, trial, complete, kept, known),
        pipeline: base.pipeline.clone(),
    };
    recording.sort();
    recording
}

/// What [`merge`] needs of an exchange or a pipeline call: its key, and
/// the trials that use it.
trait Item: Clone {
    fn key(&self) -> String;
    fn used_by_mut(&mut self) -> &mut BTreeSet<String>;
    fn used_by(&self) -> &BTreeSet<String>;
    /// A replayed item whose answer was read differently: takes the new
    /// reading from `now`.
    fn recheck(&mut self, _now: &Self) {}
}

impl Item for Exchange {
    fn key(&self) -> String {
        self.fingerprint.clone()
    }
    fn used_by_mut(&mut self) -> &mut BTreeSet<String> {
        &mut self.used_by
    }
    fn used_by(&self) -> &BTreeSet<String> {
        &self.used_by
    }
    fn recheck(&mut self, now: &Self) {
        self.checks = now.checks.clone();
    }
}

impl Item for Call {
    fn key(&self) -> String {
        Call::key(self)
    }
    fn used_by_mut(&mut self) -> &mut BTreeSet<String> {
        &mut self.used_by
    }
    fn used_by(&self) -> &BTreeSet<String> {
        &self.used_by
    }
}

/// `base` with `trial`'s items replaced by `used` (complete) or joined by
/// them (not), by the rule [`merge`] describes.
fn merge_items<T: Item>(
    base: &[T],
    used: &[Used<T>],
    trial: &str,
    complete: bool,
    kept: &BTreeMap<String, BTreeSet<String>>,
    known: &dyn Fn(&str) -> bool,
) -> Vec<T> {
    let kept = kept.get(trial);
    let tags = |e: &T| -> BTreeSet<String> {
        if e.used_by().is_empty() {
            BTreeSet::from([WHOLE.to_owned()])
        } else {
            e.used_by().clone()
        }
    };
    let mut out: BTreeMap<String, (T, BTreeSet<String>)> = BTreeMap::new();
    for e in base {
        let key = e.key();
        let mut t = tags(e);
        if complete && known(&key) && !kept.is_some_and(|k| k.contains(&key)) {
            t.remove(trial);
        }
        if !t.is_empty() {
            out.insert(key, (e.clone(), t));
        }
    }
    for u in used {
        let key = u.exchange.key();
        let entry = out
            .entry(key)
            .or_insert_with(|| (u.exchange.clone(), BTreeSet::new()));
        if u.fresh {
            // Asked afresh (record mode, or new): the new answer wins.
            entry.0 = u.exchange.clone();
        } else if u.rechecked {
            entry.0.recheck(&u.exchange);
        }
        entry.1.insert(trial.to_owned());
    }
    out.into_values()
        .map(|(mut e, t)| {
            *e.used_by_mut() = t.into_iter().filter(|t| t != WHOLE).collect();
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{ResponseFormat, test_request};

    fn exchange(fp: char, used_by: &[&str]) -> Exchange {
        let req = test_request("m", ResponseFormat::JsonObject);
        let mut e = Exchange::new(
            "p",
            fp.to_string().repeat(64),
            &req,
            &JudgeResponse::text(format!("{{\"n\":\"{fp}\"}}")),
            JsonMode::Object,
            false,
        );
        e.used_by = used_by.iter().map(|s| s.to_string()).collect();
        e
    }

    fn used(e: Exchange, fresh: bool) -> Used {
        Used {
            exchange: e,
            trials: BTreeSet::new(),
            fresh,
            rechecked: false,
        }
    }

    fn fps(r: &Recording) -> Vec<(char, Vec<String>)> {
        r.exchanges
            .iter()
            .map(|e| {
                (
                    e.fingerprint.chars().next().unwrap(),
                    e.used_by.iter().cloned().collect(),
                )
            })
            .collect()
    }

    #[test]
    fn a_trial_replaces_only_its_own_exchanges() {
        let base = Recording {
            exchanges: vec![
                exchange('a', &["faithfulness", "hallucination"]),
                exchange('b', &["relevance"]),
                exchange('c', &["faithfulness"]),
            ],
            pipeline: Vec::new(),
        };
        // faithfulness now asks a and d (c is obsolete).
        let r = merge(
            &base,
            &[
                used(exchange('a', &[]), false),
                used(exchange('d', &[]), true),
            ],
            "faithfulness",
            true,
            &BTreeMap::new(),
            &|_| true,
        );
        let got = fps(&r);
        assert!(
            got.contains(&('a', vec!["faithfulness".into(), "hallucination".into()])),
            "{got:?}"
        );
        assert!(got.contains(&('b', vec!["relevance".into()])));
        assert!(got.contains(&('d', vec!["faithfulness".into()])));
        assert!(!got.iter().any(|(f, _)| *f == 'c'), "{got:?}");
    }

    #[test]
    fn an_incomplete_trial_only_adds() {
        let base = Recording {
            exchanges: vec![exchange('c', &[])],
            pipeline: Vec::new(),
        };
        let r = merge(
            &base,
            &[used(exchange('d', &[]), true)],
            WHOLE,
            false,
            &BTreeMap::new(),
            &|_| true,
        );
        assert_eq!(r.exchanges.len(), 2);
        let r = merge(
            &base,
            &[used(exchange('d', &[]), true)],
            WHOLE,
            true,
            &BTreeMap::new(),
            &|_| true,
        );
        assert_eq!(
            r.exchanges.len(),
            1,
            "a complete test keeps only what it used"
        );
    }

    #[test]
    fn exchanges_another_process_of_the_run_used_stay() {
        let base = Recording {
            exchanges: vec![exchange('a', &[]), exchange('b', &[])],
            pipeline: Vec::new(),
        };
        let kept = BTreeMap::from([(WHOLE.to_owned(), BTreeSet::from(["a".repeat(64)]))]);
        let r = merge(
            &base,
            &[used(exchange('c', &[]), true)],
            WHOLE,
            true,
            &kept,
            &|_| true,
        );
        let got: Vec<char> = fps(&r).into_iter().map(|(f, _)| f).collect();
        assert_eq!(got.len(), 2);
        assert!(got.contains(&'a') && got.contains(&'c'), "{got:?}");
    }

    #[test]
    fn exchanges_written_after_this_writer_read_the_file_stay() {
        // The writer read `a` at its start; `b` was added by another writer
        // of the file since. A complete write that asks only `c` drops `a`
        // (its own, no longer asked) and keeps `b` (not its to drop).
        let base = Recording {
            exchanges: vec![exchange('a', &[]), exchange('b', &[])],
            pipeline: Vec::new(),
        };
        let read_at_start = "a".repeat(64);
        let r = merge(
            &base,
            &[used(exchange('c', &[]), true)],
            WHOLE,
            true,
            &BTreeMap::new(),
            &|fp| fp == read_at_start,
        );
        let got: Vec<char> = fps(&r).into_iter().map(|(f, _)| f).collect();
        assert_eq!(got, vec!['b', 'c'], "{got:?}");
    }

    #[test]
    fn a_rules_decision_is_used_where_recorded_added_in_auto_and_only_counted_in_replay() {
        let dir = std::env::temp_dir().join(format!("ragaliq-rule-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let at = || Location::at(dir.join("t.snap"), "t", "record it");
        let subject =
            serde_json::json!({"query": "q", "expected": "30 days", "response": "30 days."});
        let decision = || {
            Exchange::by_rule(
                "answer_found",
                "found rule",
                "found_rule@2",
                &subject,
                &serde_json::json!({"decided": "correct, with no call"}),
            )
        };
        // The same decision has the same fingerprint, and the direct
        // question's key.
        assert_eq!(decision().fingerprint, decision().fingerprint);
        assert_eq!(decision().fingerprint.len(), 64);
        assert!(decision().is_rule());
        assert_eq!(
            decision().judged()[0].key,
            crate::core::judged::items("answer_correct", &subject)[0].key
        );
        // Replay, no recording: nothing written, counted as unlisted.
        let replay = Recorder::new(at(), Mode::Replay);
        replay.rule_decided(decision(), None);
        assert_eq!((replay.unlisted(), replay.new_exchanges()), (1, 0));
        assert!(replay.finish(true).is_none(), "replay wrote a recording");
        // Auto: added, as a new exchange.
        let auto = Recorder::new(at(), Mode::Auto);
        auto.rule_decided(decision(), None);
        assert_eq!((auto.unlisted(), auto.new_exchanges()), (0, 1));
        let written = auto.finish(true).unwrap();
        assert_eq!(written.exchanges, vec![decision()]);
        std::fs::write(
            dir.join("t.snap"),
            snapfile::snap_text(&written.to_yaml(), "t.rs", "t", None),
        )
        .unwrap();
        // Recorded: used as it is, in replay and auto alike.
        for mode in [Mode::Replay, Mode::Auto] {
            let r = Recorder::new(at(), mode);
            r.rule_decided(decision(), None);
            assert_eq!((r.unlisted(), r.new_exchanges()), (0, 0), "{mode:?}");
            assert!(r.judges_key(&decision().judged()[0].key));
            assert_eq!(r.finish(true).unwrap(), written, "{mode:?}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
