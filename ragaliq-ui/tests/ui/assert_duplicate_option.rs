use ragaliq::prelude::*;

async fn check(judge: Judge, case: RagCase) {
    assert_faithful!(judge, case, threshold = 0.9, threshold = 0.8);
}

fn main() {}
