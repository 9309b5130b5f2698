//! A cascade of judges, over the wire: what the first judge is unsure of
//! (its reading inside its band) is asked of the next, read with the next
//! judge's band, and only what every judge is unsure of awaits a person.
//! Each judge's exchanges go to the one recording, which replays the whole
//! cascade offline; each judge's calls are counted apart, and spend from
//! the run's one budget at each judge's price.

use crate::common;

use common::{fast_retries, within};
use ragaliq::judge::{Judge, OpenAiTransport};
use ragaliq::record::{Location, Recorder};
use ragaliq::{Band, EvalOptions, Kind, Metric, Mode, RagCase, Uncertain, UnsureWhy, Verdict};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::{Mock, MockServer, Request, ResponseTemplate, matchers::method};

fn case() -> RagCase {
    RagCase::new("How long is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("Refunds are accepted within 30 days. Refunds are paid in gold.")
}

/// A one-token yes/no reply with P(yes) `p`.
fn yes_no(p: f64) -> Value {
    let word = if p >= 0.5 { "yes" } else { "no" };
    json!({
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": word},
            "logprobs": {"content": [{
                "token": word,
                "logprob": if p >= 0.5 { p.ln() } else { (1.0 - p).ln() },
                "top_logprobs": [
                    {"token": "yes", "logprob": p.ln()},
                    {"token": "no", "logprob": (1.0 - p).ln()}
                ]
            }]}}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 1}
    })
}

fn plain(content: &str) -> Value {
    json!({"model": "m", "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 10}})
}

/// What a judge server was asked: the task and the claim, in order.
type Asked = Arc<Mutex<Vec<(String, bool)>>>;

/// A judge server that lists the response's two claims and answers the
/// "30 days" claim supported with P(yes) `days`, the "gold" claim with
/// `gold`, and whether the passages contradict "gold" with `contradicts`.
async fn server(days: f64, gold: f64, contradicts: f64) -> (MockServer, Asked) {
    let server = MockServer::start().await;
    let asked: Asked = Arc::default();
    let kept = asked.clone();
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let user = body["messages"][1]["content"].as_str().unwrap_or_default();
            let gold_claim = user.contains("<claim>Refunds are paid in gold.");
            let (task, reply) = if user.contains("atomic claims") {
                let claims = json!({"claims": ["Refunds are accepted within 30 days.", "Refunds are paid in gold."]});
                ("extract_claims", plain(&claims.to_string()))
            } else if user.contains("contradict") {
                ("claim_contradicted", yes_no(contradicts))
            } else if gold_claim {
                ("claim_supported", yes_no(gold))
            } else {
                ("claim_supported", yes_no(days))
            };
            kept.lock().unwrap().push((task.to_owned(), gold_claim));
            ResponseTemplate::new(200).set_body_json(reply)
        })
        .mount(&server)
        .await;
    (server, asked)
}

fn judge(url: &str, model: &str, band: Band) -> Judge {
    Judge::builder(OpenAiTransport::new(url))
        .with_model(model)
        .with_retry(fast_retries(0))
        .with_timeout(Duration::from_secs(5))
        .with_band(Kind::Claims, band)
        .build()
        .unwrap()
}

fn band() -> Band {
    Band::between(0.1, 0.5).unwrap()
}

#[tokio::test]
async fn what_the_first_judge_is_unsure_of_the_next_decides() {
    // The small judge is sure of "30 days" (0.9) and unsure of "gold"
    // (0.3, inside [0.1, 0.5)); the large one is sure "gold" is contradicted.
    let (small_server, small_asked) = server(0.9, 0.3, 0.5).await;
    let (large_server, large_asked) = server(0.9, 0.02, 0.95).await;
    let small = judge(&format!("{}/v1", small_server.uri()), "small", band());
    let large = judge(&format!("{}/v1", large_server.uri()), "large", band());
    let cascade = small.escalating_to(&large);
    assert_eq!(cascade.escalates_to(), ["large"]);
    let eval = within(cascade.faithfulness(&case())).await.unwrap();
    assert!(eval.awaiting.is_none(), "{eval}");
    assert_eq!(eval.claims[0].verdict, Verdict::Supported);
    assert_eq!(eval.claims[0].judge, None, "decided by the judge itself");
    assert_eq!(eval.claims[1].verdict, Verdict::Contradicted);
    assert_eq!(eval.claims[1].judge.as_deref(), Some("large"));
    assert!(!eval.passed && eval.score == 0.5, "{eval}");
    // The large judge was asked about the one claim, nothing else: no
    // extraction, not the claim the small judge was sure of.
    assert_eq!(
        *large_asked.lock().unwrap(),
        [
            ("claim_supported".to_owned(), true),
            ("claim_contradicted".to_owned(), true)
        ]
    );
    assert!(small_asked.lock().unwrap().len() >= 3);
    // What each decided and cost.
    let shares: Vec<(&str, usize, usize, u64)> = eval
        .judges
        .iter()
        .map(|j| (j.model.as_str(), j.asked, j.decided, j.usage.calls))
        .collect();
    let small_calls = small_asked.lock().unwrap().len() as u64;
    assert_eq!(
        shares,
        [("small", 2, 1, small_calls), ("large", 1, 1, 2)],
        "{eval}"
    );
    assert_eq!(eval.usage.calls, small_calls + 2);
    assert!(
        eval.to_string().contains("[by `large`, escalated]"),
        "{eval}"
    );
}

#[tokio::test]
async fn what_every_judge_is_unsure_of_awaits_a_person() {
    let (small_server, _) = server(0.9, 0.3, 0.5).await;
    let (large_server, _) = server(0.9, 0.4, 0.2).await;
    let small = judge(&format!("{}/v1", small_server.uri()), "small", band());
    let large = judge(&format!("{}/v1", large_server.uri()), "large", band());
    let eval = within(small.escalating_to(&large).faithfulness(&case()))
        .await
        .unwrap();
    let awaiting = eval.awaiting.expect("awaits a person");
    assert_eq!((awaiting.low, awaiting.high, awaiting.items), (0.5, 1.0, 1));
    assert!(!eval.passed);
    let unsure = eval.claims[1].unsure.as_ref().unwrap();
    assert_eq!(
        (unsure.judge.as_str(), unsure.probability, unsure.why),
        ("large", Some(0.4), UnsureWhy::InBand),
        "the last judge asked is named, with its reading"
    );
    assert!(
        eval.claims[1].review_key.is_some(),
        "a person can decide it"
    );
    assert_eq!(eval.judges[1].decided, 0);
    // `uncertain = "decide"`: the last judge's reading at its threshold
    // (0.4 >= 0.33: supported), as before bands.
    let decide = EvalOptions::default().with_uncertain(Uncertain::Decide);
    let eval = within(small.escalating_to(&large).evaluate_with(
        Metric::Faithfulness,
        &case(),
        &decide,
    ))
    .await
    .unwrap();
    assert!(eval.awaiting.is_none() && eval.passed, "{eval}");
    assert_eq!(eval.claims[1].verdict, Verdict::Supported);
}

#[tokio::test]
async fn no_band_means_nothing_escalates() {
    // The default band is off: the small judge's 0.3 decides (no
    // evidence), and the large judge is never asked.
    let (small_server, _) = server(0.9, 0.3, 0.1).await;
    let (large_server, large_asked) = server(0.9, 0.02, 0.95).await;
    let small = judge(&format!("{}/v1", small_server.uri()), "small", Band::Off);
    let large = judge(&format!("{}/v1", large_server.uri()), "large", band());
    let eval = within(small.escalating_to(&large).faithfulness(&case()))
        .await
        .unwrap();
    assert_eq!(eval.claims[1].verdict, Verdict::NoEvidence);
    assert!(large_asked.lock().unwrap().is_empty());
    assert_eq!(eval.judges[1].asked, 0);
}

#[tokio::test]
async fn one_recording_replays_the_whole_cascade_offline() {
    let dir = std::env::temp_dir().join(format!("ragaliq-cascade-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let snapshot = dir.join("cascade.snap");
    let (small_server, _) = server(0.9, 0.3, 0.5).await;
    let (large_server, _) = server(0.9, 0.02, 0.95).await;
    let recorder = Arc::new(Recorder::new(
        Location::at(&snapshot, "cascade", "record it"),
        Mode::Record,
    ));
    let small = judge(&format!("{}/v1", small_server.uri()), "small", band());
    let large = judge(&format!("{}/v1", large_server.uri()), "large", band());
    let live = small.escalating_to(&large).with_recorder(recorder.clone());
    let first = within(live.faithfulness(&case())).await.unwrap();
    let written = recorder
        .save_pending_after(true, "ragaliq/tests/it/cascade.rs")
        .unwrap()
        .unwrap();
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(
        text.contains("model: small") && text.contains("model: large"),
        "each judge's exchanges, each under its model:\n{text}"
    );
    std::fs::rename(&written, &snapshot).unwrap();
    drop((small_server, large_server));
    // Both servers gone: the recording answers every judge.
    let replay = Recorder::new(
        Location::at(&snapshot, "cascade", "record it"),
        Mode::Replay,
    );
    let small = judge("http://127.0.0.1:9/v1", "small", band());
    let large = judge("http://127.0.0.1:9/v1", "large", band());
    let again = within(
        small
            .with_recorder(Arc::new(replay))
            .escalating_to(&large)
            .faithfulness(&case()),
    )
    .await
    .unwrap();
    assert_eq!(again.claims, first.claims);
    assert_eq!(again.score, first.score);
    assert_eq!(again.usage.calls, 0);
    assert_eq!(
        again
            .judges
            .iter()
            .map(|j| (j.asked, j.decided, j.usage.replayed))
            .collect::<Vec<_>>(),
        [(2, 1, 4), (1, 1, 2)]
    );
    // Widen the small judge's band in replay, and the large judge is asked
    // what was never recorded: a missing recording, never a call.
    let wider = judge("http://127.0.0.1:9/v1", "small", Band::All);
    let error = within(
        wider
            .with_recorder(Arc::new(Recorder::new(
                Location::at(&snapshot, "cascade", "record it"),
                Mode::Replay,
            )))
            .escalating_to(&large)
            .faithfulness(&case()),
    )
    .await
    .unwrap_err();
    assert!(error.is_recording(), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn every_judge_of_the_cascade_spends_from_the_runs_one_budget() {
    // Each call costs $1 (80 prompt tokens at $12,500 a million). The small
    // judge makes four ($4 of $4.50); the large one's first call passes the
    // check, its second is refused: one budget for the run, not one each.
    let price = ragaliq::config::Price {
        input_per_million: 1_000_000.0 / 80.0,
        output_per_million: 0.0,
    };
    let (small_server, small_asked) = server(0.9, 0.3, 0.5).await;
    let (large_server, large_asked) = server(0.9, 0.02, 0.95).await;
    let priced = |url: String, model: &str| {
        Judge::builder(OpenAiTransport::new(&url))
            .with_model(model)
            .with_retry(fast_retries(0))
            .with_band(Kind::Claims, band())
            .with_price(price)
            .with_budget(4.5)
            .build()
            .unwrap()
    };
    let small = priced(format!("{}/v1", small_server.uri()), "small");
    let large = priced(format!("{}/v1", large_server.uri()), "large");
    let error = within(small.escalating_to(&large).faithfulness(&case()))
        .await
        .unwrap_err();
    assert!(error.is_budget(), "{error}");
    assert_eq!(small_asked.lock().unwrap().len(), 4);
    assert_eq!(large_asked.lock().unwrap().len(), 1);
}

/// A judge server whose every reply no parser reads ("Perhaps.", no
/// token probabilities), counting the requests.
async fn garbled() -> (MockServer, Arc<Mutex<usize>>) {
    let server = MockServer::start().await;
    let count = Arc::new(Mutex::new(0));
    let kept = count.clone();
    Mock::given(method("POST"))
        .respond_with(move |_: &Request| {
            *kept.lock().unwrap() += 1;
            ResponseTemplate::new(200).set_body_json(plain("Perhaps."))
        })
        .mount(&server)
        .await;
    (server, count)
}

/// Review finding (issue 49): an escalated judge whose reply could not be
/// read turned the whole evaluation into a judge error. It decided
/// nothing, so the item stays uncertain as the first judge read it and
/// awaits a person with its key; under `uncertain = "decide"` the first
/// judge's reading decides.
#[tokio::test]
async fn an_unreadable_escalated_judge_leaves_the_item_awaiting_a_person() {
    let (small_server, _) = server(0.9, 0.3, 0.5).await;
    let (large_server, large_asked) = garbled().await;
    let small = judge(&format!("{}/v1", small_server.uri()), "small", band());
    let large = judge(&format!("{}/v1", large_server.uri()), "large", band());
    let eval = within(small.escalating_to(&large).faithfulness(&case()))
        .await
        .expect("no judge error: the escalated judge decided nothing");
    assert_eq!(*large_asked.lock().unwrap(), 1, "asked about the one claim");
    let awaiting = eval.awaiting.expect("awaits a person");
    assert_eq!((awaiting.low, awaiting.high, awaiting.items), (0.5, 1.0, 1));
    assert_eq!(eval.claims[0].verdict, Verdict::Supported);
    let gold = &eval.claims[1];
    let unsure = gold.unsure.as_ref().unwrap();
    assert_eq!(
        (unsure.judge.as_str(), unsure.why),
        ("large", UnsureWhy::Unreadable),
        "the judge that could not be read is named"
    );
    assert!(
        (unsure.probability.unwrap() - 0.3).abs() < 1e-9,
        "with the reading that stands: {unsure:?}"
    );
    assert_eq!(
        unsure.to_string(),
        "`large`, escalated to, gave a reply no parser reads, so it decided nothing; the judge before it read P(supported) 0.30, inside its band [0.10, 0.50)"
    );
    assert!(gold.review_key.is_some(), "a person can decide it");
    assert_eq!(
        gold.judge, None,
        "the reading that stands is the first judge's"
    );
    assert_eq!(
        eval.judges
            .iter()
            .map(|j| (j.model.as_str(), j.asked, j.decided))
            .collect::<Vec<_>>(),
        [("small", 2, 1), ("large", 1, 0)]
    );
    assert!(
        eval.to_string()
            .contains("could not be read (unsure: awaiting a person)"),
        "{eval}"
    );
    // `uncertain = "decide"`: the first judge's 0.3, below its claim
    // threshold 0.33 and not contradicted enough, is no evidence.
    let decide = EvalOptions::default().with_uncertain(Uncertain::Decide);
    let eval = within(small.escalating_to(&large).evaluate_with(
        Metric::Faithfulness,
        &case(),
        &decide,
    ))
    .await
    .unwrap();
    assert!(eval.awaiting.is_none(), "{eval}");
    assert_eq!(eval.claims[1].verdict, Verdict::NoEvidence);
    assert_eq!(eval.score, 0.5);
    // A metric decided by one answer: relevance read at 0.6 inside the
    // first judge's band, the escalated judge unreadable.
    let (small_server, _) = server(0.6, 0.6, 0.6).await;
    let answers = |url: String, model: &str| {
        Judge::builder(OpenAiTransport::new(&url))
            .with_model(model)
            .with_retry(fast_retries(0))
            .with_band(Kind::Answers, Band::between(0.4, 0.8).unwrap())
            .build()
            .unwrap()
    };
    let small = answers(format!("{}/v1", small_server.uri()), "small");
    let large = answers(format!("{}/v1", large_server.uri()), "large");
    let eval = within(small.escalating_to(&large).relevance(&case()))
        .await
        .expect("no judge error");
    assert!(eval.awaiting.is_some(), "{eval}");
    assert!(eval.review_key.is_some(), "{eval}");
    assert_eq!(
        eval.judges
            .iter()
            .map(|j| (j.model.as_str(), j.asked, j.decided))
            .collect::<Vec<_>>(),
        [("small", 1, 0), ("large", 1, 0)]
    );
    let eval = within(small.escalating_to(&large).evaluate_with(
        Metric::Relevance,
        &case(),
        &decide,
    ))
    .await
    .unwrap();
    assert!(eval.awaiting.is_none() && !eval.passed, "0.6 < 0.7: {eval}");
}
