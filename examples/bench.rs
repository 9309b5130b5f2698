//! ragaliq's benchmarks (see BENCHMARKS.md for the commands and results).
//!
//! ```sh
//! cargo run --release --example bench -- record 1000 target/bench   # write recordings
//! cargo run --release --example bench -- replay 1000 target/bench   # replay them directly
//! cargo run --release --example bench -- suite  1000 target/bench   # replay through the suite (and the report's size)
//! cargo run --release --example bench -- bound  1000 target/bench   # only read and parse them
//! cargo run --release --example bench -- live   1000 100 16         # N, latency ms, concurrency
//! cargo run --release --example bench -- record 1000 target/bench5 5 # five samples per question
//! cargo run --release --example bench -- replay 1000 target/bench5 5
//! cargo run --release --example bench -- auto   100 0.2             # samples "auto" vs always 5, 20% flips
//! cargo run --example bench -- prompts 100                        # prompt characters per case, per way of asking
//! cargo run --example bench -- conversations-cost 100             # a 10-turn conversation's calls and characters vs 10 cases
//! cargo run --release --example bench -- conversations-replay 1000 target/bench-conv # 1,000 conversations of 5 turns vs 5,000 cases
//! cargo run --release --example bench -- retrieval 100000 target/bench # retrieval against labels, as a ratio to reading the case file
//! cargo run --release --example bench -- pipeline 10000 target/bench-pipeline # the pipeline's endpoint replaying N calls, against a bare server
//! cargo run --example bench -- smoke                               # small N, every mode (CI)
//! ```
//!
//! Cases are synthetic and seeded: 2–4 passages each, responses of 3–6
//! sentences mixing sentences the passages support with invented ones. The
//! judge is the scripted judge on 127.0.0.1 (ragaliq-scripted), which also
//! counts requests, prompt characters and the most requests in flight.

#[path = "bench/conversations.rs"]
mod conversations;
#[path = "bench/pipeline.rs"]
mod pipeline;
#[path = "bench/retrieval.rs"]
mod retrieval;

use ragaliq::record::Recording;
use ragaliq::record::{Location, Recorder};
use ragaliq::{
    Correctness, EvalOptions, Judge, Metric, Mode, RagCase, Samples, Strategy,
    judge::OpenAiTransport,
};
use ragaliq_scripted::ScriptedJudge;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const METRICS: [Metric; 3] = [
    Metric::Faithfulness,
    Metric::Hallucination,
    Metric::Relevance,
];

/// xorshift64*: a seeded generator, so every run grades the same cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const SUBJECTS: [&str; 12] = [
    "refund",
    "warranty",
    "shipment",
    "invoice",
    "password",
    "subscription",
    "voucher",
    "delivery",
    "account",
    "order",
    "exchange",
    "membership",
];
const VERBS: [&str; 6] = ["requires", "includes", "allows", "covers", "lasts", "needs"];
const OBJECTS: [&str; 10] = [
    "receipt",
    "signature",
    "tracking",
    "approval",
    "payment",
    "confirmation",
    "verification",
    "registration",
    "packaging",
    "documentation",
];
const INVENTED: [&str; 6] = [
    "Customers also receive complimentary gold bullion.",
    "Managers personally telephone every single buyer.",
    "Dragons guard the central distribution warehouse.",
    "Penguins approve international transactions weekly.",
    "Lunar offices process premium complaints overnight.",
    "Wizards calibrate the pricing algorithm annually.",
];

/// Case `i` of the synthetic set (deterministic in `i`).
fn case(i: usize) -> RagCase {
    case_with(i, 2, 4)
}

/// Case `i` with `lo` to `hi` passages.
fn case_with(i: usize, lo: usize, hi: usize) -> RagCase {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
    let subject = SUBJECTS[i % SUBJECTS.len()];
    let passages: Vec<String> = (0..lo + rng.below(hi - lo + 1))
        .map(|p| {
            (0..3)
                .map(|s| {
                    format!(
                        "The {subject} {} {} within {} days in region {}.",
                        rng.pick(&VERBS),
                        rng.pick(&OBJECTS),
                        7 + rng.below(60),
                        10 * p + s
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let supported: Vec<&str> = passages
        .iter()
        .flat_map(|p| p.split_inclusive(". "))
        .map(str::trim)
        .collect();
    let sentences: Vec<String> = (0..3 + rng.below(4))
        .map(|_| {
            if rng.below(3) < 2 {
                supported[rng.below(supported.len())].to_owned()
            } else {
                rng.pick(&INVENTED).to_owned()
            }
        })
        .collect();
    RagCase::new(format!(
        "What does the {subject} policy {} for case {i}?",
        rng.pick(&VERBS)
    ))
    .id(format!("case-{i:05}"))
    .context(passages)
    .response(sentences.join(" "))
}

fn judge(url: &str, concurrency: usize) -> Judge {
    Judge::builder(OpenAiTransport::new(url))
        .with_model("scripted")
        .with_concurrency(concurrency)
        .with_timeout(Duration::from_secs(30))
        .build()
        .expect("a valid judge")
}

fn location(dir: &Path, case: &RagCase) -> Location {
    let id = case.id.as_deref().unwrap_or_default();
    Location::at(
        dir.join("snapshots").join(format!("{id}.snap")),
        id,
        "cargo run --example bench -- record",
    )
}

/// Faithfulness, hallucination and relevance of one case; relevance runs
/// beside the claim pipeline, as a suite's trials would.
async fn grade(judge: &Judge, case: &RagCase, options: &EvalOptions) {
    let claims = async {
        judge
            .evaluate_with(Metric::Faithfulness, case, options)
            .await
            .expect("faithfulness");
        judge
            .evaluate_with(Metric::Hallucination, case, options)
            .await
            .expect("hallucination");
    };
    let relevance = async {
        judge
            .evaluate_with(Metric::Relevance, case, options)
            .await
            .expect("relevance");
    };
    tokio::join!(claims, relevance);
}

fn with_samples(samples: u32) -> EvalOptions {
    EvalOptions::default().with_samples(Samples::Fixed(samples))
}

/// Peak resident memory of this process, from /proc (Linux).
fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

fn report(what: &str, started: Instant, extra: &str) {
    println!(
        "{what}: {:.3} s, peak {:.1} MiB{extra}",
        started.elapsed().as_secs_f64(),
        peak_mib().unwrap_or(f64::NAN)
    );
}

async fn record(n: usize, dir: &Path, samples: u32) {
    let server = ScriptedJudge::start().await;
    let base = judge(&server.base_url(), 64);
    let cases: Vec<RagCase> = (0..n).map(case).collect();
    // Case files for the suite path, one JSON object per line.
    std::fs::create_dir_all(dir).unwrap();
    let lines: String = cases
        .iter()
        .map(|c| serde_json::to_string(c).unwrap() + "\n")
        .collect();
    std::fs::write(dir.join("cases.jsonl"), lines).unwrap();
    let started = Instant::now();
    let recorders: Vec<(Arc<Recorder>, Judge)> = cases
        .iter()
        .map(|c| {
            let r = Arc::new(Recorder::new(location(dir, c), Mode::Record));
            let j = base.with_recorder(r.clone());
            (r, j)
        })
        .collect();
    let options = with_samples(samples);
    futures_util::future::join_all(
        cases
            .iter()
            .zip(&recorders)
            .map(|(c, (_, j))| grade(j, c, &options)),
    )
    .await;
    let graded = started.elapsed();
    for (r, _) in &recorders {
        let pending = r
            .save_pending("examples/bench.rs")
            .unwrap()
            .expect("new exchanges");
        std::fs::rename(&pending, &r.location().snapshot).unwrap();
    }
    println!(
        "record {n}: {:.3} s grading live at 0 ms latency, {:.3} s writing {n} recordings; {} calls",
        graded.as_secs_f64(),
        (started.elapsed() - graded).as_secs_f64(),
        server.requests()
    );
}

async fn replay(n: usize, dir: &Path, samples: u32, started: Instant) {
    // Nothing listens on port 9: a call would fail the run.
    let base = judge("http://127.0.0.1:9/v1", 64);
    let cases: Vec<RagCase> = (0..n).map(case).collect();
    let judges: Vec<Judge> = cases
        .iter()
        .map(|c| base.with_recorder(Arc::new(Recorder::new(location(dir, c), Mode::Replay))))
        .collect();
    let options = with_samples(samples);
    futures_util::future::join_all(
        cases
            .iter()
            .zip(&judges)
            .map(|(c, j)| grade(j, c, &options)),
    )
    .await;
    let usage = base.usage();
    assert_eq!(usage.calls, 0, "replay made a call");
    report(
        &format!("replay {n} cases x 3 metrics, {samples} sample(s)"),
        started,
        &format!(
            "; {} answers replayed, 0 calls; {:.1} µs per answer",
            usage.replayed,
            started.elapsed().as_secs_f64() * 1e6 / usage.replayed as f64
        ),
    );
}

/// The bound for replay: only reading and parsing the same recording files.
fn bound(n: usize, dir: &Path, started: Instant) {
    let mut exchanges = 0;
    for i in 0..n {
        let recording = Recording::read(&location(dir, &case(i)).snapshot)
            .expect("a readable recording")
            .expect("a recording");
        exchanges += recording.exchanges.len();
    }
    report(
        &format!("read and parse {n} recordings"),
        started,
        &format!("; {exchanges} exchanges"),
    );
}

/// `samples = "auto"` against always five, on the scripted judge with a
/// `share` of its verdicts flipped (seeded), each mode on a fresh server so that
/// sample `s` of a question gets the same flips in both.
async fn auto(n: usize, share: f64) {
    let cases: Vec<RagCase> = (0..n).map(case).collect();
    let mut runs = Vec::new();
    for samples in [Samples::Auto { max: 5 }, Samples::Fixed(5)] {
        let server = ScriptedJudge::start().await;
        server.set_flips(share, 7);
        let judge = Judge::builder(OpenAiTransport::new(&server.base_url()))
            .with_model("scripted")
            .with_concurrency(16)
            .with_temperature(0.7)
            .build()
            .expect("a valid judge");
        let options = EvalOptions::default().with_samples(samples);
        let decisions: Vec<(bool, bool)> =
            futures_util::future::join_all(cases.iter().flat_map(|c| METRICS.map(|m| (c, m))).map(
                |(c, m)| {
                    let (judge, options) = (&judge, &options);
                    async move {
                        let e = judge.evaluate_with(m, c, options).await.expect("evaluated");
                        (e.passed, e.undecided)
                    }
                },
            ))
            .await;
        runs.push((samples, server.requests(), decisions));
    }
    let (_, auto_calls, auto) = &runs[0];
    let (_, fixed_calls, fixed) = &runs[1];
    let differ: Vec<String> = auto
        .iter()
        .zip(fixed)
        .enumerate()
        .filter(|(_, (a, f))| a != f)
        .map(|(i, (a, f))| {
            format!(
                "case-{:05} {}: auto {} / always-5 {}",
                i / 3,
                METRICS[i % 3],
                decision(*a),
                decision(*f)
            )
        })
        .collect();
    println!(
        "auto {n} cases x 3 metrics, {:.0}% of verdicts flipped: {auto_calls} calls with samples \"auto\" (cap 5), {fixed_calls} with always 5: {:.0}% saved; decisions differ in {} of {}",
        share * 100.0,
        100.0 * (1.0 - *auto_calls as f64 / *fixed_calls as f64),
        differ.len(),
        auto.len()
    );
    for d in differ {
        println!("  {d}");
    }
}

fn decision((passed, undecided): (bool, bool)) -> &'static str {
    match (passed, undecided) {
        (_, true) => "undecided",
        (true, _) => "pass",
        (false, _) => "fail",
    }
}

fn suite(n: usize, dir: &Path, started: Instant) {
    let args = libtest_mimic::Arguments {
        quiet: true,
        test_threads: Some(2),
        ..libtest_mimic::Arguments::default()
    };
    let outcome = ragaliq::suite(dir)
        .metrics(METRICS)
        .judge(judge("http://127.0.0.1:9/v1", 64))
        .mode(Mode::Replay)
        .report_dir(dir.join("report"))
        .with_args(args)
        .run_for_outcome()
        .expect("the suite runs");
    assert_eq!(outcome.report.summary.usage.calls, 0);
    let size = |name: &str| {
        std::fs::metadata(dir.join("report").join(name)).map_or(0, |m| m.len()) as f64 / 1e6
    };
    report(
        &format!(
            "suite replay {n} cases x 3 metrics ({} trials)",
            outcome.report.summary.trials
        ),
        started,
        &format!(
            "; report.html {:.2} MB, report.json {:.2} MB",
            size("report.html"),
            size("report.json")
        ),
    );
}

async fn live(n: usize, latency_ms: u64, concurrency: usize) {
    let server = ScriptedJudge::start().await;
    server.set_latency(Duration::from_millis(latency_ms));
    let judge = judge(&server.base_url(), concurrency);
    let cases: Vec<RagCase> = (0..n).map(case).collect();
    let started = Instant::now();
    let options = EvalOptions::default();
    futures_util::future::join_all(cases.iter().map(|c| grade(&judge, c, &options))).await;
    let wall = started.elapsed().as_secs_f64();
    let calls = server.requests() as f64;
    // Every call once, `concurrency` at a time, plus the two sequential
    // calls (extract, then verify) on a case's critical path.
    let latency = latency_ms as f64 / 1000.0;
    let ideal = calls * latency / concurrency as f64 + 2.0 * latency;
    let usage = judge.usage();
    println!(
        "live n={n} latency={latency_ms}ms concurrency={concurrency}: wall {wall:.3} s, ideal {ideal:.3} s, ratio {}; {:.2} calls/case, {:.0} prompt chars/case, {:.0} tokens/case, max in flight {}",
        if latency_ms == 0 {
            "-".to_owned()
        } else {
            format!("{:.2}", wall / ideal)
        },
        calls / n as f64,
        server.prompt_chars() as f64 / n as f64,
        usage.total_tokens() as f64 / n as f64,
        server.max_in_flight()
    );
    assert!(
        server.max_in_flight() <= concurrency as u64,
        "the limit was exceeded"
    );
}

/// What faithfulness sends a paid judge per case, per way of asking: `n`
/// cases of 3–6 claims over 3–4 passages, graded against the scripted
/// judge; calls, prompt characters, and of those the characters an earlier
/// prompt began with (what a prefix cache could serve). Then answer
/// correctness on the same cases, claims both ways against the direct
/// question.
async fn prompts(n: usize) {
    let cases: Vec<RagCase> = (0..n).map(|i| case_with(i, 3, 4)).collect();
    let claims: usize = cases
        .iter()
        .map(|c| {
            c.response
                .as_deref()
                .unwrap_or_default()
                .matches(". ")
                .count()
                + 1
        })
        .sum();
    println!(
        "prompts: {n} cases, {:.1} claims and {:.1} passages a case",
        claims as f64 / n as f64,
        cases.iter().map(|c| c.context.len()).sum::<usize>() as f64 / n as f64
    );
    let ways: [(&str, Strategy, bool, bool); 4] = [
        ("json (verify_claims in 4s)", Strategy::Json, true, false),
        (
            "probability + contradiction",
            Strategy::Probability,
            true,
            false,
        ),
        (
            "probability, no contradiction",
            Strategy::Probability,
            false,
            false,
        ),
        (
            "probability, sentences as claims",
            Strategy::Probability,
            true,
            true,
        ),
    ];
    for (name, strategy, contradiction, sentences) in ways {
        let server = ScriptedJudge::start().await;
        let judge = Judge::builder(OpenAiTransport::new(&server.base_url()))
            .with_model("scripted")
            .with_concurrency(4)
            .with_strategy(strategy)
            .with_contradiction(contradiction)
            .with_sentences_as_claims(sentences)
            .build()
            .expect("a valid judge");
        for c in &cases {
            judge
                .evaluate(Metric::Faithfulness, c)
                .await
                .expect("faithfulness");
        }
        let per = |x: u64| x as f64 / n as f64;
        println!(
            "  {name:<34} {:>5.2} calls/case {:>7.0} prompt chars/case, {:>6.0} of them an earlier prompt's beginning ({:.0}%); {:>5.0} tokens/case",
            per(server.requests()),
            per(server.prompt_chars()),
            per(server.repeated_prefix_chars()),
            100.0 * server.repeated_prefix_chars() as f64 / server.prompt_chars().max(1) as f64,
            per(judge.usage().total_tokens()),
        );
    }
    // Answer correctness on the same cases, graded against a two-sentence
    // reference (the first two sentences of their first passage): claims
    // both ways (every claim of both texts asked about, as faithfulness
    // asks) against the one direct question.
    let graded: Vec<RagCase> = cases
        .iter()
        .map(|c| {
            let reference: Vec<&str> = c.context[0].split_inclusive(". ").take(2).collect();
            c.clone().expected_answer(reference.concat().trim())
        })
        .collect();
    println!("correctness on the same cases, against a two-sentence reference:");
    for (name, measure) in [
        ("claims both ways (f1)", Correctness::F1),
        ("the direct question (default)", Correctness::Direct),
    ] {
        let server = ScriptedJudge::start().await;
        let judge = Judge::builder(OpenAiTransport::new(&server.base_url()))
            .with_model("scripted")
            .with_concurrency(4)
            .with_correctness(measure)
            .build()
            .expect("a valid judge");
        for c in &graded {
            judge
                .evaluate(Metric::Correctness, c)
                .await
                .expect("correctness");
        }
        let per = |x: u64| x as f64 / n as f64;
        println!(
            "  {name:<34} {:>5.2} calls/case {:>7.0} prompt chars/case, {:>6.0} of them an earlier prompt's beginning ({:.0}%); {:>5.0} tokens/case",
            per(server.requests()),
            per(server.prompt_chars()),
            per(server.repeated_prefix_chars()),
            100.0 * server.repeated_prefix_chars() as f64 / server.prompt_chars().max(1) as f64,
            per(judge.usage().total_tokens()),
        );
    }
}

/// `n` relevance questions (one call each) at once against a provider that
/// allows `rpm` requests and `tpm` tokens per minute and answers 429 beyond
/// them: how many were refused, and the wall time against the least the
/// limits allow (both buckets start full, then refill per second).
async fn rate_limited(n: usize, concurrency: usize, rpm: u64, tpm: u64) {
    let server = ScriptedJudge::start().await;
    server.set_latency(Duration::from_millis(300));
    server.set_rate_limits(rpm, tpm);
    let judge = judge(&server.base_url(), concurrency);
    let cases: Vec<RagCase> = (0..n).map(case).collect();
    let started = Instant::now();
    let results = futures_util::future::join_all(cases.iter().map(|c| judge.relevance(c))).await;
    let wall = started.elapsed().as_secs_f64();
    let failed = results.iter().filter(|r| r.is_err()).count();
    let (requests, refused) = (server.requests(), server.rejected());
    // What the provider counted for the requests it served.
    let served = requests - refused;
    let need_tokens = server.served_tokens() as f64;
    let allowed = f64::max(
        (served as f64 - rpm as f64).max(0.0) * 60.0 / rpm as f64,
        (need_tokens - tpm as f64).max(0.0) * 60.0 / tpm as f64,
    );
    println!(
        "rate-limited n={n} concurrency={concurrency} limits={rpm} rpm, {tpm} tpm: wall {wall:.1} s, the limits allow {allowed:.1} s, ratio {:.2}; {requests} requests, {refused} answered 429 ({:.1}%), {failed} calls failed; {need_tokens:.0} tokens counted",
        wall / allowed.max(0.001),
        100.0 * refused as f64 / requests.max(1) as f64,
    );
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> T {
    args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let started = Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = || {
        PathBuf::from(
            args.get(2)
                .cloned()
                .unwrap_or_else(|| "target/bench".into()),
        )
    };
    match args.first().map(String::as_str) {
        Some("record") => record(arg(&args, 1, 1000), &dir(), arg(&args, 3, 1)).await,
        Some("replay") => replay(arg(&args, 1, 1000), &dir(), arg(&args, 3, 1), started).await,
        Some("bound") => bound(arg(&args, 1, 1000), &dir(), started),
        Some("auto") => auto(arg(&args, 1, 100), arg(&args, 2, 0.2)).await,
        Some("suite") => {
            let (n, d) = (arg(&args, 1, 1000), dir());
            tokio::task::spawn_blocking(move || suite(n, &d, started))
                .await
                .unwrap();
        }
        Some("prompts") => prompts(arg(&args, 1, 100)).await,
        Some("conversations-cost") => conversations::cost(arg(&args, 1, 100)).await,
        Some("conversations-replay") => conversations::replay(arg(&args, 1, 1000), &dir()).await,
        Some("retrieval") => retrieval::run(arg(&args, 1, 100_000), &dir()),
        Some("pipeline") => pipeline::run(arg(&args, 1, 10_000), &dir()).await,
        Some("live") => live(arg(&args, 1, 100), arg(&args, 2, 0), arg(&args, 3, 16)).await,
        Some("rate-limited") => {
            rate_limited(
                arg(&args, 1, 500),
                arg(&args, 2, 8),
                arg(&args, 3, 60),
                arg(&args, 4, 40_000),
            )
            .await;
        }
        Some("smoke") => {
            let d =
                std::env::temp_dir().join(format!("ragaliq-bench-smoke-{}", std::process::id()));
            record(20, &d, 1).await;
            replay(20, &d, 1, Instant::now()).await;
            bound(20, &d, Instant::now());
            let d2 = d.clone();
            tokio::task::spawn_blocking(move || suite(20, &d2, Instant::now()))
                .await
                .unwrap();
            live(20, 0, 4).await;
            live(20, 20, 4).await;
            prompts(10).await;
            conversations::cost(2).await;
            conversations::replay(4, &d.join("conversations")).await;
            retrieval::run(1000, &d);
            pipeline::run(20, &d.join("pipeline")).await;
            let _ = std::fs::remove_dir_all(&d);
        }
        _ => {
            eprintln!(
                "usage: bench record|replay N [DIR [SAMPLES]] | bound|suite|retrieval|pipeline N [DIR] | live N LATENCY_MS CONCURRENCY | rate-limited N CONCURRENCY RPM TPM | auto N | prompts N | conversations-cost N | conversations-replay N [DIR] | smoke"
            );
            std::process::exit(2);
        }
    }
}
