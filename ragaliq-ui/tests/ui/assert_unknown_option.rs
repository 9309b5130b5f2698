use ragaliq::prelude::*;

async fn check(judge: Judge, case: RagCase) {
    assert_relevant!(judge, case, weights = VerdictWeights::STRICT);
}

fn main() {}
