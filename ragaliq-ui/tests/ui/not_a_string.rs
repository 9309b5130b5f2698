use ragaliq::prelude::*;

#[rag_test(mode = replay)]
async fn t(_judge: Judge) {}

fn main() {}
