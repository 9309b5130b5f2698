use ragaliq::prelude::*;

#[rag_test(mode = "fast")]
async fn t(_judge: Judge) {}

fn main() {}
