//! A conversation graded turn by turn: three turns of a shop's assistant,
//! a right follow-up ("And how long do I have?", which means nothing
//! without the first turn), then a turn its passages cannot answer,
//! answered by invention that also contradicts what the assistant said
//! before. Every metric reads each turn with the turns before it; the
//! checks only a conversation has (abstention, consistency, retention)
//! name the turn and quote what conflicts. Then the follow-up's relevance
//! asked without its history, the question a team writing each turn as an
//! unrelated case gets. Replays `examples/recordings/conversation.snap`
//! (Qwen2.5-Coder-1.5B on llama.cpp), so it needs no key and no network:
//!
//! ```sh
//! cargo run --example conversation
//! ```

#[path = "common/mod.rs"]
mod common;
#[path = "conversations/jacket.rs"]
mod jacket;

use jacket::jacket;

use ragaliq::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (judge, recorder) = common::judge("conversation")?;
    let conversation = jacket();
    let mut complete = true;
    for metric in [
        Metric::Relevance,
        Metric::Faithfulness,
        Metric::Consistency,
        Metric::Abstention,
        Metric::Retention,
    ] {
        println!("\n── {metric}, every turn of `jacket-return`");
        match judge.evaluate(metric, &conversation).await {
            Ok(eval) => println!("{eval}"),
            Err(e) => {
                complete = false;
                println!("{metric}: could not evaluate: {e}");
            }
        }
    }
    // The follow-up as an unrelated case: the judge reads "And how long do
    // I have?" with no jacket in sight.
    let mut alone = conversation.case(2)?;
    alone.history.clear();
    println!("\n── relevance of turn 2 asked without its history");
    match judge.relevance(&alone).await {
        Ok(eval) => println!("{eval}"),
        Err(e) => {
            complete = false;
            println!("relevance: could not evaluate: {e}");
        }
    }
    common::finish("conversation", &judge, &recorder, complete)?;
    Ok(())
}
