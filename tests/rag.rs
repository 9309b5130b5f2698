//! RAG checks written as a user would: `#[rag_test]` functions with the
//! assertion macros, replaying the recordings in `tests/snapshots/`.
//!
//! The recordings were produced through the real record path against the
//! scripted judge on 127.0.0.1 (see `ragaliq.toml`); no real model was asked.

use ragaliq::prelude::*;

fn refund_context() -> [&'static str; 2] {
    [
        "Refunds are accepted within 30 days of delivery.",
        "Refunds are paid to the original payment method.",
    ]
}

#[rag_test]
async fn faithful_answer(judge: Judge) {
    let case = RagCase::new("What is the refund window?")
        .id("refund-window")
        .context(refund_context())
        .response("The refund window is 30 days from delivery.");
    let faithfulness = assert_faithful!(judge, case);
    assert_eq!(faithfulness.score, 1.0);
    assert_no_hallucination!(judge, case, threshold = 0.9);
    assert_relevant!(judge, case, threshold = 0.9);
}

#[rag_test]
async fn hallucinating_answer_is_caught(judge: Judge) {
    let case = RagCase::new("How long is the refund window?")
        .id("refund-gold")
        .context(refund_context())
        .response("Refunds are accepted within 30 days of delivery. Refunds are paid in gold coins by carrier pigeon.");
    let faithfulness = judge.faithfulness(&case).await.expect("the judge answers");
    assert_eq!(faithfulness.score, 0.5);
    assert!(!faithfulness.passed);
    let hallucination = judge.hallucination(&case).await.expect("the judge answers");
    let flagged: Vec<&str> = hallucination
        .failed_claims()
        .map(|(_, c)| c.claim.as_str())
        .collect();
    assert_eq!(
        flagged,
        ["Refunds are paid in gold coins by carrier pigeon."]
    );
}

#[rag_test]
async fn irrelevant_answer_is_caught(judge: Judge) {
    let case = RagCase::new("How long is the refund window?")
        .id("weather")
        .context(refund_context())
        .response("The weather in Lisbon is sunny today.");
    let relevance = judge.relevance(&case).await.expect("the judge answers");
    // P(yes) that it answers the question: the scripted judge's floor.
    assert!(relevance.score < 0.02, "{relevance}");
    assert!(!relevance.passed);
}

#[rag_test]
async fn context_metrics(judge: Judge) {
    let case = RagCase::new("Which payment method receives refunds?")
        .id("refund-method")
        .context([
            "Refunds are paid to the original payment method.",
            "Our stores open at nine.",
        ])
        .response("Refunds go back to the original payment method.")
        .expected_facts(["Refunds are paid to the original payment method."]);
    assert_context_precision!(judge, case);
    assert_context_recall!(judge, case, threshold = 1.0);
}

#[rag_test(name = "no_judge_calls")]
async fn a_test_without_a_judge_parameter() {
    // Runs on the same runtime; makes no judge call and so writes no recording.
    tokio::task::yield_now().await;
}
