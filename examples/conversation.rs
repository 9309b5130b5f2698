//! A conversation graded turn by turn: three turns of a shop's assistant,
//! a right follow-up ("And how long do I have?", which means nothing
//! without the first turn), then a turn its passages cannot answer,
//! answered by invention that also contradicts what the assistant said
//! before. Every metric grades each turn; consistency and retention (and
//! claim extraction) are shown the turns before it, and the checks name
//! the turn and quote what conflicts; relevance and abstention's questions
//! are asked as a single case's are (the default, measured: see
//! `docs/guide/conversations.md`). Then the follow-up's relevance asked
//! with turn 1 shown (`judge.follow_up_history = true`), beside it.
//! Replays `examples/recordings/conversation.snap`
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
    // The follow-up's relevance with the conversation shown, as
    // `judge.follow_up_history = true` asks it: the same recording.
    let mut config = common::config()?;
    config.follow_up_history = true;
    let shown = Judge::from_config(&config)?.with_recorder(recorder.clone());
    println!("\n── relevance of turn 2, the judge shown turn 1 (`judge.follow_up_history = true`)");
    match shown.relevance(&conversation.turn(2)).await {
        Ok(eval) => println!("{eval}"),
        Err(e) => {
            complete = false;
            println!("relevance: could not evaluate: {e}");
        }
    }
    common::finish("conversation", &judge, &recorder, complete)?;
    Ok(())
}
