//! Several samples and the vote: claims extracted once, the verification
//! asked N times (each sample its own exchange), each claim decided by the
//! majority, a split below the required agreement *undecided*, never
//! resolved in the answer's favour; `auto` asks more only near the
//! threshold; every sample recorded and replayed offline.

use crate::common;

use common::within;
use ragaliq::Strategy;
use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
use ragaliq::{EvalOptions, Metric, Mode, RagCase, Samples, TransportError, Verdict};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Answers by sample index: `verdicts[s]` are the labels of sample `s` for
/// claims 1 and 2; relevance scores `scores[s]`.
struct BySample {
    verdicts: Vec<[&'static str; 2]>,
    scores: Vec<f64>,
    calls: Arc<AtomicUsize>,
}

impl Transport for BySample {
    fn provider(&self) -> &str {
        "by-sample"
    }
    fn complete<'a>(
        &'a self,
        r: &'a JudgeRequest,
    ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let s = r.sample as usize;
        let text = match r.task.as_str() {
            "extract_claims" => {
                assert_eq!(s, 0, "claims are extracted once");
                r#"{"claims": ["Refunds take 30 days.", "Refunds are free."]}"#.to_owned()
            }
            "verify_claims" => {
                let [a, b] = self.verdicts[s];
                format!(
                    r#"{{"verdicts": [{{"claim": 1, "verdict": "{a}", "evidence": "Refunds take 30 days.", "confidence": 0.9}}, {{"claim": 2, "verdict": "{b}", "evidence": "Returns cost 5 dollars.", "confidence": 0.9}}]}}"#
                )
            }
            "relevance" => format!(
                r#"{{"reasoning": "sample {s}", "score": {}}}"#,
                self.scores[s]
            ),
            other => panic!("{other}"),
        };
        Box::pin(async move { Ok(JudgeResponse::text(text)) })
    }
}

fn judge(verdicts: Vec<[&'static str; 2]>, scores: Vec<f64>) -> (Judge, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let judge = Judge::builder(BySample {
        verdicts,
        scores,
        calls: calls.clone(),
    })
    .with_strategy(Strategy::Json)
    .with_temperature(0.7)
    .build()
    .unwrap();
    (judge, calls)
}

fn case() -> RagCase {
    RagCase::new("How long do refunds take?")
        .context(["Refunds take 30 days. Returns cost 5 dollars."])
        .response("Refunds take 30 days. Refunds are free.")
}

fn five() -> EvalOptions {
    EvalOptions::default().with_samples(Samples::Fixed(5))
}

#[tokio::test]
async fn each_claim_is_decided_by_the_majority_of_five_samples() {
    let (judge, calls) = judge(
        vec![
            ["supported", "no_evidence"],
            ["supported", "no_evidence"],
            ["no_evidence", "no_evidence"],
            ["supported", "supported"],
            ["supported", "no_evidence"],
        ],
        vec![],
    );
    let eval = within(judge.evaluate_with(Metric::Faithfulness, &case(), &five()))
        .await
        .unwrap();
    // Claim 1: supported 4 of 5; claim 2: no evidence 4 of 5.
    assert_eq!(eval.claims[0].verdict, Verdict::Supported);
    assert_eq!(eval.claims[0].agreement.unwrap().to_string(), "4 of 5");
    assert_eq!(eval.claims[1].verdict, Verdict::NoEvidence);
    assert!(!eval.undecided);
    assert_eq!(eval.score, 0.5);
    let spread = eval.spread.as_ref().unwrap();
    assert_eq!(
        (spread.samples, spread.min, spread.median, spread.max),
        (5, 0.0, 0.5, 1.0)
    );
    assert_eq!(
        spread.flips, 1,
        "one sample (both supported) would have passed"
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1 + 5,
        "claims once, verdicts five times"
    );
    let text = eval.to_string();
    assert!(
        text.contains("[2] \"Refunds are free.\" — no_evidence (4 of 5 samples agree)"),
        "{text}"
    );
    assert!(text.contains("spread: 5 samples: min 0.00, median 0.50, max 1.00; 1 of 5 on the other side of the threshold"), "{text}");
}

#[tokio::test]
async fn a_split_below_the_agreement_awaits_a_person_and_is_never_a_pass() {
    let (judge, _) = judge(
        vec![
            ["supported", "supported"],
            ["supported", "no_evidence"],
            ["supported", "supported"],
            ["supported", "contradicted"],
            ["supported", "no_evidence"],
        ],
        vec![],
    );
    let eval = within(judge.evaluate_with(Metric::Faithfulness, &case(), &five()))
        .await
        .unwrap();
    // Claim 2 splits 2 / 2 / 1: below 3 of 5, and the tie goes to the worse
    // verdict. The judge is unsure of it: counted each way the score is 0.5
    // or 1, on both sides of 0.7, so the evaluation awaits a person.
    assert!(eval.claims[1].undecided);
    assert_eq!(eval.claims[1].verdict, Verdict::NoEvidence);
    assert_eq!(
        eval.claims[1].unsure.as_ref().map(|u| u.why),
        Some(ragaliq::UnsureWhy::Split)
    );
    let awaiting = eval.awaiting.expect("awaits a person");
    assert_eq!((awaiting.low, awaiting.high), (0.5, 1.0));
    assert!(!eval.passed, "awaiting a person is never a pass by default");
    assert!(
        eval.to_string()
            .starts_with("faithfulness: AWAITING A PERSON: the judge is unsure of 1 claim"),
        "{eval}"
    );
    // With a lower bar, 2 of 5 still is not a majority: it still awaits.
    let lenient = five().with_agreement(0.51);
    let eval = within(judge.evaluate_with(Metric::Faithfulness, &case(), &lenient))
        .await
        .unwrap();
    assert!(eval.awaiting.is_some());
    // Let the threshold decide, and the vote's plurality (the worse verdict
    // on a tie) decides: a low score, no longer awaiting.
    let decide = five().with_uncertain(ragaliq::Uncertain::Decide);
    let eval = within(judge.evaluate_with(Metric::Faithfulness, &case(), &decide))
        .await
        .unwrap();
    assert!(
        eval.awaiting.is_none() && !eval.passed && eval.score == 0.5,
        "{eval}"
    );
}

#[tokio::test]
async fn relevance_takes_the_median_and_votes_on_the_side_of_the_threshold() {
    let (first, _) = judge(vec![], vec![0.9, 0.8, 0.2, 0.75, 0.95]);
    let eval = within(first.evaluate_with(Metric::Relevance, &case(), &five()))
        .await
        .unwrap();
    assert_eq!(
        (eval.score, eval.passed, eval.undecided),
        (0.8, true, false)
    );
    assert_eq!(eval.reasoning, "sample 1");
    let (second, _) = judge(vec![], vec![0.9, 0.2, 0.3, 0.8, 0.1]);
    let eval = within(second.evaluate_with(Metric::Relevance, &case(), &five()))
        .await
        .unwrap();
    assert_eq!(
        (eval.passed, eval.undecided),
        (false, false),
        "3 of 5 below: a fail"
    );
    let (third, _) = judge(vec![], vec![0.9, 0.2, 0.3, 0.8]);
    let four = EvalOptions::default().with_samples(Samples::Fixed(4));
    let eval = within(third.evaluate_with(Metric::Relevance, &case(), &four))
        .await
        .unwrap();
    assert!(
        eval.awaiting.is_some() && !eval.passed,
        "2 against 2: a person decides"
    );
}

#[tokio::test]
async fn auto_asks_again_only_near_the_threshold() {
    // Far from the threshold: one sample is enough.
    let (judge_far, far_calls) = judge(vec![], vec![0.05; 5]);
    let auto = EvalOptions::default().with_samples(Samples::Auto { max: 5 });
    let eval = within(judge_far.evaluate_with(Metric::Relevance, &case(), &auto))
        .await
        .unwrap();
    assert_eq!(
        (far_calls.load(Ordering::SeqCst), eval.spread.is_none()),
        (1, true)
    );
    // Near it: up to five.
    let (judge_near, near_calls) = judge(vec![], vec![0.65, 0.8, 0.75, 0.9, 0.6]);
    let eval = within(judge_near.evaluate_with(Metric::Relevance, &case(), &auto))
        .await
        .unwrap();
    assert_eq!(near_calls.load(Ordering::SeqCst), 5);
    assert_eq!((eval.score, eval.passed), (0.75, true));
}

#[tokio::test]
async fn every_sample_is_recorded_and_replays_without_a_call() {
    use ragaliq::record::{Location, Recorder};
    let dir = std::env::temp_dir().join(format!("ragaliq-samples-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let at = || Location::at(dir.join("samples.snap"), "samples", "record");
    let verdicts = vec![["supported", "no_evidence"]; 5];
    let (recording, calls) = judge(verdicts.clone(), vec![]);
    let recorder = Arc::new(Recorder::new(at(), Mode::Record));
    let first = within(recording.with_recorder(recorder.clone()).evaluate_with(
        Metric::Faithfulness,
        &case(),
        &five(),
    ))
    .await
    .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 6);
    let pending = recorder
        .save_pending("tests/it/sampling.rs")
        .unwrap()
        .unwrap();
    let text = std::fs::read_to_string(&pending).unwrap();
    for s in 1..5 {
        assert!(
            text.contains(&format!("sample: {s}")),
            "sample {s} is recorded:\n{text}"
        );
    }
    std::fs::rename(&pending, dir.join("samples.snap")).unwrap();
    let (replaying, replay_calls) = judge(verdicts, vec![]);
    let replayed = within(
        replaying
            .with_recorder(Arc::new(Recorder::new(at(), Mode::Replay)))
            .evaluate_with(Metric::Faithfulness, &case(), &five()),
    )
    .await
    .unwrap();
    assert_eq!(replay_calls.load(Ordering::SeqCst), 0);
    assert_eq!(replayed.usage.replayed, 6);
    assert_eq!(
        (replayed.score, replayed.claims),
        (first.score, first.claims)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
