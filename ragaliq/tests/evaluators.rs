//! The evaluators end to end: the metrics' acceptance table, shared calls,
//! batch integrity, no-call shortcuts and the concurrency limit, with calls
//! counted at a server on 127.0.0.1.

mod common;

use common::{fast_retries, openai_reply, refund_case, within};
use ragaliq::judge::{Judge, OpenAiTransport};
use ragaliq::{Error, EvalOptions, Metric, RagCase, Verdict, VerdictWeights};
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
/// request's task recorded.
async fn canned(claims: Value, verdicts: Value) -> (MockServer, Arc<Mutex<Vec<String>>>) {
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
                "verify_claim" => {
                    // Single re-asks: answer from the claim's text.
                    let user = body["messages"][1]["content"].as_str().unwrap();
                    let verdict = if user.contains("gold") {
                        "contradicted"
                    } else {
                        "supported"
                    };
                    json!({"verdict": verdict, "evidence": "single", "confidence": 0.9})
                }
                other => panic!("unexpected task {other}"),
            };
            ResponseTemplate::new(200).set_body_json(openai_reply(&reply.to_string(), 10, 5))
        })
        .mount(&server)
        .await;
    (server, tasks)
}

fn wm_judge(server: &MockServer) -> Judge {
    Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_retry(fast_retries(0))
        .build()
        .unwrap()
}

fn verdicts(labels: &[&str]) -> Value {
    json!({"verdicts": labels.iter().enumerate().map(|(i, l)| json!({
        "claim": i + 1, "verdict": l, "evidence": "e", "confidence": 0.9
    })).collect::<Vec<_>>()})
}

fn claims(n: usize) -> Value {
    json!({"claims": (1..=n).map(|i| format!("Claim number {i}.")).collect::<Vec<_>>()})
}

#[tokio::test]
async fn faithfulness_acceptance_table() {
    let case = RagCase::new("q")
        .context(["Some passage."])
        .response("Some response.");
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
        let (server, _) = canned(claims(labels.len()), verdicts(labels)).await;
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
async fn an_explicitly_empty_response_makes_no_call_and_a_missing_one_is_refused() {
    let (server, tasks) = canned(claims(1), verdicts(&["supported"])).await;
    let judge = wm_judge(&server);
    let empty = RagCase::new("q").context(["p"]).response("");
    let eval = within(judge.faithfulness(&empty)).await.unwrap();
    assert_eq!(eval.score, 1.0);
    assert_eq!(eval.usage.calls, 0);
    assert!(
        eval.to_string().ends_with("judge: no call needed"),
        "{eval}"
    );
    // Forgetting `.response(..)` is a configuration error, not a pass.
    for metric in [
        Metric::Faithfulness,
        Metric::Hallucination,
        Metric::Relevance,
    ] {
        let e = within(judge.evaluate(metric, &RagCase::new("q").context(["p"])))
            .await
            .unwrap_err();
        assert!(e.is_configuration(), "{e}");
        assert!(
            e.to_string()
                .contains("a response to grade: the case has none"),
            "{e}"
        );
    }
    assert!(tasks.lock().unwrap().is_empty());
}

#[tokio::test]
async fn no_context_means_no_evidence_without_a_verification_call() {
    let (server, tasks) = canned(claims(2), verdicts(&["supported", "supported"])).await;
    let case = RagCase::new("q").response("One. Two.");
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
    let case = RagCase::new("q").context(["p"]).response("r");
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
        {"claim": 1, "verdict": "supported", "evidence": "a", "confidence": 0.9},
        {"claim": 3, "verdict": "supported", "evidence": "c", "confidence": 0.9}
    ]});
    let three = json!({"claims": ["Refunds take 30 days.", "Refunds are paid in gold.", "Returns are free."]});
    let (server, tasks) = canned(three, batch).await;
    let case = RagCase::new("q").context(["p"]).response("r");
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
    assert_eq!(eval.claims[1].evidence, "single");
    assert_eq!(eval.usage.calls, 3);
}

#[tokio::test]
async fn an_unmatchable_batch_is_re_asked_claim_by_claim() {
    // Claim 5 does not exist: the numbering cannot be trusted at all.
    let batch = json!({"verdicts": [
        {"claim": 1, "verdict": "supported"}, {"claim": 5, "verdict": "supported"}
    ]});
    let two = json!({"claims": ["Refunds take 30 days.", "Refunds are paid in gold."]});
    let (server, tasks) = canned(two, batch).await;
    let case = RagCase::new("q").context(["p"]).response("r");
    let eval = within(wm_judge(&server).faithfulness(&case)).await.unwrap();
    let mut t = tasks.lock().unwrap().clone();
    t.sort();
    assert_eq!(
        t,
        [
            "extract_claims",
            "verify_claim",
            "verify_claim",
            "verify_claims"
        ]
    );
    assert_eq!(eval.score, 0.5);
}

#[tokio::test]
async fn an_unknown_label_is_an_error_carrying_the_reply_not_a_guess() {
    let batch = json!({"verdicts": [{"claim": 1, "verdict": "probably"}]});
    let (server, _) = canned(claims(1), batch).await;
    let case = RagCase::new("q").context(["p"]).response("r");
    match within(wm_judge(&server).faithfulness(&case))
        .await
        .unwrap_err()
    {
        Error::JudgeResponse { task, source } => {
            assert_eq!(task, "verify_claims");
            assert_eq!(source.kind.name(), "unknown_label");
            assert!(source.raw.contains("probably"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn faithfulness_and_hallucination_cost_two_calls_in_total() {
    let server = ScriptedJudge::start().await;
    let judge = scripted(&server, 8);
    let case = refund_case();
    let (f, h) =
        within(async { tokio::join!(judge.faithfulness(&case), judge.hallucination(&case)) }).await;
    let (f, h) = (f.unwrap(), h.unwrap());
    assert_eq!(server.requests(), 2);
    assert_eq!(f.usage.calls + h.usage.calls, 2);
    assert_eq!(judge.usage().calls, 2);
    // The scripted rule supports the first sentence and finds no evidence for the second.
    assert_eq!((f.score, h.score), (0.5, 0.5));
    assert_eq!(h.failed_claims().map(|(n, _)| n).collect::<Vec<_>>(), [2]);
    // Relevance adds exactly one more.
    within(judge.relevance(&case)).await.unwrap();
    assert_eq!(server.requests(), 3);
}

#[tokio::test]
async fn hallucination_counts_low_confidence_support() {
    let batch = json!({"verdicts": [
        {"claim": 1, "verdict": "supported", "confidence": 0.95},
        {"claim": 2, "verdict": "supported", "confidence": 0.6}
    ]});
    let (server, _) = canned(claims(2), batch).await;
    let judge = wm_judge(&server);
    let case = RagCase::new("q").context(["p"]).response("r");
    let h = within(judge.hallucination(&case)).await.unwrap();
    assert_eq!(h.score, 0.5);
    assert!(
        h.reasoning.contains("confidence below 0.8"),
        "{}",
        h.reasoning
    );
    let lenient = EvalOptions::default().with_confidence_floor(0.5);
    let h = within(judge.evaluate_with(Metric::Hallucination, &case, &lenient))
        .await
        .unwrap();
    assert_eq!(h.score, 1.0);
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
