//! ragaliq used as a user would: configuration in a `ragaliq.toml`, a judge
//! built from it, every metric on one case, against the scripted judge on
//! 127.0.0.1.

use ragaliq::prelude::*;
use ragaliq::{Config, Provider};
use ragaliq_scripted::ScriptedJudge;
use std::path::Path;

fn case() -> RagCase {
    RagCase::new("How long is the refund window after delivery?")
        .id("refund-window")
        .context([
            "Refunds are accepted within 30 days of delivery.",
            "Gift cards cannot be refunded.",
        ])
        .response(
            "Refunds are accepted within 30 days of delivery. Refunds are paid in gold coins.",
        )
        .expected_facts(["Refunds are accepted within 30 days of delivery."])
}

#[tokio::test]
async fn every_metric_from_a_configured_judge() {
    let server = ScriptedJudge::start().await;
    // Bands off: the scripted judge is a rule nothing was measured for
    // (unmeasured, it would await a person between 0.05 and 0.95).
    let toml = format!(
        "[judge]\nprovider = \"openai-compatible\"\nmodel = \"scripted\"\nbase_url = \"{}\"\nconcurrency = 2\n\n[thresholds]\nrelevance = 0.5\n\n[bands]\nclaims = \"off\"\nanswers = \"off\"\npassages = \"off\"\n",
        server.base_url()
    );
    let no_env = |_: &str| None;
    let config = Config::from_sources(
        Some((&toml, Path::new("ragaliq.toml"))),
        Path::new("."),
        &no_env,
    )
    .unwrap();
    assert_eq!(config.provider, Provider::OpenAiCompatible);
    let judge = Judge::from_config(&config).unwrap();
    assert_eq!(
        (judge.provider(), judge.model(), judge.concurrency()),
        ("openai-compatible", "scripted", 2)
    );

    let case = case();
    let faithfulness = judge.faithfulness(&case).await.unwrap();
    let hallucination = judge.hallucination(&case).await.unwrap();
    let relevance = judge.relevance(&case).await.unwrap();
    let precision = judge.context_precision(&case).await.unwrap();
    let recall = judge.context_recall(&case).await.unwrap();

    assert_eq!((faithfulness.score, faithfulness.passed), (0.5, false));
    // The verdicts counted, as report.json and report.html show them.
    let counts = faithfulness.counts.expect("faithfulness counts its claims");
    assert_eq!(
        (
            counts.supported,
            counts.no_evidence,
            counts.contradicted,
            counts.undecided
        ),
        (1, 1, 0, 0)
    );
    assert_eq!(relevance_counts_none(&case, &judge).await, None);
    assert_eq!((hallucination.score, hallucination.threshold), (0.5, 0.8));
    assert_eq!(relevance.threshold, 0.5, "threshold from ragaliq.toml");
    // The scripted rule: the response uses 2 of the query's 4 key terms.
    assert_eq!(
        (relevance.score, relevance.passed),
        (0.5, true),
        "{relevance}"
    );
    assert_eq!(precision.score, 1.0, "{precision}");
    assert_eq!(recall.score, 1.0, "{recall}");
    // The extraction, a question per claim (2) and whether the unsupported
    // one is contradicted (all shared by hallucination), relevance (1),
    // a question per passage (2); recall's one fact is the response's first
    // claim, whose question was asked already.
    assert_eq!(server.requests(), 7);
    assert_eq!(judge.usage().calls, 7);
    assert!(judge.usage().input_tokens > 0);

    let review = faithfulness.to_string();
    assert!(
        review.starts_with("faithfulness: 0.50 < threshold 0.70 (FAILED)"),
        "{review}"
    );
    assert!(
        review.contains("[2] \"Refunds are paid in gold coins.\" — no_evidence"),
        "{review}"
    );
}

#[test]
fn evaluations_serialize_for_reports() {
    // `Evaluation` is `#[non_exhaustive]`: a report reads one back from JSON.
    let eval: Evaluation = serde_json::from_value(serde_json::json!({
        "metric": "relevance",
        "score": 0.75,
        "threshold": 0.7,
        "passed": true,
        "reasoning": "Answers it.",
        "usage": {"calls": 1, "input_tokens": 10, "output_tokens": 1},
    }))
    .unwrap();
    let json = serde_json::to_value(&eval).unwrap();
    assert_eq!(json["metric"], "relevance");
    assert_eq!(json["passed"], true);
    assert!(json.get("claims").is_none(), "empty details are left out");
}

/// Relevance counts no claims.
async fn relevance_counts_none(case: &RagCase, judge: &Judge) -> Option<ragaliq::ClaimCounts> {
    judge.relevance(case).await.unwrap().counts
}
