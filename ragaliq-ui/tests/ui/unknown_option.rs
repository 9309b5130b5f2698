use ragaliq::prelude::*;

#[rag_test(colour = "blue")]
async fn t(_judge: Judge) {}

fn main() {}
