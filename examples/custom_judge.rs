//! Plugging your own judge into ragaliq: implement `Transport`, then use every
//! metric as usual. This one grades by keyword overlap and needs no network.
//!
//! ```sh
//! cargo run --example custom_judge
//! ```

use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
use ragaliq::prelude::*;
use ragaliq::{TransportError, parse};

/// Says every claim is supported when the prompt's context mentions "30 days".
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
            let reply = match request.task.as_str() {
                "extract_claims" => {
                    r#"{"claims": ["Items can be returned within 30 days."]}"#.to_owned()
                }
                "verify_claims" => {
                    let verdict = if prompt.contains("30 days") {
                        "supported"
                    } else {
                        "no_evidence"
                    };
                    format!(
                        r#"{{"verdicts": [{{"claim": 1, "verdict": "{verdict}", "evidence": ""}}]}}"#
                    )
                }
                "relevance" => r#"{"reasoning": "Mentions the window.", "score": 0.9}"#.to_owned(),
                other => {
                    return Err(TransportError::other(format!(
                        "keyword judge cannot do {other}"
                    )));
                }
            };
            // The public parsers read replies exactly as the built-in judges' are read.
            debug_assert!(parse::claims(&reply).is_ok() || request.task != "extract_claims");
            Ok(JudgeResponse::text(reply))
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), ragaliq::Error> {
    let judge = Judge::builder(KeywordJudge).build()?;
    let case = RagCase::new("How long is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("Items can be returned within 30 days.");
    println!("{}", judge.faithfulness(&case).await?);
    println!("{}", judge.relevance(&case).await?);
    Ok(())
}
