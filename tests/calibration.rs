//! The committed labelled set, replayed offline through every judge
//! configuration in `tests/labelled_claims/judges`: the agreement report
//! runs with no server and no key. Re-record with the command in
//! `tests/labelled_claims/README.md`.

use ragaliq::Mode;
use ragaliq::calibrate::CalibrationReport;

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

/// Claims in the labelled set (both halves).
const CLAIMS: usize = 360;

#[tokio::test]
async fn the_labelled_set_is_balanced_and_replays_with_no_call() {
    let report = replay(None).await;
    assert!(report.passed(), "{}", report.failures().join("\n"));
    assert_eq!(report.claims, CLAIMS);
    assert_eq!(report.areas.len(), 18, "{:?}", report.areas);
    assert!(
        report.labels.values().all(|&n| (80..=100).contains(&n)),
        "{:?}",
        report.labels
    );
    for (judge, name) in report.judges.iter().zip(JUDGES) {
        assert_eq!(judge.name, name);
        assert_eq!(
            judge.judged + judge.undecided,
            CLAIMS,
            "{name}: every claim is decided or undecided"
        );
        assert!(judge.not_judged.is_empty(), "{name}");
        assert_eq!(judge.usage.calls, 0, "{name}: replay makes no call");
        assert!(
            judge.usage.replayed_tokens > 0,
            "{name}: recorded costs are shown"
        );
        // Undecided claims are counted apart: not in the matrix, not among
        // the disagreements, each listed once.
        let matrix: u64 = judge.verdicts.confusion.iter().flatten().sum();
        assert_eq!(matrix, judge.judged as u64);
        assert_eq!(judge.verdicts.n, judge.judged);
        assert_eq!(judge.undecided_claims.len(), judge.undecided);
        assert!(judge.disagreements.iter().all(|d| !d.undecided));
        assert_eq!(
            judge.ungrounded,
            judge
                .undecided_claims
                .iter()
                .filter(|d| d.ungrounded)
                .count()
        );
        // The bootstrap resamples groups of claims that share passages.
        assert!(
            judge.verdicts.groups < judge.judged / 2,
            "{name}: {} groups",
            judge.verdicts.groups
        );
        assert_eq!(
            judge.disagreements.len(),
            judge.judged
                - (0..4)
                    .map(|i| judge.verdicts.confusion[i][i] as usize)
                    .sum::<usize>()
        );
    }
    // Each claim is asked once per sample whether it is supported, and an
    // unsupported one once more whether it is contradicted: one sample asks
    // between one and two questions per claim, five samples five times that.
    let (one, five) = (
        report.judges[0].usage.replayed,
        report.judges[2].usage.replayed,
    );
    let claims = report.claims as u64;
    assert!(
        (claims..=2 * claims).contains(&one),
        "{one} calls for {claims} claims"
    );
    assert!(
        (5 * claims..=10 * claims).contains(&five),
        "{five} calls for {claims} claims in five samples"
    );
    assert_eq!(report.judges[2].samples, "5");
    // The report renders in every form.
    let console = report.to_string();
    assert!(
        console.starts_with("agreement with 360 labelled claims over 18 areas"),
        "{console}"
    );
    assert!(
        console.contains("comparison (decided claims; undecided and not verified apart):"),
        "{console}"
    );
    let x5 = &report.judges[2];
    assert!(
        report
            .to_markdown()
            .contains(&format!("| `flipping-x5` | 5 | {} |", x5.judged)),
        "{}",
        report.to_markdown()
    );
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["format"], 2);
    assert_eq!(json["judges"][2]["verdicts"]["n"], x5.judged);
    assert_eq!(json["judges"][2]["undecided"], x5.undecided);
}

#[tokio::test]
async fn the_halves_share_no_passages_and_replay_from_the_same_recordings() {
    let load = |half: &str| {
        ragaliq::calibrate::load_dir(&std::path::Path::new("tests/labelled_claims").join(half))
            .unwrap()
    };
    let (dev, test) = (load("dev"), load("test"));
    assert_eq!((dev.len(), test.len()), (180, 180));
    for c in &test {
        assert!(
            dev.iter().all(|d| d.id != c.id && d.passages != c.passages),
            "{} is in both halves, or shares its passages with the dev half",
            c.id
        );
    }
    // A half alone finds its recordings beside its files.
    let report = ragaliq::calibration("tests/labelled_claims/test")
        .with_mode(Mode::Replay)
        .with_judge_file("scripted", "tests/labelled_claims/judges/scripted.toml")
        .run()
        .await
        .unwrap();
    assert_eq!(
        report.judges[0].judged,
        180,
        "{}",
        report.failures().join("\n")
    );
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
    assert_eq!((judge.judged, judge.not_judged.len()), (0, CLAIMS));
    assert_eq!(judge.verdicts.kappa, None);
    assert!(
        judge.not_judged[0].error.contains("no recording"),
        "{}",
        judge.not_judged[0].error
    );
    assert!(
        report.failures()[0]
            .starts_with("judge `unrecorded`: 360 of 360 claims could not be verified")
    );
}

/// Markup in a labelled claim, its passages, its note and the judge's
/// evidence shows as text on the calibration page.
#[tokio::test]
async fn markup_in_labelled_claims_stays_text_on_the_page() {
    use ragaliq::TransportError;
    use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};

    const ATTACK: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    /// Quotes the attack from the passage as its evidence, and disagrees.
    struct Quoting;
    impl Transport for Quoting {
        fn provider(&self) -> &str {
            "quoting"
        }
        fn complete<'a>(
            &'a self,
            _: &'a JudgeRequest,
        ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
            let reply = serde_json::json!({
                "evidence": format!("Refunds take 30 days. {ATTACK}"),
                "verdict": "contradicted"
            });
            Box::pin(async move { Ok(JudgeResponse::text(reply.to_string())) })
        }
    }
    let dir =
        std::env::temp_dir().join(format!("ragaliq-calibration-markup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let quoted = |s: &str| serde_json::to_string(s).unwrap();
    std::fs::write(
        dir.join("claims.yaml"),
        format!(
            "- id: m1\n  area: markup\n  passages: [{}]\n  claim: {}\n  label: supported\n  note: {}\n",
            quoted(&format!("Refunds take 30 days. {ATTACK}")),
            quoted(&format!("Refunds take 30 days. {ATTACK}")),
            quoted(ATTACK)
        ),
    )
    .unwrap();
    let report = ragaliq::calibration(&dir)
        .with_mode(Mode::Live)
        .with_judge(
            "quoting",
            Judge::builder(Quoting)
                .with_strategy(ragaliq::Strategy::Json)
                .build()
                .unwrap(),
        )
        .run()
        .await
        .unwrap();
    assert_eq!(report.judges[0].disagreements.len(), 1);
    let page = report.to_html();
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(!page.contains("<img"), "markup reached the page");
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;")
    );
    // The evidence is found in its passage and marked there.
    assert!(page.contains("<b>Evidence</b> P1"), "{page}");
    assert!(page.contains("<mark class=\"v-contradicted\""), "{page}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every real model's recordings (`tests/labelled_claims/strategies`)
/// replay with no call and give the figures BENCHMARKS.md quotes:
/// a change to how requests are built, or to how replies are read and
/// checked, shows here before it silently changes a published number.
#[tokio::test]
async fn the_real_models_recordings_replay_to_the_published_figures() {
    // (half, judge, decided, undecided, supported / not kappa, four-verdict kappa)
    let published: &[(&str, &str, usize, usize, f64, f64)] = &[
        ("test", "qwen15-examples", 179, 1, 0.275, 0.134),
        ("test", "qwen15-v3", 179, 1, 0.062, -0.008),
        ("test", "qwen15-naive", 180, 0, 0.251, 0.089),
        ("test", "qwen05-v3", 98, 82, 0.000, 0.025),
        ("test", "qwen05-examples", 71, 109, 0.000, 0.065),
        ("test", "qwen05-naive", 180, 0, -0.006, 0.026),
        ("dev", "qwen15-v3", 180, 0, 0.086, -0.015),
        ("dev", "qwen15-b1", 180, 0, 0.035, 0.058),
        ("dev", "qwen15-verdict-first", 178, 2, 0.182, 0.149),
        ("dev", "qwen15-examples", 179, 1, 0.222, 0.129),
        ("dev", "qwen15-naive", 180, 0, 0.459, 0.177),
        ("dev", "qwen05-v3", 109, 71, 0.000, -0.027),
        ("dev", "qwen05-b1", 152, 28, 0.000, -0.016),
        ("dev", "qwen05-b8", 96, 84, 0.000, 0.126),
        ("dev", "qwen05-verdict-first", 46, 134, 0.000, -0.005),
        ("dev", "qwen05-examples", 72, 108, 0.053, 0.018),
        ("dev", "qwen05-naive", 180, 0, 0.015, 0.017),
        ("dev", "qwen05-b4-off", 180, 0, -0.032, -0.008),
    ];
    for half in ["dev", "test"] {
        let rows: Vec<_> = published.iter().filter(|r| r.0 == half).collect();
        let mut calibration =
            ragaliq::calibration(format!("tests/labelled_claims/{half}")).with_mode(Mode::Replay);
        for r in &rows {
            calibration = calibration.with_judge_file(
                r.1,
                format!("tests/labelled_claims/strategies/{}.toml", r.1),
            );
        }
        let report = calibration.run().await.unwrap();
        for (judge, &&(_, name, decided, undecided, collapsed, four)) in
            report.judges.iter().zip(&rows)
        {
            let kappa = |k: Option<f64>| (k.unwrap_or(f64::NAN) * 1000.0).round() / 1000.0;
            assert_eq!(
                (
                    judge.usage.calls,
                    judge.not_judged.len(),
                    judge.judged,
                    judge.undecided
                ),
                (0, 0, decided, undecided),
                "{half} {name}: calls, not verified, decided, undecided"
            );
            assert_eq!(
                (kappa(judge.collapsed.kappa), kappa(judge.verdicts.kappa)),
                (collapsed, four),
                "{half} {name}: supported / not and four-verdict kappa"
            );
        }
    }
}

/// A public set labelled supported / not supported only (BEGIN): the four
/// verdicts measure nothing there, so the report says so and `--min-kappa`
/// holds the two-way kappa, not a four-verdict 0 of one label.
#[tokio::test]
async fn a_two_way_set_is_held_to_its_two_way_kappa() {
    let run = |floor: f64| async move {
        ragaliq::calibration("tests/public_claims/begin/dev")
            .with_mode(Mode::Replay)
            .with_judge_file("qwen05-unfitted", "tests/judges/qwen05-unfitted.toml")
            .with_min_kappa(floor)
            .run()
            .await
            .unwrap()
    };
    // The two-way kappa is 0.400 (the four-verdict kappa, 0 here, would
    // fail any floor above 0).
    let report = run(0.35).await;
    let judge = &report.judges[0];
    assert!(!judge.four_way_measured());
    assert_eq!((judge.usage.calls, judge.judged), (0, 273));
    let two_way = judge.collapsed.kappa.unwrap();
    assert!((0.35..0.45).contains(&two_way), "{two_way}");
    assert!(report.passed(), "{}", report.failures().join("\n"));
    assert!(
        report
            .to_string()
            .contains("not measured: the labels say supported or not supported only"),
        "{report}"
    );
    let report = run(0.45).await;
    assert_eq!(
        report.failures(),
        [format!(
            "judge `qwen05-unfitted`: kappa {two_way:.3} is below the floor 0.45"
        )]
    );
}

/// The kit models asked the short questions (the default way of asking):
/// claims read by the shipped rule (chosen leave-one-source-out on public
/// sources, BENCHMARKS.md), relevance and passage thresholds fitted on the
/// dev halves (`tests/judges/qwen15.toml`, `qwen05.toml`), reported on the
/// test halves, which were never tuned on.
/// The figures BENCHMARKS.md and the guide quote, replayed with no call: a
/// change to the questions, to how probabilities are read or to a default
/// shows here before it silently moves a published number.
#[tokio::test]
async fn the_short_questions_replay_to_the_published_test_figures() {
    // (set, judge name, judge file, decided, two-way kappa, four verdicts)
    replays_to(&[
        (
            "tests/labelled_claims/test",
            "qwen15",
            "qwen15",
            180,
            0.37,
            Some(0.143),
        ),
        (
            "tests/labelled_claims/test",
            "qwen05",
            "qwen05",
            180,
            0.068,
            Some(0.039),
        ),
        (
            "tests/public_claims/begin/test",
            "qwen15",
            "qwen15",
            272,
            0.439,
            None,
        ),
        (
            "tests/public_claims/begin/test",
            "qwen05",
            "qwen05",
            272,
            0.456,
            None,
        ),
        // Sources nobody fitted on (the rule was chosen leave-one-source-out
        // on the dev halves; BENCHMARKS.md, "Verdicts that transfer").
        (
            "tests/public_claims/dialfact/test",
            "qwen15",
            "qwen15",
            104,
            0.6,
            Some(0.354),
        ),
        (
            "tests/public_claims/dialfact/test",
            "qwen05",
            "qwen05",
            104,
            0.273,
            Some(0.088),
        ),
        (
            "tests/public_claims/fm2/test",
            "qwen15",
            "qwen15",
            108,
            0.442,
            Some(0.276),
        ),
        (
            "tests/public_claims/fm2/test",
            "qwen05",
            "qwen05",
            108,
            0.036,
            Some(0.01),
        ),
        (
            "tests/public_claims/expertqa/test",
            "qwen15",
            "qwen15",
            106,
            0.166,
            None,
        ),
        // Answers graded against a reference by the direct question, at
        // the shipped default 0.5 (chosen leave-one-source-out, nothing
        // fitted): plain matching's floor is 0.000 on ours and 0.496 on
        // OpenQA (public NQ-open answers people judged). The 0.5B never
        // says yes at 0.5: on OpenQA, what it gets right is what the found
        // rule decides with no call (the reference standing in the answer
        // with nothing against it), less than plain matching finds since
        // issue 49's rule asks about more of them.
        (
            "tests/labelled_correctness/test",
            "qwen15",
            "qwen15",
            65,
            0.39,
            None,
        ),
        (
            "tests/labelled_correctness/test",
            "qwen05",
            "qwen05",
            65,
            0.0,
            None,
        ),
        (
            "tests/public_correctness/openqa/test",
            "qwen15",
            "qwen15",
            76,
            0.504,
            None,
        ),
        (
            "tests/public_correctness/openqa/test",
            "qwen05",
            "qwen05",
            76,
            0.439,
            None,
        ),
        // Criteria at the shipped default 0.45 (the judge files without
        // fitted thresholds, replaying the same recordings).
        (
            "tests/labelled_criteria/test",
            "qwen15",
            "qwen15-unfitted",
            67,
            0.26,
            None,
        ),
        (
            "tests/labelled_criteria/test",
            "qwen05",
            "qwen05-unfitted",
            67,
            0.056,
            None,
        ),
        (
            "tests/public_criteria/kqa/test",
            "qwen15",
            "qwen15-unfitted",
            90,
            0.437,
            None,
        ),
        (
            "tests/public_criteria/kqa/test",
            "qwen05",
            "qwen05-unfitted",
            90,
            0.001,
            None,
        ),
        // Criteria, at the threshold fitted on the dev half.
        (
            "tests/labelled_criteria/test",
            "qwen15",
            "qwen15",
            67,
            0.258,
            None,
        ),
        (
            "tests/labelled_criteria/test",
            "qwen05",
            "qwen05",
            67,
            0.025,
            None,
        ),
        // K-QA's physicians' must-have statements as criteria: a public
        // set nobody fitted on, read at the threshold fitted on ours.
        (
            "tests/public_criteria/kqa/test",
            "qwen15",
            "qwen15",
            90,
            0.416,
            None,
        ),
        (
            "tests/public_criteria/kqa/test",
            "qwen05",
            "qwen05",
            90,
            0.025,
            None,
        ),
        (
            "tests/labelled_relevance/test",
            "qwen15",
            "qwen15",
            64,
            0.523,
            None,
        ),
        (
            "tests/labelled_relevance/test",
            "qwen05",
            "qwen05",
            64,
            0.205,
            None,
        ),
        // Passages: whether each contains the answer (`passage_relevant@2`;
        // BENCHMARKS.md, "Which question context precision asks"), the
        // 1.5B at 0.3, chosen on the dev halves of ours, MTRAG's and
        // MTRAG-UN's.
        (
            "tests/labelled_passages/test",
            "qwen15",
            "qwen15",
            60,
            0.682,
            None,
        ),
        (
            "tests/labelled_passages/test",
            "qwen05",
            "qwen05",
            60,
            0.148,
            None,
        ),
    ])
    .await;
}

/// The direct question beside plain matching on the same answers, and
/// whether the judge separates each set at all (AUC): the figures
/// BENCHMARKS.md gives for the shipped correctness, replayed with no call.
/// Where the AUC is under 0.7 the report says so before any kappa.
#[tokio::test]
async fn the_direct_question_replays_beside_plain_matching() {
    // (set, judge, AUC, plain matching's kappa over the same answers)
    let published = [
        ("tests/labelled_correctness/dev", "qwen15", 0.729, 0.0),
        ("tests/labelled_correctness/test", "qwen15", 0.764, 0.0),
        (
            "tests/public_correctness/openqa/dev",
            "qwen15",
            0.755,
            0.668,
        ),
        (
            "tests/public_correctness/openqa/test",
            "qwen15",
            0.802,
            0.496,
        ),
        ("tests/labelled_correctness/dev", "qwen05", 0.429, 0.0),
        ("tests/labelled_correctness/test", "qwen05", 0.47, 0.0),
        (
            "tests/public_correctness/openqa/dev",
            "qwen05",
            0.628,
            0.668,
        ),
        (
            "tests/public_correctness/openqa/test",
            "qwen05",
            0.716,
            0.496,
        ),
    ];
    let mut moved = Vec::new();
    for (set, name, auc, matching) in published {
        let report = ragaliq::calibration(set)
            .with_mode(Mode::Replay)
            .with_judge_file(name, format!("tests/judges/{name}.toml"))
            .run()
            .await
            .unwrap();
        let judge = &report.judges[0];
        let round = |x: f64| (x * 1000.0).round() / 1000.0 + 0.0;
        let got = (
            judge.auc.map(round),
            judge.matching.as_ref().and_then(|m| m.kappa).map(round),
        );
        if got != (Some(auc), Some(matching)) {
            moved.push(format!(
                "{set} {name}: AUC and plain matching {got:?}, published ({auc}, {matching})"
            ));
        }
        let text = report.to_string();
        let warned = text.contains(&format!("judge `{name}` cannot separate this set"));
        if warned != (auc < 0.7) {
            moved.push(format!("{set} {name}: AUC {auc}, said {warned}: {text}"));
        }
    }
    assert!(moved.is_empty(), "figures moved:\n{}", moved.join("\n"));
}

/// The published rows where not every item was decided (every other row
/// has all decided): set, judge name, not verified (an extraction that
/// rewrote the answer, refused with the reply), undecided (a split vote or
/// no answer word).
const NOT_ALL_DECIDED: &[(&str, &str, usize, usize)] = &[
    ("tests/labelled_correctness/dev", "qwen15-claims", 0, 2),
    // 11 more undecided since the user's wh-question echoed back is no
    // claim (evidence::the_question_echoed): for them the 0.5B listed only
    // the echo, asked twice; 2 more since the question restated, which the
    // text does not say, is no claim of it (evidence::claim_from_response).
    ("tests/labelled_correctness/dev", "qwen05-claims", 0, 20),
    ("tests/labelled_correctness/test", "qwen15-claims", 0, 5),
    ("tests/labelled_correctness/test", "qwen05-claims", 0, 6),
    (
        "tests/public_correctness/openqa/test",
        "qwen15-claims",
        6,
        5,
    ),
    (
        "tests/public_correctness/openqa/test",
        "qwen05-claims",
        3,
        4,
    ),
];

/// A published row: set, judge name, judge file, decided, two-way kappa,
/// four-verdict kappa.
type Published = (
    &'static str,
    &'static str,
    &'static str,
    usize,
    f64,
    Option<f64>,
);

/// The rest of the kit models' committed recordings: the dev halves at the
/// defaults (what `--fit` was run on), the JSON prompts' befores, the
/// relevance template without a score in its reply line, and chunked
/// passages: each replays to the figure BENCHMARKS.md quotes (and stays
/// referenced for `cargo insta test --unreferenced`).
#[tokio::test]
async fn the_dev_halves_and_the_befores_replay_to_the_published_figures() {
    // (set, judge name, judge file, decided, two-way kappa, four verdicts)
    replays_to(&[
        // Criteria on the dev half, at the threshold fitted there: the
        // kappa each judge file's [fitted] table records (judged_kappa,
        // judged_items).
        (
            "tests/labelled_criteria/dev",
            "qwen15",
            "qwen15",
            74,
            0.246,
            None,
        ),
        (
            "tests/labelled_criteria/dev",
            "qwen05",
            "qwen05",
            74,
            0.123,
            None,
        ),
        // The direct question on the dev halves, at the default 0.5.
        (
            "tests/labelled_correctness/dev",
            "qwen15",
            "qwen15",
            65,
            0.356,
            None,
        ),
        (
            "tests/labelled_correctness/dev",
            "qwen05",
            "qwen05",
            65,
            0.0,
            None,
        ),
        (
            "tests/public_correctness/openqa/dev",
            "qwen15",
            "qwen15",
            84,
            0.547,
            None,
        ),
        (
            "tests/public_correctness/openqa/dev",
            "qwen05",
            "qwen05",
            84,
            0.435,
            None,
        ),
        // The before: claims both ways (now the named option), where
        // `--fit` chose its threshold (0.1 for the 1.5B: kappa 0.268 there then, 0.225 since the question restated is no claim;
        // 0.069 at the old default 0.7), and its test halves read with it
        // (the 0.5B, unfitted, at 0.7).
        (
            "tests/labelled_correctness/dev",
            "qwen15-claims",
            "qwen15-claims",
            63,
            0.225,
            None,
        ),
        (
            "tests/labelled_correctness/dev",
            "qwen05-claims",
            "qwen05-claims",
            45,
            0.0,
            None,
        ),
        (
            "tests/labelled_correctness/test",
            "qwen15-claims",
            "qwen15-claims",
            60,
            0.357,
            None,
        ),
        (
            "tests/labelled_correctness/test",
            "qwen05-claims",
            "qwen05-claims",
            59,
            -0.034,
            None,
        ),
        (
            "tests/public_correctness/openqa/test",
            "qwen15-claims",
            "qwen15-claims",
            65,
            0.229,
            None,
        ),
        (
            "tests/public_correctness/openqa/test",
            "qwen05-claims",
            "qwen05-claims",
            69,
            0.179,
            None,
        ),
        (
            "tests/labelled_claims/dev",
            "qwen15-unfitted",
            "qwen15-unfitted",
            180,
            0.551,
            Some(0.184),
        ),
        (
            "tests/labelled_claims/dev",
            "qwen05-unfitted",
            "qwen05-unfitted",
            180,
            0.125,
            Some(0.058),
        ),
        (
            "tests/public_claims/begin/dev",
            "qwen15-unfitted",
            "qwen15-unfitted",
            273,
            0.504,
            None,
        ),
        (
            "tests/labelled_relevance/dev",
            "qwen15-unfitted",
            "qwen15-unfitted",
            65,
            0.076,
            None,
        ),
        (
            "tests/labelled_relevance/dev",
            "qwen05-unfitted",
            "qwen05-unfitted",
            65,
            0.0,
            None,
        ),
        (
            "tests/labelled_passages/dev",
            "qwen15-unfitted",
            "qwen15-unfitted",
            64,
            0.447,
            None,
        ),
        (
            "tests/labelled_passages/dev",
            "qwen05-unfitted",
            "qwen05-unfitted",
            64,
            0.0,
            None,
        ),
        (
            "tests/labelled_passages/dev",
            "qwen05-json",
            "qwen05-json",
            64,
            0.0,
            None,
        ),
        (
            "tests/labelled_passages/test",
            "qwen05-json",
            "qwen05-json",
            60,
            0.0,
            None,
        ),
        (
            "tests/labelled_passages/test",
            "qwen15-json",
            "qwen15-json",
            60,
            0.5,
            None,
        ),
        (
            "tests/labelled_relevance/dev",
            "qwen15-json-v3",
            "qwen15-json",
            65,
            0.584,
            None,
        ),
        (
            "tests/labelled_relevance/test",
            "qwen15-json-v3",
            "qwen15-json",
            64,
            0.414,
            None,
        ),
        (
            "tests/public_claims/begin/dev/cmu",
            "qwen15-chunk400",
            "qwen15-chunk400",
            81,
            0.528,
            None,
        ),
    ])
    .await;
}

/// Replays each row's set with its judge file, with no call, and checks
/// the figures: every item decided, the two-way kappa, and the
/// four-verdict kappa where the labels give four verdicts (a set labelled
/// supported / not says it measures nothing there).
async fn replays_to(published: &[Published]) {
    // Every row is checked before failing, so one run lists every figure
    // that moved.
    let mut moved = Vec::new();
    for &(set, name, file, decided, two_way, four) in published {
        let report = ragaliq::calibration(set)
            .with_mode(Mode::Replay)
            .with_judge_file(name, format!("tests/judges/{file}.toml"))
            .run()
            .await
            .unwrap();
        let judge = &report.judges[0];
        // + 0.0: a kappa of -0.0 reads as 0.0.
        let kappa = |k: Option<f64>| k.map(|k| (k * 1000.0).round() / 1000.0 + 0.0);
        let counts = (
            judge.usage.calls,
            judge.not_judged.len(),
            judge.judged,
            judge.undecided,
        );
        let (not_verified, undecided) = NOT_ALL_DECIDED
            .iter()
            .find(|(s, n, ..)| (*s, *n) == (set, name))
            .map_or((0, 0), |(_, _, v, u)| (*v, *u));
        if counts != (0, not_verified, decided, undecided) {
            moved.push(format!(
                "{set} {name}: calls, not verified, decided, undecided {counts:?}, published (0, {not_verified}, {decided}, {undecided})"
            ));
        }
        // What the CLI prints for a run with items not verified names
        // them as the set's items ("graded answers"), not as claims.
        let said = format!(
            "judge `{name}`: {not_verified} of {} {} could not be verified",
            report.claims,
            report.kind.plural()
        );
        if not_verified > 0 && !report.failures().iter().any(|f| f.starts_with(&said)) {
            moved.push(format!(
                "{set} {name}: failures {:?}, expected {said:?}",
                report.failures()
            ));
        }
        if kappa(judge.collapsed.kappa) != Some(two_way) {
            moved.push(format!(
                "{set} {name}: two-way kappa {:?}, published {two_way}",
                kappa(judge.collapsed.kappa)
            ));
        }
        if let Some(four) = four {
            if !judge.four_way_measured() || kappa(judge.verdicts.kappa) != Some(four) {
                moved.push(format!(
                    "{set} {name}: four-verdict kappa {:?}, published {four}",
                    kappa(judge.verdicts.kappa)
                ));
            }
        } else if set.contains("claims") && judge.four_way_measured() {
            // BEGIN says supported or not: four verdicts measure nothing.
            moved.push(format!(
                "{set} {name}: four verdicts measured on a two-way set"
            ));
        }
    }
    assert!(moved.is_empty(), "figures moved:\n{}", moved.join("\n"));
}
