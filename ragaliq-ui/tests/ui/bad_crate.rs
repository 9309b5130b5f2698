use ragaliq::prelude::*;

#[rag_test(crate = "not a path")]
async fn t(_judge: Judge) {}

fn main() {}
