//! The evaluators end to end: the metrics' acceptance table, shared calls,
//! batch integrity, no-call shortcuts and the concurrency limit, with calls
//! counted at a server on 127.0.0.1.

use crate::common;

use common::{fast_retries, openai_reply, refund_case, within};
use ragaliq::Strategy;
use ragaliq::judge::{Judge, OpenAiTransport};
use ragaliq::{Error, EvalOptions, Metric, RagCase, Uncertain, Verdict, VerdictWeights};
use ragaliq_scripted::ScriptedJudge;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

fn scripted(judge: &ScriptedJudge, concurrency: usize) -> Judge {
    Judge::builder(OpenAiTransport::new(&judge.base_url()))
        .with_model("scripted")
        .with_concurrency(concurrency)
        .build()
        .unwrap()
}

/// A wiremock judge whose replies are `(extract, verify)` JSON, with every
/// request's task recorded. A claim asked alone is answered from its text,
/// quoting the first passage (so its evidence is found).
async fn canned(claims: Value, verdicts: Value) -> (MockServer, Arc<Mutex<Vec<String>>>) {
    canned_with(claims, verdicts, |user| {
        let verdict = if user.contains("gold") {
            "contradicted"
        } else {
            "supported"
        };
        let passage = user
            .split("<passage n=\"1\">")
            .nth(1)
            .and_then(|p| p.split("</passage>").next())
            .unwrap_or_default();
        json!({"verdict": verdict, "evidence": passage, "confidence": 0.9})
    })
    .await
}

async fn canned_with(
    claims: Value,
    verdicts: Value,
    alone: impl Fn(&str) -> Value + Send + Sync + 'static,
) -> (MockServer, Arc<Mutex<Vec<String>>>) {
    let server = MockServer::start().await;
    let tasks = Arc::new(Mutex::new(Vec::new()));
    let seen = tasks.clone();
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let task = body["response_format"]["json_schema"]["name"]
                .as_str()
                .unwrap()
                .to_owned();
            seen.lock().unwrap().push(task.clone());
            let reply = match task.as_str() {
                "extract_claims" => claims.clone(),
                "verify_claims" => verdicts.clone(),
                "verify_claim" => alone(body["messages"][1]["content"].as_str().unwrap()),
                other => panic!("unexpected task {other}"),
            };
            ResponseTemplate::new(200).set_body_json(openai_reply(&reply.to_string(), 10, 5))
        })
        .mount(&server)
        .await;
    (server, tasks)
}

/// A judge at `server` asking about up to 8 claims per call, so the canned
/// batches below are asked as one call whatever the default batch size.
fn wm_judge(server: &MockServer) -> Judge {
    Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_strategy(Strategy::Json)
        .with_retry(fast_retries(0))
        .with_verify_batch(8)
        .build()
        .unwrap()
}

/// The passage the canned cases are graded against, and what their
/// canned verdicts quote from it.
const PASSAGE: &str = "The ledger lists claims one to four.";
const QUOTE: &str = "The ledger lists claims";

fn verdicts(labels: &[&str]) -> Value {
    json!({"verdicts": labels.iter().enumerate().map(|(i, l)| json!({
        "claim": i + 1, "verdict": l, "evidence": QUOTE, "confidence": 0.9
    })).collect::<Vec<_>>()})
}

fn claims(n: usize) -> Value {
    json!({"claims": (1..=n).map(|i| format!("Claim number {i}.")).collect::<Vec<_>>()})
}

/// A response that makes the claims of [`claims`]`(n)`.
fn response(n: usize) -> String {
    (1..=n).map(|i| format!("Claim number {i}. ")).collect()
}

#[tokio::test]
async fn faithfulness_acceptance_table() {
    // (verdicts, expected score) with the default ratio weights.
    let table: &[(&[&str], f64)] = &[
        (&["supported", "supported", "supported"], 1.0),
        (&["supported", "no_evidence"], 0.5),
        (
            &["supported", "supported", "no_evidence", "contradicted"],
            0.5,
        ),
        (&["no_evidence", "no_evidence"], 0.0),
        (&["contradicted"], 0.0),
    ];
    for (labels, want) in table {
        let case = RagCase::new("q")
            .context([PASSAGE])
            .response(response(labels.len()));
        // A single claim is asked alone (`verify_claim`): answer it with
        // the row's one verdict.
        let first = labels[0];
        let (server, _) = canned_with(
            claims(labels.len()),
            verdicts(labels),
            move |_| json!({"verdict": first, "evidence": QUOTE, "confidence": 0.9}),
        )
        .await;
        let eval = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
        assert_eq!(eval.score, *want, "{labels:?}");
        assert_eq!(eval.claims.len(), labels.len());
    }
}

#[tokio::test]
async fn no_claims_is_vacuously_faithful_and_says_so() {
    let (server, tasks) = canned(json!({"claims": []}), json!({})).await;
    let case = RagCase::new("Hi?")
        .context(["p"])
        .response("Hello there, happy to help!");
    let eval = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert_eq!((eval.score, eval.passed), (1.0, true));
    assert!(
        eval.reasoning.contains("vacuously faithful"),
        "{}",
        eval.reasoning
    );
    assert_eq!(
        *tasks.lock().unwrap(),
        ["extract_claims"],
        "nothing to verify, no verification call"
    );
}

#[tokio::test]
async fn an_empty_or_missing_response_is_an_input_error_with_no_call() {
    let (server, tasks) = canned(claims(1), verdicts(&["supported"])).await;
    let judge = wm_judge(&server);
    // An empty answer states nothing: never vacuously faithful, never
    // precise against a reference. Forgetting `.response(..)` is refused
    // the same way, with its own words.
    for (case, says) in [
        (
            RagCase::new("q").context(["p"]).response("  \n"),
            "the response is empty",
        ),
        (
            RagCase::new("q").context(["p"]),
            "a response to grade: the case has none",
        ),
    ] {
        let case = case.expected_answer("Thirty days.");
        for metric in [
            Metric::Faithfulness,
            Metric::Hallucination,
            Metric::Relevance,
            Metric::Correctness,
        ] {
            let e = within(judge.evaluate(metric, &case)).await.unwrap_err();
            assert!(e.is_configuration(), "{metric}: {e}");
            assert!(e.to_string().contains(says), "{metric}: {e}");
        }
    }
    assert!(tasks.lock().unwrap().is_empty(), "no call for either");
}

#[tokio::test]
async fn no_context_means_no_evidence_without_a_verification_call() {
    let (server, tasks) = canned(claims(2), verdicts(&["supported", "supported"])).await;
    let case = RagCase::new("q").response(response(2));
    let eval = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert_eq!(eval.score, 0.0);
    assert!(
        eval.claims
            .iter()
            .all(|c| c.verdict == Verdict::NoEvidence && c.failed)
    );
    assert_eq!(*tasks.lock().unwrap(), ["extract_claims"]);
}

#[tokio::test]
async fn weight_presets_and_custom_weights() {
    let labels = [
        "supported",
        "partially_supported",
        "no_evidence",
        "contradicted",
    ];
    let (server, _) = canned(claims(4), verdicts(&labels)).await;
    let judge = wm_judge(&server);
    let case = RagCase::new("q").context([PASSAGE]).response(response(4));
    for (weights, want) in [
        (VerdictWeights::RATIO, 1.5 / 4.0),
        (VerdictWeights::WEIGHTED, 0.5 / 4.0),
        (VerdictWeights::STRICT, 0.0),
        (VerdictWeights::new(1.0, 1.0, 1.0, 0.0), 0.75),
    ] {
        let options = EvalOptions::default().with_weights(weights);
        let eval = within(judge.evaluate_with(Metric::Faithfulness, &case, &options))
            .await
            .unwrap();
        assert_eq!(eval.score, want, "{weights:?}");
    }
}

#[tokio::test]
async fn a_short_batch_is_completed_by_re_asking_only_the_missing_claims() {
    // Three claims, the batch answers claims 1 and 3 only.
    let batch = json!({"verdicts": [
        {"claim": 1, "verdict": "supported", "evidence": "Refunds take 30 days", "confidence": 0.9},
        {"claim": 3, "verdict": "supported", "evidence": "returns are free", "confidence": 0.9}
    ]});
    let three = json!({"claims": ["Refunds take 30 days.", "Refunds are paid in gold.", "Returns are free."]});
    let (server, tasks) = canned(three, batch).await;
    let case = RagCase::new("q")
        .context(["Refunds take 30 days. Returns are free."])
        .response("Refunds take 30 days. Refunds are paid in gold. Returns are free.");
    let eval = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert_eq!(
        *tasks.lock().unwrap(),
        ["extract_claims", "verify_claims", "verify_claim"]
    );
    let got: Vec<Verdict> = eval.claims.iter().map(|c| c.verdict).collect();
    assert_eq!(
        got,
        [
            Verdict::Supported,
            Verdict::Contradicted,
            Verdict::Supported
        ]
    );
    assert_eq!(
        eval.claims[1].evidence,
        "Refunds take 30 days. Returns are free."
    );
    assert_eq!(eval.claims[1].evidence_in, Some(1));
    assert_eq!(eval.usage.calls, 3);
}

#[tokio::test]
async fn an_item_out_of_range_costs_only_its_own_claim() {
    // Claim 5 does not exist: that item is set aside; claim 1's item
    // stands, and claim 2, which no item answers, is asked again alone.
    let batch = json!({"verdicts": [
        {"claim": 1, "verdict": "supported", "evidence": "Refunds take 30 days"},
        {"claim": 5, "verdict": "supported"}
    ]});
    let two = json!({"claims": ["Refunds take 30 days.", "Refunds are paid in gold."]});
    let (server, tasks) = canned(two, batch).await;
    let case = RagCase::new("q")
        .context(["Refunds take 30 days."])
        .response("Refunds take 30 days. Refunds are paid in gold.");
    let eval = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert_eq!(
        *tasks.lock().unwrap(),
        ["extract_claims", "verify_claims", "verify_claim"]
    );
    assert_eq!(eval.score, 0.5);
}

#[tokio::test]
async fn a_placeholder_echoed_in_one_item_keeps_its_neighbours() {
    // What a small model did: one claim's evidence echoes the prompt's
    // placeholder. The other four verdicts stand; that claim is asked
    // again alone.
    let batch = json!({"verdicts": [
        {"claim": 1, "verdict": "supported", "evidence": QUOTE, "confidence": 0.9},
        {"claim": 2, "verdict": "supported", "evidence": "<quote from a passage>", "confidence": 0.9},
        {"claim": 3, "verdict": "no_evidence", "evidence": "", "confidence": 0.9},
        {"claim": 4, "verdict": "supported", "evidence": QUOTE, "confidence": 0.9},
        {"claim": 5, "verdict": "contradicted", "evidence": QUOTE, "confidence": 0.9}
    ]});
    let (server, tasks) = canned(claims(5), batch).await;
    let case = RagCase::new("q").context([PASSAGE]).response(response(5));
    let eval = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert_eq!(
        *tasks.lock().unwrap(),
        ["extract_claims", "verify_claims", "verify_claim"],
        "only the unreadable item is asked again"
    );
    let got: Vec<Verdict> = eval.claims.iter().map(|c| c.verdict).collect();
    assert_eq!(
        got,
        [
            Verdict::Supported,
            Verdict::Supported,
            Verdict::NoEvidence,
            Verdict::Supported,
            Verdict::Contradicted
        ]
    );
}

#[tokio::test]
async fn ungrounded_evidence_is_asked_again_then_awaits_a_person_never_a_pass() {
    // The judge quotes the claim itself: in no passage. Asked again alone,
    // told so, it does it again: the claim decides nothing, the evaluation
    // awaits a person (counted each way its score is 0.5 or 1, on both
    // sides of 0.7), and the message says why.
    let batch = json!({"verdicts": [
        {"claim": 1, "verdict": "supported", "evidence": "Claim number 1.", "confidence": 0.9},
        {"claim": 2, "verdict": "supported", "evidence": QUOTE, "confidence": 0.9}
    ]});
    let (server, tasks) = canned_with(claims(2), batch, |user| {
        assert!(
            user.contains("is in none of the passages"),
            "the re-ask says why"
        );
        json!({"verdict": "supported", "evidence": "Claim number 1.", "confidence": 0.9})
    })
    .await;
    let case = RagCase::new("q").context([PASSAGE]).response(response(2));
    let eval = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert_eq!(
        *tasks.lock().unwrap(),
        ["extract_claims", "verify_claims", "verify_claim"]
    );
    assert!(eval.awaiting.is_some() && !eval.passed, "{eval}");
    let awaiting = eval.awaiting.unwrap();
    assert_eq!((awaiting.low, awaiting.high, awaiting.items), (0.5, 1.0, 1));
    assert!(eval.claims[0].ungrounded && eval.claims[0].failed);
    assert_eq!(eval.claims[1].evidence_in, Some(1));
    let text = eval.to_string();
    assert!(
        text.starts_with("faithfulness: AWAITING A PERSON: the judge is unsure of 1 claim; counted each way the score is 0.50 to 1.00, on both sides of the threshold 0.70"),
        "{text}"
    );
    assert!(
        text.contains("[1] \"Claim number 1.\" — uncertain: the evidence `default` cites is in no passage, even asked again; it said supported"),
        "{text}"
    );
    // Decided by the threshold instead, the ungrounded verdict counts as no
    // evidence: never a pass.
    let decide = EvalOptions::default().with_uncertain(Uncertain::Decide);
    let eval = within(wm_judge(&server).evaluate_with(Metric::Faithfulness, &case, &decide))
        .await
        .unwrap();
    assert!(
        eval.awaiting.is_none() && !eval.passed && eval.score == 0.5,
        "{eval}"
    );
    assert!(
        text.contains("evidence (in no passage): \"Claim number 1.\""),
        "{text}"
    );
    // With evidence not checked, the verdict is taken as given.
    let (server, _) = canned(
        claims(2),
        json!({"verdicts": [
            {"claim": 1, "verdict": "supported", "evidence": "Claim number 1.", "confidence": 0.9},
            {"claim": 2, "verdict": "supported", "evidence": QUOTE, "confidence": 0.9}
        ]}),
    )
    .await;
    let unchecked = Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_strategy(Strategy::Json)
        .with_retry(fast_retries(0))
        .with_evidence_checked(false)
        .build()
        .unwrap();
    let eval = within(unchecked.faithfulness(&case)).await.unwrap();
    assert_eq!((eval.score, eval.undecided), (1.0, false));
}

#[tokio::test]
async fn an_extracted_claim_the_response_never_made_is_dropped() {
    // What a small model did: a second, garbled copy of the one claim.
    let extracted = json!({"claims": [
        "Our stores open at nine in the morning.",
        "We store open at nine in the morning.",
        "Parking is free for customers."
    ]});
    let (server, _) = canned(
        extracted,
        json!({"verdicts": [{"claim": 1, "verdict": "supported", "evidence": "open at nine in the morning"}]}),
    )
    .await;
    let case = RagCase::new("When do you open?")
        .context(["All stores open at nine in the morning."])
        .response("Our stores open at nine in the morning.");
    let eval = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert_eq!(eval.claims.len(), 1, "{eval}");
    assert_eq!(eval.score, 1.0);
    assert!(
        eval.reasoning
            .contains("2 claims the judge extracted were dropped")
            && eval.reasoning.contains("(repeats an earlier claim)")
            && eval
                .reasoning
                .contains("\"Parking is free for customers.\" (not in the response)"),
        "{}",
        eval.reasoning
    );
    assert_eq!(eval.counts.map(|c| c.dropped), Some(2));
    // Context recall extracts its facts from the expected answer the same
    // way: what it drops is counted and said there too.
    let case = case
        .response("")
        .expected_answer("Our stores open at nine in the morning.");
    let recall = within(wm_judge(&server).evaluate(Metric::ContextRecall, &case))
        .await
        .unwrap();
    assert_eq!(recall.counts.map(|c| c.dropped), Some(2), "{recall}");
    assert!(
        recall
            .reasoning
            .contains("2 claims the judge extracted were dropped")
            && recall
                .reasoning
                .contains("\"Parking is free for customers.\" (not in the reference)"),
        "{}",
        recall.reasoning
    );
}

#[tokio::test]
async fn claims_all_invented_for_a_text_that_states_nothing_are_a_judge_error_that_shows_them() {
    // Claims about an answer that states nothing, none made by it: not a
    // verdict on anything (a text that states something is asked again and
    // undecided instead, see `claims_that_are_all_invented_are_undecided_and_listed`).
    let extracted = json!({"claims": [
        "The refund window is not mentioned in the response."
    ]});
    let (server, tasks) = canned(extracted, verdicts(&["supported"])).await;
    let case = RagCase::new("What is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("I'm not sure, sorry.");
    let e = within(wm_judge(&server).faithfulness(&case))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("none of the claims the judge extracted is in the response")
            && text.contains("--- raw reply ---")
            && text.matches("The refund window is not mentioned").count() == 2,
        "{text}"
    );
    assert_eq!(
        *tasks.lock().unwrap(),
        ["extract_claims"],
        "nothing verified"
    );
}

#[tokio::test]
async fn an_unknown_label_is_an_error_carrying_the_reply_not_a_guess() {
    // In a batch, the item is asked again alone; alone, the same label is
    // an error carrying the reply.
    let batch = json!({"verdicts": [
        {"claim": 1, "verdict": "probably", "evidence": QUOTE},
        {"claim": 2, "verdict": "supported", "evidence": QUOTE}
    ]});
    let (server, tasks) = canned_with(
        claims(2),
        batch,
        |_| json!({"verdict": "probably", "evidence": QUOTE}),
    )
    .await;
    let case = RagCase::new("q").context([PASSAGE]).response(response(2));
    match within(wm_judge(&server).faithfulness(&case))
        .await
        .unwrap_err()
    {
        Error::JudgeResponse { task, source } => {
            assert_eq!(task, "verify_claim");
            assert_eq!(source.kind.name(), "unknown_label");
            assert!(source.raw.contains("probably"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        *tasks.lock().unwrap(),
        ["extract_claims", "verify_claims", "verify_claim"]
    );
}

/// A team evaluates its cases in parallel on tokio's tasks: every metric's
/// future must be `Send` (its claims asked concurrently included), and the
/// spawned evaluations share one judge's calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluations_run_on_spawned_tasks() {
    let server = ScriptedJudge::start().await;
    let judge = scripted(&server, 8);
    let mut tasks = tokio::task::JoinSet::new();
    for metric in [
        Metric::Faithfulness,
        Metric::Hallucination,
        Metric::Relevance,
    ] {
        let judge = judge.clone();
        tasks.spawn(async move {
            let eval = judge.evaluate(metric, &refund_case()).await?;
            Ok::<_, Error>(format!("{metric} {:.2}", eval.score))
        });
    }
    let claim = judge.clone();
    tasks.spawn(async move {
        let verdict = claim
            .verify_claim(
                "Refunds are accepted within 30 days.",
                &["Refunds are accepted within 30 days of delivery.".into()],
            )
            .await?;
        Ok(format!("claim {:?}", verdict.verdict))
    });
    let mut done = Vec::new();
    while let Some(joined) = within(tasks.join_next()).await {
        done.push(joined.unwrap().unwrap());
    }
    done.sort();
    // The same, asked one after another on this task.
    let alone = ScriptedJudge::start().await;
    let sequential = scripted(&alone, 1);
    let mut expected = Vec::new();
    for metric in [
        Metric::Faithfulness,
        Metric::Hallucination,
        Metric::Relevance,
    ] {
        let eval = within(sequential.evaluate(metric, &refund_case()))
            .await
            .unwrap();
        expected.push(format!("{metric} {:.2}", eval.score));
    }
    expected.push("claim Supported".into());
    expected.sort();
    assert_eq!(done, expected);
    assert_eq!(server.requests(), 6);
}

#[tokio::test]
async fn faithfulness_and_hallucination_share_every_call() {
    let server = ScriptedJudge::start().await;
    let judge = scripted(&server, 8);
    let case = refund_case();
    let (f, h) =
        within(async { tokio::join!(judge.faithfulness(&case), judge.hallucination(&case)) }).await;
    let (f, h) = (f.unwrap(), h.unwrap());
    // One extraction, one question per claim (2), and one whether the
    // unsupported claim is contradicted: four calls, shared by the two
    // metrics (each is paid once, whichever asked first).
    assert_eq!(server.requests(), 4);
    assert_eq!(f.usage.calls + h.usage.calls, 4);
    assert_eq!(judge.usage().calls, 4);
    // The scripted rule supports the first sentence and finds no evidence for the second.
    assert_eq!((f.score, h.score), (0.5, 0.5));
    assert_eq!(h.failed_claims().map(|(n, _)| n).collect::<Vec<_>>(), [2]);
    // Relevance adds exactly one more.
    within(judge.relevance(&case)).await.unwrap();
    assert_eq!(server.requests(), 5);
    // With the JSON prompts, the claims go in one batch: two calls.
    let json_server = ScriptedJudge::start().await;
    let json = Judge::builder(OpenAiTransport::new(&json_server.base_url()))
        .with_strategy(Strategy::Json)
        .build()
        .unwrap();
    let (f, h) =
        within(async { tokio::join!(json.faithfulness(&case), json.hallucination(&case)) }).await;
    assert_eq!((f.unwrap().score, h.unwrap().score), (0.5, 0.5));
    assert_eq!(json_server.requests(), 2);
}

#[tokio::test]
async fn hallucination_counts_low_confidence_support_only_with_a_floor() {
    let batch = json!({"verdicts": [
        {"claim": 1, "verdict": "supported", "evidence": QUOTE, "confidence": 0.95},
        {"claim": 2, "verdict": "supported", "evidence": QUOTE, "confidence": 0.6}
    ]});
    let (server, _) = canned(claims(2), batch).await;
    let judge = wm_judge(&server);
    let case = RagCase::new("q").context([PASSAGE]).response(response(2));
    // One rule by default: hallucinated means not supported, as
    // faithfulness counts it.
    let h = within(judge.hallucination(&case)).await.unwrap();
    let f = within(judge.faithfulness(&case)).await.unwrap();
    assert_eq!((h.score, f.score), (1.0, 1.0));
    let strict = EvalOptions::default().with_confidence_floor(0.8);
    let h = within(judge.evaluate_with(Metric::Hallucination, &case, &strict))
        .await
        .unwrap();
    assert_eq!(h.score, 0.5);
    assert!(
        h.reasoning.contains("confidence below the floor 0.8"),
        "{}",
        h.reasoning
    );
}

#[tokio::test]
async fn context_metrics_against_the_scripted_judge() {
    let server = ScriptedJudge::start().await;
    let judge = scripted(&server, 4);
    let case = RagCase::new("How long is the refund window after delivery?")
        .context([
            "Shipping takes five business days.",
            "Refunds are accepted within 30 days of delivery.",
        ])
        .response("30 days.")
        .expected_facts([
            "Refunds are accepted within 30 days of delivery.",
            "Refunds require a receipt.",
        ]);
    let p = within(judge.context_precision(&case)).await.unwrap();
    // Only passage 2 shares a term with the query: AP = (1/2) / 1.
    assert_eq!(p.score, 0.5);
    assert_eq!(
        p.passages.iter().map(|x| x.relevant).collect::<Vec<_>>(),
        [false, true]
    );
    let r = within(judge.context_recall(&case)).await.unwrap();
    assert_eq!(r.score, 0.5);
    assert_eq!(r.failed_claims().count(), 1);

    let no_facts = RagCase::new("q").context(["p"]).response("r");
    let err = within(judge.context_recall(&no_facts)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "context_recall needs expected facts or an expected answer"
    );
    let err = within(judge.context_precision(&RagCase::new("q").response("r")))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "context_precision needs at least one context passage"
    );
}

#[tokio::test]
async fn the_concurrency_limit_holds_at_the_server() {
    let server = ScriptedJudge::start().await;
    server.set_latency(Duration::from_millis(50));
    let judge = scripted(&server, 3);
    let cases: Vec<RagCase> = (0..12)
        .map(|i| {
            RagCase::new(format!("Question {i} about refunds?"))
                .context(["Refunds are accepted within 30 days."])
                .response(format!("Answer {i}: refunds are accepted within 30 days."))
        })
        .collect();
    let evals = within(futures_util::future::join_all(
        cases.iter().map(|c| judge.relevance(c)),
    ))
    .await;
    assert!(evals.iter().all(Result::is_ok));
    assert_eq!(server.requests(), 12);
    assert_eq!(
        server.max_in_flight(),
        3,
        "the limit is reached and never exceeded"
    );
}

#[tokio::test]
async fn invalid_case_fails_before_any_call() {
    let server = ScriptedJudge::start().await;
    let judge = scripted(&server, 1);
    let err = within(judge.faithfulness(&RagCase::new("").response("r")))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid case: the query is empty");
    assert_eq!(server.requests(), 0);
}

/// A judge that lists no claim in a response that plainly states something
/// is asked again once, then the evaluation is undecided, never a vacuous
/// pass; a response that truly states nothing stays vacuously faithful.
#[tokio::test]
async fn no_claims_listed_for_a_factual_answer_is_undecided_not_a_pass() {
    let (server, tasks) = canned(json!({"claims": []}), verdicts(&[])).await;
    let judge = wm_judge(&server);
    let factual = RagCase::new("How long do refunds take?")
        .context([PASSAGE])
        .response("Refunds take 30 days and are paid to the original card.");
    let f = within(judge.faithfulness(&factual)).await.unwrap();
    assert!(f.undecided && !f.passed, "{f}");
    assert_eq!(tasks.lock().unwrap().len(), 2, "asked again once");
    let shown = f.to_string();
    assert!(
        shown.contains("UNDECIDED: the judge listed no claim in a response that states something"),
        "{shown}"
    );
    // Hallucination shares both answers, and is undecided too.
    let h = within(judge.hallucination(&factual)).await.unwrap();
    assert!(h.undecided && !h.passed, "{h}");
    assert_eq!(tasks.lock().unwrap().len(), 2);
    // "I'm not sure, sorry." states nothing: vacuously faithful, one call.
    let nothing = RagCase::new("How long do refunds take?")
        .context([PASSAGE])
        .response("I'm not sure, sorry.");
    let f = within(judge.faithfulness(&nothing)).await.unwrap();
    assert_eq!((f.score, f.passed, f.undecided), (1.0, true, false), "{f}");
    assert_eq!(tasks.lock().unwrap().len(), 3);
}

/// Claims the judge wrote that are not the response's (a small model
/// answering the query instead of splitting an off-topic answer, as the
/// 1.5B did in the quickstart) count as none: asked again once, then
/// undecided, with what it wrote listed; never an error, never a pass.
#[tokio::test]
async fn claims_that_are_all_invented_are_undecided_and_listed() {
    let invented = json!({"claims": ["The refund window is not mentioned in the response."]});
    let (server, tasks) = canned(invented, verdicts(&[])).await;
    let judge = wm_judge(&server);
    let off_topic = RagCase::new("What is the refund window?")
        .context([PASSAGE])
        .response("Our stores open at nine in the morning.");
    let f = within(judge.faithfulness(&off_topic)).await.unwrap();
    assert!(f.undecided && !f.passed, "{f}");
    assert_eq!(tasks.lock().unwrap().len(), 2, "asked again once");
    let shown = f.to_string();
    assert!(
        shown.contains("the judge listed no claim in a response that states something")
            && shown.contains(
                "\"The refund window is not mentioned in the response.\" (not in the response)"
            ),
        "{shown}"
    );
}

/// The user's *wh*-question listed back as a claim (the kit's 0.5B did so
/// for 24 of 468 items) is dropped before any question is asked about it,
/// and said; an answer built around the echo gains nothing by it: what it
/// states is still checked, an answer the judge lists only the echo for is
/// undecided, and an echoed yes/no question, whose proposition a "Yes."
/// affirms, is still judged.
#[tokio::test]
async fn the_users_question_echoed_is_dropped_and_hides_no_answer() {
    const ECHO: &str = "(the user's question echoed, no claim)";
    let query = "How long is the warranty?";
    // The echo beside a false claim: only the claim is asked about, and it
    // fails the answer.
    let listed = json!({"claims": [query, "The warranty lasts 10 years, paid in gold."]});
    let (server, tasks) = canned(listed, verdicts(&["contradicted"])).await;
    let case = RagCase::new(query)
        .context([PASSAGE])
        .response("How long is the warranty? It lasts 10 years, paid in gold.");
    let f = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert!(!f.passed && f.claims.len() == 1, "{f}");
    assert!(
        f.to_string().contains(&format!("\"{query}\" {ECHO}")),
        "{f}"
    );
    assert_eq!(*tasks.lock().unwrap(), ["extract_claims", "verify_claim"]);

    // Only the echo listed, for an answer that states something: asked
    // again, then undecided, never vacuously faithful.
    let (server, tasks) = canned(json!({"claims": [query]}), verdicts(&[])).await;
    let case = RagCase::new(query)
        .context([PASSAGE])
        .response("How long is the warranty? Ten years, paid in gold.");
    let f = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert!(f.undecided && !f.passed, "{f}");
    assert_eq!(tasks.lock().unwrap().len(), 2, "asked again once");

    // An answer that is only the question echoed states nothing: vacuously
    // faithful (relevance is what fails it), the echo listed, no error.
    let (server, _) = canned(json!({"claims": [query]}), verdicts(&[])).await;
    let case = RagCase::new(query).context([PASSAGE]).response(query);
    let f = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert!(f.passed && !f.undecided, "{f}");
    assert!(f.to_string().contains(ECHO), "{f}");

    // A yes/no question echoed is the answer's "Yes." in question form: it
    // is judged, and a contradicted one fails.
    // (The canned judge contradicts what mentions gold.)
    let yes_no = "Is the warranty paid in gold?";
    let (server, tasks) = canned(json!({"claims": [yes_no]}), verdicts(&[])).await;
    let case = RagCase::new(yes_no)
        .context([PASSAGE])
        .response("Is the warranty paid in gold? Yes.");
    let f = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    assert!(!f.passed && f.claims.len() == 1, "{f}");
    assert!(!f.to_string().contains(ECHO), "{f}");
    assert_eq!(*tasks.lock().unwrap(), ["extract_claims", "verify_claim"]);
}

/// A wiremock judge whose extraction lists no claim for a text that says
/// "don't know" and one claim otherwise; every claim it is asked about is
/// supported, quoting the first passage.
async fn claims_unless_unknown() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let user = body["messages"][1]["content"].as_str().unwrap().to_owned();
            let reply = match body["response_format"]["json_schema"]["name"].as_str() {
                Some("extract_claims") if user.contains("know") => json!({"claims": []}),
                Some("extract_claims") => json!({"claims": ["Refunds take 30 days."]}),
                _ => {
                    let passage = user
                        .split("<passage n=\"1\">")
                        .nth(1)
                        .and_then(|p| p.split("</passage>").next())
                        .unwrap_or_default()
                        .to_owned();
                    json!({"verdict": "supported", "evidence": passage, "confidence": 0.9})
                }
            };
            ResponseTemplate::new(200).set_body_json(openai_reply(&reply.to_string(), 10, 5))
        })
        .mount(&server)
        .await;
    server
}

/// "I don't know." makes no claim: read as claims both ways it was
/// vacuously precise, so `Correctness::Precision` passed it with score 1.
#[tokio::test]
async fn a_response_that_makes_no_claim_is_not_correct_by_any_measure() {
    let server = claims_unless_unknown().await;
    let case = RagCase::new("How long do refunds take?")
        .expected_answer("Refunds take 30 days.")
        .response("I don't know.");
    for measure in [
        ragaliq::Correctness::Precision,
        ragaliq::Correctness::Recall,
        ragaliq::Correctness::F1,
    ] {
        let options = EvalOptions::default().with_correctness(measure);
        let eval = within(wm_judge(&server).evaluate_with(Metric::Correctness, &case, &options))
            .await
            .unwrap();
        assert_eq!(eval.score, 0.0, "{measure}: {eval}");
        assert!(!eval.passed, "{measure}: {eval}");
        assert!(
            eval.reasoning.contains("The response makes no claim"),
            "{measure}: {}",
            eval.reasoning
        );
    }
}
