//! A *session*: one test's (or one suite case's) way to ask the judge.
//!
//! [`Session::ask`] is the one path every question takes:
//!
//! ```text
//! task ── request ──► recording ──► memo ──► budget ──► limit ──► retry ──► timeout ──► transport
//!                      (session)    └──────────────── client ─────────────────┘
//! ```
//!
//! The session builds the task's request, looks it up in its recording (also
//! in the JSON mode a recording negotiated), otherwise has the client answer
//! it (memo or live call) and keeps the live answer for the recording; a
//! refused response format steps down and asks again; a cut-off reply
//! becomes a truncation error. The reply is read by the task's own parser,
//! so the caller gets typed answers. Usage is counted per evaluation (a
//! [`Tally`]) and per session, adding up to the sessions it derives from.

use crate::client::{CallError, Client};
use crate::core::judged::{self, Person};
use crate::core::sync::lock;
use crate::core::{Fingerprint, JsonMode, JudgeResponse, Usage};
use crate::error::{Error, Result};
use crate::record::Recorder;
use crate::tasks::{Ask, Asking, Question};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A client, the settings requests are written with, and optionally a
/// recording with the trial that uses it. Cheap to clone: clones share
/// their usage.
#[derive(Clone)]
pub(crate) struct Session {
    client: Arc<Client>,
    asking: Arc<Asking>,
    recorder: Option<Arc<Recorder>>,
    /// The configured mode, for a session with no recorder: in replay it
    /// refuses to call out (`None` for a judge built in code, whose caller
    /// chose its transport).
    mode: Option<(crate::core::Mode, Arc<str>)>,
    usage: Arc<UsageNode>,
    trial: Option<String>,
    /// Exchanges already answered for this recording (by any trial): a
    /// second use is counted as shared, not as another replay or call.
    served: Arc<Mutex<HashSet<Fingerprint>>>,
}

/// Calls and tokens one evaluation caused, and whether any of its
/// questions showed the judge the conversation before the turn.
#[derive(Default)]
pub(crate) struct Tally {
    usage: Mutex<Usage>,
    showed_history: AtomicBool,
}

impl Tally {
    fn add(&self, usage: Usage) {
        *lock(&self.usage) += usage;
    }

    /// What the evaluation spent so far.
    pub(crate) fn total(&self) -> Usage {
        *lock(&self.usage)
    }

    /// Whether a question put so far (asked, replayed, or looked up for a
    /// person's verdict) started with the earlier turns.
    pub(crate) fn showed_history(&self) -> bool {
        self.showed_history.load(Ordering::SeqCst)
    }
}

/// Usage of a session and the sessions derived from it: a derived session
/// adds to its parent too, so a suite's judge totals its cases.
#[derive(Default)]
struct UsageNode {
    usage: Mutex<Usage>,
    skipped: AtomicU64,
    parent: Option<Arc<UsageNode>>,
}

impl UsageNode {
    fn add(&self, usage: Usage) {
        *lock(&self.usage) += usage;
        if let Some(p) = &self.parent {
            p.add(usage);
        }
    }

    fn skip(&self) {
        self.skipped.fetch_add(1, Ordering::SeqCst);
        if let Some(p) = &self.parent {
            p.skip();
        }
    }
}

impl Session {
    /// A session over `client` with no recording.
    pub(crate) fn new(client: Arc<Client>, asking: Arc<Asking>) -> Session {
        Session {
            client,
            asking,
            recorder: None,
            mode: None,
            usage: Arc::default(),
            trial: None,
            served: Arc::default(),
        }
    }

    /// The session of a configured judge: in replay mode, without a
    /// recorder, it refuses to call out (`why` says why the mode is
    /// replay).
    pub(crate) fn with_mode(mut self, mode: crate::core::Mode, why: String) -> Session {
        self.mode = Some((mode, why.into()));
        self
    }

    /// A session that serves and records through `recorder`; its usage adds
    /// to this one's.
    pub(crate) fn with_recorder(&self, recorder: Arc<Recorder>) -> Session {
        self.derive(Some(recorder), self.trial.clone(), Arc::default())
    }

    /// A session whose exchanges are marked in the recording as used by `trial`.
    pub(crate) fn for_trial(&self, trial: String) -> Session {
        self.derive(self.recorder.clone(), Some(trial), self.served.clone())
    }

    /// `other`'s client and settings (another judge's) over this session's
    /// recording and trial: how a judge of a cascade asks, so that its
    /// exchanges are kept in the same recording. Its usage adds to this
    /// session's.
    pub(crate) fn beside(&self, other: &Session) -> Session {
        Session {
            client: other.client.clone(),
            asking: other.asking.clone(),
            recorder: self.recorder.clone(),
            mode: other.mode.clone(),
            usage: Arc::new(UsageNode {
                parent: Some(self.usage.clone()),
                ..UsageNode::default()
            }),
            trial: self.trial.clone(),
            served: self.served.clone(),
        }
    }

    fn derive(
        &self,
        recorder: Option<Arc<Recorder>>,
        trial: Option<String>,
        served: Arc<Mutex<HashSet<Fingerprint>>>,
    ) -> Session {
        Session {
            client: self.client.clone(),
            asking: self.asking.clone(),
            recorder,
            mode: self.mode.clone(),
            usage: Arc::new(UsageNode {
                parent: Some(self.usage.clone()),
                ..UsageNode::default()
            }),
            trial,
            served,
        }
    }

    /// Whether the session keeps a configured mode (a judge made from
    /// configuration), not only what its caller built in code.
    #[cfg(feature = "suite")]
    pub(crate) fn configured(&self) -> bool {
        self.mode.is_some()
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn asking(&self) -> &Asking {
        &self.asking
    }

    pub(crate) fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_deref()
    }

    /// The recorder, shared (the pipeline's endpoint records through it).
    pub(crate) fn shared_recorder(&self) -> Option<&Arc<Recorder>> {
        self.recorder.as_ref()
    }

    /// The client, shared (the pipeline's endpoint may keep its limits).
    pub(crate) fn shared_client(&self) -> &Arc<Client> {
        &self.client
    }

    /// The trial the session's exchanges are marked with.
    pub(crate) fn trial(&self) -> Option<&str> {
        self.trial.as_deref()
    }

    /// The configured mode, for a session with no recorder.
    pub(crate) fn configured_mode(&self) -> Option<crate::core::Mode> {
        self.mode.as_ref().map(|(m, _)| *m)
    }

    /// Calls and tokens of this session and the sessions derived from it.
    pub(crate) fn usage(&self) -> Usage {
        *lock(&self.usage.usage)
    }

    /// Live calls skipped because the run's budget was spent.
    pub(crate) fn skipped_calls(&self) -> u64 {
        self.usage.skipped.load(Ordering::SeqCst)
    }

    /// Asks `ask` as sample `sample` and reads the reply with the task's
    /// parser; what it cost goes to `tally`.
    pub(crate) async fn ask<A: Ask>(
        &self,
        tally: &Tally,
        ask: &A,
        sample: u32,
    ) -> Result<A::Answer> {
        let mut question = self
            .asking
            .question(ask, self.client.formats.current(), sample);
        if self.client.probabilities_refused.load(Ordering::SeqCst) {
            question.request.top_logprobs = 0;
        }
        if question.shows_history {
            tally.showed_history.store(true, Ordering::SeqCst);
        }
        let first = question.clone();
        let (mut reply, mut fingerprint) = self.exchange(question, tally).await?;
        // A reasoning block filled a one-word answer's limit: once more
        // with room for it (its own exchange, recorded beside the first).
        if let Some(mut again) = first.with_room_for_reasoning(&reply.text) {
            if self.client.probabilities_refused.load(Ordering::SeqCst) {
                again.request.top_logprobs = 0;
            }
            (reply, fingerprint) = self.exchange(again, tally).await?;
        }
        if reply.logprobs.is_none() && self.asking.probabilities && ask.reads_first_word() {
            // Said once, in the judge's description; the recording's check
            // says how each answer was read.
            self.client.no_probabilities.store(true, Ordering::SeqCst);
        }
        let answer = ask
            .read_response(&reply)
            .map_err(|source| Error::JudgeResponse {
                task: ask.label(),
                source,
            })?;
        if let Some(recorder) = self.recorder.as_deref() {
            recorder.checked(&fingerprint, ask.checks(&answer));
        }
        Ok(answer)
    }

    /// What item `item` of `ask` judged, by its key ([`crate::judged`]),
    /// and the person's verdict on it the recording holds, if any (counted
    /// in `tally` as a verdict from a person). Asks nothing: a person's
    /// verdict is looked up by what was judged, never by how it was asked.
    pub(crate) fn reviewed<A: Ask>(
        &self,
        tally: &Tally,
        ask: &A,
        item: usize,
    ) -> Result<(Option<String>, Option<Person>)> {
        let task = ask.task_name();
        let Some(judged) = judged::items(&task, &ask.subject())
            .into_iter()
            .find(|j| j.item == item)
        else {
            return Ok((None, None));
        };
        let Some(recorder) = self.recorder.as_deref() else {
            return Ok((Some(judged.key), None));
        };
        let person = recorder.reviewed(&judged.key)?.map(|r| {
            self.charge(
                tally,
                Usage {
                    reviewed: 1,
                    ..Usage::default()
                },
            );
            Person::new(r.verdict, r.by, r.note)
        });
        // The person decided the question as the walk showed it: with the
        // earlier turns where the judge's question has them.
        if person.is_some()
            && self
                .asking
                .question(ask, self.client.formats.current(), 0)
                .shows_history
        {
            tally.showed_history.store(true, Ordering::SeqCst);
        }
        Ok((Some(judged.key), person))
    }

    /// Keeps in the recording a decision the rule `rule` (at version
    /// `version`) made with no call, in place of asking `ask`: an exchange
    /// of task `task` that asked what `ask` would have, so a person's
    /// verdict on it has the key of `ask`'s item (see
    /// [`Recorder::rule_decided`]). Nothing is spent.
    pub(crate) fn rule_decided<A: Ask>(
        &self,
        ask: &A,
        task: &str,
        rule: &str,
        version: &str,
        reply: &serde_json::Value,
    ) {
        if let Some(recorder) = self.recorder.as_deref() {
            let exchange =
                crate::record::Exchange::by_rule(task, rule, version, &ask.subject(), reply);
            recorder.rule_decided(exchange, self.trial.as_deref());
        }
    }

    /// Answers a question: from the recording when the mode allows and it
    /// holds the answer, else from the process's memo, else live (recording
    /// the answer). A refused response format steps down and asks again.
    /// Returns the reply and the fingerprint of the request that got it.
    async fn exchange(
        &self,
        mut question: Question,
        tally: &Tally,
    ) -> Result<(JudgeResponse, Fingerprint)> {
        let provider = self.client.transport.provider();
        // A one-word question is asked as plain text by design, not
        // because a server refused JSON: nothing was negotiated.
        let requested = if question.word {
            JsonMode::of(&question.request.response_format)
        } else {
            self.client.formats.configured()
        };
        loop {
            let request = &question.request;
            let fingerprint = request.fingerprint(provider);
            if let Some(recorder) = self.recorder.as_deref()
                && let Some((response, fingerprint)) =
                    self.recorded(recorder, &question, fingerprint, requested)?
            {
                let first = lock(&self.served).insert(fingerprint);
                let usage = if first {
                    Usage {
                        replayed: 1,
                        replayed_tokens: response
                            .input_tokens
                            .saturating_add(response.output_tokens),
                        ..Usage::default()
                    }
                } else {
                    Usage {
                        shared: 1,
                        ..Usage::default()
                    }
                };
                self.charge(tally, usage);
                return Ok((response, fingerprint));
            }
            if self.recorder.is_none()
                && let Some((crate::core::Mode::Replay, why)) = &self.mode
            {
                return Err(Error::Recording(
                    crate::record::RecordingError::Unrecorded {
                        exchange: crate::record::describe_exchange(request),
                        why: why.to_string(),
                    },
                ));
            }
            let charge = |spent: Usage| self.charge(tally, spent);
            match self
                .client
                .answer(fingerprint, request, question.read_at_start, &charge)
                .await
            {
                Ok((response, made_call)) => {
                    lock(&self.served).insert(fingerprint);
                    if !made_call {
                        let shared = Usage {
                            shared: 1,
                            ..Usage::default()
                        };
                        self.charge(tally, shared);
                    }
                    if let Some(recorder) = self.recorder.as_deref() {
                        let trial = self.trial.as_deref();
                        // The recording keeps the reply's JSON value, so it
                        // reads as YAML whatever spacing the judge used, and
                        // of a one-word answer the token probabilities up to
                        // its word (`Question::kept`).
                        let kept = question.kept(&response);
                        // Asked without probabilities only because the
                        // server refused them (see `recorded`).
                        let refused =
                            question.word && self.asking.probabilities && request.top_logprobs == 0;
                        recorder.store(
                            &fingerprint,
                            provider,
                            request,
                            &kept,
                            requested,
                            refused,
                            trial,
                        );
                    }
                    return Ok((response, fingerprint));
                }
                Err(CallError::Truncated(response)) => {
                    return Err(Error::Truncated {
                        task: question.task,
                        limit: request.max_tokens,
                        ceiling: self.asking.max_tokens,
                        items: question.sized_for,
                        raw: response.text,
                    });
                }
                Err(CallError::FormatRefused(e)) => {
                    let refused = JsonMode::of(&request.response_format);
                    match self.client.formats.step_down(refused, &e.to_string()) {
                        Some(next) => question.request = question.in_mode(next),
                        None => return Err(Error::Transport(e)),
                    }
                }
                Err(CallError::Failed(Error::Transport(e)))
                    if question.request.top_logprobs > 0
                        && crate::client::refuses_probabilities(&e) =>
                {
                    // Asked once more without them, and never again: the
                    // answer is then read from the word written.
                    self.client
                        .probabilities_refused
                        .store(true, Ordering::SeqCst);
                    self.client.no_probabilities.store(true, Ordering::SeqCst);
                    question.request.top_logprobs = 0;
                }
                Err(CallError::Failed(e)) => {
                    if e.is_budget() {
                        self.usage.skip();
                    }
                    return Err(e);
                }
            }
        }
    }

    /// The recorded answer to a question and its fingerprint, `Ok(None)`
    /// when the judge may be asked, or why it must not be (replay mode:
    /// missing or stale).
    fn recorded(
        &self,
        recorder: &Recorder,
        question: &Question,
        fingerprint: Fingerprint,
        requested: JsonMode,
    ) -> Result<Option<(JudgeResponse, Fingerprint)>> {
        let provider = self.client.transport.provider();
        let trial = self.trial.as_deref();
        let request = &question.request;
        if let Some(found) = recorder.lookup_only(&fingerprint, trial) {
            return Ok(Some((found, fingerprint)));
        }
        // A recording made after the server refused the configured format
        // holds the answers to the format actually used; ask for exactly
        // that again.
        let current = JsonMode::of(&request.response_format);
        if let Some(mode) = recorder.negotiated(requested).filter(|m| *m != current) {
            let alt = question.in_mode(mode).fingerprint(provider);
            if let Some(found) = recorder.lookup_only(&alt, trial) {
                return Ok(Some((found, alt)));
            }
        }
        // Recorded where the server refused token probabilities: the same
        // question without them, if that is why it was asked without (an
        // answer recorded under `strategy = "word"` is not read as one).
        if request.top_logprobs > 0 {
            let mut plain = request.clone();
            plain.top_logprobs = 0;
            let alt = plain.fingerprint(provider);
            if let Some(found) = recorder.lookup_refused(&alt, trial) {
                return Ok(Some((found, alt)));
            }
        }
        Ok(recorder
            .lookup(&fingerprint, provider, request, trial)?
            .map(|found| (found, fingerprint)))
    }

    fn charge(&self, tally: &Tally, usage: Usage) {
        tally.add(usage);
        self.usage.add(usage);
    }
}
