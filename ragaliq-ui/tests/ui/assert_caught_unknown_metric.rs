use ragaliq::prelude::*;

async fn check(judge: Judge, case: RagCase) {
    assert_caught!(judge, case, faithfullness);
}

fn main() {}
