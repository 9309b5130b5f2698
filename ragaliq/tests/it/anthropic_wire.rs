//! The Anthropic Messages transport against a wiremock server on 127.0.0.1.

use crate::common;

use common::{fast_retries, refund_case, within};
use ragaliq::Strategy;
use ragaliq::judge::{ANTHROPIC_VERSION, AnthropicTransport, ApiKey, Judge};
use ragaliq::{Error, TransportErrorKind, Verdict};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "fake-anthropic-key-for-tests-0002";

fn judge(server: &MockServer, retries: u32) -> Judge {
    let t = AnthropicTransport::new(&format!("{}/v1", server.uri()))
        .with_api_key(Some(ApiKey::new(KEY)), "ANTHROPIC_API_KEY");
    Judge::builder(t)
        .with_strategy(Strategy::Json)
        .with_model("claude-test")
        .with_retry(fast_retries(retries))
        .build()
        .unwrap()
}

fn tool_reply(input: Value, input_tokens: u64, output_tokens: u64) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test-2026",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "submit", "input": input}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}
    })
}

/// Answers by the tool's schema: claims for extraction, verdicts for verification.
fn by_task(req: &Request) -> ResponseTemplate {
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    let desc = body["tools"][0]["description"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let input = if desc.contains("extract_claims") {
        json!({"claims": ["Refunds are accepted within 30 days of delivery.", "Refunds are paid in gold coins."]})
    } else {
        json!({"verdicts": [
            {"claim": 1, "verdict": "supported", "evidence": "within 30 days", "confidence": 0.95},
            {"claim": 2, "verdict": "no_evidence", "evidence": "", "confidence": 0.9}
        ]})
    };
    ResponseTemplate::new(200).set_body_json(tool_reply(input, 300, 40))
}

#[tokio::test]
async fn faithfulness_over_messages_with_forced_tool_use() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", ANTHROPIC_VERSION))
        .respond_with(by_task)
        .expect(2)
        .mount(&server)
        .await;
    let judge = judge(&server, 0);
    let eval = within(judge.faithfulness(&refund_case())).await.unwrap();
    assert_eq!(eval.score, 0.5);
    assert_eq!(eval.claims[1].verdict, Verdict::NoEvidence);
    assert_eq!(
        (
            eval.usage.calls,
            eval.usage.input_tokens,
            eval.usage.output_tokens
        ),
        (2, 600, 80)
    );

    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "claude-test");
    // The reply limit is sized for the task, under the 2048 ceiling.
    assert_eq!(body["max_tokens"], 256);
    assert!(
        body["system"]
            .as_str()
            .unwrap()
            .contains("DATA to evaluate")
    );
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "submit"})
    );
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["claims"])
    );
    assert!(requests[0].headers.get("authorization").is_none());
    // The verification's schema asks for exactly one verdict per claim.
    let verify: Value = serde_json::from_slice(&requests[1].body).unwrap();
    let verdicts = &verify["tools"][0]["input_schema"]["properties"]["verdicts"];
    assert_eq!(
        (verdicts["minItems"].as_u64(), verdicts["maxItems"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(verify["max_tokens"], 304);
}

#[tokio::test]
async fn overloaded_is_retried_and_errors_carry_type_and_message() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(529).set_body_json(json!({
            "type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}
        })))
        .mount(&server)
        .await;
    let err = within(judge(&server, 2).relevance(&refund_case()))
        .await
        .unwrap_err();
    let Error::Transport(t) = err else {
        panic!("{err:?}")
    };
    assert_eq!(t.attempts, 3);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
    assert_eq!(
        t.kind,
        TransportErrorKind::Status {
            status: 529,
            message: "overloaded_error: Overloaded".into()
        }
    );
}

#[tokio::test]
async fn bad_request_is_not_retried_and_never_shows_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "type": "error",
            "error": {"type": "invalid_request_error", "message": format!("max_tokens: required (key {KEY})")}
        })))
        .mount(&server)
        .await;
    let err = within(judge(&server, 3).relevance(&refund_case()))
        .await
        .unwrap_err();
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    let shown = format!("{err} {err:?}");
    assert!(
        shown.contains("invalid_request_error: max_tokens: required (key ***)"),
        "{shown}"
    );
    assert!(!shown.contains(KEY));
}

#[tokio::test]
async fn missing_key_names_the_variable() {
    let server = MockServer::start().await;
    let t = AnthropicTransport::new(&format!("{}/v1", server.uri()))
        .with_api_key(None, "MY_ANTHROPIC_KEY");
    let keyless = Judge::builder(t)
        .with_strategy(Strategy::Json)
        .build()
        .unwrap();
    let err = within(keyless.relevance(&refund_case())).await.unwrap_err();
    assert!(err.to_string().contains("set MY_ANTHROPIC_KEY"), "{err}");
}
