use ragaliq::prelude::*;

async fn check(judge: Judge, case: RagCase) {
    assert_no_hallucination!(judge, case, treshold = 0.9);
}

fn main() {}
