//! Answers graded against a reference (the direct question, the default;
//! claims both ways, a named option), by criteria in plain words and by a
//! metric of one's own, through `#[rag_test]` as a user writes them. The
//! recordings in `tests/snapshots/grading__*.snap` were made from
//! Qwen2.5-Coder-1.5B-Instruct on the realjudge kit's llama-server
//! (`tests/judges/qwen15.toml`) and replay offline, with no key.
//!
//! The cases are what a person would grade plainly: an answer that says
//! the reference in other words, one that contradicts it, a reply that
//! promises what the rule forbids. Where the small model grades otherwise
//! than a person, the test says so rather than being changed until it
//! passes. Re-record with the kit's server on port 8767:
//!
//! ```sh
//! RAGALIQ_MODE=record cargo test --test grading
//! cargo insta review
//! ```

use ragaliq::prelude::*;

const REFERENCE: &str =
    "Refunds are accepted within 30 days of delivery and are paid to the original payment method.";

fn refund(response: &str) -> RagCase {
    RagCase::new("How do refunds work?")
        .id("refund")
        .response(response)
        .expected_answer(REFERENCE)
}

/// The reference itself, as the answer: found in it word for word (words
/// 1 to 16), and the judge says it gives the expected answer.
#[rag_test(config = "tests/judges/qwen15.toml")]
async fn the_reference_itself_is_correct(judge: Judge) {
    let eval = assert_correct!(judge, refund(REFERENCE));
    let found = eval.graded.as_ref().and_then(|g| g.found.clone());
    assert_eq!(found.map(|f| f.words), Some((1, 16)), "{eval}");
    // The found rule: the reference stands in the response with nothing
    // against it, so the answer is correct with no question asked; the
    // recording keeps the decision (no call) for a person to overrule.
    assert_eq!(
        (eval.score, eval.usage.calls, eval.usage.replayed),
        (1.0, 0, 0)
    );
    assert!(eval.graded.as_ref().is_some_and(|g| g.by_rule), "{eval}");
    assert!(eval.review_key.is_some(), "{eval}");
    assert!(
        eval.to_string().contains(
            "with nothing against it: decided correct with no question asked (the found rule)"
        ),
        "{eval}"
    );
}

const RETURNS: &str = "How long is the return window for online orders?";

fn returns(reference: &str, response: &str) -> RagCase {
    RagCase::new(RETURNS)
        .id("returns")
        .response(response)
        .expected_answer(reference)
}

/// The newcomer's case (`../shared/newcomer/`): the reference said in other
/// words. Claims both ways scored it 0.00 (each of the reference's claims
/// "no_evidence" at P 0.28 and 0.31); one direct question reads it correct
/// (P(yes) 0.73), with one call. The 1.5B's band for graded answers is
/// `all` (no band held on the public sources), so by default that reading
/// awaits a person ([`the_1_5b_decides_neither_window`]); `uncertain =
/// "decide"` reads it at the threshold, as before bands.
#[rag_test(config = "tests/judges/qwen15.toml")]
async fn the_reference_in_other_words_is_correct(judge: Judge) {
    let eval = assert_correct!(
        judge,
        returns(
            "30 days from delivery.",
            "You can return online orders for up to 30 days after they are delivered."
        ),
        uncertain = "decide"
    );
    assert_eq!(eval.usage.replayed + eval.usage.calls, 1, "{eval}");
    assert_eq!(eval.graded.and_then(|g| g.found), None, "other words");
}

/// Its wrong twin: another number of days, from another day (P(yes) 0.39
/// at the threshold).
#[rag_test(config = "tests/judges/qwen15.toml")]
async fn the_wrong_window_is_caught(judge: Judge) {
    assert_caught!(
        judge,
        returns(
            "30 days from delivery.",
            "You have 14 days from purchase to return online orders."
        ),
        correctness,
        uncertain = "decide"
    );
}

/// The two windows at the 1.5B's own bands (the default): the reference is
/// found in neither, and the judge decides no graded answer, so both await
/// a person, each with the command that gives the verdict: each test fails
/// until a person gives it, and says it is no low score.
#[rag_test(config = "tests/judges/qwen15.toml")]
async fn the_1_5b_decides_neither_window(judge: Judge) {
    for (response, test) in [
        (
            "You can return online orders for up to 30 days after they are delivered.",
            "the_reference_in_other_words_is_correct",
        ),
        (
            "You have 14 days from purchase to return online orders.",
            "the_wrong_window_is_caught",
        ),
    ] {
        let case = returns("30 days from delivery.", response);
        let eval = judge.correctness(&case).await.unwrap();
        let awaiting = eval
            .awaiting
            .as_ref()
            .unwrap_or_else(|| panic!("{test}: {eval}"));
        assert_eq!((awaiting.low, awaiting.high), (0.0, 1.0), "{eval}");
        assert!(!eval.passed, "{eval}");
        assert!(
            eval.to_string()
                .starts_with("correctness: AWAITING A PERSON"),
            "{eval}"
        );
    }
}

/// The negation: the response holds the reference's words and denies
/// them. Against the newcomer's reference ("30 days from delivery.", not
/// found word for word) and against a short one ("30 days", found at words
/// 4–5, and the "not" casts doubt on it): the judge's no decides.
#[rag_test(config = "tests/judges/qwen15.toml")]
async fn a_denied_reference_is_caught(judge: Judge) {
    let denied = "It is not 30 days; it is 14.";
    assert_caught!(
        judge,
        returns("30 days from delivery.", denied),
        correctness,
        uncertain = "decide"
    );
    let eval = assert_caught!(
        judge,
        returns("30 days", denied),
        correctness,
        uncertain = "decide"
    );
    let graded = eval.graded.as_ref().unwrap();
    assert_eq!(
        graded.found.as_ref().map(|f| f.words),
        Some((4, 5)),
        "{eval}"
    );
    // Found, with a denial beside it: the judge is asked, and its no
    // decides.
    let doubt = graded.doubt.as_ref().unwrap();
    assert_eq!(
        (doubt.kind, doubt.words.as_str()),
        (ragaliq::DoubtKind::Denies, "not")
    );
    assert_eq!(eval.usage.replayed, 1, "{eval}");
    assert!(
        eval.to_string().contains(
            "found in the response, «30 days» (words 4–5), but «not»: a denial; the judge decides"
        ),
        "{eval}"
    );
}

/// Claims both ways, a named option for a team that wants the facts
/// listed: a wrong window and a wrong way of paying, and the failure
/// names what the reference says against each.
#[rag_test(config = "tests/judges/qwen15.toml")]
#[should_panic(expected = "contradicted by the reference")]
async fn a_wrong_answer_fails_with_both_sides_quoted(judge: Judge) {
    assert_correct!(
        judge,
        refund("Refunds are accepted within 14 days of delivery and are paid as store credit."),
        correctness = Correctness::F1,
        uncertain = "decide"
    );
}

/// Recall alone (claims both ways): an answer that leaves out how refunds
/// are paid fails a team that wants the whole reference stated, at a
/// threshold of its own.
#[rag_test(config = "tests/judges/qwen15.toml")]
#[should_panic(expected = "the reference's claims the answer does not state")]
async fn a_partial_answer_fails_recall(judge: Judge) {
    assert_correct!(
        judge,
        refund("You can get a refund within 30 days of delivery."),
        correctness = Correctness::Recall,
        threshold = 0.9,
        uncertain = "decide"
    );
}

const RULE: &str = "Never promises a refund";

fn reply(response: &str) -> RagCase {
    RagCase::new("Can I return the blender I bought last week?")
        .id("reply")
        .context(["Refunds are decided by the returns team after inspection."])
        .response(response)
}

/// The yes/no form on a reply that breaks the rule outright: the failure
/// quotes the judge's reason, and says what the judge was shown (the rule
/// names no passage, so not the case's passage).
#[rag_test(config = "tests/judges/qwen15.toml")]
#[should_panic(
    expected = "Shown to the judge: the question, the response and the criteria; not the passages (the criteria do not name them)"
)]
async fn a_broken_rule_fails_with_the_judges_reason(judge: Judge) {
    let case = reply("Sure, send it back and you will get a full refund, no questions asked.");
    let eval = judge.criteria(&case, RULE).await.unwrap();
    assert!(
        eval.reasoning.starts_with("The judge's reason: \""),
        "the judge's reason is not quoted"
    );
    assert_judged!(judge, case, RULE, uncertain = "decide");
}

/// The scored form (evaluation steps written once for the rule, then a
/// 1–5 score weighted by its token probabilities), same reply. At the
/// default threshold 0.7, given here because the judge file's
/// `thresholds.criteria` (0.416) was fitted on the yes/no form's P(yes),
/// another scale: ragaliq has one criteria threshold for both forms (a
/// known limitation, in the guide).
#[rag_test(config = "tests/judges/qwen15.toml")]
#[should_panic(expected = "score")]
async fn a_broken_rule_scores_low(judge: Judge) {
    assert_judged!(
        judge,
        reply("Sure, send it back and you will get a full refund, no questions asked."),
        Criteria::scored(RULE),
        threshold = 0.7,
        uncertain = "decide"
    );
}

fn same_language() -> CustomMetric {
    CustomMetric::new(
        "same-language",
        "version: 1\n---\n<question>{{query}}</question>\n\n<response>{{response}}</response>\n\nIs the response written in the same language as the question? Answer \"yes\" or \"no\" first, then give your reason in one sentence.",
    )
    .expect("the template parses")
    .answered_by(["yes", "no"])
}

/// A metric of one's own, asked through the same session (recorded,
/// replayed): a Spanish question answered in English. A person says no;
/// the recorded 1.5B says yes (P 0.61), so this case is kept, not changed,
/// and run with `cargo test --test grading -- --ignored` against a better
/// judge.
#[rag_test(config = "tests/judges/qwen15.toml")]
#[ignore = "Qwen2.5-Coder-1.5B calls an English reply to a Spanish question the same language (P(yes) 0.61)"]
#[should_panic(expected = "same-language")]
async fn an_answer_in_another_language_fails_the_teams_metric(judge: Judge) {
    let case = RagCase::new("¿Puedo devolver un artículo sin recibo?")
        .id("language")
        .response("Yes, within 30 days, with any proof of purchase.");
    assert_metric!(judge, case, &same_language(), threshold = 0.5);
}

fn polite() -> CustomMetric {
    CustomMetric::new(
        "polite",
        "version: 1\n---\n<response>{{response}}</response>\n\nIs the response polite to the customer? Answer \"yes\" or \"no\" first, then give your reason in one sentence.",
    )
    .expect("the template parses")
    .answered_by(["yes", "no"])
}

/// A second metric of one's own, on a reply a person calls rude: the
/// failure names the metric and quotes the judge's reason.
#[rag_test(config = "tests/judges/qwen15.toml")]
#[should_panic(expected = "polite")]
async fn a_rude_reply_fails_the_teams_metric(judge: Judge) {
    let case = RagCase::new("Where is my order?")
        .id("rude")
        .response("Figure it out yourself, I am not your personal assistant.");
    assert_metric!(
        judge,
        case,
        &polite(),
        threshold = 0.5,
        uncertain = "decide"
    );
}

/// What the recorded 1.5B makes of the case above, which is ignored for
/// it: the English reply to a Spanish question is "the same language"
/// (P(yes) 0.61), so the team's metric passes where a person says no.
/// Replayed from that test's recording (read here, not bound: the ignored
/// test stays its binder), so the misreading stays on record and the
/// recording in use for `cargo insta test --unreferenced=reject`.
#[tokio::test]
async fn the_recorded_small_judge_calls_the_english_reply_the_same_language() {
    use ragaliq::record::{Location, Recorder, Site, assert_snapshot};
    use std::sync::Arc;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let env = |name: &str| match name {
        "RAGALIQ_MODE" => Some("replay".to_owned()),
        "RAGALIQ_CONFIG" => Some("tests/judges/qwen15.toml".to_owned()),
        _ => std::env::var(name).ok(),
    };
    let config = ragaliq::Config::load_from(root, &env).unwrap();
    let test = "an_answer_in_another_language_fails_the_teams_metric";
    let snapshot = root.join(format!("tests/snapshots/grading__{test}.snap"));
    let recorder = Arc::new(Recorder::new(
        Location::at(
            &snapshot,
            format!("grading::{test}"),
            format!("RAGALIQ_MODE=record cargo test --test grading -- {test} --exact --ignored"),
        ),
        ragaliq::Mode::Replay,
    ));
    let judge = Judge::from_config(&config)
        .unwrap()
        .with_recorder(recorder.clone());
    let case = RagCase::new("¿Puedo devolver un artículo sin recibo?")
        .id("language")
        .response("Yes, within 30 days, with any proof of purchase.");
    // At the 1.5B's own bands (a metric of one's own: `all`) the misreading
    // decides nothing: the case awaits a person instead of passing.
    let options = ragaliq::EvalOptions::default().with_threshold(0.5);
    let eval = judge
        .custom_with(&same_language(), &case, &options)
        .await
        .unwrap();
    assert!(eval.awaiting.is_some() && !eval.passed, "{eval}");
    assert_eq!((eval.usage.calls, eval.usage.replayed), (0, 1), "{eval}");
    // Read at the threshold, as before bands, it passes where a person
    // says no.
    let options = options.with_uncertain(ragaliq::Uncertain::Decide);
    let eval = judge
        .custom_with(&same_language(), &case, &options)
        .await
        .unwrap();
    assert!(eval.passed, "{eval}");
    assert!((eval.score - 0.61).abs() < 0.005, "{eval}");
    // The same answer, not asked again.
    assert_eq!((eval.usage.calls, eval.usage.replayed), (0, 0), "{eval}");
    let description = recorder.description();
    let site = Site {
        file: file!(),
        module_path: module_path!(),
        function: "the_recorded_small_judge_calls_the_english_reply_the_same_language",
        line: line!(),
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
    };
    recorder
        .commit(None, true, |recording| {
            assert_snapshot(&snapshot, &recording.to_yaml(), &description, site);
        })
        .unwrap();
}
