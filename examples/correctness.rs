//! Answer correctness: answers graded against the answer a team wrote. The
//! answer's claims are checked against the reference (precision) and the
//! reference's against the answer (recall); the score is their F1, and a
//! contradiction is quoted from both sides. Replays
//! `examples/recordings/correctness.snap` (Qwen2.5-Coder-1.5B on llama.cpp),
//! so it needs no key and no network:
//!
//! ```sh
//! cargo run --example correctness
//! ```

#[path = "common/mod.rs"]
mod common;

use ragaliq::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (judge, recorder) = common::judge("correctness")?;
    let reference = "Refunds are accepted within 30 days of delivery and are paid to the original payment method.";
    let answers = [
        (
            "right",
            "You have 30 days from delivery, and the money goes back to the card or account you paid with.",
        ),
        ("half", "You can get a refund within 30 days of delivery."),
        (
            "wrong",
            "Refunds are accepted within 14 days of delivery and are paid as store credit.",
        ),
    ];
    let mut complete = true;
    for (id, answer) in answers {
        let case = RagCase::new("How do refunds work?")
            .id(id)
            .response(answer)
            .expected_answer(reference);
        println!("\n── case `{id}`: {answer:?}");
        match judge.correctness(&case).await {
            Ok(eval) => println!("{eval}"),
            Err(e) => {
                complete = false;
                println!("correctness: could not evaluate: {e}");
            }
        }
    }
    common::finish("correctness", &judge, &recorder, complete)?;
    Ok(())
}
