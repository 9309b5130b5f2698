//! A metric of one's own: a template, how its answer is read and a scorer,
//! asked through the same recorded, budgeted session as every built-in
//! metric. Here: does the answer reply in the customer's language? Read
//! from the judge's probability of "yes". Replays
//! `examples/recordings/custom_metric.snap` (Qwen2.5-Coder-1.5B on
//! llama.cpp), so it needs no key and no network:
//!
//! ```sh
//! cargo run --example custom_metric
//! ```

#[path = "common/mod.rs"]
mod common;

use ragaliq::prelude::*;

const TEMPLATE: &str = "version: 1
---
<question>{{query}}</question>

<response>{{response}}</response>

Is the response written in the same language as the question? Answer \"yes\" or \"no\" first, then give your reason in one sentence.";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (judge, recorder) = common::judge("custom_metric")?;
    let same_language = CustomMetric::new("same-language", TEMPLATE)?
        .answered_by(["yes", "no"])
        .with_threshold(0.5);
    let answers = [
        (
            "spanish",
            "¿Puedo devolver un artículo sin recibo?",
            "Sí, dentro de los 30 días, con un comprobante de compra.",
        ),
        (
            "english",
            "¿Puedo devolver un artículo sin recibo?",
            "Yes, within 30 days, with any proof of purchase.",
        ),
    ];
    let mut complete = true;
    for (id, question, answer) in answers {
        let case = RagCase::new(question).id(id).response(answer);
        println!("\n── case `{id}`: {answer:?}");
        match judge.custom(&same_language, &case).await {
            Ok(eval) => println!("{eval}"),
            Err(e) => {
                complete = false;
                println!("same-language: could not evaluate: {e}");
            }
        }
    }
    common::finish("custom_metric", &judge, &recorder, complete)?;
    Ok(())
}
