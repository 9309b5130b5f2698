//! Five samples and a vote against a judge that does not always answer the
//! same: the recording in `tests/snapshots/voting__*.snap` was made against
//! the scripted judge with seeded flips (`scripted-judge 8788 --flip 0.2
//! --seed 7`), so its five samples disagree on some claims. Replayed, the
//! vote and its failure message come back exactly, with no call.
//!
//! Re-record with:
//!
//! ```sh
//! cargo run -p ragaliq-scripted --bin scripted-judge -- 8788 --flip 0.2 --seed 7 &
//! RAGALIQ_MODE=record cargo test --test voting
//! cargo insta review
//! ```

use ragaliq::prelude::*;

fn case() -> RagCase {
    RagCase::new("How do refunds work?")
        .id("refund-vote")
        .context([
            "Refunds are accepted within 30 days of delivery.",
            "Refunds are paid to the original payment method.",
        ])
        .response(
            "Refunds are accepted within 30 days of delivery. Refunds are paid to the original payment method. Refunds are paid in gold coins by carrier pigeon.",
        )
}

/// The answer holds one unsupported claim: the vote must not let it pass,
/// and the message shows each claim's agreement and the score's spread.
#[rag_test(config = "tests/judges/voting.toml")]
#[should_panic(expected = "samples agree")]
async fn five_samples_vote_on_each_claim(judge: Judge) {
    assert_faithful!(judge, case(), samples = 5);
}

/// The same recording read as data: every claim voted on by five samples.
#[rag_test(config = "tests/judges/voting.toml")]
async fn every_claim_carries_its_agreement(judge: Judge) {
    let options = EvalOptions::default().with_samples(Samples::Fixed(5));
    let eval = judge
        .evaluate_with(Metric::Faithfulness, &case(), &options)
        .await
        .expect("the judge answers");
    assert!(!eval.passed, "the gold-coins claim is not supported");
    assert!(
        eval.claims
            .iter()
            .all(|c| c.agreement.is_some_and(|a| a.of == 5))
    );
    let spread = eval.spread.expect("five samples have a spread");
    assert_eq!(spread.samples, 5);
    assert!(spread.min <= spread.median && spread.median <= spread.max);
}
