//! Conversations (issue 48): a turn read with what came before it, the
//! first turn asked exactly as a single case, the window of earlier turns
//! a judge is shown, the checks only a conversation has, and errors and
//! failures that name the turn. Most tests ask a judge that answers by the
//! scripted judge's rules (`ragaliq_scripted::rule`, `word_rule`) in one
//! word and keeps every request it was sent; the `#[rag_test]`s at the end
//! grade the example's three-turn conversation (`examples/conversation.rs`)
//! as the kit's Qwen2.5-Coder-1.5B did (`tests/judges/qwen15.toml`), from
//! recordings in `tests/snapshots/conversation__*.snap` that replay offline.
//! Re-record those with the kit's server on port 8767:
//!
//! ```sh
//! RAGALIQ_MODE=record cargo test --test conversation -- --no-fail-fast
//! cargo insta review
//! ```

use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
use ragaliq::{
    Conversation, Criteria, Error, EvalOptions, Grounding, Metric, RagCase, Strategy,
    TransportError, Turn, Verdict, Window,
};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// Answers as the scripted judge does (a yes/no question in its word, a
/// JSON task in its JSON), keeping each request.
#[derive(Clone, Default)]
struct Scripted {
    seen: Arc<Mutex<Vec<JudgeRequest>>>,
}

impl Transport for Scripted {
    fn provider(&self) -> &str {
        "scripted"
    }

    fn complete<'a>(
        &'a self,
        request: &'a JudgeRequest,
    ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
        self.seen.lock().unwrap().push(request.clone());
        let user = &request.messages[0].content;
        let reply = match ragaliq_scripted::word_rule(user) {
            // The scripted judge has no rule for criteria.
            _ if request.task == "criteria_met" => "yes. It names the window.".to_owned(),
            Some(p) if p >= 0.5 => "Yes".to_owned(),
            Some(_) => "No".to_owned(),
            None => ragaliq_scripted::rule(user)
                .map(|v| v.to_string())
                .unwrap_or_default(),
        };
        Box::pin(async move { Ok(JudgeResponse::text(reply)) })
    }
}

impl Scripted {
    fn judge(&self) -> Judge {
        Judge::builder(self.clone()).build().unwrap()
    }

    fn requests(&self) -> Vec<JudgeRequest> {
        self.seen.lock().unwrap().clone()
    }

    fn fingerprints(&self) -> BTreeSet<String> {
        self.requests()
            .iter()
            .map(|r| r.fingerprint("scripted").to_string())
            .collect()
    }
}

const POLICY: &str = "Jackets can be returned within 30 days of delivery.";
const SHIPPING: &str = "Standard shipping within the country takes five business days.";

fn first_turn() -> Turn {
    Turn::new("Can I return a jacket?")
        .context([POLICY, SHIPPING])
        .response("Yes, jackets can be returned within 30 days of delivery.")
        .expected_answer("Yes, within 30 days of delivery.")
}

/// The three turns the issue names: a right follow-up, an answer that
/// contradicts the first, and a turn its passages cannot answer,
/// answered by invention.
fn three_turns() -> Conversation {
    Conversation::new([
        first_turn(),
        Turn::new("And how long do I have?")
            .context([POLICY])
            .response("You have 30 days from delivery to return the jacket."),
        Turn::new("What about international returns?")
            .context([SHIPPING])
            .response("International returns are free and jackets can be returned within 90 days of delivery."),
    ])
    .id("jacket-return")
}

#[tokio::test]
async fn a_first_turn_asks_exactly_what_a_single_case_asks() {
    let case = RagCase::new(first_turn().query)
        .context([POLICY, SHIPPING])
        .response(first_turn().response.unwrap())
        .expected_answer("Yes, within 30 days of delivery.");
    let conversation = Conversation::new([first_turn()]).id("one-turn");
    for strategy in [Strategy::Probability, Strategy::Json] {
        for metric in [
            Metric::Faithfulness,
            Metric::Hallucination,
            Metric::Relevance,
            Metric::ContextPrecision,
            Metric::Correctness,
        ] {
            let (alone, turn) = (Scripted::default(), Scripted::default());
            let judge = |s: &Scripted| {
                Judge::builder(s.clone())
                    .with_strategy(strategy)
                    .build()
                    .unwrap()
            };
            let a = judge(&alone).evaluate(metric, &case).await.unwrap();
            let t = judge(&turn)
                .evaluate(metric, &conversation.turn(1))
                .await
                .unwrap();
            assert!(!alone.requests().is_empty(), "{metric} asked nothing");
            assert_eq!(
                alone.fingerprints(),
                turn.fingerprints(),
                "{metric} ({strategy:?}): a first turn is asked as a single case"
            );
            assert_eq!((a.score, a.passed), (t.score, t.passed), "{metric}");
            assert_eq!(t.turn, Some(1));
            assert!(t.history.is_none());
        }
    }
    // Criteria and a single case's own one-turn conversation, too.
    let (alone, whole) = (Scripted::default(), Scripted::default());
    let rule = Criteria::new("Names the return window");
    alone.judge().criteria(&case, rule.clone()).await.unwrap();
    whole.judge().criteria(&conversation, rule).await.unwrap();
    assert_eq!(alone.fingerprints(), whole.fingerprints());
}

#[tokio::test]
async fn a_follow_up_is_asked_with_the_turns_before_it_in_one_block() {
    // By default relevance is asked as a single case's question (measured:
    // it agreed with people more often bare), keeping the turn for its key.
    let bare = Scripted::default();
    let conversation = three_turns();
    let eval = bare.judge().relevance(&conversation.turn(3)).await.unwrap();
    let asked = &bare.requests()[0];
    assert_eq!(asked.template_version, "answers_query@1+system_word@1");
    assert!(
        asked.messages[0]
            .content
            .starts_with("<question>What about international returns?</question>"),
        "{}",
        asked.messages[0].content
    );
    assert_eq!(asked.subject["turn"], 3);
    assert!(asked.subject.get("history").is_none(), "{}", asked.subject);
    assert!(
        eval.history.is_none(),
        "nothing shown, nothing said: {eval}"
    );
    // A judge set to show every question the history asks another
    // question: the earlier turns in one block before it.
    let s = Scripted::default();
    Judge::builder(s.clone())
        .with_follow_up_history(true)
        .build()
        .unwrap()
        .relevance(&conversation.turn(3))
        .await
        .unwrap();
    let requests = s.requests();
    assert_eq!(requests.len(), 1);
    let asked = &requests[0];
    assert_eq!(
        asked.template_version,
        "answers_query@1+system_word@1+conversation@1"
    );
    assert_eq!(
        asked.messages[0].content,
        "<conversation>\n\
         User: Can I return a jacket?\n\
         Assistant: Yes, jackets can be returned within 30 days of delivery.\n\
         User: And how long do I have?\n\
         Assistant: You have 30 days from delivery to return the jacket.\n\
         </conversation>\n\n\
         <question>What about international returns?</question>\n\n\
         <response>International returns are free and jackets can be returned within 90 days of delivery.</response>\n\n\
         Does the response answer the question? Answer \"yes\" or \"no\"."
    );
    // What was asked, for the recording and a person's verdict: the turn
    // and the history shown.
    assert_eq!(asked.subject["conversation"], "jacket-return");
    assert_eq!(asked.subject["turn"], 3);
    assert_eq!(
        asked.subject["history"][1]["user"],
        "And how long do I have?"
    );
    // A claim is asked about alone: no history.
    let s = Scripted::default();
    s.judge().faithfulness(&conversation.turn(3)).await.unwrap();
    for r in s.requests() {
        let block = r.messages[0].content.starts_with("<conversation>");
        match r.task.as_str() {
            "extract_claims" => assert!(block, "extraction reads the question"),
            "claim_supported" | "claim_contradicted" => assert!(!block, "{}", r.task),
            other => panic!("unexpected {other}"),
        }
    }
}

/// Context precision asks whether each passage helps answer the turn's
/// question: asked bare by default, as relevance is (measured: on MTRAG's
/// later turns the 1.5B agreed with the labels less often shown the
/// conversation, on MTRAG-UN's as often), one passage at a time or all in
/// one call; with every question shown the history, the block comes first.
#[tokio::test]
async fn context_precision_asks_a_follow_ups_passages_bare_unless_told() {
    asked_bare_unless_told(Metric::ContextPrecision, &["passage_relevan"]).await;
}

/// Abstention's two questions (do the passages contain the answer? does
/// the answer say it cannot?), both asked of turn 3, which is not
/// labelled: bare by default (measured: shown the conversation, the 1.5B
/// read other turns' passages as answers), the block first when told.
#[tokio::test]
async fn abstention_asks_a_follow_ups_questions_bare_unless_told() {
    asked_bare_unless_told(
        Metric::Abstention,
        &["declines_to_answer", "passages_answer"],
    )
    .await;
}

/// `metric` of `three_turns`' turn 3, with either strategy, asks exactly
/// the tasks `tasks` start with (each at least once), none showing the
/// conversation unless the judge shows every question it, each keeping
/// the turn in its key; and the evaluation says what the judge was shown.
async fn asked_bare_unless_told(metric: Metric, tasks: &[&str]) {
    let conversation = three_turns();
    for strategy in [Strategy::Probability, Strategy::Json] {
        for every_question in [false, true] {
            let s = Scripted::default();
            let eval = Judge::builder(s.clone())
                .with_strategy(strategy)
                .with_follow_up_history(every_question)
                .build()
                .unwrap()
                .evaluate(metric, &conversation.turn(3))
                .await
                .unwrap();
            let requests = s.requests();
            let asked: BTreeSet<&str> = requests
                .iter()
                .map(|r| {
                    *tasks
                        .iter()
                        .find(|t| r.task.starts_with(**t))
                        .unwrap_or_else(|| panic!("{metric} asked {}", r.task))
                })
                .collect();
            assert_eq!(asked.len(), tasks.len(), "{strategy:?}: {asked:?}");
            for r in &requests {
                let block = r.messages[0].content.starts_with("<conversation>\n");
                assert_eq!(
                    block, every_question,
                    "{strategy:?} {}: {}",
                    r.task, r.messages[0].content
                );
                assert_eq!(
                    r.template_version.ends_with("+conversation@1"),
                    every_question,
                    "{}",
                    r.template_version
                );
                assert_eq!(r.subject["turn"], 3, "the turn stays in its key");
            }
            assert_eq!(
                eval.history.is_some(),
                every_question,
                "what the judge was shown is said: {eval}"
            );
        }
    }
}

#[tokio::test]
async fn the_window_drops_the_oldest_turns_first_and_the_case_says_so() {
    let turns: Vec<Turn> = (1..=6)
        .map(|i| {
            Turn::new(format!("Question number {i} about the jackets?"))
                .context([POLICY])
                .response(format!("Answer number {i}: {POLICY}"))
        })
        .collect();
    let conversation = Conversation::new(turns);
    let s = Scripted::default();
    let shows = |s: &Scripted| Judge::builder(s.clone()).with_follow_up_history(true);
    let eval = shows(&s)
        .build()
        .unwrap()
        .relevance(&conversation.turn(6))
        .await
        .unwrap();
    let shown = eval.history.as_ref().unwrap();
    assert_eq!(
        shown.said.iter().map(|t| t.turn).collect::<Vec<_>>(),
        [3, 4, 5]
    );
    assert_eq!(shown.left_out, 2);
    let text = eval.to_string();
    assert!(
        text.contains("the judge was shown the conversation before it (turns 3–5,")
            && text.contains("; 2 older turns left out):"),
        "{text}"
    );
    let content = &s.requests()[0].messages[0].content;
    assert!(!content.contains("Question number 2"), "{content}");
    assert!(content.contains("User: Question number 3"), "{content}");
    // A narrower window, set on the judge, is another question.
    let narrow = Scripted::default();
    shows(&narrow)
        .with_history_window(Window {
            turns: 1,
            chars: 2_000,
        })
        .build()
        .unwrap()
        .relevance(&conversation.turn(6))
        .await
        .unwrap();
    assert_ne!(narrow.fingerprints(), s.fingerprints());
    let content = &narrow.requests()[0].messages[0].content;
    assert!(
        content.starts_with("<conversation>\nUser: Question number 5"),
        "{content}"
    );
}

#[tokio::test]
async fn a_conversation_fails_on_the_turn_that_failed_and_shows_what_the_judge_saw() {
    let s = Scripted::default();
    let eval = s
        .judge()
        .evaluate_with(
            Metric::Faithfulness,
            &three_turns(),
            &EvalOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(eval.turns.len(), 3);
    assert!(eval.turns[0].passed && eval.turns[1].passed, "{eval}");
    assert!(!eval.turns[2].passed, "{eval}");
    assert!(!eval.passed);
    assert_eq!(eval.score, eval.turns[2].score, "the lowest turn's");
    let text = eval.to_string();
    assert!(
        text.starts_with(
            "faithfulness: 2 of 3 turns passed; lowest 0.00 at turn 3 < threshold 0.70 (FAILED)"
        ),
        "{text}"
    );
    assert!(text.contains("  turn 1: 1.00 passed\n"), "{text}");
    assert!(
        text.contains("  turn 3 of 3: \"What about international returns?\"\n    faithfulness: 0.00 < threshold 0.70 (FAILED)"),
        "{text}"
    );
    assert!(
        text.contains("    the judge was shown the conversation before it (turns 1–2,"),
        "{text}"
    );
    assert!(
        text.contains("International returns are free") && text.contains("no_evidence"),
        "the claims at fault are quoted: {text}"
    );
    // One usage line, for the whole conversation.
    assert_eq!(text.matches("  judge:").count(), 1, "{text}");
}

#[tokio::test]
async fn consistency_and_retention_name_the_turn_and_quote_what_conflicts() {
    let s = Scripted::default();
    let judge = s.judge();
    let eval = judge.consistency(&three_turns()).await.unwrap();
    assert_eq!(eval.turns[0].score, 1.0, "a first turn contradicts nothing");
    assert!(eval.turns[1].passed, "{eval}");
    assert!(!eval.turns[2].passed, "90 days against 30: {eval}");
    let reasoning = &eval.turns[2].reasoning;
    assert!(
        reasoning.contains("contradicts what the assistant said earlier")
            && reasoning.contains("The answer: \"International returns are free and jackets can be returned within 90 days of delivery.\"; the closest earlier sentence (found by ragaliq), the assistant's in turn 1: \"Yes, jackets can be returned within 30 days of delivery.\""),
        "{reasoning}"
    );
    let asked: Vec<String> = s.requests().iter().map(|r| r.task.clone()).collect();
    assert_eq!(
        asked,
        ["contradicts_earlier", "contradicts_earlier"],
        "none for turn 1"
    );

    let forgets = Conversation::new([
        Turn::new("My order number is 4417. Where is my jacket?")
            .context(["Order 4417 shipped on Monday."])
            .response("Order 4417 shipped on Monday."),
        Turn::new("When will it arrive?")
            .context(["Standard shipping takes five business days."])
            .response("What is your order number?"),
    ]);
    let eval = judge.retention(&forgets).await.unwrap();
    assert!(!eval.passed && !eval.turns[1].passed, "{eval}");
    assert!(
        eval.turns[1]
            .reasoning
            .contains("the user's in turn 1: \"My order number is 4417.\""),
        "{}",
        eval.turns[1].reasoning
    );
    let fine = Conversation::new([
        forgets.turns[0].clone(),
        Turn::new("When will it arrive?")
            .context(["Standard shipping takes five business days."])
            .response("Order 4417 arrives within five business days of Monday."),
    ]);
    assert!(judge.retention(&fine).await.unwrap().passed);
}

#[tokio::test]
async fn abstention_expects_an_unanswerable_turn_to_say_so() {
    let s = Scripted::default();
    let judge = s.judge();
    let eval = judge.abstention(&three_turns()).await.unwrap();
    assert!(eval.turns[0].passed, "{eval}");
    // "And how long do I have?" needs turn 1 to mean anything: asked bare
    // (the default), the rule-based judge finds none of its words in the
    // passage and reads turn 2 unanswerable; shown the history, as
    // `judge.follow_up_history = true` asks, it finds them there. What the
    // public turns measured (bare agreed more often: the history made
    // other turns' passages read as answers) is weighed against this
    // cost in `bench/conversations/README.md`.
    assert!(!eval.turns[1].passed, "{eval}");
    let shown = Judge::builder(s.clone())
        .with_follow_up_history(true)
        .build()
        .unwrap()
        .abstention(&three_turns().turn(2))
        .await
        .unwrap();
    assert!(shown.passed, "{shown}");
    let third = &eval.turns[2];
    assert!(!third.passed, "{eval}");
    let answerable = third.answerable.as_ref().unwrap();
    assert!(!answerable.answerable && !answerable.labelled);
    assert!(answerable.review_key.is_some());
    assert!(
        third.reasoning.starts_with("The judge answered no to whether the passages answer the question, so the answer must say it cannot answer"),
        "{}",
        third.reasoning
    );
    // Saying so passes; a label spares the first question.
    let mut declined = three_turns();
    declined.turns[2].response =
        Some("I don't know: the passages say nothing about international returns.".into());
    declined.turns[2].answerable = Some(false);
    let before = s.requests().len();
    let eval = judge.abstention(&declined.turn(3)).await.unwrap();
    assert!(eval.passed, "{eval}");
    assert!(eval.answerable.as_ref().unwrap().labelled);
    let tasks: Vec<String> = s.requests()[before..]
        .iter()
        .map(|r| r.task.clone())
        .collect();
    assert_eq!(tasks, ["declines_to_answer"]);
    // Labelled answerable: nothing to ask.
    let mut labelled = three_turns();
    labelled.turns[0].answerable = Some(true);
    let before = s.requests().len();
    assert!(judge.abstention(&labelled.turn(1)).await.unwrap().passed);
    assert_eq!(s.requests().len(), before);
}

#[tokio::test]
async fn errors_name_the_turn_and_stay_configuration_errors() {
    let judge = Scripted::default().judge();
    let conversation = three_turns();
    let e = judge.faithfulness(&conversation.turn(4)).await.unwrap_err();
    assert!(e.is_configuration(), "{e}");
    assert_eq!(
        e.to_string(),
        "invalid case `jacket-return`: there is no turn 4: the conversation has 3 turns (turns count from 1)"
    );
    // Turn 2 has no reference answer.
    let e = judge.correctness(&conversation).await.unwrap_err();
    assert!(e.is_configuration(), "{e}");
    assert!(
        e.to_string()
            .starts_with("turn 2: correctness needs an expected answer"),
        "{e}"
    );
    // An earlier turn with no answer cannot be read before a later one.
    let mut broken = three_turns();
    broken.turns[1].response = None;
    let e = judge.relevance(&broken).await.unwrap_err();
    assert!(matches!(e, Error::Case(_)), "{e}");
    assert!(
        e.to_string()
            .contains("turn 2 has no answer: turn 3 is read with it"),
        "{e}"
    );
}

#[tokio::test]
async fn grounding_lets_an_answer_rest_on_earlier_passages_and_the_users_words() {
    let conversation = Conversation::new([
        Turn::new("I bought a jacket on March 3rd. Can I return it?")
            .context([POLICY])
            .response("Yes, jackets can be returned within 30 days of delivery."),
        Turn::new("Is shipping included?")
            .context(["Return shipping labels are free for members."])
            .response("Jackets can be returned within 30 days of delivery. Return shipping labels are free for members."),
    ]);
    let judge = Scripted::default().judge();
    let plain = judge.faithfulness(&conversation.turn(2)).await.unwrap();
    assert_eq!(plain.score, 0.5, "{plain}");
    let grounded = conversation.clone().grounding(Grounding::EARLIER_PASSAGES);
    let eval = judge.faithfulness(&grounded.turn(2)).await.unwrap();
    assert_eq!(eval.score, 1.0, "{eval}");
    assert!(eval.claims.iter().all(|c| c.verdict == Verdict::Supported));
    // What the user said counts only where the conversation says so.
    let said = Conversation::new([
        Turn::new("I bought a jacket on March 3rd.").response("Thank you."),
        Turn::new("Can I return it?")
            .context([POLICY])
            .response("You bought the jacket on March 3rd."),
    ]);
    assert!(!judge.faithfulness(&said.turn(2)).await.unwrap().passed);
    let said = said.grounding(Grounding::ALL);
    assert!(judge.faithfulness(&said.turn(2)).await.unwrap().passed);
}

/// A judge that lists a claim copied from an earlier answer, as the kit's
/// 1.5B did: it is dropped, not graded as this answer's; a claim resolved
/// from what the user said before is kept.
#[tokio::test]
async fn a_claim_copied_from_an_earlier_answer_is_not_the_answers() {
    struct Copying;
    impl Transport for Copying {
        fn provider(&self) -> &str {
            "copying"
        }
        fn complete<'a>(
            &'a self,
            request: &'a JudgeRequest,
        ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
            let reply = if request.task == "extract_claims" {
                r#"{"claims": ["You can return the jacket up to 30 days from delivery.", "Returns need the order number and the receipt."]}"#
            } else {
                "Yes"
            };
            Box::pin(async move { Ok(JudgeResponse::text(reply)) })
        }
    }
    let conversation = Conversation::new([
        Turn::new("Can I return a jacket?")
            .context([POLICY])
            .response("Yes. Returns need the order number and the receipt."),
        Turn::new("How long do I have?")
            .context([POLICY])
            .response("30 days from delivery."),
    ]);
    let judge = Judge::builder(Copying).build().unwrap();
    let eval = judge.faithfulness(&conversation.turn(2)).await.unwrap();
    let claims: Vec<&str> = eval.claims.iter().map(|c| c.claim.as_str()).collect();
    assert_eq!(
        claims,
        ["You can return the jacket up to 30 days from delivery."],
        "{eval}"
    );
    assert_eq!(eval.counts.unwrap().dropped, 1, "{eval}");
}

#[test]
fn a_conversation_reads_from_json_as_it_is_built_in_code() {
    let json = r#"{"id": "jacket-return", "turns": [
        {"query": "Can I return a jacket?", "context": ["Jackets can be returned within 30 days of delivery."], "response": "Yes."},
        {"query": "And how long?", "answerable": false, "response": "I don't know."}],
        "grounding": {"earlier_passages": true}}"#;
    let built = Conversation::new([
        Turn::new("Can I return a jacket?")
            .context(["Jackets can be returned within 30 days of delivery."])
            .response("Yes."),
        Turn::new("And how long?")
            .answerable(false)
            .response("I don't know."),
    ])
    .id("jacket-return")
    .grounding(Grounding::EARLIER_PASSAGES);
    assert_eq!(serde_json::from_str::<Conversation>(json).unwrap(), built);
    let written = serde_json::to_string(&built).unwrap();
    assert_eq!(
        serde_json::from_str::<Conversation>(&written).unwrap(),
        built
    );
    let e = serde_json::from_str::<Conversation>(r#"{"turns": [{"query": "q", "answer": "a"}]}"#)
        .unwrap_err();
    assert!(e.to_string().contains("unknown field `answer`"), "{e}");
}

// The example's conversation, as the kit's 1.5B judges it.

#[path = "../examples/conversations/jacket.rs"]
mod jacket;

use ragaliq::prelude::{
    assert_abstains, assert_caught, assert_consistent, assert_faithful, assert_relevant,
    assert_remembers, rag_test,
};

/// Turn 2, "And how long do I have?": it answers the question the
/// conversation asks, from its passage. The 1.5B, asked bare (the
/// default), read it relevant at P(yes) 0.53 (0.87 with turn 1 shown, in
/// the example), and its one claim supported at P 0.65, inside its claims
/// band [0.075, 0.9): a person gave the verdict (supported) in review,
/// kept in the recording.
#[rag_test(config = "tests/judges/qwen15.toml")]
async fn a_right_follow_up_is_relevant_and_faithful(judge: Judge) {
    let conversation = jacket::jacket();
    assert_relevant!(judge, conversation.turn(2));
    assert_faithful!(judge, conversation.turn(2));
}

/// Turn 3 gives 14 days from the order where turns 1 and 2 said 30 days
/// from delivery; turn 2 contradicts nothing. The 1.5B missed the
/// contradiction (P(yes) 0.36, so consistency 0.64 passed: "the answer was
/// not caught"); a person's verdict (yes, it contradicts) decides it, kept
/// in the recording.
#[rag_test(config = "tests/judges/qwen15.toml")]
async fn an_answer_that_contradicts_an_earlier_one_is_caught(judge: Judge) {
    let conversation = jacket::jacket();
    assert_consistent!(judge, conversation.turn(2));
    assert_caught!(judge, conversation.turn(3), consistency);
}

/// Turn 3's passages say nothing of shipping from Canada; the answer
/// invents a price instead of saying so. Turns 1 and 2 are answered from
/// their passages, and nobody is asked again what they said. The 1.5B
/// caught the invention (P(yes) 0.17 that the passages answer it and
/// 0.25 that the answer says it cannot, both asked bare);
/// its two claims read no evidence at
/// P 0.06 (under its claims band [0.075, 0.9): decided) and 0.18 (inside
/// it), and a person gave the verdicts (no evidence; contradicted: the
/// passage says 30 days), which stand over the judge's reading.
#[rag_test(config = "tests/judges/qwen15.toml")]
async fn an_unanswerable_turn_answered_by_invention_is_caught(judge: Judge) {
    let conversation = jacket::jacket();
    assert_abstains!(judge, conversation.turn(1));
    assert_abstains!(judge, conversation.turn(2));
    assert_caught!(judge, conversation.turn(3), abstention);
    assert_caught!(judge, conversation.turn(3), faithfulness);
    assert_remembers!(judge, conversation);
}

/// Turn 1's answer, read by the 1.5B: it listed the user's question ("Can
/// I return a jacket I bought online?") as a claim of the answer, and read
/// both items inside its claims band, so faithfulness awaited a person. A
/// person said the question is no claim (`--verdict not_a_claim`) and the
/// answer's sentence supported: the question leaves the score, the
/// reasoning says whose word that was, and CI replays both verdicts.
#[rag_test(config = "tests/judges/qwen15.toml")]
async fn the_users_question_listed_as_a_claim_is_no_claim_by_a_persons_verdict(judge: Judge) {
    let conversation = jacket::jacket();
    let eval = assert_faithful!(judge, conversation.turn(1));
    let question = eval
        .claims
        .iter()
        .find(|c| c.claim == "Can I return a jacket I bought online?")
        .expect("the judge listed the question");
    assert_eq!(question.no_claim.as_deref(), Some("a person's verdict"));
    assert!(!question.failed);
    assert!(
        eval.reasoning
            .contains("1 item is no claim, left out of the score: \"Can I return a jacket I bought online?\" (a person's verdict)"),
        "{}",
        eval.reasoning
    );
    assert_eq!(eval.score, 1.0, "{eval}");
}

/// A suite of conversations (`tests/conversation_cases/`: YAML turns and
/// CSV rows), replayed from recordings made against the scripted judge:
/// one trial per conversation and metric, each turn's result in the
/// report, the page beside it (`target/ragaliq/conversations/report.html`,
/// what `scripts/screenshots.sh` shows).
#[test]
fn a_suite_of_conversations_replays_turn_by_turn() {
    use ragaliq::harness::report::Outcome;
    let outcome = ragaliq::suite("tests/conversation_cases")
        .metrics([
            Metric::Faithfulness,
            Metric::Relevance,
            Metric::Consistency,
            Metric::Abstention,
            Metric::Retention,
        ])
        .report_dir("target/ragaliq/conversations")
        .with_args(libtest_mimic::Arguments {
            quiet: true,
            test_threads: Some(2),
            ..libtest_mimic::Arguments::default()
        })
        .run_for_outcome()
        .unwrap();
    let report = &outcome.report;
    assert_eq!(report.results.len(), 15, "3 conversations x 5 metrics");
    assert_eq!(report.summary.usage.calls, 0, "replayed");
    let outcome_of = |case: &str, metric: Metric| {
        let r = report
            .results
            .iter()
            .find(|r| r.case == case && r.metric == metric)
            .unwrap();
        (
            r.outcome,
            r.turns.iter().map(|t| t.outcome).collect::<Vec<_>>(),
        )
    };
    use Outcome::{Failed as F, Passed as P};
    // The scripted judge reads by shared words, not as a person does:
    // these are its readings, recorded, and the test checks that each
    // turn's comes through to the report, not that the rules are wise.
    // The invented answer to turn 3 is caught (no passage shares a word
    // with "Canada"), and so is a question the user answered before.
    // Turn 2 ("And how long do I have?") fails too: asked bare, as a
    // follow-up's abstention questions are by default, the rule finds
    // none of the question's words in the passage, so it reads the turn
    // unanswerable (the 1.5B, asked the same, reads it answered: P(yes)
    // 0.72, `an_unanswerable_turn_answered_by_invention_is_caught`).
    assert_eq!(
        outcome_of("jacket-return", Metric::Abstention),
        (F, vec![P, F, F])
    );
    assert_eq!(
        outcome_of("order-status", Metric::Retention),
        (F, vec![P, F])
    );
    // Where a person would grade otherwise: turn 3's "14 days from the
    // order date" contradicts "30 days from delivery", but its sentence
    // shares too few words with the earlier ones for the rule; and
    // "returned" in turn 1's question is not the passage's "return".
    assert_eq!(
        outcome_of("jacket-return", Metric::Consistency),
        (P, vec![P, P, P])
    );
    assert_eq!(
        outcome_of("refund-card", Metric::Abstention),
        (F, vec![F, P, P])
    );
    // A turn labelled unanswerable, answered by saying so: passes.
    let refund = report
        .results
        .iter()
        .find(|r| r.case == "refund-card" && r.metric == Metric::Abstention)
        .unwrap();
    assert!(
        refund.turns[2].reasoning.starts_with(
            "The turn is labelled unanswerable, so the answer must say it cannot answer"
        ),
        "{}",
        refund.turns[2].reasoning
    );
    // Its only question (does the answer say it cannot answer?) is asked
    // bare, as a single case's: the judge was shown nothing before it, and
    // the turn does not claim otherwise.
    assert_eq!(refund.turns[2].history, None);
    // Where a question did show the earlier turns (retention's), the turn
    // says which.
    let retention = report
        .results
        .iter()
        .find(|r| r.case == "refund-card" && r.metric == Metric::Retention)
        .unwrap();
    assert!(
        retention.turns[2]
            .history
            .as_ref()
            .is_some_and(|h| h.said.len() == 2),
        "{:?}",
        retention.turns[2].history
    );
    let page = std::fs::read_to_string("target/ragaliq/conversations/report.html").unwrap();
    assert!(page.contains("<b>Conversation</b>"));
}
