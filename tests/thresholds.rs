//! Thresholds change how recorded answers are read, never which questions
//! are asked; faithfulness and hallucination read each claim by one rule;
//! a judge with no recording refuses to call out in replay mode. All of it
//! against the quickstart's committed recording (Qwen2.5-Coder-1.5B), with
//! no server.

#[path = "../examples/quickstart.rs"]
mod quickstart;

use ragaliq::record::{Recorder, RecordingError};
use ragaliq::{Config, Judge, Metric, Mode};
use std::sync::Arc;

fn config(extra: &[(&str, &str)]) -> Config {
    let env = |name: &str| {
        if name == "RAGALIQ_MODE" {
            return Some("replay".to_owned());
        }
        extra
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    };
    quickstart::config(&env).expect("the quickstart's judge file reads")
}

fn replaying(config: &Config) -> Judge {
    let recorder = Arc::new(Recorder::new(quickstart::location(), Mode::Replay));
    Judge::from_config(config).unwrap().with_recorder(recorder)
}

/// Every threshold a user (or `--fit`) may write, from one end of its range
/// to the other: the committed recording answers every question, because
/// the contradiction question follows the judge's own answer, not a
/// threshold.
#[tokio::test]
async fn editing_a_threshold_never_needs_an_unrecorded_answer() {
    for claim in ["0.01", "0.33", "0.5", "0.502", "0.99"] {
        for ratio in ["1", "3", "100"] {
            let config = config(&[
                ("RAGALIQ_CLAIM_THRESHOLD", claim),
                ("RAGALIQ_CONTRADICTION_RATIO", ratio),
            ]);
            assert_eq!(config.claim_threshold, claim.parse::<f64>().unwrap());
            let judge = replaying(&config);
            for (case, metric, result) in quickstart::grade(&judge).await {
                if let Err(e) = result {
                    panic!(
                        "claim_threshold {claim}, contradiction_ratio {ratio}: {metric} of `{}` needs what was never recorded: {e}",
                        case.id.unwrap_or_default()
                    );
                }
            }
            assert_eq!(judge.usage().calls, 0);
        }
    }
}

/// A claim hallucination counts is exactly a claim faithfulness does not
/// call supported, under any claim threshold: compared as the user sees
/// them, each claim's `failed` flag and the claims each failure message
/// lists (their lines: number, claim, verdict, P(supported), the passage
/// sentence), not the verdict, which both metrics take from the same check
/// (a confidence floor, for one, changes what hallucination fails and
/// leaves every verdict as it was).
#[tokio::test]
async fn faithfulness_and_hallucination_read_each_claim_alike() {
    /// The lines of a failure message that list claims, from the first
    /// one (`    [1] "…" — contradicted (P(supported) 0.06)`) to the
    /// last, with the passage sentence under each.
    fn listed(e: &ragaliq::Evaluation) -> Vec<String> {
        e.to_string()
            .lines()
            .skip_while(|l| !l.starts_with("    ["))
            .take_while(|l| l.starts_with("    "))
            .map(str::to_owned)
            .collect()
    }
    let mut compared = 0;
    for claim in ["0.2", "0.33", "0.8"] {
        let judge = replaying(&config(&[("RAGALIQ_CLAIM_THRESHOLD", claim)]));
        let graded = quickstart::grade(&judge).await;
        for (case, metric, result) in &graded {
            if *metric != Metric::Hallucination {
                continue;
            }
            let hallucination = result.as_ref().unwrap();
            let faithfulness = graded
                .iter()
                .find(|(c, m, _)| c.id == case.id && *m == Metric::Faithfulness)
                .map(|(_, _, r)| r.as_ref().unwrap())
                .unwrap();
            let failed = |e: &ragaliq::Evaluation| -> Vec<(String, bool)> {
                e.claims
                    .iter()
                    .map(|c| (c.claim.clone(), c.failed))
                    .collect()
            };
            let id = case.id.as_deref().unwrap_or_default();
            assert_eq!(
                failed(hallucination),
                failed(faithfulness),
                "claim_threshold {claim}, case `{id}`: the claims each metric fails\n{faithfulness}\n{hallucination}"
            );
            assert_eq!(
                listed(hallucination),
                listed(faithfulness),
                "claim_threshold {claim}, case `{id}`: the claims each message lists\n{faithfulness}\n{hallucination}"
            );
            compared += hallucination.claims.len();
        }
    }
    assert!(compared > 0, "no claim was compared");
}

/// A judge made from the configuration alone (as `Judge::from_env` makes
/// it), in replay mode, has no recording to answer from: it refuses before
/// any call and says how to record, or how to ask a real provider.
#[tokio::test]
async fn a_judge_without_a_recording_refuses_in_replay_mode() {
    let env = |name: &str| match name {
        "CI" => Some("true".to_owned()),
        // Nothing listens here: a call would fail otherwise than it must.
        "RAGALIQ_BASE_URL" => Some("http://127.0.0.1:9/v1".to_owned()),
        _ => None,
    };
    let config = quickstart::config(&env).unwrap();
    assert_eq!(config.mode, Mode::Replay);
    let judge = Judge::from_config(&config).unwrap();
    let case = quickstart::cases().into_iter().next().unwrap();
    let error = judge.faithfulness(&case).await.unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(
            &error,
            ragaliq::Error::Recording(RecordingError::Unrecorded { why, .. }) if why == "CI is set"
        ),
        "{message}"
    );
    assert!(
        message.contains("RAGALIQ_MODE=record cargo test"),
        "{message}"
    );
    assert!(message.contains("RAGALIQ_MODE=live"), "{message}");
    assert_eq!(judge.usage().calls, 0);
    println!("{message}");
}

/// The quickstart's file fits relevance and passages for the 1.5B
/// (`[fitted] answers_model`, `passages_model`): another model gets the defaults, and its judge's
/// description says so.
#[test]
fn thresholds_fitted_for_one_model_give_way_to_the_defaults_for_another() {
    let same = config(&[]);
    assert_eq!(same.passage_threshold, 0.3);
    assert_eq!(
        Judge::from_config(&same)
            .unwrap()
            .default_threshold(Metric::Relevance),
        0.47
    );
    let other = config(&[("RAGALIQ_MODEL", "gpt-4o-mini")]);
    assert_eq!(other.passage_threshold, 0.5, "the default, not the 1.5B's");
    let judge = Judge::from_config(&other).unwrap();
    assert_eq!(judge.default_threshold(Metric::Relevance), 0.7);
    let described = judge.describe();
    assert!(
        described
            .contains("thresholds fitted for `qwen2.5-coder-1.5b` not applied to `gpt-4o-mini`"),
        "{described}"
    );
}

/// Probabilities read from the same question are the same every time:
/// samples above 1 are refused there, with what to do instead, and
/// accepted where the judge's written word is sampled.
#[tokio::test]
async fn samples_are_refused_where_they_would_all_be_the_same() {
    let refused = match Judge::from_config(&config(&[("RAGALIQ_SAMPLES", "5")])) {
        Err(e) => e.to_string(),
        Ok(judge) => {
            let case = quickstart::cases().into_iter().next().unwrap();
            judge.faithfulness(&case).await.unwrap_err().to_string()
        }
    };
    assert!(
        refused.contains("the same every time the same question is asked")
            && refused.contains("strategy = \"word\""),
        "{refused}"
    );
    let sampled = config(&[
        ("RAGALIQ_SAMPLES", "5"),
        ("RAGALIQ_STRATEGY", "word"),
        ("RAGALIQ_TEMPERATURE", "0.7"),
    ]);
    assert!(Judge::from_config(&sampled).is_ok());
}
