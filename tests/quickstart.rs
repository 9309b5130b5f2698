//! The quickstart example's cases, replayed from its committed recording:
//! the example works offline, and the recording stays referenced for
//! `cargo insta test --unreferenced=reject`.

#[path = "../examples/quickstart.rs"]
mod quickstart;

use ragaliq::record::Recorder;
use ragaliq::{Config, Judge, Metric, Mode};
use std::path::Path;
use std::sync::Arc;

#[tokio::test]
async fn quickstart_replays_offline() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Replay only, whatever the environment says: no call may be made.
    let env = |name: &str| match name {
        "RAGALIQ_MODE" => Some("replay".to_owned()),
        _ => std::env::var(name).ok(),
    };
    let config = Config::load_from(root, &env).unwrap();
    assert_eq!(config.mode, Mode::Replay);
    let recorder = Arc::new(Recorder::new(quickstart::location(), Mode::Replay));
    let judge = Judge::from_config(&config)
        .unwrap()
        .with_recorder(recorder.clone());

    let graded = quickstart::grade(&judge).await.unwrap();
    let verdict = |id: &str, metric: Metric| {
        graded
            .iter()
            .find(|(c, e)| c.id.as_deref() == Some(id) && e.metric == metric)
            .map(|(_, e)| e.passed)
            .unwrap()
    };
    assert!(verdict("faithful", Metric::Faithfulness) && verdict("faithful", Metric::Relevance));
    assert!(
        !verdict("hallucinating", Metric::Hallucination)
            && verdict("hallucinating", Metric::Relevance)
    );
    assert!(!verdict("irrelevant", Metric::Relevance));
    let usage = judge.usage();
    assert_eq!((usage.calls, usage.replayed), (0, 9));

    insta::with_settings!({
        snapshot_path => root.join("examples/recordings"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_json_snapshot!("quickstart", recorder.finish(true).unwrap());
    });
}
