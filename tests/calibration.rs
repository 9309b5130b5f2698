//! The committed labelled set, replayed offline through every judge
//! configuration in `tests/labelled_claims/judges`: the agreement report
//! runs with no server and no key. Re-record with the command in
//! `tests/labelled_claims/README.md`.

use ragaliq::Mode;
use ragaliq::calibration::CalibrationReport;

const JUDGES: [&str; 3] = ["scripted", "flipping", "flipping-x5"];

async fn replay(min_kappa: Option<f64>) -> CalibrationReport {
    let mut calibration = ragaliq::calibration("tests/labelled_claims").with_mode(Mode::Replay);
    for name in JUDGES {
        calibration =
            calibration.with_judge_file(name, format!("tests/labelled_claims/judges/{name}.toml"));
    }
    if let Some(floor) = min_kappa {
        calibration = calibration.with_min_kappa(floor);
    }
    calibration.run().await.unwrap()
}

#[tokio::test]
async fn the_labelled_set_is_balanced_and_replays_with_no_call() {
    let report = replay(None).await;
    assert!(report.passed(), "{}", report.failures().join("\n"));
    assert_eq!(report.claims, 200);
    assert!(report.areas.len() >= 8, "{:?}", report.areas);
    assert!(
        report.labels.values().all(|&n| n == 50),
        "{:?}",
        report.labels
    );
    for (judge, name) in report.judges.iter().zip(JUDGES) {
        assert_eq!(judge.name, name);
        assert_eq!(judge.judged, 200, "{name}: every claim has a verdict");
        assert_eq!(judge.usage.calls, 0, "{name}: replay makes no call");
        assert!(
            judge.usage.replayed_tokens > 0,
            "{name}: recorded costs are shown"
        );
        let matrix: u64 = judge.verdicts.confusion.iter().flatten().sum();
        assert_eq!(matrix, 200);
        assert_eq!(
            judge.disagreements.len(),
            200 - (0..4)
                .map(|i| judge.verdicts.confusion[i][i] as usize)
                .sum::<usize>()
        );
    }
    // One batch per 8 claims sharing passages; five samples ask five times.
    assert_eq!(
        report.judges[2].usage.replayed,
        5 * report.judges[0].usage.replayed
    );
    assert_eq!(report.judges[2].samples, "5");
    // The report renders in every form.
    let console = report.to_string();
    assert!(
        console.starts_with("agreement with 200 labelled claims over 10 areas"),
        "{console}"
    );
    assert!(console.contains("comparison:"), "{console}");
    assert!(report.to_markdown().contains("| `flipping-x5` | 5 | 200 |"));
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["judges"][0]["verdicts"]["n"], 200);
}

#[tokio::test]
async fn a_kappa_below_the_floor_fails_the_run_and_says_by_how_much() {
    let report = replay(Some(0.6)).await;
    let kappa = report.judges[0].verdicts.kappa.unwrap();
    assert!(
        kappa < 0.6,
        "the scripted judge is a word-overlap rule: {kappa}"
    );
    assert!(!report.passed());
    assert_eq!(
        report.failures()[0],
        format!("judge `scripted`: kappa {kappa:.3} is below the floor 0.60")
    );
}

#[tokio::test]
async fn a_judge_without_recordings_is_reported_not_guessed() {
    let report = ragaliq::calibration("tests/labelled_claims")
        .with_mode(Mode::Replay)
        .with_judge_file("unrecorded", "tests/labelled_claims/judges/scripted.toml")
        .run()
        .await
        .unwrap();
    let judge = &report.judges[0];
    assert_eq!((judge.judged, judge.not_judged.len()), (0, 200));
    assert_eq!(judge.verdicts.kappa, None);
    assert!(
        judge.not_judged[0].error.contains("no recording"),
        "{}",
        judge.not_judged[0].error
    );
    assert!(
        report.failures()[0]
            .starts_with("judge `unrecorded`: 200 of 200 claims could not be verified")
    );
}
