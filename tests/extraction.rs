//! The claim-extraction measurement (`examples/extraction.rs`) replayed
//! from its committed recordings: the F1 figures BENCHMARKS.md quotes, and
//! the recordings stay referenced for `cargo insta test --unreferenced`.

#[path = "../examples/extraction.rs"]
mod extraction;

use ragaliq::Mode;
use ragaliq::record::{Site, assert_snapshot};
use std::path::Path;

#[tokio::test]
async fn extraction_replays_to_the_published_figures() {
    // (half, judge file, responses measured, not extracted, F1)
    let published = [
        ("dev", "qwen15", 22, 3, 0.747),
        ("dev", "qwen05", 24, 1, 0.753),
        ("test", "qwen15", 23, 1, 0.788),
        ("test", "qwen05", 24, 0, 0.773),
    ];
    for (half, judge, responses, failed, f1) in published {
        let dir = format!("tests/labelled_extraction/{half}");
        let file = format!("tests/judges/{judge}.toml");
        let m = extraction::measure(Path::new(&dir), Path::new(&file), false, Some(Mode::Replay))
            .await
            .unwrap();
        assert_eq!(
            (
                m.calls,
                m.responses,
                m.failed,
                (m.f1 * 1000.0).round() / 1000.0
            ),
            (0, responses, failed, f1),
            "{half} {judge}: calls, responses, not extracted, F1 ({:?})",
            m.errors
        );
        // What could not be extracted is an answer that states nothing, for
        // which the judge invented claims: an error that shows them.
        assert!(
            m.errors
                .iter()
                .all(|e| e.contains("none of the claims the judge extracted is in the response")),
            "{:?}",
            m.errors
        );
        let site = Site {
            file: file!(),
            module_path: module_path!(),
            function: "extraction_replays_to_the_published_figures",
            line: line!(),
            manifest_dir: env!("CARGO_MANIFEST_DIR"),
        };
        let snapshot = m.recorder.location().snapshot.clone();
        let description = m.recorder.description();
        m.recorder
            .commit(None, true, |recording| {
                assert_snapshot(&snapshot, &recording.to_yaml(), &description, site);
            })
            .unwrap();
    }
    // Sentences make no call and need no recording.
    let m = extraction::measure(
        Path::new("tests/labelled_extraction/dev"),
        Path::new("tests/judges/qwen15.toml"),
        true,
        Some(Mode::Replay),
    )
    .await
    .unwrap();
    assert_eq!(
        (m.calls, m.responses, (m.f1 * 1000.0).round() / 1000.0),
        (0, 25, 0.6)
    );
}
