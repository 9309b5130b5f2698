//! Criteria in plain words: a team's own rule, judged yes or no (P(yes)
//! read from the answer word), or scored 1 to 5 after evaluation steps the
//! judge writes once per rule (G-Eval); either way with the judge's
//! reason. Replays `examples/recordings/criteria.snap` (Qwen2.5-Coder-1.5B
//! on llama.cpp), so it needs no key and no network:
//!
//! ```sh
//! cargo run --example criteria
//! ```

#[path = "common/mod.rs"]
mod common;

use ragaliq::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (judge, recorder) = common::judge("criteria")?;
    let rule = "Cites the policy number and never promises a refund";
    let context = [
        "Policy R-12: items can be returned within 30 days of delivery with the receipt.",
        "Refunds are decided by the returns team after inspection.",
    ];
    let answers = [
        (
            "cites",
            "Under policy R-12 you can return the item within 30 days with the receipt; the returns team then decides on the refund.",
        ),
        (
            "promises",
            "Sure, send it back and you will get a full refund, no questions asked.",
        ),
    ];
    let mut complete = true;
    for (id, answer) in answers {
        let case = RagCase::new("Can I return the blender I bought last week?")
            .id(id)
            .context(context)
            .response(answer);
        println!("\n── case `{id}`: {answer:?}");
        for criteria in [Criteria::new(rule), Criteria::scored(rule)] {
            match judge.criteria(&case, criteria).await {
                Ok(eval) => println!("{eval}"),
                Err(e) => {
                    complete = false;
                    println!("criteria: could not evaluate: {e}");
                }
            }
        }
    }
    common::finish("criteria", &judge, &recorder, complete)?;
    Ok(())
}
