//! `recorded_judge!()` in a plain `#[tokio::test]`: the judge records to a
//! snapshot named after the test (`tests/snapshots/recorded__*.snap`, made
//! against the scripted judge as `ragaliq.toml` says) and replays it
//! offline, as `#[rag_test]` does. Re-record with:
//!
//! ```sh
//! cargo run -p ragaliq-scripted --bin scripted-judge -- 8787 &
//! RAGALIQ_MODE=record cargo test --test recorded
//! cargo insta review
//! ```

use ragaliq::prelude::*;
use std::path::Path;

fn case(response: &str) -> RagCase {
    RagCase::new("What is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response(response)
}

#[tokio::test]
async fn a_tokio_test_has_a_recording_of_its_own() {
    let judge = ragaliq::recorded_judge!();
    let eval = assert_faithful!(judge, case("The refund window is 30 days from delivery."));
    assert_eq!(eval.score, 1.0);
    let recording = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/recorded__a_tokio_test_has_a_recording_of_its_own.snap");
    // Its debug form names the recording it is bound to.
    assert!(
        format!("{judge:?}").contains(&format!("{:?}", recording)),
        "{judge:?}"
    );
}

#[tokio::test]
async fn a_named_recording_is_shared_by_name() {
    let judge = ragaliq::recorded_judge!(name = "refund_gold");
    assert_caught!(
        judge,
        case("The refund window is 30 days. Refunds are paid in gold coins."),
        faithfulness
    );
    assert!(
        format!("{judge:?}").contains("tests/snapshots/recorded__refund_gold.snap"),
        "{judge:?}"
    );
}
