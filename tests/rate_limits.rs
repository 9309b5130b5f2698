//! Limits that adapt to the provider: against a server that enforces
//! requests per minute and answers 429 beyond them (with OpenAI's
//! `x-ratelimit-*` headers and `retry-after-ms`), the judge paces itself
//! from the headers instead of spending its retries on refusals.

use ragaliq::judge::OpenAiTransport;
use ragaliq::{Judge, RagCase};
use ragaliq_scripted::ScriptedJudge;
use std::time::{Duration, Instant};

fn case(i: usize) -> RagCase {
    RagCase::new(format!("How long is refund window number {i}?"))
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("Refunds are accepted within 30 days of delivery.")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_judge_paces_itself_from_the_providers_headers() {
    let server = ScriptedJudge::start().await;
    // 12 requests every 6 s (a provider's minute, shortened so the test
    // waits a second, not ten): a full window of 12, then one every 0.5 s.
    server.set_rate_limits_over(12, 1_000_000, Duration::from_secs(6));
    let judge = Judge::builder(OpenAiTransport::new(&server.base_url()))
        .with_model("scripted")
        .with_concurrency(4)
        .with_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let started = Instant::now();
    let cases: Vec<RagCase> = (0..14).map(case).collect();
    let results = futures_util::future::join_all(cases.iter().map(|c| judge.relevance(c))).await;
    let wall = started.elapsed();
    for r in &results {
        assert!(r.is_ok(), "{:?}", r.as_ref().err());
    }
    println!(
        "{} requests, {} answered 429, {wall:?}",
        server.requests(),
        server.rejected()
    );
    // The 13th and 14th wait for the window (about 0.5 and 1 s) rather than
    // being sent into it: at most one probe is refused.
    assert!(
        server.rejected() <= 1,
        "{} of {} requests were answered 429",
        server.rejected(),
        server.requests()
    );
    assert!(
        wall >= Duration::from_millis(800),
        "the window was kept: {wall:?}"
    );
}
