//! Case generation replayed from the example's recording: the generated
//! file loads as a suite case file.

#[path = "../examples/generate.rs"]
mod generate_example;

use ragaliq::record::Recorder;
use ragaliq::{Config, Judge, Mode};
use std::path::Path;
use std::sync::Arc;

#[tokio::test]
async fn generated_cases_load_in_a_suite() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let env = |name: &str| match name {
        "RAGALIQ_MODE" => Some("replay".to_owned()),
        _ => std::env::var(name).ok(),
    };
    let config = Config::load_from(root, &env).unwrap();
    let recorder = Arc::new(Recorder::new(generate_example::location(), Mode::Replay));
    let judge = Judge::from_config(&config)
        .unwrap()
        .with_recorder(recorder.clone());
    let cases = ragaliq::generate(
        &judge,
        &root.join("examples/docs"),
        generate_example::PER_DOCUMENT,
    )
    .await
    .unwrap();
    assert_eq!(judge.usage().calls, 0);
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_deref().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "returns-1",
            "returns-2",
            "returns-3",
            "shipping-1",
            "shipping-2"
        ]
    );
    assert_eq!(
        cases[0].expected_answer.as_deref(),
        Some("Refunds are accepted within 30 days of delivery.")
    );

    // The folder does not exist yet: the writer makes it (a fresh clone's
    // `target/`, or one where CARGO_TARGET_DIR points elsewhere).
    let dir = std::env::temp_dir().join(format!("ragaliq-generated-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    ragaliq::generation::write_jsonl(&cases, &dir.join("generated.jsonl")).unwrap();
    let loaded = ragaliq::harness::cases::load_dir(&dir).unwrap();
    assert_eq!(loaded.len(), 5);
    assert_eq!(loaded[3].case, cases[3]);
    std::fs::remove_dir_all(&dir).unwrap();

    // Asserted like any recording, so it stays referenced for
    // `cargo insta test --unreferenced=reject`.
    let snapshot = generate_example::location().snapshot;
    let site = ragaliq::record::Site {
        file: file!(),
        module_path: module_path!(),
        function: "generated_cases_load_in_a_suite",
        line: line!(),
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
    };
    let description = recorder.description();
    recorder
        .commit(None, true, |recording| {
            ragaliq::record::assert_snapshot(&snapshot, &recording.to_yaml(), &description, site);
        })
        .unwrap();
}
