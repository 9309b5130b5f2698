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
    let eval = |id: &str, metric: Metric| {
        graded
            .iter()
            .find(|(c, m, _)| c.id.as_deref() == Some(id) && *m == metric)
            .map(|(_, _, e)| e.as_ref().expect("replayed"))
            .unwrap()
    };
    let verdict = |id: &str, metric: Metric| eval(id, metric).passed;
    let awaiting = |id: &str, metric: Metric| eval(id, metric).awaiting.is_some();
    // At the recorded 1.5B's own bands (claims [0.075, 0.9)): the faithful
    // claim (P(supported) 0.77) lies in the band, so the faithful answer's
    // faithfulness and hallucination await a person; the invented claim
    // (0.06) is under the band's bottom, decided contradicted, so the
    // hallucinating answer fails both however the other claim falls
    // (README, "Try it"). Relevance decides: 0.56 and 0.60 at or above
    // the answers band's top (the threshold), the off-topic answer's 0.08
    // under its bottom.
    for metric in [Metric::Faithfulness, Metric::Hallucination] {
        assert!(
            awaiting("faithful", metric) && !verdict("faithful", metric),
            "faithful {metric}"
        );
        assert!(
            !awaiting("hallucinating", metric) && !verdict("hallucinating", metric),
            "hallucinating {metric}: caught"
        );
    }
    for id in ["faithful", "hallucinating"] {
        assert!(verdict(id, Metric::Relevance), "{id}");
    }
    assert!(
        !verdict("irrelevant", Metric::Relevance) && !awaiting("irrelevant", Metric::Relevance)
    );
    // Where the recorded 1.5B differs from a person: it wrote claims about
    // the query, not the off-topic answer's, so that answer is undecided
    // (asked twice), not failed for its invented fact.
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
