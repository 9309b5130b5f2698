use ragaliq::prelude::*;

#[rag_test]
#[test]
async fn t(_judge: Judge) {}

fn main() {}
