//! Collect mode (`RAGALIQ_COLLECT`, what `cargo ragaliq record --batch`
//! runs the tests in): a question no recording answers is queued, not
//! asked; every question of a stage is queued in the same round, even when
//! the first is queued already; an answer the batch gave is taken as a live
//! one; the judge's server is never called.

use ragaliq::batch::BatchFolder;
use ragaliq::judge::{JudgeResponse, TokenLogprob, TopLogprob};
use ragaliq::{Config, Error, Judge, RagCase};
use std::path::Path;

/// Answers every queued question by the scripted rule, as a batch would.
fn answer_queue(folder: &BatchFolder) -> Vec<String> {
    let mut tasks = Vec::new();
    for (fingerprint, question) in folder.queued().unwrap() {
        let user: String = question
            .request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        // A yes/no question is answered as OpenAI answers it: the word,
        // and its token probabilities.
        let answer = match ragaliq_scripted::word_rule(&user) {
            Some(p) => {
                let word = if p >= 0.5 { "Yes" } else { "No" };
                let top = vec![
                    TopLogprob {
                        token: "Yes".into(),
                        logprob: p.ln(),
                    },
                    TopLogprob {
                        token: "No".into(),
                        logprob: (1.0 - p).ln(),
                    },
                ];
                JudgeResponse::text(word).with_logprobs(vec![TokenLogprob {
                    token: word.into(),
                    logprob: if p >= 0.5 { p.ln() } else { (1.0 - p).ln() },
                    top,
                }])
            }
            None => {
                let reply = ragaliq_scripted::rule(&user).expect("a task the rule knows");
                JudgeResponse::text(reply.to_string())
            }
        }
        .with_tokens(100, 10);
        folder.write_answer(&fingerprint, &answer).unwrap();
        tasks.push(question.request.task);
    }
    tasks
}

#[tokio::test]
async fn every_question_of_a_stage_is_queued_in_one_round_and_answers_come_from_the_folder() {
    let dir = std::env::temp_dir().join(format!("ragaliq-collect-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let collect = dir.display().to_string();
    let env = |name: &str| -> Option<String> {
        match name {
            // Nothing listens there: a call would fail the evaluation.
            "RAGALIQ_JUDGE" => Some("openai:gpt-4o-mini".into()),
            "RAGALIQ_BASE_URL" => Some("http://127.0.0.1:9/v1".into()),
            "OPENAI_API_KEY" => Some("fake-key-never-sent".into()),
            "RAGALIQ_MODE" => Some("auto".into()),
            "RAGALIQ_VERIFY_BATCH" => Some("1".into()),
            "RAGALIQ_COLLECT" => Some(collect.clone()),
            _ => None,
        }
    };
    let config = Config::from_sources(None, Path::new("."), &env).unwrap();
    let judge = Judge::from_config(&config).unwrap();
    let folder = BatchFolder::new(&dir);
    let case = RagCase::new("What is the refund policy?")
        .context([
            "Refunds are accepted within 30 days of delivery.",
            "Refunds are paid to the original payment method.",
        ])
        .response(
            "Refunds are accepted within 30 days. Refunds are paid to the original payment method. Refunds need a receipt.",
        );

    // Round 1: extraction is queued; the trial has no score yet.
    let e = judge.faithfulness(&case).await.unwrap_err();
    assert!(e.is_queued(), "{e}");
    assert!(e.to_string().contains("extract_claims: queued"), "{e}");
    assert_eq!(answer_queue(&folder), ["extract_claims"]);

    // Round 2: each claim is asked alone whether it is supported, and all
    // three are queued, not only the first.
    let e = judge.faithfulness(&case).await.unwrap_err();
    assert!(e.is_queued(), "{e}");
    assert_eq!(
        answer_queue(&folder),
        ["claim_supported", "claim_supported", "claim_supported"]
    );

    // Round 3: the claim the passages do not support ("a receipt") is
    // asked whether they contradict it.
    let e = judge.faithfulness(&case).await.unwrap_err();
    assert!(e.is_queued(), "{e}");
    assert_eq!(answer_queue(&folder), ["claim_contradicted"]);

    // Round 4: every answer is in the folder; the evaluation is scored as
    // a live one would be, at the batch price.
    let eval = judge.faithfulness(&case).await.unwrap();
    assert!(folder.queued().unwrap().is_empty());
    assert_eq!(eval.claims.len(), 3);
    assert!(eval.score > 0.5 && eval.score < 1.0, "{eval}");
    let batch_price = 100.0 * 0.075 / 1e6 + 10.0 * 0.30 / 1e6;
    let cost = judge.cost().expect("gpt-4o-mini has a price");
    assert!(
        (cost - 5.0 * batch_price).abs() < 1e-12,
        "5 answers at half of gpt-4o-mini's price, not {cost}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn collect_mode_needs_a_mode_that_may_ask() {
    let env = |name: &str| -> Option<String> {
        match name {
            "RAGALIQ_COLLECT" => Some("target/batch".into()),
            "CI" => Some("true".into()),
            _ => None,
        }
    };
    let e = Config::from_sources(None, Path::new("."), &env).unwrap_err();
    assert!(e.to_string().contains("RAGALIQ_COLLECT"), "{e}");
    assert!(e.to_string().contains("mode auto or record"), "{e}");
    // Not an Error::Queued: a configuration problem.
    assert!(!Error::Config(e).is_queued());
}
