use ragaliq::prelude::*;

fn check(case: RagCase) {
    assert_retrieved!(case, recall_at(5));
}

fn main() {}
