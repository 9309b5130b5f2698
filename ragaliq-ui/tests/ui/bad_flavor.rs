use ragaliq::prelude::*;

#[rag_test(flavor = "wide")]
async fn t(_judge: Judge) {}

fn main() {}
