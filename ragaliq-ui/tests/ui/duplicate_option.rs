use ragaliq::prelude::*;

#[rag_test(mode = "replay", mode = "live")]
async fn t(_judge: Judge) {}

fn main() {}
