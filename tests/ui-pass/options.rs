//! Every option spelling the assertion macros accept compiles.
use ragaliq::prelude::*;

#[allow(dead_code)]
async fn check(judge: Judge, case: RagCase) {
    assert_faithful!(judge, case, threshold = 0.9, weights = VerdictWeights::STRICT);
    assert_faithful!(judge, case, threshold = 1, samples = 5, agreement = 0.8);
    assert_no_hallucination!(judge, case, confidence_floor = 0.9, samples = "auto");
    assert_relevant!(judge, case, samples = Samples::Auto { max: 7 });
    assert_context_precision!(judge, case, threshold = 0.5,);
    assert_context_recall!(judge, case);
    assert_caught!(judge, case, relevance, threshold = 0.9);
    assert_caught!(judge, case, hallucination, confidence_floor = 0.95);
}

fn main() {}
