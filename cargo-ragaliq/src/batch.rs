//! `cargo ragaliq record --batch`: the round driver of a record through a
//! provider's batch API (see `ragaliq::batch`).
//!
//! ```text
//! round k:  run the tests in collect mode ──► queue (fingerprint → request)
//!           nothing queued? done: review with `cargo insta review`
//!           submit the queue (one batch per model, within the provider's
//!           limits and the budget) ──► poll until ended ──► answers by
//!           custom_id into the batch folder; failed lines stay queued
//! round k+1: the answered questions become pending recordings, as a live
//!           record writes them; the next stage's questions are queued
//! ```
//!
//! Everything the driver knows is in `state.json` in the batch folder,
//! written after every step, so `--resume` continues after a crash or a
//! closed laptop without submitting a batch twice: the intent to submit
//! (with the batch's tag) is written before the create, and a resume (or a
//! create whose reply was lost) looks for a batch with that tag at the
//! provider before it submits again. One driver works on a folder at a
//! time (its `driver.lock`).

use ragaliq::Config;
use ragaliq::batch::{
    BatchApi, BatchFolder, BatchLine, BatchProgress, BatchTag, LineResult, Lookup,
};
use ragaliq::config::Price;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

#[derive(clap::Args)]
pub struct Args {
    /// Record through the provider's batch API (OpenAI, Anthropic): half
    /// the price, answers within 24 hours. Required: live recording is
    /// `RAGALIQ_MODE=record cargo test --no-fail-fast`.
    #[arg(long)]
    batch: bool,
    /// Continue the batch record in progress (after a crash, a closed
    /// laptop, or a stop while waiting).
    #[arg(long)]
    resume: bool,
    /// Show where the batch record in the folder stands, and exit.
    #[arg(long)]
    status: bool,
    /// With --resume, after a submission whose creation was not confirmed:
    /// take batch ID as its batch (one the record listed as possibly its
    /// own, that you made sure is this record's)
    #[arg(
        long,
        value_name = "ID",
        requires = "resume",
        conflicts_with = "submit_again"
    )]
    adopt: Option<String>,
    /// With --resume, after a submission whose creation was not confirmed:
    /// submit its questions anew (none of the batches the record listed is
    /// this record's, or you canceled it)
    #[arg(long, requires = "resume")]
    submit_again: bool,
    /// The batch folder.
    #[arg(long, value_name = "DIR", default_value = "target/ragaliq/batch")]
    dir: PathBuf,
    /// Seconds between polls of a batch (0 to 3600).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    poll_secs: f64,
    /// The most rounds before giving up (each stage of the metrics is one).
    #[arg(long, value_name = "N", default_value_t = 8)]
    max_rounds: u32,
    /// How many times a question whose batch line failed (an error, an
    /// expired or canceled request, an unreadable answer) is submitted again.
    #[arg(long, value_name = "N", default_value_t = 2)]
    retries: u32,
    /// The test command run each round (default: cargo test).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// The state file's format.
const FORMAT: u32 = 1;

/// What the driver knows, kept in `state.json`.
#[derive(Default, Serialize, Deserialize)]
struct State {
    format: u32,
    provider: String,
    command: Vec<String>,
    /// Names this record in its batches' tags.
    #[serde(default)]
    record: String,
    round: u32,
    /// Batches submitted whose answers are not read yet.
    waiting: Vec<Submitted>,
    /// A batch about to be submitted: written before the create, so a
    /// crash (or a lost reply) leaves what to look for at the provider.
    #[serde(default)]
    intent: Option<Intent>,
    /// Every batch this record submitted (or adopted): never taken for
    /// another one when a lost reply is looked for.
    #[serde(default)]
    batch_ids: Vec<String>,
    /// Failed attempts, by fingerprint.
    failures: BTreeMap<String, u32>,
    /// Questions given up on, with the last reason.
    given_up: BTreeMap<String, String>,
    rounds: Vec<Round>,
    batches: u64,
    submitted: u64,
    answered: u64,
    failed_lines: u64,
    input_tokens: u64,
    output_tokens: u64,
    /// Dollars at the batch price (estimated from tokens).
    spent_usd: f64,
    finished: bool,
}

#[derive(Clone, Serialize, Deserialize)]
struct Intent {
    tag: BatchTag,
    model: String,
    custom_ids: Vec<String>,
}

#[derive(Clone, Serialize, Deserialize)]
struct Submitted {
    id: String,
    model: String,
    custom_ids: Vec<String>,
    submitted_secs: u64,
    #[serde(default)]
    progress: Option<BatchProgress>,
}

#[derive(Clone, Default, Serialize, Deserialize)]
struct Round {
    round: u32,
    tests_exit: Option<i32>,
    queued: usize,
    submitted: usize,
    answered: usize,
    failed: usize,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

impl State {
    fn read(path: &Path) -> Result<Option<State>, String> {
        match std::fs::read(path) {
            Ok(bytes) => {
                let state: State = serde_json::from_slice(&bytes)
                    .map_err(|e| format!("{} cannot be read: {e}", path.display()))?;
                if state.format != FORMAT {
                    return Err(format!(
                        "{} is of format {} (this cargo-ragaliq reads {FORMAT})",
                        path.display(),
                        state.format
                    ));
                }
                Ok(Some(state))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{} cannot be read: {e}", path.display())),
        }
    }

    /// Written whole: a crash leaves the old state or the new.
    fn write(&self, folder: &BatchFolder) -> Result<(), String> {
        let bytes = serde_json::to_vec_pretty(self).expect("state serializes");
        folder
            .write_state(&bytes)
            .map_err(|e| format!("{} cannot be written: {e}", folder.state_file().display()))
    }
}

/// `Ok(true)` when every question was answered (the last round's tests
/// fail while their new recordings await review, as insta's do).
pub fn run(args: Args) -> Result<bool, String> {
    let folder = BatchFolder::new(&args.dir);
    let state_file = folder.state_file();
    if args.status {
        return status(&folder);
    }
    if !(args.poll_secs.is_finite() && (0.0..=3600.0).contains(&args.poll_secs)) {
        return Err(format!(
            "--poll-secs {}: expected a number of seconds from 0 to 3600",
            args.poll_secs
        ));
    }
    if !args.batch {
        return Err(
            "only --batch is built: record live with RAGALIQ_MODE=record cargo test --no-fail-fast, or through a provider's batch API with cargo ragaliq record --batch".into(),
        );
    }
    let config = Config::load().map_err(|e| e.to_string())?;
    let api = ragaliq::batch::api_for(&config).map_err(|e| e.to_string())?;
    let price = config.price().map(Price::batch);
    if config.max_cost_usd.is_some() && price.is_none() {
        return Err(format!(
            "a budget (cost.max_usd) needs a price for model `{}`: add [cost.prices.\"{}\"] to ragaliq.toml",
            config.model, config.model
        ));
    }
    // Nothing is written into a folder that holds anything else (a typo
    // such as `--dir .`), not even the lock.
    folder.check_own()?;
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| format!("{} cannot be created: {e}", args.dir.display()))?;
    // Held until the driver ends: a second one is refused, naming this one.
    let _lock = folder.lock_driver()?;
    let mut state = match (State::read(&state_file)?, args.resume) {
        (Some(state), true) if state.finished => {
            return Err(format!(
                "the batch record in {} is finished; start a new one without --resume",
                args.dir.display()
            ));
        }
        (Some(state), true) => state,
        (None, true) => {
            return Err(format!(
                "no batch record to resume in {}",
                args.dir.display()
            ));
        }
        (Some(state), false) if !state.finished => {
            return Err(format!(
                "a batch record is in progress in {} (round {}, {} batch(es) waiting): continue it with --resume, see it with --status, or remove the folder to start over",
                args.dir.display(),
                state.round,
                state.waiting.len()
            ));
        }
        (_, false) => {
            let prepared = folder.prepare()?;
            if prepared.kept_answers > 0 {
                println!(
                    "kept {} answer(s) of an earlier record in {} (paid for: the questions they answer are not asked again; remove them yourself to ask anew)",
                    prepared.kept_answers,
                    folder.dir().join("answers").display()
                );
            }
            let command = if args.command.is_empty() {
                vec!["cargo".into(), "test".into()]
            } else {
                args.command.clone()
            };
            let command = no_fail_fast(command);
            State {
                format: FORMAT,
                provider: api.provider().into(),
                command,
                record: record_id(),
                ..State::default()
            }
        }
    };
    if state.provider != api.provider() {
        return Err(format!(
            "the batch record in {} is for {}, but the configuration's judge is {}",
            args.dir.display(),
            state.provider,
            api.provider()
        ));
    }
    state.write(&folder)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
    let poll = Duration::from_secs_f64(args.poll_secs);
    let dir = std::path::absolute(&args.dir).map_err(|e| format!("{}: {e}", args.dir.display()))?;
    let folder = BatchFolder::new(dir);
    if state.record.is_empty() {
        state.record = record_id();
    }
    // A submission a crash (or a lost reply) left unconfirmed: adopt the
    // batch the provider made for it, else submit it now; where the
    // provider cannot say which batch is it, the person says.
    let choice = match (&args.adopt, args.submit_again) {
        (Some(id), _) => Unconfirmed::Adopt(id.clone()),
        (None, true) => Unconfirmed::SubmitAgain,
        (None, false) => Unconfirmed::Look,
    };
    match state.intent.clone() {
        Some(intent) => {
            runtime.block_on(finish_intent(&api, &folder, &intent, &mut state, choice))?;
        }
        None if choice != Unconfirmed::Look => {
            return Err(format!(
                "--adopt and --submit-again settle a submission whose creation was not confirmed, and the batch record in {} has none",
                args.dir.display()
            ));
        }
        None => {}
    }
    loop {
        // Batches submitted (by this run or before a crash) first.
        while let Some(submitted) = state.waiting.first().cloned() {
            let progress = runtime.block_on(wait(&api, &submitted, poll, &mut state, &folder))?;
            let answered = runtime.block_on(read_answers(
                &api,
                &folder,
                &submitted,
                &progress,
                price,
                args.retries,
                &mut state,
            ))?;
            state.waiting.remove(0);
            if let Some(round) = state.rounds.last_mut() {
                round.answered += answered.0;
                round.failed += answered.1;
            }
            state.write(&folder)?;
        }
        if state.round >= args.max_rounds {
            return Err(format!(
                "{} rounds ran and questions are still queued: raise --max-rounds, or see --status",
                state.round
            ));
        }
        state.round += 1;
        let round = state.round;
        state.rounds.push(Round {
            round,
            ..Round::default()
        });
        state.write(&folder)?;
        folder.clear_queue().map_err(|e| {
            format!(
                "the queue in {} cannot be emptied: {e}",
                folder.dir().display()
            )
        })?;
        let log = folder.dir().join(format!("round-{round}.log"));
        let exit = run_tests(&state.command, folder.dir(), &log)?;
        let queued = folder
            .queued()
            .map_err(|e| format!("the queue cannot be read: {e}"))?;
        let (gave_up, queued): (Vec<_>, Vec<_>) = queued
            .into_iter()
            .partition(|(f, _)| state.given_up.contains_key(&f.to_string()));
        {
            let r = state.rounds.last_mut().expect("pushed");
            r.tests_exit = exit;
            r.queued = queued.len();
        }
        let exit_text = exit.map_or_else(
            || "was stopped by a signal".to_owned(),
            |c| format!("exited {c}"),
        );
        if queued.is_empty() {
            state.finished = true;
            state.write(&folder)?;
            println!(
                "round {round}: nothing queued; the tests {exit_text} (log: {})",
                log.display()
            );
            summary(&state);
            if !gave_up.is_empty() || !state.given_up.is_empty() {
                println!(
                    "{} question(s) got no answer after {} attempts:",
                    state.given_up.len(),
                    args.retries + 1
                );
                for (fp, why) in &state.given_up {
                    println!("  {}: {why}", short(fp));
                }
                return Ok(false);
            }
            if exit != Some(0) {
                // A new recording fails its test until it is accepted, as
                // insta's snapshots do: the last round fails whenever it
                // wrote one. What else failed is in its summary lines.
                println!(
                    "the last round's tests {exit_text}: a test whose recording awaits review fails until it is accepted; their summary:"
                );
                if print_summary_lines(&log) == 0 {
                    // No test ran (a build error, a wrong command): that
                    // nothing was queued says nothing then.
                    print_tail(&log, 20);
                    return Err(format!(
                        "the test command `{}` ran no test that reports (see {}): the record is not complete",
                        state.command.join(" "),
                        log.display()
                    ));
                }
            }
            println!(
                "next: review the pending recordings with `cargo insta review` (or list them with `cargo ragaliq status`), then run the tests as usual"
            );
            return Ok(true);
        }
        println!(
            "round {round}: the tests {exit_text} with {} question(s) queued (log: {})",
            queued.len(),
            log.display()
        );
        // One batch per model, within the provider's limits and the budget.
        let mut by_model: BTreeMap<String, Vec<BatchLine>> = BTreeMap::new();
        for (fingerprint, question) in queued {
            if question.provider != api.provider() {
                return Err(format!(
                    "a question was queued for {} but the batch goes to {}: run the record with the judge the tests use (a cascade whose `[[escalate]]` judges are at another provider records live, with RAGALIQ_MODE=record: one batch driver sends to one provider)",
                    question.provider,
                    api.provider()
                ));
            }
            by_model
                .entry(question.request.model.clone())
                .or_default()
                .push(BatchLine {
                    custom_id: fingerprint.to_string(),
                    request: question.request,
                });
        }
        let mut room = config.max_cost_usd.map(|max| max - state.spent_usd);
        for (model, lines) in by_model {
            let lines = match (room.as_mut(), price) {
                (Some(room), Some(price)) => {
                    let mut kept = Vec::new();
                    for line in lines {
                        let estimate = estimate(&line, price);
                        if estimate > *room {
                            break;
                        }
                        *room -= estimate;
                        kept.push(line);
                    }
                    kept
                }
                _ => lines,
            };
            if lines.is_empty() {
                state.write(&folder)?;
                return Err(format!(
                    "the budget of ${:.2} (cost.max_usd) allows no more: ${:.4} spent at the batch price; the questions still queued stay in {} (raise the budget and --resume)",
                    config.max_cost_usd.unwrap_or_default(),
                    state.spent_usd,
                    folder.dir().display()
                ));
            }
            for chunk in api.split(lines) {
                let custom_ids: Vec<String> = chunk.iter().map(|l| l.custom_id.clone()).collect();
                let intent = Intent {
                    tag: BatchTag::new(&state.record, round, &custom_ids),
                    model: model.clone(),
                    custom_ids,
                };
                // Written before the create: a crash or a lost reply from
                // here on is looked up by the tag, not submitted again.
                state.intent = Some(intent.clone());
                state.write(&folder)?;
                let id = runtime
                    .block_on(api.submit(&chunk, &intent.tag, &state.batch_ids))
                    .map_err(|e| {
                        format!(
                            "submitting a batch of {} request(s) failed: {e}; the state is kept: {}",
                            chunk.len(),
                            resume_hint(&api)
                        )
                    })?;
                // A test's way to stop the driver between the provider
                // making the batch and the state naming it, as a crash would.
                if std::env::var_os("RAGALIQ_TEST_STOP_AFTER_CREATE").is_some() {
                    std::process::exit(9);
                }
                println!(
                    "round {round}: submitted {id} ({} request(s), {model}) to {}",
                    chunk.len(),
                    api.provider()
                );
                submitted(&mut state, id, intent);
                // Named at once: a crash from here on resumes this batch.
                state.write(&folder)?;
            }
        }
    }
}

/// The first 12 characters of a fingerprint as the state file has it (a
/// hand-edited one may be shorter, or not ASCII).
fn short(fp: &str) -> &str {
    fp.char_indices().nth(12).map_or(fp, |(at, _)| &fp[..at])
}

/// A name for a new record, for its batches' tags: the time and the
/// process, enough to tell one record from another.
fn record_id() -> String {
    format!("{:x}{:x}", now_secs(), std::process::id())
}

/// Books the batch `id` made for `intent` as waiting.
fn submitted(state: &mut State, id: String, intent: Intent) {
    let n = intent.custom_ids.len();
    state.batches = state.batches.saturating_add(1);
    state.submitted = state.submitted.saturating_add(n as u64);
    if let Some(round) = state.rounds.last_mut() {
        round.submitted += n;
    }
    state.batch_ids.push(id.clone());
    state.waiting.push(Submitted {
        id,
        model: intent.model,
        custom_ids: intent.custom_ids,
        submitted_secs: now_secs(),
        progress: None,
    });
    state.intent = None;
}

/// What `--resume` does with a submission whose creation was not
/// confirmed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Unconfirmed {
    /// Ask the provider for the batch made for its tag.
    Look,
    /// Take this batch as its batch (`--adopt`).
    Adopt(String),
    /// Submit its questions anew (`--submit-again`).
    SubmitAgain,
}

/// What to do after a submission failed, in words the user acts on.
fn resume_hint(api: &BatchApi) -> &'static str {
    if api.can_tag() {
        "`cargo ragaliq record --batch --resume` looks for it at the provider (by its tag) before submitting again"
    } else {
        "`cargo ragaliq record --batch --resume` looks at the provider again; when batches are named that could be this submission's, add `--adopt <id>` to take the one that is this record's, or `--submit-again` when none is (a batch canceled is not named again)"
    }
}

/// After a crash (or a lost reply) between writing the intent and the
/// batch's id: the batch the provider made for the intent's tag, the one
/// the person names (`--adopt`), or a new submission of the questions
/// still queued (none made, or `--submit-again`). Where the provider
/// cannot tell which batch is it, none is taken: the record stops naming
/// the batches that could be.
async fn finish_intent(
    api: &BatchApi,
    folder: &BatchFolder,
    intent: &Intent,
    state: &mut State,
    choice: Unconfirmed,
) -> Result<(), String> {
    let mut known = state.batch_ids.clone();
    known.extend(state.waiting.iter().map(|w| w.id.clone()));
    let n = intent.custom_ids.len();
    let found = match choice {
        Unconfirmed::Adopt(id) => {
            if known.contains(&id) {
                return Err(format!(
                    "--adopt {id}: the record already has that batch for other questions"
                ));
            }
            let progress = api.progress(&id).await.map_err(|e| {
                format!("--adopt {id}: the provider's batch cannot be read: {e}; the state is kept")
            })?;
            if progress.total != n as u64 {
                return Err(format!(
                    "--adopt {id}: that batch holds {} request(s), the submission not confirmed {n}: it is not this one",
                    progress.total
                ));
            }
            println!(
                "adopted {id} as the batch of the submission not confirmed ({n} request(s), tag {}), as --adopt says: its answers are matched to this record's questions by their ids, so a batch that is not this record's answers none of them",
                intent.tag.tag
            );
            submitted(state, id, intent.clone());
            return state.write(folder);
        }
        Unconfirmed::SubmitAgain => Lookup::Absent,
        Unconfirmed::Look => api.find(&intent.tag, &known).await.map_err(|e| {
            format!(
                "looking for the batch whose creation was not confirmed failed: {e}; the state is kept: try --resume again"
            )
        })?,
    };
    match found {
        Lookup::Found(id) => {
            println!(
                "adopted {id}: the provider made it before the record stopped ({n} request(s), tag {})",
                intent.tag.tag
            );
            submitted(state, id, intent.clone());
            return state.write(folder);
        }
        Lookup::Untagged(candidates) => {
            let listed: Vec<String> = candidates
                .iter()
                .map(|c| format!("{} ({}, made {})", c.id, c.status, c.created_at))
                .collect();
            return Err(format!(
                "a batch of {n} request(s) of round {} was being submitted and its creation was not confirmed; {} has {} batch(es) of {n} request(s) made since then that could be it, or another run's (a parallel shard's): {}. Its batches carry no tag to tell, so none is taken and nothing is submitted again. Only you can tell which is yours (what else made batches with this key since then); then run `cargo ragaliq record --batch --resume --adopt <id>` to take the one that is this record's, or `cargo ragaliq record --batch --resume --submit-again` when none is; to drop one of yours instead, cancel it (POST /v1/messages/batches/<id>/cancel: a canceled batch is not named again) and `--resume`",
                state.round,
                api.provider(),
                candidates.len(),
                listed.join(", ")
            ));
        }
        Lookup::Absent => {}
        // A variant this driver does not know: never guess.
        other => {
            return Err(format!(
                "the provider's answer about the submission not confirmed is not understood ({other:?}); the state is kept"
            ));
        }
    }
    let queued = folder
        .queued()
        .map_err(|e| format!("the queue cannot be read: {e}"))?;
    let lines: Vec<BatchLine> = queued
        .into_iter()
        .filter(|(f, _)| intent.custom_ids.contains(&f.to_string()))
        .map(|(f, q)| BatchLine {
            custom_id: f.to_string(),
            request: q.request,
        })
        .collect();
    if lines.is_empty() {
        state.intent = None;
        return state.write(folder);
    }
    let id = api.submit(&lines, &intent.tag, &known).await.map_err(|e| {
        format!(
            "submitting a batch of {} request(s) failed: {e}",
            lines.len()
        )
    })?;
    println!(
        "round {}: submitted {id} ({} request(s), {}) to {}, which the provider did not have",
        state.round,
        lines.len(),
        intent.model,
        api.provider()
    );
    let mut intent = intent.clone();
    intent.custom_ids = lines.into_iter().map(|l| l.custom_id).collect();
    submitted(state, id, intent);
    state.write(folder)
}

/// A request's cost estimate at `price`: at most what it can cost
/// ([`JudgeRequest::estimated_tokens`](ragaliq::judge::JudgeRequest::estimated_tokens)).
fn estimate(line: &BatchLine, price: Price) -> f64 {
    let (input_tokens, output_tokens) = line.request.estimated_tokens();
    price.cost(&ragaliq::Usage {
        input_tokens,
        output_tokens,
        ..ragaliq::Usage::default()
    })
}

/// Polls `submitted` until the provider ends it; a failed poll is tried
/// again (up to ten in a row).
async fn wait(
    api: &BatchApi,
    submitted: &Submitted,
    every: Duration,
    state: &mut State,
    folder: &BatchFolder,
) -> Result<BatchProgress, String> {
    let mut errors = 0;
    let mut last = String::new();
    loop {
        match api.progress(&submitted.id).await {
            Ok(progress) => {
                errors = 0;
                let line = format!(
                    "{}: {}, {} of {} answered, {} failed",
                    progress.id,
                    progress.status,
                    progress.succeeded,
                    progress.total,
                    progress.failed
                );
                if line != last {
                    println!("  {line}");
                    last = line;
                }
                if let Some(w) = state.waiting.iter_mut().find(|w| w.id == submitted.id) {
                    w.progress = Some(progress.clone());
                }
                state.write(folder)?;
                if progress.ended {
                    return Ok(progress);
                }
            }
            Err(e) if e.is_retryable() && errors < 10 => {
                errors += 1;
                eprintln!("  {}: polling failed ({e}); trying again", submitted.id);
            }
            Err(e) => {
                return Err(format!(
                    "polling {} failed: {e}; the state is kept: continue with --resume",
                    submitted.id
                ));
            }
        }
        tokio::time::sleep(every).await;
    }
}

/// Writes the answers of an ended batch; counts the lines that failed
/// (they stay queued, and are asked again next round unless given up).
/// Returns (answered, failed).
async fn read_answers(
    api: &BatchApi,
    folder: &BatchFolder,
    submitted: &Submitted,
    progress: &BatchProgress,
    price: Option<Price>,
    retries: u32,
    state: &mut State,
) -> Result<(usize, usize), String> {
    let queued = folder
        .queued()
        .map_err(|e| format!("the queue cannot be read: {e}"))?;
    let requests: BTreeMap<String, ragaliq::judge::JudgeRequest> = queued
        .into_iter()
        .map(|(f, q)| (f.to_string(), q.request))
        .filter(|(id, _)| submitted.custom_ids.contains(id))
        .collect();
    let mut results = BTreeMap::new();
    let mut tries = 0;
    while !requests.is_empty() {
        match api.results(progress, &requests).await {
            Ok(r) => {
                results = r;
                break;
            }
            Err(e) if e.is_retryable() && tries < 10 => {
                tries += 1;
                eprintln!(
                    "  {}: reading the results failed ({e}); trying again",
                    progress.id
                );
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => {
                return Err(format!(
                    "reading the results of {} failed: {e}",
                    progress.id
                ));
            }
        }
    }
    let (mut answered, mut failed) = (0, 0);
    // What an answer cost goes into the state with the batch (written once
    // its answers are all kept): an answer written before a crash, whose
    // batch is still waiting, was never counted, and is counted now.
    let count = |state: &mut State, response: &ragaliq::judge::JudgeResponse| {
        state.input_tokens = state.input_tokens.saturating_add(response.input_tokens);
        state.output_tokens = state.output_tokens.saturating_add(response.output_tokens);
        if let Some(price) = price {
            state.spent_usd += price.cost(&ragaliq::Usage {
                input_tokens: response.input_tokens,
                output_tokens: response.output_tokens,
                ..ragaliq::Usage::default()
            });
        }
    };
    for id in &submitted.custom_ids {
        let why = match results.remove(id) {
            Some(LineResult::Answered(response)) => {
                let fingerprint = id.parse().map_err(|e: String| e)?;
                folder
                    .write_answer(&fingerprint, &response)
                    .map_err(|e| format!("an answer cannot be written: {e}"))?;
                count(state, &response);
                answered += 1;
                continue;
            }
            Some(LineResult::Failed(why)) => why,
            None if requests.contains_key(id) => {
                format!("no answer in the results (the batch {})", progress.status)
            }
            // Kept before the record stopped: counted now.
            None => {
                if let Ok(fingerprint) = id.parse()
                    && let Ok(Some(response)) = folder.answer(&fingerprint)
                {
                    count(state, &response);
                    answered += 1;
                }
                continue;
            }
        };
        failed += 1;
        let n = state.failures.entry(id.clone()).or_default();
        *n += 1;
        if *n > retries {
            state.given_up.insert(id.clone(), why);
        }
    }
    if let Some(message) = &progress.message {
        eprintln!("  {}: the provider says: {message}", progress.id);
    }
    // A test's way to stop the driver between writing the answers and the
    // state, as a crash would (see cargo-ragaliq/tests/batch_record.rs).
    if std::env::var_os("RAGALIQ_TEST_STOP_AFTER_ANSWERS").is_some() {
        std::process::exit(9);
    }
    state.answered = state.answered.saturating_add(answered as u64);
    state.failed_lines = state.failed_lines.saturating_add(failed as u64);
    println!(
        "  {}: {answered} answer(s) kept, {failed} failed{}",
        progress.id,
        if failed > 0 {
            " (asked again next round)"
        } else {
            ""
        }
    );
    Ok((answered, failed))
}

/// `command` with `--no-fail-fast` when it is `cargo test` or `cargo
/// nextest run` without it: in collect mode every test that asks something
/// new fails (queued), and both stop at the first failure by default, so
/// the tests after it would never queue their questions, and a round that
/// queued nothing would not mean that every test was answered.
fn no_fail_fast(mut command: Vec<String>) -> Vec<String> {
    let at = match command
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["cargo", "test", ..] => Some(2),
        ["cargo", "nextest", "run", ..] => Some(3),
        _ => None,
    };
    let end = command
        .iter()
        .position(|a| a == "--")
        .unwrap_or(command.len());
    if let Some(at) = at
        && !command[..end].iter().any(|a| a == "--no-fail-fast")
    {
        command.insert(at, "--no-fail-fast".into());
    }
    command
}

/// Runs the test command in collect mode; its output goes to `log`.
fn run_tests(command: &[String], folder: &Path, log: &Path) -> Result<Option<i32>, String> {
    let (program, args) = command.split_first().ok_or("an empty test command")?;
    let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("RAGALIQ_COLLECT", folder)
        .stdout(out)
        .stderr(err);
    // Collect mode queues what recordings do not answer: auto (or record,
    // when asked for), never replay, which CI would default to.
    if std::env::var("RAGALIQ_MODE").as_deref() != Ok("record") {
        cmd.env("RAGALIQ_MODE", "auto");
    }
    // Pending recordings are written even where CI is set, as insta's
    // `INSTA_UPDATE=new` does, unless the user chose otherwise.
    if std::env::var_os("INSTA_UPDATE").is_none() {
        cmd.env("INSTA_UPDATE", "new");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("the test command `{}` cannot run: {e}", command.join(" ")))?;
    Ok(status.code())
}

/// The lines of a test run's log that sum it up: nextest's `Summary`
/// when there is one (each of its processes prints a `test result:` of its
/// own), else libtest's `test result:` lines and ragaliq's suite summaries;
/// at most a dozen.
/// Returns how many there were.
fn print_summary_lines(log: &Path) -> usize {
    let Ok(text) = std::fs::read_to_string(log) else {
        return 0;
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let nextest: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("Summary ["))
        .collect();
    let chosen: Vec<&str> = if nextest.is_empty() {
        lines
            .into_iter()
            .filter(|l| {
                l.starts_with("test result:") || (l.contains(" trials: ") && l.contains(" passed"))
            })
            .collect()
    } else {
        nextest
    };
    for line in chosen.iter().take(12) {
        println!("  {line}");
    }
    if chosen.len() > 12 {
        println!("  … {} more in the log", chosen.len() - 12);
    }
    chosen.len()
}

fn print_tail(log: &Path, lines: usize) {
    if let Ok(text) = std::fs::read_to_string(log) {
        let all: Vec<&str> = text.lines().collect();
        for line in &all[all.len().saturating_sub(lines)..] {
            println!("  | {line}");
        }
    }
}

fn summary(state: &State) {
    println!(
        "batch record: {} round(s), {} batch(es), {} request(s) submitted, {} answered, {} failed line(s); {} tokens in, {} out; ${:.4} at the batch price",
        state.round,
        state.batches,
        state.submitted,
        state.answered,
        state.failed_lines,
        state.input_tokens,
        state.output_tokens,
        state.spent_usd
    );
}

fn status(folder: &BatchFolder) -> Result<bool, String> {
    let Some(state) = State::read(&folder.state_file())? else {
        println!("no batch record in {}", folder.dir().display());
        return Ok(true);
    };
    let queued = folder.queued().map(|q| q.len()).unwrap_or(0);
    println!(
        "batch record in {} ({}, `{}`): round {}, {}",
        folder.dir().display(),
        state.provider,
        state.command.join(" "),
        state.round,
        if state.finished {
            "finished".to_owned()
        } else if state.waiting.is_empty() {
            format!("{queued} question(s) queued")
        } else {
            format!("waiting for {} batch(es)", state.waiting.len())
        }
    );
    if let Some(intent) = &state.intent {
        println!(
            "  a batch of {} request(s) was being submitted (tag {}): --resume looks for it at the provider before submitting it{}",
            intent.custom_ids.len(),
            intent.tag.tag,
            if state.provider == "anthropic" {
                " (Anthropic's batches carry no tag: if it names batches that could be it, --adopt <id> or --submit-again settles it)"
            } else {
                ""
            }
        );
    }
    for w in &state.waiting {
        let age = now_secs().saturating_sub(w.submitted_secs);
        match &w.progress {
            Some(p) => println!(
                "  {} ({}, {} request(s)): {}, {} answered, {} failed; submitted {} min ago",
                w.id,
                w.model,
                w.custom_ids.len(),
                p.status,
                p.succeeded,
                p.failed,
                age / 60
            ),
            None => println!(
                "  {} ({}, {} request(s)): not polled yet; submitted {} min ago",
                w.id,
                w.model,
                w.custom_ids.len(),
                age / 60
            ),
        }
    }
    for r in &state.rounds {
        println!(
            "  round {}: tests {}, {} queued, {} submitted, {} answered, {} failed",
            r.round,
            r.tests_exit.map_or_else(
                || "running or stopped".to_owned(),
                |c| format!("exited {c}")
            ),
            r.queued,
            r.submitted,
            r.answered,
            r.failed
        );
    }
    println!(
        "  answers kept: {}; given up: {}",
        folder.answers(),
        state.given_up.len()
    );
    summary(&state);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::{FORMAT, State, no_fail_fast, short};

    /// ragaliq recognises a folder without its marker by this state alone
    /// (`ragaliq::batch::is_batch_state`): the state written here must stay
    /// one it recognises, or a folder from before the marker would be
    /// refused as another tool's.
    #[test]
    fn the_state_written_is_one_ragaliq_recognises() {
        let state = State {
            format: FORMAT,
            provider: "openai".into(),
            command: vec!["cargo".into(), "test".into()],
            ..State::default()
        };
        let bytes = serde_json::to_vec_pretty(&state).unwrap();
        assert!(ragaliq::batch::is_batch_state(&bytes));
        assert!(!ragaliq::batch::is_batch_state(br#"{"format": 1}"#));
    }

    #[test]
    fn fingerprints_of_any_length_are_shown_short_without_panicking() {
        let full = "0123456789abcdef0123";
        assert_eq!(short(full), "0123456789ab");
        assert_eq!(short("abc"), "abc");
        assert_eq!(short("ééééééééééééééé"), "éééééééééééé");
        assert_eq!(short(""), "");
    }

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn cargo_test_and_nextest_run_every_test_of_a_round() {
        for (given, run) in [
            ("cargo test", "cargo test --no-fail-fast"),
            (
                "cargo test --test rag -- --test-threads 1",
                "cargo test --no-fail-fast --test rag -- --test-threads 1",
            ),
            (
                "cargo nextest run --test rag_suite",
                "cargo nextest run --no-fail-fast --test rag_suite",
            ),
            ("cargo test --no-fail-fast", "cargo test --no-fail-fast"),
            // After `--` it is the test binary's argument, not cargo's.
            (
                "cargo test -- --no-fail-fast",
                "cargo test --no-fail-fast -- --no-fail-fast",
            ),
            ("./my-tests --exact a", "./my-tests --exact a"),
        ] {
            assert_eq!(no_fail_fast(words(given)), words(run), "{given}");
        }
    }
}
