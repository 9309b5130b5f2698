//! Retrieval metrics in a suite, as a user runs them: case files of every
//! format with retrieval labels, one trial per case and metric named after
//! the metric (`case::recall@3`), no judge asked, no recording written, and
//! the results in every report.

use libtest_mimic::Arguments;
use ragaliq::harness::report::{Outcome, Report};
use ragaliq::retrieval::{mrr, ndcg_at, recall_at};
use std::path::{Path, PathBuf};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-retrieval-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn quiet() -> Arguments {
    Arguments {
        quiet: true,
        test_threads: Some(2),
        ..Arguments::default()
    }
}

/// Four cases in three formats: IDs, graded IDs, passages matched by text,
/// and one with no labels at all.
fn cases(dir: &Path) {
    write(
        dir,
        "ids.yaml",
        "- id: refund-window\n  query: What is the refund window?\n  retrieved_ids: [faq-3, policy-12, terms-1, policy-7]\n  relevant_ids: [policy-12, policy-7]\n- id: unlabelled\n  query: Who pays return shipping?\n  retrieved_ids: [faq-9]\n",
    );
    write(
        dir,
        "graded.csv",
        "id,query,retrieved_ids,relevant_ids\nwarranty,How long is the warranty?,w-2 | w-1 | faq-1,\"{\"\"w-1\"\": 3, \"\"w-2\"\": 1}\"\n",
    );
    write(
        dir,
        "text.json",
        r#"[{"id": "by-text", "query": "When do stores open?",
             "context": ["Parking is free.", "Stores open at nine, Monday to Saturday."],
             "relevant_passages": ["stores open at nine monday to saturday"]}]"#,
    );
}

#[test]
fn retrieval_trials_reach_every_report_without_a_judge() {
    let dir = temp_dir("suite");
    let case_dir = dir.join("cases");
    std::fs::create_dir_all(&case_dir).unwrap();
    cases(&case_dir);
    let reports = dir.join("reports");
    let outcome = ragaliq::suite(&case_dir)
        .metrics([])
        .retrieval([recall_at(3).threshold(0.6), mrr(), ndcg_at(5)])
        .report_dir(&reports)
        .with_args(quiet())
        .run_for_outcome()
        .unwrap();
    let report = &outcome.report;
    let by = |case: &str, label: &str| {
        report
            .results
            .iter()
            .find(|r| r.case == case && r.label() == label)
            .unwrap_or_else(|| panic!("no trial {case}::{label}"))
    };
    // refund-window: policy-12 at rank 2, policy-7 at rank 4.
    let recall = by("refund-window", "recall@3");
    assert_eq!((recall.score, recall.outcome), (Some(0.5), Outcome::Failed));
    let seen = recall.retrieval.as_ref().unwrap();
    assert_eq!(
        seen.relevant[1].rank,
        Some(4),
        "the missed ID's rank is kept"
    );
    assert_eq!(by("refund-window", "mrr").score, Some(0.5));
    assert_eq!(
        by("refund-window", "mrr").outcome,
        Outcome::Passed,
        "measured: no threshold"
    );
    // Graded: w-1 (3) at rank 2, w-2 (1) at rank 1.
    let log3 = 3f64.log2();
    let ndcg = (1.0 + 3.0 / log3) / (3.0 + 1.0 / log3);
    assert!((by("warranty", "ndcg@5").score.unwrap() - ndcg).abs() < 1e-12);
    // By text: the second passage, whatever its case and punctuation.
    assert_eq!(by("by-text", "mrr").score, Some(0.5));
    // No labels: an input error, not a score.
    let unlabelled = by("unlabelled", "recall@3");
    assert_eq!(unlabelled.outcome, Outcome::ConfigError);
    assert!(
        unlabelled
            .error
            .as_deref()
            .unwrap()
            .contains("no relevant IDs"),
        "{unlabelled:?}"
    );
    let c = &outcome.conclusion;
    // 12 trials: refund-window::recall@3 and unlabelled's three fail.
    assert_eq!((c.num_passed, c.num_failed), (8, 4));
    assert_eq!(
        report.summary.usage.calls + report.summary.usage.replayed,
        0
    );
    assert!(
        !case_dir.join("snapshots").exists(),
        "no judge, no recording"
    );

    // Every report says it.
    let json = Report::read(&reports.join("report.json")).unwrap();
    assert_eq!(json.summary.metrics["recall@3"].count, 3);
    assert_eq!(
        json.summary.metrics["mrr"].mean,
        Some(round4((0.5 + 1.0 + 0.5) / 3.0))
    );
    let md = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(
        md.contains("| refund-window | recall@3 | 0.50 | 0.60 | ❌ failed |"),
        "{md}"
    );
    let xml = std::fs::read_to_string(reports.join("junit.xml")).unwrap();
    let junit = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    let failed = junit.test_suites[0]
        .test_cases
        .iter()
        .find(|t| t.name.as_str() == "refund-window::recall@3")
        .unwrap();
    match &failed.status {
        quick_junit::TestCaseStatus::NonSuccess {
            message,
            description,
            ..
        } => {
            assert_eq!(
                message.as_deref(),
                Some("recall@3 failed: 0.50 against threshold 0.60")
            );
            assert!(
                description
                    .as_deref()
                    .unwrap()
                    .contains("policy-7 at rank 4, below the top 3"),
                "{description:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    let page = std::fs::read_to_string(reports.join("report.html")).unwrap();
    for column in ["<th>recall@3</th>", "<th>mrr</th>", "<th>ndcg@5</th>"] {
        assert!(page.contains(column), "{column}");
    }
    assert!(
        page.contains("✗ missed: below the cutoff"),
        "the missed ID, on the page"
    );
    assert!(
        page.contains("✓ labelled relevant (R1)"),
        "the passage found by text is marked"
    );
    assert!(
        !page.contains("none given"),
        "a case measured only against labels lacks no answer"
    );
    let table = report.console_table();
    assert!(table.contains("recall@3"), "{table}");
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[test]
fn a_case_threshold_beats_the_metrics_and_the_suites() {
    let dir = temp_dir("thresholds");
    write(
        &dir,
        "cases.yaml",
        "- id: own\n  query: Q?\n  retrieved_ids: [x, a]\n  relevant_ids: [a]\n  thresholds: {retrieval: 0.4}\n- id: metric\n  query: Q?\n  retrieved_ids: [x, a]\n  relevant_ids: [a]\n",
    );
    let outcome = ragaliq::suite(&dir)
        .metrics([])
        .threshold(ragaliq::Metric::Retrieval, 0.1)
        .retrieval([mrr().threshold(0.6), recall_at(1)])
        .with_args(quiet())
        .run_for_outcome()
        .unwrap();
    let threshold = |case: &str, label: &str| {
        let r = outcome
            .report
            .results
            .iter()
            .find(|r| r.case == case && r.label() == label)
            .unwrap();
        (r.threshold, r.outcome)
    };
    assert_eq!(threshold("own", "mrr"), (0.4, Outcome::Passed));
    assert_eq!(threshold("metric", "mrr"), (0.6, Outcome::Failed));
    assert_eq!(
        threshold("metric", "recall@1"),
        (0.1, Outcome::Failed),
        "the suite's, for a metric that names none"
    );
}
