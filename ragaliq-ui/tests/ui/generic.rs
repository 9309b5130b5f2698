use ragaliq::prelude::*;

#[rag_test]
async fn t<T>(_judge: Judge) {}

fn main() {}
