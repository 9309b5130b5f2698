use ragaliq::prelude::*;

#[rag_test(judge = "gemini:pro")]
async fn t(_judge: Judge) {}

fn main() {}
