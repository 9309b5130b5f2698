use ragaliq::prelude::*;

#[rag_test]
async fn t(_judge: Judge, _other: Judge) {}

fn main() {}
