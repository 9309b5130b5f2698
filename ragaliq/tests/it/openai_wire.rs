//! The OpenAI-compatible transport against a wiremock server on 127.0.0.1:
//! the request as sent, usage, error bodies, retries, Retry-After, timeouts.

use crate::common;

use common::{fast_retries, openai_reply, within};
use ragaliq::Strategy;
use ragaliq::judge::{ApiKey, JsonMode, Judge, OpenAiTransport, RetryPolicy};
use ragaliq::{Error, RagCase, TransportErrorKind};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "fake-openai-key-for-tests-0001";

fn judge(server: &MockServer, retry: RetryPolicy) -> Judge {
    let transport = OpenAiTransport::new(&format!("{}/v1", server.uri()))
        .with_api_key(Some(ApiKey::new(KEY)), "OPENAI_API_KEY");
    Judge::builder(transport)
        .with_strategy(Strategy::Json)
        .with_model("gpt-test")
        .with_retry(retry)
        .with_timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

fn case() -> RagCase {
    RagCase::new("How long is the refund window?")
        .context(["Refunds are accepted within 30 days."])
        .response("You have 30 days to ask for a refund.")
}

fn relevance_ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(openai_reply(
        r#"{"reasoning": "Direct answer.", "score": 0.9}"#,
        120,
        15,
    ))
}

fn transport_error(e: Error) -> ragaliq::TransportError {
    match e {
        Error::Transport(t) => t,
        other => panic!("expected a transport error, got {other:?}"),
    }
}

#[tokio::test]
async fn request_body_headers_and_usage() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", &*format!("Bearer {KEY}")))
        .and(header("content-type", "application/json"))
        .respond_with(relevance_ok())
        .expect(1)
        .mount(&server)
        .await;
    let judge = judge(&server, RetryPolicy::none());
    let eval = within(judge.relevance(&case())).await.unwrap();
    assert_eq!(eval.score, 0.9);
    assert_eq!(eval.reasoning, "Direct answer.");
    assert_eq!(
        (
            eval.usage.calls,
            eval.usage.input_tokens,
            eval.usage.output_tokens
        ),
        (1, 120, 15)
    );
    assert_eq!(judge.usage(), eval.usage);

    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["temperature"], 0.0);
    // Sized for the task (a score and a short reasoning), under the ceiling.
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(body["messages"][0]["role"], "system");
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("DATA to evaluate")
    );
    assert_eq!(body["messages"][1]["role"], "user");
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("<query>\nHow long is the refund window?\n</query>"),
        "{user}"
    );
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["name"], "relevance");
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
}

#[tokio::test]
async fn json_object_mode_for_servers_without_schemas() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(relevance_ok())
        .mount(&server)
        .await;
    let transport =
        OpenAiTransport::new(&format!("{}/v1", server.uri())).with_provider_name("ollama");
    let judge = Judge::builder(transport)
        .with_strategy(Strategy::Json)
        .with_json_mode(JsonMode::Object)
        .build()
        .unwrap();
    within(judge.relevance(&case())).await.unwrap();
    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert!(
        requests[0].headers.get("authorization").is_none(),
        "no key, no auth header"
    );
}

/// What a judge configured as `ollama:…` sends: a JSON schema for the JSON
/// tasks (Ollama 0.5 and later make it a grammar; not `json_object`, as the
/// guide once said), token probabilities for the yes/no questions, no key.
#[tokio::test]
async fn ollama_is_sent_a_json_schema_and_asked_for_token_probabilities() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_reply(
            r#"{"claims": ["You have 30 days to ask for a refund."]}"#,
            120,
            15,
        )))
        .mount(&server)
        .await;
    let url = format!("{}/v1", server.uri());
    let env = |name: &str| match name {
        "RAGALIQ_JUDGE" => Some("ollama:qwen2.5:1.5b".to_owned()),
        "RAGALIQ_BASE_URL" => Some(url.clone()),
        "RAGALIQ_MODE" => Some("live".to_owned()),
        _ => None,
    };
    let config = ragaliq::Config::from_sources(None, std::path::Path::new("."), &env).unwrap();
    let judge = Judge::from_config(&config).unwrap();
    // The claim question's reply is no yes or no: only what was sent counts.
    let _ = within(judge.faithfulness(&case())).await;
    let requests = server.received_requests().await.unwrap();
    let bodies: Vec<Value> = requests
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(bodies[0]["model"], "qwen2.5:1.5b");
    assert_eq!(
        bodies[0]["response_format"]["type"], "json_schema",
        "{}",
        bodies[0]
    );
    assert_eq!(bodies[0]["response_format"]["json_schema"]["strict"], true);
    let yes_no = bodies.get(1).expect("the claim was asked about");
    assert!(yes_no.get("response_format").is_none(), "{yes_no}");
    assert_eq!(yes_no["logprobs"], true, "{yes_no}");
    assert!(
        requests
            .iter()
            .all(|r| r.headers.get("authorization").is_none())
    );
}

async fn attempts_for(status: u16, max_retries: u32) -> (ragaliq::TransportError, usize) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(status).set_body_json(
            json!({"error": {"message": format!("status {status} from the server"), "type": "x"}}),
        ))
        .mount(&server)
        .await;
    let err = within(judge(&server, fast_retries(max_retries)).relevance(&case()))
        .await
        .unwrap_err();
    (
        transport_error(err),
        server.received_requests().await.unwrap().len(),
    )
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_exactly() {
    for status in [429, 500, 502, 503] {
        let (err, seen) = attempts_for(status, 3).await;
        assert_eq!((seen, err.attempts), (4, 4), "status {status}");
        assert_eq!(
            err.kind,
            TransportErrorKind::Status {
                status,
                message: format!("status {status} from the server")
            }
        );
    }
}

#[tokio::test]
async fn client_errors_fail_at_once_with_the_servers_message() {
    for status in [400, 401, 403, 404] {
        let (err, seen) = attempts_for(status, 3).await;
        assert_eq!((seen, err.attempts), (1, 1), "status {status}");
        assert!(
            err.to_string()
                .contains(&format!("status {status} from the server")),
            "{err}"
        );
    }
}

#[tokio::test]
async fn retried_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("<html>Internal error</html>"))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(relevance_ok())
        .mount(&server)
        .await;
    let judge = judge(&server, fast_retries(4));
    let eval = within(judge.relevance(&case())).await.unwrap();
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
    // Failed attempts are not answers: one call is accounted.
    assert_eq!(eval.usage.calls, 1);
}

/// Answers the first request with `first`, then succeeds; returns how long
/// the judge took to get its answer.
async fn time_to_success(first: ResponseTemplate) -> Duration {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(first)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(relevance_ok())
        .mount(&server)
        .await;
    let start = Instant::now();
    within(judge(&server, fast_retries(2)).relevance(&case()))
        .await
        .unwrap();
    start.elapsed()
}

#[tokio::test]
async fn retry_after_seconds_is_honoured() {
    let waited =
        time_to_success(ResponseTemplate::new(429).insert_header("retry-after", "1")).await;
    assert!(waited >= Duration::from_secs(1), "waited only {waited:?}");
    assert!(waited < Duration::from_secs(4), "waited {waited:?}");
}

#[tokio::test]
async fn retry_after_date_is_honoured() {
    let when = httpdate_in(Duration::from_secs(2));
    let waited =
        time_to_success(ResponseTemplate::new(503).insert_header("retry-after", when.as_str()))
            .await;
    // HTTP dates have whole-second resolution: "in 2 s" means at least 1 s.
    assert!(waited >= Duration::from_millis(1000), "{waited:?}");
}

fn httpdate_in(d: Duration) -> String {
    // RFC 7231 IMF-fixdate, computed by hand to keep the test free of extra crates.
    let t = std::time::SystemTime::now() + d;
    let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let days = secs / 86_400;
    let (h, m, s) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let name = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(month - 1) as usize];
    format!("{weekday}, {day:02} {name} {year} {h:02}:{m:02}:{s:02} GMT")
}

#[tokio::test]
async fn retry_after_beyond_the_budget_gives_up_without_waiting() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "600"))
        .mount(&server)
        .await;
    let start = Instant::now();
    let budgeted = judge(
        &server,
        fast_retries(5).with_total_budget(Duration::from_secs(10)),
    );
    let err = within(budgeted.relevance(&case())).await.unwrap_err();
    let err = transport_error(err);
    assert!(err.budget_exhausted);
    assert_eq!(err.attempts, 1);
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(
        err.to_string().contains("retry time budget exhausted"),
        "{err}"
    );
}

#[tokio::test]
async fn per_call_timeout_is_retried_then_reported() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(relevance_ok().set_delay(Duration::from_secs(10)))
        .mount(&server)
        .await;
    let transport = OpenAiTransport::new(&format!("{}/v1", server.uri()));
    let judge = Judge::builder(transport)
        .with_strategy(Strategy::Json)
        .with_timeout(Duration::from_millis(200))
        // The bound: 0.2 s plus half a second per token of the reply's limit.
        .with_max_tokens(1)
        .with_retry(fast_retries(1))
        .build()
        .unwrap();
    let start = Instant::now();
    let err = transport_error(within(judge.relevance(&case())).await.unwrap_err());
    assert_eq!(
        err.kind,
        TransportErrorKind::Timeout {
            after: Duration::from_millis(700)
        }
    );
    assert_eq!(err.attempts, 2);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn the_key_never_reaches_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": {"message": format!("Incorrect API key provided: {KEY}."), "type": "invalid_request_error"}
        })))
        .mount(&server)
        .await;
    let judge = judge(&server, RetryPolicy::none());
    let err = within(judge.relevance(&case())).await.unwrap_err();
    let shown = format!("{err} {err:?} {judge:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("Incorrect API key provided: ***"), "{shown}");
}

#[tokio::test]
async fn missing_key_is_named_without_a_request() {
    let server = MockServer::start().await;
    let transport =
        OpenAiTransport::new(&format!("{}/v1", server.uri())).with_api_key(None, "OPENAI_API_KEY");
    let missing_key = Judge::builder(transport)
        .with_strategy(Strategy::Json)
        .build()
        .unwrap();
    let err = within(missing_key.relevance(&case())).await.unwrap_err();
    assert!(err.to_string().contains("set OPENAI_API_KEY"), "{err}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn malformed_success_bodies_are_decode_errors_not_retried() {
    for body in [
        "not json at all",
        r#"{"choices": []}"#,
        "<!DOCTYPE html><h1>Proxy</h1>",
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_string(body))
            .mount(&server)
            .await;
        let err = transport_error(
            within(judge(&server, fast_retries(3)).relevance(&case()))
                .await
                .unwrap_err(),
        );
        assert!(
            matches!(err.kind, TransportErrorKind::Decode { .. }),
            "{body}: {err}"
        );
        assert_eq!(server.received_requests().await.unwrap().len(), 1, "{body}");
    }
}

#[tokio::test]
async fn unreadable_reply_is_a_judge_response_error_with_the_raw_text() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_reply(
            "I'd rate it highly!",
            5,
            5,
        )))
        .mount(&server)
        .await;
    let err = within(judge(&server, RetryPolicy::none()).relevance(&case()))
        .await
        .unwrap_err();
    match &err {
        Error::JudgeResponse { task, source } => {
            assert_eq!(*task, "relevance");
            assert_eq!(source.raw, "I'd rate it highly!");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("relevance: unreadable judge reply: the reply contains no JSON"),
        "{err}"
    );
}

#[tokio::test]
async fn a_local_server_that_is_down_fails_at_once_and_says_so() {
    // Bind then drop a listener: nothing answers on that port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let transport = OpenAiTransport::new(&format!("http://127.0.0.1:{port}/v1"));
    let judge = Judge::builder(transport)
        .with_strategy(Strategy::Json)
        .with_retry(fast_retries(2))
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let err = transport_error(within(judge.relevance(&case())).await.unwrap_err());
    assert!(
        matches!(err.kind, TransportErrorKind::Unreachable { .. }),
        "{err}"
    );
    // Connection refused on loopback: nothing listens, so no retry.
    assert_eq!(err.attempts, 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "nothing is listening at http://127.0.0.1:{port} ("
        )),
        "{text}"
    );
    assert!(
        text.ends_with("is the judge server running? (not retried)"),
        "{text}"
    );
}

#[tokio::test]
async fn a_token_in_the_base_url_reaches_the_server_and_no_message() {
    use ragaliq::Config;
    use std::path::Path;
    const TOKEN: &str = "zz-gateway-token-4b1d";
    // The query string is kept and sent after the path...
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(wiremock::matchers::query_param("key", TOKEN))
        .respond_with(relevance_ok())
        .expect(1)
        .mount(&server)
        .await;
    let base = |uri: &str| format!("{uri}/v1?key={TOKEN}");
    let config_for = |url: String| {
        let toml = format!(
            "[judge]\nprovider = \"openai-compatible\"\nmodel = \"m\"\nbase_url = \"{url}\"\nstrategy = \"json\"\n[retry]\nmax_retries = 0\n"
        );
        Config::from_sources(
            Some((&toml, Path::new("ragaliq.toml"))),
            Path::new("."),
            &|_| None,
        )
        .unwrap()
    };
    let config = config_for(base(&server.uri()));
    let judge = Judge::from_config(&config).unwrap();
    within(judge.relevance(&case())).await.unwrap();
    // ...and no message, description or debug output shows it.
    assert!(!format!("{config:?}").contains(TOKEN), "{config:?}");
    assert!(!judge.describe().contains(TOKEN), "{}", judge.describe());
    let down = Judge::from_config(&config_for(base("http://127.0.0.1:9"))).unwrap();
    let e = within(down.relevance(&case())).await.unwrap_err();
    for shown in [e.to_string(), format!("{e:?}"), down.describe()] {
        assert!(!shown.contains(TOKEN), "{shown}");
    }
    let bad = "[judge]\nprovider = \"openai-compatible\"\nmodel = \"m\"\nbase_url = \"ftp://h/v1?key=zz-gateway-token-4b1d\"\n";
    let e = Config::from_sources(
        Some((bad, Path::new("ragaliq.toml"))),
        Path::new("."),
        &|_| None,
    )
    .unwrap_err();
    assert!(!e.to_string().contains(TOKEN), "{e}");
}
