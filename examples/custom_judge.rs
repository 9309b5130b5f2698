//! Plugging your own judge into ragaliq: implement `Transport`, then use every
//! metric as usual. This one grades by keyword overlap and needs no network.
//!
//! ```sh
//! cargo run --example custom_judge
//! ```
//!
//! With the default way of asking, a transport answers these tasks
//! (`JudgeRequest::task`): `extract_claims` with `{"claims": [...]}`;
//! `claim_supported`, `claim_contradicted`, `answers_query` and
//! `passage_relevant` with one word, yes or no; `criteria_met` with yes or
//! no and then a reason. A reply without token probabilities (as here) is
//! read from its first word.

use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
use ragaliq::prelude::*;
use ragaliq::{TransportError, parse};

/// Says yes when the question's text mentions "30 days".
struct KeywordJudge;

impl Transport for KeywordJudge {
    fn provider(&self) -> &str {
        "keyword"
    }

    fn complete<'a>(
        &'a self,
        request: &'a JudgeRequest,
    ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
        Box::pin(async move {
            let prompt = &request.messages[0].content;
            let yes = |found: bool| if found { "yes" } else { "no" };
            let reply = match request.task.as_str() {
                "extract_claims" => r#"{"claims": ["Items can be returned within 30 days."]}"#,
                // The passages come first, the claim last: the claim's own
                // words say nothing of the passages.
                "claim_supported" => yes(prompt.contains("within 30 days of delivery")),
                "claim_contradicted" => "no",
                "answers_query" => yes(prompt.contains("30 days")),
                "criteria_met" if prompt.contains("30 days") => "yes. It names the window.",
                "criteria_met" => "no. It names no window.",
                other => {
                    return Err(TransportError::other(format!(
                        "keyword judge cannot do {other}"
                    )));
                }
            };
            // The public parsers read replies exactly as the built-in judges' are read.
            debug_assert!(parse::claims(reply).is_ok() || request.task != "extract_claims");
            Ok(JudgeResponse::text(reply))
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), ragaliq::Error> {
    let judge = Judge::builder(KeywordJudge).build()?;
    let case = RagCase::new("How long is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("Items can be returned within 30 days.");
    println!("{}", judge.faithfulness(&case).await?);
    println!("{}", judge.relevance(&case).await?);
    println!(
        "{}",
        judge
            .criteria(&case, "States how long the refund window is")
            .await?
    );
    Ok(())
}
