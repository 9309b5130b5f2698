use ragaliq::prelude::*;

#[rag_test]
fn t(_judge: Judge) {}

fn main() {}
