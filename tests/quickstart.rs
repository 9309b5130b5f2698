//! The quickstart example's cases, replayed from its committed recording:
//! the example works offline, and the recording stays referenced for
//! `cargo insta test --unreferenced=reject`.

#[path = "../examples/quickstart.rs"]
mod quickstart;

use ragaliq::record::{Recorder, Site, assert_snapshot};
use ragaliq::{Judge, Metric, Mode};
use std::sync::Arc;

#[tokio::test]
async fn quickstart_replays_offline() {
    // Replay only, whatever the environment says: no call may be made.
    let env = |name: &str| match name {
        "RAGALIQ_MODE" => Some("replay".to_owned()),
        _ => std::env::var(name).ok(),
    };
    let config = quickstart::config(&env).unwrap();
    assert_eq!(config.mode, Mode::Replay);
    let recorder = Arc::new(Recorder::new(quickstart::location(), Mode::Replay));
    let judge = Judge::from_config(&config)
        .unwrap()
        .with_recorder(recorder.clone());

    let graded = quickstart::grade(&judge).await;
    let verdict = |id: &str, metric: Metric| {
        graded
            .iter()
            .find(|(c, m, _)| c.id.as_deref() == Some(id) && *m == metric)
            .map(|(_, _, e)| e.as_ref().expect("replayed").passed)
            .unwrap()
    };
    assert!(verdict("faithful", Metric::Faithfulness) && verdict("faithful", Metric::Relevance));
    assert!(
        !verdict("hallucinating", Metric::Hallucination)
            && verdict("hallucinating", Metric::Relevance)
    );
    assert!(!verdict("irrelevant", Metric::Relevance));
    // One rule for faithfulness and hallucination: the faithful claim,
    // supported at the claim threshold, passes both. Where the recorded 1.5B
    // differs from a person (README, "Try it"): it wrote claims about
    // the query, not the off-topic answer's, so that answer is undecided
    // (asked twice), not failed for its invented fact.
    assert!(verdict("faithful", Metric::Hallucination));
    let undecided = graded
        .iter()
        .filter(|(c, _, e)| c.id.as_deref() == Some("irrelevant") && e.as_ref().unwrap().undecided)
        .count();
    assert_eq!(
        undecided, 2,
        "faithfulness and hallucination of `irrelevant`"
    );
    let usage = judge.usage();
    assert_eq!((usage.calls, usage.replayed), (0, 10));

    let snapshot = quickstart::location().snapshot;
    let site = Site {
        file: file!(),
        module_path: module_path!(),
        function: "quickstart_replays_offline",
        line: line!(),
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
    };
    let description = recorder.description();
    recorder
        .commit(None, true, |recording| {
            assert_snapshot(&snapshot, &recording.to_yaml(), &description, site);
        })
        .unwrap();
}
