//! `bench conversations-cost N` and `bench conversations-replay N DIR`:
//! what grading conversations costs beside grading the same turns as
//! separate cases (issue 48's targets).
//!
//! Cost: N conversations of 10 turns, each turn a synthetic case of the
//! set (2–4 passages, 3–6 sentences), graded by faithfulness,
//! hallucination and relevance against a fresh scripted judge, which counts
//! calls and prompt characters; then the same 10·N turns as separate
//! cases (no history). The judge shows a follow-up's questions that read
//! the user's question (claim extraction, relevance) the last 3 earlier
//! turns within 2,000 characters.
//!
//! Replay: N conversations of 5 turns and 5·N separate cases, recorded
//! against the scripted judge (one recording per conversation, one per
//! case), then replayed with no server: the two wall times and their ratio.

use super::{METRICS, case_with, judge, report};
use ragaliq::record::{Location, Recorder};
use ragaliq::{Conversation, EvalOptions, Gradable, Judge, Metric, Mode, RagCase, Turn};
use ragaliq_scripted::ScriptedJudge;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Conversation `c` of `turns` turns: the set's cases `c·turns` onward, as
/// turns.
fn conversation(c: usize, turns: usize) -> Conversation {
    Conversation::new((0..turns).map(|t| {
        let case = case_with(c * turns + t, 2, 4);
        Turn::new(case.query)
            .context(case.context)
            .response(case.response.unwrap_or_default())
    }))
    .id(format!("conversation-{c:05}"))
}

/// The turns of `conversation` as separate cases, each with no history.
fn separate(conversation: &Conversation) -> Vec<RagCase> {
    (1..=conversation.turns.len())
        .map(|n| {
            let mut case = conversation.case(n).expect("a turn");
            case.history.clear();
            case.id = Some(format!(
                "{}-t{n}",
                conversation.id.as_deref().unwrap_or_default()
            ));
            case
        })
        .collect()
}

/// Every metric of `metrics` on `what`, one after the other.
async fn grade(judge: &Judge, what: &(impl Gradable + ?Sized), metrics: &[Metric]) {
    for metric in metrics {
        judge
            .evaluate_with(*metric, what, &EvalOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{metric}: {e}"));
    }
}

struct Cost {
    calls: f64,
    chars: f64,
    tokens: f64,
}

async fn cost_of<F, Fut>(grade_all: F) -> Cost
where
    F: FnOnce(Judge) -> Fut,
    Fut: std::future::Future<Output = Judge>,
{
    let server = ScriptedJudge::start().await;
    let judge = grade_all(judge(&server.base_url(), 8)).await;
    Cost {
        calls: server.requests() as f64,
        chars: server.prompt_chars() as f64,
        tokens: judge.usage().total_tokens() as f64,
    }
}

pub(super) async fn cost(n: usize) {
    const TURNS: usize = 10;
    let conversations: Vec<Conversation> = (0..n).map(|c| conversation(c, TURNS)).collect();
    let cases: Vec<RagCase> = conversations.iter().flat_map(separate).collect();
    let history: usize = conversations
        .iter()
        .flat_map(|c| (2..=TURNS).map(move |t| c.case(t).expect("a turn")))
        .map(|case| ragaliq::Window::DEFAULT.shown(&case.history).chars())
        .sum();
    println!(
        "conversations-cost: {n} conversations of {TURNS} turns ({} turns), {:.0} characters of earlier turns shown per follow-up on average",
        n * TURNS,
        history as f64 / (n * (TURNS - 1)) as f64
    );
    for (name, metrics) in [
        ("faithfulness, hallucination, relevance", &METRICS[..]),
        (
            "+ abstention, consistency, retention",
            &[
                Metric::Faithfulness,
                Metric::Hallucination,
                Metric::Relevance,
                Metric::Abstention,
                Metric::Consistency,
                Metric::Retention,
            ][..],
        ),
    ] {
        let separately = cost_of(|j| async {
            for c in &cases {
                grade(&j, c, metrics).await;
            }
            j
        })
        .await;
        let together = cost_of(|j| async {
            for c in &conversations {
                grade(&j, c, metrics).await;
            }
            j
        })
        .await;
        let per = |x: f64| x / (n * TURNS) as f64;
        println!("  {name}:");
        for (what, c) in [
            ("10 separate cases", &separately),
            ("a conversation of 10 turns", &together),
        ] {
            println!(
                "    {what:<28} {:>6.2} calls/turn {:>7.0} prompt chars/turn {:>6.0} tokens/turn",
                per(c.calls),
                per(c.chars),
                per(c.tokens)
            );
        }
        println!(
            "    conversation / separate: {:.2}x the calls, {:.2}x the prompt characters",
            together.calls / separately.calls,
            together.chars / separately.chars
        );
    }
}

fn location(dir: &Path, id: &str) -> Location {
    Location::at(
        dir.join("snapshots").join(format!("{id}.snap")),
        id,
        "cargo run --example bench -- conversations-replay",
    )
}

/// Records `what` (one recording per item) with a live scripted judge.
async fn record_all<T: Gradable + Sync>(dir: &Path, items: &[(String, T)]) {
    let server = ScriptedJudge::start().await;
    let base = judge(&server.base_url(), 64);
    let recorders: Vec<Arc<Recorder>> = items
        .iter()
        .map(|(id, _)| Arc::new(Recorder::new(location(dir, id), Mode::Record)))
        .collect();
    futures_util::future::join_all(items.iter().zip(&recorders).map(|((_, what), r)| {
        let j = base.with_recorder(r.clone());
        async move { grade(&j, what, &METRICS).await }
    }))
    .await;
    for r in &recorders {
        let pending = r
            .save_pending("examples/bench.rs")
            .unwrap()
            .expect("new exchanges");
        std::fs::rename(&pending, &r.location().snapshot).unwrap();
    }
}

/// Replays `what` with no server; the answers replayed and the wall time.
async fn replay_all<T: Gradable + Sync>(dir: &Path, items: &[(String, T)]) -> (u64, f64) {
    let base = judge("http://127.0.0.1:9/v1", 64);
    let started = Instant::now();
    let judges: Vec<Judge> = items
        .iter()
        .map(|(id, _)| base.with_recorder(Arc::new(Recorder::new(location(dir, id), Mode::Replay))))
        .collect();
    futures_util::future::join_all(
        items
            .iter()
            .zip(&judges)
            .map(|((_, what), j)| grade(j, what, &METRICS)),
    )
    .await;
    let usage = base.usage();
    assert_eq!(usage.calls, 0, "replay made a call");
    (usage.replayed, started.elapsed().as_secs_f64())
}

pub(super) async fn replay(n: usize, dir: &Path) {
    const TURNS: usize = 5;
    let conversations: Vec<(String, Conversation)> = (0..n)
        .map(|c| conversation(c, TURNS))
        .map(|c| (c.id.clone().unwrap_or_default(), c))
        .collect();
    let cases: Vec<(String, RagCase)> = conversations
        .iter()
        .flat_map(|(_, c)| separate(c))
        .map(|c| (c.id.clone().unwrap_or_default(), c))
        .collect();
    let (conv_dir, case_dir) = (dir.join("conversations"), dir.join("cases"));
    let recorded = Instant::now();
    record_all(&conv_dir, &conversations).await;
    record_all(&case_dir, &cases).await;
    println!(
        "conversations-replay: recorded {n} conversations of {TURNS} turns and {} cases in {:.1} s",
        cases.len(),
        recorded.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let (separate_answers, separate_s) = replay_all(&case_dir, &cases).await;
    let (conversation_answers, conversation_s) = replay_all(&conv_dir, &conversations).await;
    println!(
        "  {} separate cases x 3 metrics: {separate_s:.3} s, {separate_answers} answers replayed",
        cases.len()
    );
    println!(
        "  {n} conversations of {TURNS} turns x 3 metrics: {conversation_s:.3} s, {conversation_answers} answers replayed"
    );
    report(
        "conversations-replay",
        started,
        &format!(
            "; conversations / separate cases: {:.2}x the wall time",
            conversation_s / separate_s
        ),
    );
}
