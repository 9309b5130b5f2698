//! Answer correctness: answers graded against the answer a team wrote. By
//! default the judge is asked one question per answer (does the response
//! give the expected answer, without contradicting it?) and the score is
//! its P(yes); where the expected answer's words stand in the response,
//! not denied there, the answer is correct with no call (the found rule).
//! At the 1.5B's own bands no reading of its direct question decides, so
//! the answers it is asked about await a person. Then the same wrong
//! answer graded by claims both ways, the named option that lists the
//! facts at fault. Replays `examples/recordings/correctness.snap`
//! (Qwen2.5-Coder-1.5B on llama.cpp), so it needs no key and no network:
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
    let question = "How long is the return window for online orders?";
    let reference = "30 days from delivery.";
    let answers = [
        (
            "found",
            "Online orders can be returned within 30 days from delivery.",
        ),
        (
            "other-words",
            "You can return online orders for up to 30 days after they are delivered.",
        ),
        (
            "wrong",
            "You have 14 days from purchase to return online orders.",
        ),
        ("denied", "It is not 30 days; it is 14."),
    ];
    let mut complete = true;
    let mut show = |id: &str, result: ragaliq::Result<Evaluation>| match result {
        Ok(eval) => println!("{eval}"),
        Err(e) => {
            complete = false;
            println!("correctness: could not evaluate {id}: {e}");
        }
    };
    for (id, answer) in answers {
        let case = RagCase::new(question)
            .id(id)
            .response(answer)
            .expected_answer(reference);
        println!("\n── case `{id}`: {answer:?}");
        show(id, judge.correctness(&case).await);
    }
    // Claims both ways, for a team that wants the facts listed: each
    // claim of the answer checked against the reference, and each of the
    // reference's against the answer (about seven calls an answer).
    let (id, answer) = answers[2];
    let case = RagCase::new(question)
        .id(id)
        .response(answer)
        .expected_answer(reference);
    println!("\n── case `{id}` by claims both ways (correctness = Correctness::F1)");
    let options = EvalOptions::default().with_correctness(Correctness::F1);
    show(
        id,
        judge
            .evaluate_with(Metric::Correctness, &case, &options)
            .await,
    );
    common::finish("correctness", &judge, &recorder, complete)?;
    Ok(())
}
