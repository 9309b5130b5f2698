//! Answer correctness asked as one direct question (the default): what is
//! asked (one call, the template as the measurement rendered it), what
//! decides (the judge's P(yes) against the threshold, 0.5 by default), and
//! what found words do (with nothing against them they decide, with no
//! call; "It is not 30 days; it is 14." holds "30 days" and is asked
//! about, and fails). Against wiremock on 127.0.0.1, answering with token
//! probabilities as llama.cpp does.

use crate::common;

use common::{fast_retries, within};
use ragaliq::judge::{Judge, OpenAiTransport};
use ragaliq::{Correctness, EvalOptions, Metric, RagCase, Strategy};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::{Mock, MockServer, Request, ResponseTemplate, matchers::method};

const QUESTION: &str = "How long is the return window for online orders?";
const REFERENCE: &str = "30 days from delivery.";

fn case(reference: &str, response: &str) -> RagCase {
    RagCase::new(QUESTION)
        .id("returns")
        .expected_answer(reference)
        .response(response)
}

/// A one-token reply, `Yes` or `No` as `p_yes` says, with both words'
/// probabilities at that position when `probabilities` (else the word
/// alone, as a server that returns none).
fn reply(p_yes: f64, probabilities: bool) -> Value {
    let word = if p_yes >= 0.5 { "Yes" } else { "No" };
    let mut choice = json!({"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": word}});
    if probabilities {
        choice["logprobs"] = json!({"content": [{
            "token": word,
            "logprob": if word == "Yes" { p_yes.ln() } else { (1.0 - p_yes).ln() },
            "top_logprobs": [{"token": "Yes", "logprob": p_yes.ln()},
                             {"token": "No", "logprob": (1.0 - p_yes).ln()}]
        }]});
    }
    json!({"model": "m", "choices": [choice], "usage": {"prompt_tokens": 120, "completion_tokens": 1}})
}

/// A judge that answers every question with P(yes) `p_yes` (from token
/// probabilities, or the word alone); every request body is kept.
async fn judge_saying(p_yes: f64, probabilities: bool) -> (MockServer, Arc<Mutex<Vec<Value>>>) {
    let server = MockServer::start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            kept.lock().unwrap().push(body);
            ResponseTemplate::new(200).set_body_json(reply(p_yes, probabilities))
        })
        .mount(&server)
        .await;
    (server, seen)
}

/// A judge on `server` whose readings decide by the threshold alone: what
/// this file tests is how a reading is made, not where a band puts it (a
/// model named `m` is unmeasured, and would await a person between 0.05
/// and 0.95; `tests/cascade.rs` and `core/band.rs` test bands).
fn judge(server: &MockServer) -> Judge {
    Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_model("m")
        .with_bands(ragaliq::Bands::OFF)
        .with_retry(fast_retries(0))
        .with_timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// The newcomer's answer says the reference in other words: one call,
/// asked exactly as `bench/designs/correctness-criteria.md` rendered it
/// for the measurement, P(yes) 0.734 passes the default 0.5, and the
/// message says the reference's words were not found (they are not: "30
/// days after they are delivered").
#[tokio::test]
async fn one_question_per_answer_asked_as_the_measurement_asked_it() {
    let (server, seen) = judge_saying(0.734, true).await;
    let eval = within(judge(&server).correctness(&case(
        REFERENCE,
        "You can return online orders for up to 30 days after they are delivered.",
    )))
    .await
    .unwrap();
    let bodies = seen.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1, "one call, no claim extracted");
    let asked = &bodies[0];
    assert_eq!(
        asked["messages"][1]["content"],
        "<question>How long is the return window for online orders?</question>\n\n<expected>30 days from delivery.</expected>\n\n<response>You can return online orders for up to 30 days after they are delivered.</response>\n\nDoes the response give the same answer to the question as the expected answer, without contradicting it? Answer \"yes\" or \"no\"."
    );
    assert!(
        asked["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You check claims and answers against documents."),
        "the one-word system prompt: {}",
        asked["messages"][0]["content"]
    );
    assert_eq!(asked["max_tokens"], 3);
    assert_eq!(asked["logprobs"], true);
    assert_eq!(asked["top_logprobs"], 10);
    assert!(asked.get("response_format").is_none(), "plain text");

    assert_eq!(eval.threshold, 0.5, "the default correctness threshold");
    assert!((eval.score - 0.734).abs() < 1e-9, "{eval}");
    assert!(eval.passed, "{eval}");
    assert!(eval.claims.is_empty() && eval.counts.is_none(), "{eval}");
    assert!(eval.precision.is_none() && eval.review_key.is_some());
    let graded = eval.graded.as_ref().expect("what the judge was shown");
    assert_eq!(graded.found, None);
    let text = eval.to_string();
    assert!(
        text.starts_with("correctness: 0.73 >= threshold 0.50 (passed)\n  reasoning: P(yes) 0.73 that the response gives the expected answer without contradicting it (P(yes) 0.734 from the first token's"),
        "{text}"
    );
    for line in [
        "\n  question: \"How long is the return window for online orders?\"\n",
        "\n  reference: \"30 days from delivery.\"\n",
        "\n  response: \"You can return online orders for up to 30 days after they are delivered.\"\n",
        "\n  the reference was not found in the response (normalised, as whole words)\n",
    ] {
        assert!(text.contains(line), "{line:?} in {text}");
    }
}

/// The found rule: a response that holds the reference word for word with
/// a denial, a hedge or a report beside it is asked about, and fails when
/// the judge says no; one that holds it with nothing against it is correct
/// with no call, whatever the judge would have said (its server is never
/// asked), and `found_rule = false` asks about that one too. The message
/// shows where the reference was found, and what cast doubt on it.
#[tokio::test]
async fn a_found_reference_decides_only_where_nothing_casts_doubt_on_it() {
    let (server, seen) = judge_saying(0.262, true).await;
    let eval = within(judge(&server).correctness(&case("30 days", "It is not 30 days; it is 14.")))
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(!eval.passed && eval.score == 0.262, "{eval}");
    let graded = eval.graded.as_ref().expect("graded");
    let found = graded
        .found
        .clone()
        .expect("the reference is in the response");
    let doubt = graded.doubt.clone().expect("a denial");
    assert_eq!(
        (found.text.as_str(), doubt.kind, doubt.words.as_str()),
        ("30 days", ragaliq::DoubtKind::Denies, "not")
    );
    assert!(!graded.by_rule);
    assert!(
        eval.to_string().contains(&format!(
            "the reference was found in the response, {found}, but «not»: a denial; the judge decides"
        )),
        "{eval}"
    );
    // Found with a report and a hedge beside it (it was decided correct
    // before the rule looked outside the answer's clause): asked.
    let (server, seen) = judge_saying(0.4, true).await;
    let eval = within(
        judge(&server).correctness(&case("30 days", "Returns: 30 days, they told me, maybe.")),
    )
    .await
    .unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1, "the judge was not asked");
    assert!(!eval.passed && eval.score == 0.4, "{eval}");
    // Found with nothing against it: no call, correct.
    let (server, seen) = judge_saying(0.4, true).await;
    let right = case("30 days", "Returns are accepted within 30 days.");
    let eval = within(judge(&server).correctness(&right)).await.unwrap();
    assert!(seen.lock().unwrap().is_empty(), "the judge was asked");
    assert!(
        eval.passed && eval.score == 1.0 && eval.usage.calls == 0,
        "{eval}"
    );
    assert!(eval.graded.as_ref().is_some_and(|g| g.by_rule), "{eval}");
    assert!(
        eval.to_string().contains("the reference was found in the response, «30 days» (words 5–6), with nothing against it: decided correct with no question asked (the found rule)"),
        "{eval}"
    );
    // The rule off: the same answer is asked about, and the judge decides.
    let off = Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_model("m")
        .with_retry(fast_retries(0))
        .with_timeout(Duration::from_secs(5))
        .with_found_rule(false)
        .build()
        .unwrap();
    let eval = within(off.correctness(&right)).await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1, "the rule off asked nothing");
    assert!(!eval.passed && eval.score == 0.4, "{eval}");
    assert!(
        eval.to_string()
            .contains("the found rule is off, so the judge decides"),
        "{eval}"
    );
    // The negation test of the issue, at the default, with the
    // assertion a team writes: caught.
    let (server, _) = judge_saying(0.262, true).await;
    let judge = judge(&server);
    let caught = ragaliq::assert_caught!(
        judge,
        case("30 days", "It is not 30 days; it is 14."),
        correctness
    );
    assert_eq!(
        caught.graded.and_then(|g| g.found).map(|f| f.words),
        Some((4, 5))
    );
}

/// Without token probabilities the word written decides (P(yes) 1 or 0),
/// and the reasoning says it was the word.
#[tokio::test]
async fn the_word_written_decides_where_there_are_no_probabilities() {
    let (server, _) = judge_saying(0.1, false).await;
    let eval = within(judge(&server).correctness(&case(REFERENCE, "Fourteen days.")))
        .await
        .unwrap();
    assert_eq!(eval.score, 0.0);
    assert!(
        eval.reasoning
            .starts_with("The judge answered no to whether the response gives the expected answer without contradicting it (the word written"),
        "{}",
        eval.reasoning
    );
}

/// Claims both ways is a named option: `Correctness::F1` extracts claims
/// (the direct question is not asked), and `claims` is its name in
/// configuration too.
#[tokio::test]
async fn claims_both_ways_stays_a_named_option() {
    let server = MockServer::start().await;
    let tasks = Arc::new(Mutex::new(Vec::new()));
    let seen = tasks.clone();
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let user = body["messages"][1]["content"].as_str().unwrap().to_owned();
            seen.lock().unwrap().push(user.clone());
            if user.contains("atomic claims") {
                let claims = json!({"claims": ["Returns are accepted for 30 days."]});
                return ResponseTemplate::new(200).set_body_json(json!({"model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": claims.to_string()}}],
                    "usage": {"prompt_tokens": 80, "completion_tokens": 10}}));
            }
            ResponseTemplate::new(200).set_body_json(reply(0.9, true))
        })
        .mount(&server)
        .await;
    let judge = Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_model("m")
        .with_strategy(Strategy::Probability)
        .with_retry(fast_retries(0))
        .build()
        .unwrap();
    let options = EvalOptions::default().with_correctness("claims".parse().unwrap());
    assert_eq!(options.correctness, Some(Correctness::F1));
    let eval = within(judge.evaluate_with(
        Metric::Correctness,
        &case(
            "Returns are accepted for 30 days.",
            "Returns are accepted for 30 days.",
        ),
        &options,
    ))
    .await
    .unwrap();
    assert!(eval.precision.is_some() && eval.recall.is_some(), "{eval}");
    assert!(eval.graded.is_none());
    let asked = tasks.lock().unwrap().clone();
    assert!(asked.iter().any(|u| u.contains("atomic claims")));
    assert!(
        !asked
            .iter()
            .any(|u| u.contains("same answer to the question")),
        "the direct question is not asked: {asked:?}"
    );
}
