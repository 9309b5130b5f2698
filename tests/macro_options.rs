//! Every option spelling the assertion macros accept compiles: this file
//! is built by `cargo test` (and linted by clippy) as any test file is, so
//! a spelling that stops compiling fails the build. The misspellings that
//! must not compile are `ragaliq-ui/tests/ui/` (trybuild).
use ragaliq::prelude::*;

#[allow(dead_code)]
async fn check(judge: Judge, case: RagCase) {
    assert_faithful!(
        judge,
        case,
        threshold = 0.9,
        weights = VerdictWeights::STRICT
    );
    assert_faithful!(judge, case, threshold = 1, samples = 5, agreement = 0.8);
    assert_no_hallucination!(judge, case, confidence_floor = 0.9, samples = "auto");
    assert_relevant!(judge, case, samples = Samples::Auto { max: 7 });
    assert_context_precision!(judge, case, threshold = 0.5,);
    assert_context_recall!(judge, case);
    assert_caught!(judge, case, relevance, threshold = 0.9);
    assert_caught!(judge, case, hallucination, confidence_floor = 0.95);
}

/// The conversation checks, and every macro on a conversation or one turn.
#[allow(dead_code)]
async fn conversation(judge: Judge, conversation: Conversation) {
    assert_abstains!(judge, conversation, threshold = 0.6, uncertain = "pass");
    assert_consistent!(judge, conversation.turn(2), samples = 1);
    assert_remembers!(judge, &conversation, agreement = 0.8);
    assert_faithful!(
        judge,
        conversation.turn(1),
        weights = VerdictWeights::STRICT
    );
    assert_relevant!(judge, conversation);
    assert_caught!(judge, conversation.turn(3), consistency, threshold = 0.7);
    assert_caught!(judge, conversation, abstention);
    assert_caught!(judge, conversation, retention);
}

/// Every form `assert_retrieved!` takes: bare metrics, chained gain, a
/// variable, an integer threshold, one case or a set; in a plain function.
#[allow(dead_code)]
fn retrieved(case: RagCase, cases: Vec<RagCase>) {
    assert_retrieved!(case, recall_at(5) >= 0.8);
    assert_retrieved!(case, ndcg_at(10).exponential() >= 0.5);
    assert_retrieved!(case, hit_rate() >= 1);
    let metric = ragaliq::retrieval::average_precision_at(10);
    assert_retrieved!(&case, metric >= 0.5);
    let _mean: ragaliq::retrieval::Mean = assert_retrieved!(cases, mrr_at(10) >= 0.7);
    assert_retrieved!(cases[..2], precision() >= 0.2);
}
