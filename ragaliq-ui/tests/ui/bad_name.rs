use ragaliq::prelude::*;

#[rag_test(name = "../escape")]
async fn t(_judge: Judge) {}

fn main() {}
