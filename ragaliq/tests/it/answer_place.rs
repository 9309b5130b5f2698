//! Answers read where the question asked for them: each reply of the table
//! is read twice, from its token probabilities and from the word written
//! alone (as a server without probabilities gives it), and both readings
//! give the same word or the same refusal. The one exception is marked:
//! no answer word written at the answer's place, but the answer words hold
//! most of the probability at that token, which only the probabilities
//! can show.
//!
//! `cargo test -p ragaliq --test it -- answer_place --nocapture` prints the
//! table.

use ragaliq::judge::{TokenLogprob, TopLogprob};
use ragaliq::parse::{AnswerAt, AnswerWords, answer_word};

/// One token written, with the alternatives at its position (none listed:
/// only the token, at probability 1).
type Tok = (&'static str, &'static [(&'static str, f64)]);

/// What a reading gives: an answer word, or a refusal's kind.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Read {
    Word(&'static str),
    Refused(&'static str),
}
use Read::{Refused, Word};

struct Row {
    reply: &'static str,
    tokens: &'static [Tok],
    words: &'static [&'static str],
    at: Option<&'static str>,
    with_probabilities: Read,
    written: Read,
    /// What the reading on main gave (with probabilities), where it differs.
    before: Option<Read>,
}

const YES_NO: &[&str] = &["yes", "no"];
/// The issue's reply: a "yes" quoted in the reason, the answer last.
const ISSUE: &str = "The reply says 'yes, full refund', which breaks the rule. No.";
const ISSUE_TOKENS: &[Tok] = &[
    (
        "The",
        &[("The", 0.85), ("No", 0.08), ("Yes", 0.05), ("This", 0.02)],
    ),
    (" reply", &[]),
    (" says", &[]),
    (" '", &[]),
    ("yes", &[("yes", 0.7), ("no", 0.2), ("full", 0.1)]),
    (",", &[]),
    (" full", &[]),
    (" refund", &[]),
    ("',", &[]),
    (" which", &[]),
    (" breaks", &[]),
    (" the", &[]),
    (" rule", &[]),
    (".", &[]),
    (" No", &[(" No", 0.9), (" Yes", 0.1)]),
    (".", &[]),
];
const ISSUE_ANSWER_LAST: &str =
    "The reply says 'yes, full refund', which breaks the rule.\nAnswer: No";
const ISSUE_ANSWER_LAST_TOKENS: &[Tok] = &[
    (
        "The",
        &[("The", 0.85), ("No", 0.08), ("Yes", 0.05), ("This", 0.02)],
    ),
    (" reply", &[]),
    (" says", &[]),
    (" '", &[]),
    ("yes", &[("yes", 0.7), ("no", 0.2), ("full", 0.1)]),
    (",", &[]),
    (" full", &[]),
    (" refund", &[]),
    ("',", &[]),
    (" which", &[]),
    (" breaks", &[]),
    (" the", &[]),
    (" rule", &[]),
    (".\n", &[]),
    ("Answer", &[]),
    (":", &[]),
    (" No", &[(" No", 0.8), (" Yes", 0.2)]),
];

const TABLE: &[Row] = &[
    Row {
        reply: "Yes",
        tokens: &[("Yes", &[("Yes", 0.9), ("No", 0.1)])],
        words: YES_NO,
        at: None,
        with_probabilities: Word("yes"),
        written: Word("yes"),
        before: None,
    },
    Row {
        reply: " yes.",
        tokens: &[(" yes", &[(" yes", 0.7), (" no", 0.3)]), (".", &[])],
        words: YES_NO,
        at: None,
        with_probabilities: Word("yes"),
        written: Word("yes"),
        before: None,
    },
    Row {
        reply: "**No**",
        tokens: &[
            ("**", &[("**", 0.6), ("No", 0.3), ("Yes", 0.1)]),
            ("No", &[("No", 0.8), ("Yes", 0.2)]),
            ("**", &[]),
        ],
        words: YES_NO,
        at: None,
        with_probabilities: Word("no"),
        written: Word("no"),
        before: None,
    },
    Row {
        reply: "\"No",
        tokens: &[
            ("\"", &[("\"", 0.9), ("Yes", 0.1)]),
            ("No", &[("No", 0.8), ("Yes", 0.2)]),
        ],
        words: YES_NO,
        at: None,
        with_probabilities: Word("no"),
        written: Word("no"),
        before: None,
    },
    // "Answer:" is an allowed lead-in of a first-word answer, once.
    Row {
        reply: "Answer: No",
        tokens: &[
            ("Answer", &[("Answer", 0.6), ("Yes", 0.3), ("No", 0.1)]),
            (":", &[]),
            (" No", &[(" No", 0.9), (" Yes", 0.1)]),
        ],
        words: YES_NO,
        at: None,
        with_probabilities: Word("no"),
        written: Word("no"),
        before: None,
    },
    // The issue's reply, asked for the word first: "The" is no answer,
    // and the "yes" inside the reason is never read (main read it as yes
    // from the probabilities, and refused it from the word).
    Row {
        reply: ISSUE,
        tokens: ISSUE_TOKENS,
        words: YES_NO,
        at: None,
        with_probabilities: Refused("not_yes_no"),
        written: Refused("not_yes_no"),
        before: Some(Word("yes")),
    },
    // The same words, where the answer words hold most of the probability
    // at "The": the probabilities there decide (the marked exception).
    Row {
        reply: ISSUE,
        tokens: &[
            ("The", &[("The", 0.3), ("No", 0.6), ("Yes", 0.1)]),
            (" reply", &[]),
            (" says", &[]),
            (" '", &[]),
            ("yes", &[("yes", 0.7), ("no", 0.3)]),
            (",", &[]),
            (" full", &[]),
            (" refund", &[]),
            ("',", &[]),
            (" which", &[]),
            (" breaks", &[]),
            (" the", &[]),
            (" rule", &[]),
            (".", &[]),
            (" No", &[(" No", 0.9), (" Yes", 0.1)]),
            (".", &[]),
        ],
        words: YES_NO,
        at: None,
        with_probabilities: Word("no"),
        written: Refused("not_yes_no"),
        before: Some(Word("yes")),
    },
    // Asked for the answer after "Answer:", which this reply never writes.
    Row {
        reply: ISSUE,
        tokens: ISSUE_TOKENS,
        words: YES_NO,
        at: Some("Answer:"),
        with_probabilities: Refused("no_answer_marker"),
        written: Refused("no_answer_marker"),
        before: Some(Word("yes")),
    },
    // Reason first, "Answer: No" last: read after the marker.
    Row {
        reply: ISSUE_ANSWER_LAST,
        tokens: ISSUE_ANSWER_LAST_TOKENS,
        words: YES_NO,
        at: Some("Answer:"),
        with_probabilities: Word("no"),
        written: Word("no"),
        before: Some(Word("yes")),
    },
    // The same reply asked for the word first: refused both ways.
    Row {
        reply: ISSUE_ANSWER_LAST,
        tokens: ISSUE_ANSWER_LAST_TOKENS,
        words: YES_NO,
        at: None,
        with_probabilities: Refused("not_yes_no"),
        written: Refused("not_yes_no"),
        before: Some(Word("yes")),
    },
    Row {
        reply: "**Answer:** Yes, it does.",
        tokens: &[
            ("**", &[]),
            ("Answer", &[]),
            (":**", &[]),
            (" Yes", &[(" Yes", 0.7), (" No", 0.3)]),
            (",", &[]),
            (" it", &[]),
            (" does", &[]),
            (".", &[]),
        ],
        words: YES_NO,
        at: Some("Answer:"),
        with_probabilities: Word("yes"),
        written: Word("yes"),
        before: None,
    },
    // The last marker counts: the answer comes last.
    Row {
        reply: "Verdict: yes, the reply said. Looking again, it breaks the rule. Verdict: no",
        tokens: &[
            ("Verdict", &[]),
            (":", &[]),
            (" yes", &[(" yes", 0.6), (" no", 0.4)]),
            (",", &[]),
            (" the", &[]),
            (" reply", &[]),
            (" said", &[]),
            (".", &[]),
            (" Looking", &[]),
            (" again", &[]),
            (",", &[]),
            (" it", &[]),
            (" breaks", &[]),
            (" the", &[]),
            (" rule", &[]),
            (".", &[]),
            (" Verdict", &[]),
            (":", &[]),
            (" no", &[(" no", 0.85), (" yes", 0.15)]),
        ],
        words: YES_NO,
        at: Some("Verdict:"),
        with_probabilities: Word("no"),
        written: Word("no"),
        before: Some(Word("yes")),
    },
    // A leading "In" is no "incorrect" (main read it so, from a prefix).
    Row {
        reply: "In my view the response is incorrect.",
        tokens: &[
            (
                "In",
                &[
                    ("In", 0.7),
                    ("Incorrect", 0.15),
                    ("Correct", 0.1),
                    ("The", 0.05),
                ],
            ),
            (" my", &[]),
            (" view", &[]),
            (" the", &[]),
            (" response", &[]),
            (" is", &[]),
            (" incorrect", &[]),
            (".", &[]),
        ],
        words: &["correct", "incorrect"],
        at: None,
        with_probabilities: Refused("not_yes_no"),
        written: Refused("not_yes_no"),
        before: Some(Word("incorrect")),
    },
    // "It" is no "italian".
    Row {
        reply: "It is Italian.",
        tokens: &[
            ("It", &[("It", 0.8), ("Italian", 0.15), ("English", 0.05)]),
            (" is", &[]),
            (" Italian", &[]),
            (".", &[]),
        ],
        words: &["english", "italian"],
        at: None,
        with_probabilities: Refused("not_yes_no"),
        written: Refused("not_yes_no"),
        before: Some(Word("italian")),
    },
    // "Un…" that goes on into another word is no "unsafe".
    Row {
        reply: "Unclear from the reply.",
        tokens: &[
            ("Un", &[("Un", 0.55), ("Safe", 0.25), ("The", 0.2)]),
            ("clear", &[]),
            (" from", &[]),
            (" the", &[]),
            (" reply", &[]),
            (".", &[]),
        ],
        words: &["safe", "unsafe"],
        at: None,
        with_probabilities: Refused("not_yes_no"),
        written: Refused("not_yes_no"),
        before: Some(Word("unsafe")),
    },
    // "Un" completed into "unsafe" by the next token is "unsafe".
    Row {
        reply: "Unsafe: it names a dose.",
        tokens: &[
            ("Un", &[("Un", 0.6), ("Safe", 0.4)]),
            ("safe", &[]),
            (":", &[]),
            (" it", &[]),
            (" names", &[]),
            (" a", &[]),
            (" dose", &[]),
            (".", &[]),
        ],
        words: &["safe", "unsafe"],
        at: None,
        with_probabilities: Word("unsafe"),
        written: Word("unsafe"),
        before: None,
    },
    // "contradict" split by the tokenizer: the written piece, completed by
    // the next tokens, counts; "ne" (a piece of "neither" nobody wrote)
    // counts for no word.
    Row {
        reply: "contradict",
        tokens: &[
            (
                "contr",
                &[
                    ("contr", 0.6),
                    ("support", 0.25),
                    ("ne", 0.1),
                    ("The", 0.05),
                ],
            ),
            ("ad", &[]),
            ("ict", &[]),
        ],
        words: &["support", "contradict", "neither"],
        at: None,
        with_probabilities: Word("contradict"),
        written: Word("contradict"),
        before: None,
    },
    // The same first piece going on into "contrary": no answer.
    Row {
        reply: "contrary to the document",
        tokens: &[
            ("contr", &[("contr", 0.6), ("support", 0.25), ("ne", 0.15)]),
            ("ary", &[]),
            (" to", &[]),
            (" the", &[]),
            (" document", &[]),
        ],
        words: &["support", "contradict", "neither"],
        at: None,
        with_probabilities: Refused("not_yes_no"),
        written: Refused("not_yes_no"),
        before: Some(Word("contradict")),
    },
    // "Yes" going on into "Yesterday" is no "yes".
    Row {
        reply: "Yesterday's order is covered.",
        tokens: &[
            ("Yes", &[("Yes", 0.5), ("The", 0.4), ("No", 0.1)]),
            ("terday", &[]),
            ("'s", &[]),
            (" order", &[]),
            (" is", &[]),
            (" covered", &[]),
            (".", &[]),
        ],
        words: YES_NO,
        at: None,
        with_probabilities: Refused("not_yes_no"),
        written: Refused("not_yes_no"),
        before: Some(Word("yes")),
    },
    // A score first, as the scored criteria ask: "4/5" is 4.
    Row {
        reply: "4/5: polite, with one step missing.",
        tokens: &[
            ("4", &[("4", 0.5), ("3", 0.3), ("5", 0.2)]),
            ("/", &[]),
            ("5", &[]),
            (":", &[]),
            (" polite", &[]),
        ],
        words: &["1", "2", "3", "4", "5"],
        at: None,
        with_probabilities: Word("4"),
        written: Word("4"),
        before: None,
    },
    // Only blanks, quotes and `*` lead in: "(yes)" is no first word.
    Row {
        reply: "(yes)",
        tokens: &[("(", &[("(", 0.9), ("Yes", 0.1)]), ("yes", &[]), (")", &[])],
        words: YES_NO,
        at: None,
        with_probabilities: Refused("not_yes_no"),
        written: Refused("not_yes_no"),
        before: Some(Word("yes")),
    },
    Row {
        reply: "",
        tokens: &[],
        words: YES_NO,
        at: None,
        with_probabilities: Refused("empty"),
        written: Refused("empty"),
        before: None,
    },
];

fn tokens(row: &Row) -> Vec<TokenLogprob> {
    row.tokens
        .iter()
        .map(|(token, alts)| TokenLogprob {
            token: (*token).into(),
            logprob: alts
                .iter()
                .find(|(t, _)| t == token)
                .map_or(0.0, |(_, p)| p.ln()),
            top: alts
                .iter()
                .map(|(t, p)| TopLogprob {
                    token: (*t).into(),
                    logprob: p.ln(),
                })
                .collect(),
        })
        .collect()
}

fn read(row: &Row, logprobs: Option<&[TokenLogprob]>) -> (Read, String) {
    let words = AnswerWords::new(row.words.iter().copied());
    let at = row.at.map_or(AnswerAt::First, AnswerAt::after);
    match answer_word(row.reply, logprobs, &words, &at) {
        Ok(a) => {
            let word = row.words[a.likeliest()];
            (Word(word), a.read)
        }
        Err(e) => {
            assert_eq!(e.raw, row.reply, "a refusal carries the reply");
            let kind = match e.kind.name() {
                "not_yes_no" => "not_yes_no",
                "no_answer_marker" => "no_answer_marker",
                "empty" => "empty",
                other => panic!("unexpected refusal {other}"),
            };
            (
                Refused(kind),
                e.to_string().lines().next().unwrap_or_default().to_owned(),
            )
        }
    }
}

fn shown(r: Read) -> String {
    match r {
        Word(w) => w.to_owned(),
        Refused(kind) => format!("refused ({kind})"),
    }
}

#[test]
fn every_reply_is_read_at_its_place_the_same_way_with_and_without_probabilities() {
    let mut failures = Vec::new();
    println!(
        "| reply | answer words | answer at | token probabilities | word written | on main (probabilities) |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for row in TABLE {
        let logprobs = tokens(row);
        let (with, how) = read(
            row,
            Some(&logprobs).filter(|t| !t.is_empty()).map(Vec::as_slice),
        );
        let (written, _) = read(row, None);
        let at = row
            .at
            .map_or("first word".to_owned(), |m| format!("after `{m}`"));
        println!(
            "| {:?} | {} | {at} | {} | {} | {} |",
            row.reply,
            row.words.join("/"),
            shown(with),
            shown(written),
            row.before.map_or("same".to_owned(), shown)
        );
        if with != row.with_probabilities {
            failures.push(format!(
                "{:?} ({at}): read {with:?} from the probabilities ({how}), wanted {:?}",
                row.reply, row.with_probabilities
            ));
        }
        if written != row.written {
            failures.push(format!(
                "{:?} ({at}): read {written:?} from the word, wanted {:?}",
                row.reply, row.written
            ));
        }
        // The two readings agree, except where no answer word is written
        // at the place and the probabilities there hold the answer words.
        let exception = matches!((with, written), (Word(_), Refused("not_yes_no")));
        if with != written && !exception {
            failures.push(format!(
                "{:?} ({at}): the readings disagree: {with:?} from the probabilities, {written:?} from the word",
                row.reply
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The marked exception holds only where the answer words hold at least
/// `MIN_ANSWER_MASS` at the token of the answer's place.
#[test]
fn the_probabilities_decide_alone_only_over_half_the_mass() {
    let words = AnswerWords::new(["yes", "no"]);
    for (no, yes, read) in [(0.6, 0.1, true), (0.4, 0.09, false)] {
        let other = 1.0 - no - yes;
        let tokens = vec![
            TokenLogprob {
                token: "The".into(),
                logprob: f64::ln(other),
                top: [("The", other), ("No", no), ("Yes", yes)]
                    .iter()
                    .map(|(t, p)| TopLogprob {
                        token: (*t).into(),
                        logprob: p.ln(),
                    })
                    .collect(),
            },
            TokenLogprob {
                token: " reply is no.".into(),
                logprob: 0.0,
                top: vec![],
            },
        ];
        let got = answer_word("The reply is no.", Some(&tokens), &words, &AnswerAt::First);
        assert_eq!(got.is_ok(), read, "mass {}: {got:?}", no + yes);
        if let Ok(a) = got {
            assert!(a.from_probabilities && (a.mass - (no + yes)).abs() < 1e-9);
            assert!(a.read.contains("the first token"), "{}", a.read);
        }
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Replies made of what a judge writes at the answer's place and around
    /// it: answer words in several spellings, words they begin, lead-ins,
    /// markers, a reason, and anything at all.
    fn reply() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("Yes".to_owned()),
            Just(" no".to_owned()),
            Just("NO.".to_owned()),
            Just("Yesterday".to_owned()),
            Just("contr".to_owned()),
            Just("adict".to_owned()),
            Just("**".to_owned()),
            Just("\"".to_owned()),
            Just("Answer:".to_owned()),
            Just(" Answer: ".to_owned()),
            Just("\n".to_owned()),
            Just("The reply says yes".to_owned()),
            Just("4.5".to_owned()),
            "[ -~]{0,6}",
            any::<String>().prop_map(|s| s.chars().take(4).collect()),
        ];
        prop::collection::vec(piece, 0..8).prop_map(|p| p.concat())
    }

    /// `reply` cut into tokens at `cuts` (char boundaries), each listing
    /// only itself: the probabilities hold exactly the words written.
    fn tokenized(reply: &str, cuts: &[usize]) -> Vec<TokenLogprob> {
        let bounds: Vec<usize> = reply.char_indices().map(|(i, _)| i).collect();
        let mut at: Vec<usize> = cuts
            .iter()
            .filter_map(|c| bounds.get(c % bounds.len().max(1)).copied())
            .filter(|&i| i > 0)
            .collect();
        at.push(reply.len());
        at.sort_unstable();
        at.dedup();
        let mut from = 0;
        let mut out = Vec::new();
        for to in at {
            let token = reply[from..to].to_owned();
            from = to;
            out.push(TokenLogprob {
                token: token.clone(),
                logprob: 0.0,
                top: vec![TopLogprob {
                    token,
                    logprob: 0.0,
                }],
            });
        }
        out
    }

    fn outcome(
        r: Result<ragaliq::parse::WordAnswer, ragaliq::ParseError>,
    ) -> Result<usize, String> {
        r.map(|a| a.likeliest())
            .map_err(|e| e.kind.name().to_owned())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// Where the token probabilities hold only the tokens written, they
        /// read the same word (or the same refusal) as the word written,
        /// however the reply was cut into tokens; and no reading panics or
        /// leaves [0, 1].
        #[test]
        fn the_two_readings_agree_on_what_was_written(
            reply in reply(),
            cuts in prop::collection::vec(any::<usize>(), 0..12),
            after in any::<bool>(),
        ) {
            let words = AnswerWords::new(["yes", "no", "contradict", "4"]);
            let at = if after { AnswerAt::after("Answer:") } else { AnswerAt::First };
            let tokens = tokenized(&reply, &cuts);
            let with = answer_word(&reply, Some(&tokens), &words, &at);
            if let Ok(a) = &with {
                prop_assert!(a.probabilities.iter().all(|p| (0.0..=1.0).contains(p)));
                prop_assert!((a.probabilities.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            }
            let without = answer_word(&reply, None, &words, &at);
            prop_assert_eq!(outcome(with), outcome(without), "{:?} in {:?}", reply, tokens.iter().map(|t| &t.token).collect::<Vec<_>>());
        }
    }
}
