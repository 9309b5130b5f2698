use ragaliq::prelude::*;

#[rag_test]
async fn t(_judge: Judge) -> Result<(), String> {
    Ok(())
}

fn main() {}
