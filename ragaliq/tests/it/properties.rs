//! Property tests: whatever a judge replies and whatever a case file holds,
//! the parsers and loaders return a value or an error; they never panic,
//! and no score or confidence escapes [0, 1] or is NaN.

use proptest::prelude::*;
use ragaliq::harness::cases::load_file;
use ragaliq::parse;

/// JSON-shaped replies: the keys and value kinds the parsers look for,
/// nested and mixed, with prose and fences around them.
fn json_like() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        any::<f64>().prop_map(|f| if f.is_finite() {
            f.to_string()
        } else {
            "1e999".into()
        }),
        any::<i64>().prop_map(|i| i.to_string()),
        "[a-zA-Z_ %/.0-9-]{0,12}".prop_map(|s| format!("{s:?}")),
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("\"NaN\"".to_owned()),
        Just("\"85%\"".to_owned()),
        Just("\"8/0\"".to_owned()),
    ];
    let key = prop_oneof![
        Just("claims"),
        Just("verdicts"),
        Just("verdict"),
        Just("claim"),
        Just("score"),
        Just("confidence"),
        Just("evidence"),
        Just("passage"),
        Just("relevant"),
        Just("cases"),
        Just("question"),
        Just("answer"),
        Just("x"),
    ];
    let value = leaf.prop_recursive(4, 32, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((key.clone(), inner), 0..5).prop_map(|kv| {
                let body: Vec<String> = kv
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\": {v}"))
                    .collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    });
    (value, "[ a-z<>/`]{0,10}", "[ a-z<>/`,]{0,10}")
        .prop_map(|(v, before, after)| format!("{before}{v}{after}"))
}

fn check_all_parsers(reply: &str, n: usize) {
    if let Ok(s) = parse::score(reply) {
        assert!(
            s.score.is_finite() && (0.0..=1.0).contains(&s.score),
            "{reply:?} → {}",
            s.score
        );
    }
    let confidence_ok =
        |c: Option<f64>| c.is_none_or(|c| c.is_finite() && (0.0..=1.0).contains(&c));
    if let Ok(v) = parse::verdict(reply) {
        assert!(confidence_ok(v.confidence), "{reply:?}");
    }
    if let Ok(vs) = parse::verdicts(reply, n) {
        assert_eq!(vs.len(), n, "exactly one verdict per claim: {reply:?}");
        assert!(vs.iter().all(|v| confidence_ok(v.confidence)), "{reply:?}");
    }
    if let Ok(vs) = parse::verdicts_partial(reply, n) {
        assert_eq!(vs.len(), n, "{reply:?}");
    }
    if let Ok(ps) = parse::passage_relevance(reply, n) {
        assert_eq!(ps.len(), n, "{reply:?}");
    }
    if let Ok(cs) = parse::claims(reply) {
        assert!(cs.iter().all(|c| !c.trim().is_empty()), "{reply:?}");
    }
    let _ = parse::generated_cases(reply);
    // Every refusal carries the reply it refused.
    if let Err(e) = parse::claims(reply) {
        assert_eq!(e.raw, reply);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_breaks_a_parser(reply in any::<String>(), n in 0usize..6) {
        check_all_parsers(&reply, n);
    }

    #[test]
    fn json_shaped_replies_never_break_a_parser(reply in json_like(), n in 0usize..6) {
        check_all_parsers(&reply, n);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_case_files_load_or_fail_with_their_path(
        text in prop_oneof![any::<String>(), json_like(), "(- id: [a-z]{1,3}\n  query: [a-z ]{0,5}\n){0,3}"],
        ext in prop_oneof![Just("yaml"), Just("json"), Just("jsonl"), Just("csv")],
    ) {
        let dir = std::env::temp_dir().join(format!("ragaliq-prop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("case.{ext}"));
        std::fs::write(&path, &text).unwrap();
        match load_file(&path) {
            Ok(cases) => {
                for c in cases {
                    prop_assert!(c.case.validate().is_ok());
                    prop_assert!(c.thresholds.values().all(|t| (0.0..=1.0).contains(t)));
                }
            }
            Err(e) => prop_assert_eq!(e.file, path),
        }
    }
}

/// A verdict object written with one-meaning repairs applied at random: the
/// parser must read the same verdict whatever the dress.
fn dressed_verdict() -> impl Strategy<Value = (String, ragaliq::Verdict, String)> {
    use ragaliq::Verdict;
    let label = prop_oneof![
        Just(("supported", Verdict::Supported)),
        Just(("Supported.", Verdict::Supported)),
        Just(("YES", Verdict::Supported)),
        Just(("entailment", Verdict::Supported)),
        Just(("contradicted", Verdict::Contradicted)),
        Just(("Refuted", Verdict::Contradicted)),
        Just(("no evidence", Verdict::NoEvidence)),
        Just(("NOT_ENOUGH_INFO", Verdict::NoEvidence)),
        Just(("neutral", Verdict::NoEvidence)),
        Just(("partially-supported", Verdict::PartiallySupported)),
    ];
    (
        label,
        "[a-zA-Z ]{0,20}",
        any::<bool>(), // single quotes
        any::<bool>(), // unquoted keys
        any::<bool>(), // trailing comma
        any::<bool>(), // a comment
        any::<bool>(), // prose and a fence around it
        any::<bool>(), // a reasoning block before it
        any::<bool>(), // Python-style None for the confidence
    )
        .prop_map(
            |(
                (label, verdict),
                evidence,
                single,
                unquoted,
                trailing,
                comment,
                fenced,
                think,
                none,
            )| {
                let q = |s: &str| {
                    if single {
                        format!("'{s}'")
                    } else {
                        format!("\"{s}\"")
                    }
                };
                let k = |s: &str| if unquoted { s.to_owned() } else { q(s) };
                let confidence = if none {
                    "None".to_owned()
                } else {
                    ".75".to_owned()
                };
                let mut body = format!(
                    "{{{}: {}, {}: {}, {}: {confidence}{}{}}}",
                    k("verdict"),
                    q(label),
                    k("evidence"),
                    q(&evidence),
                    k("confidence"),
                    if trailing { "," } else { "" },
                    if comment { " // the judge's note" } else { "" },
                );
                if comment {
                    body = body.replace("// the judge's note}", "// the judge's note\n}");
                }
                if fenced {
                    body = format!("Here is my verdict:\n```json\n{body}\n```\nDone.");
                }
                if think {
                    body = format!("<think>Claim 1 scores 0.2 maybe.</think>\n{body}");
                }
                (body, verdict, evidence.trim().to_owned())
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn one_meaning_repairs_read_the_same_verdict((reply, verdict, evidence) in dressed_verdict()) {
        let v = parse::verdict(&reply).map_err(|e| TestCaseError::fail(format!("{reply}\n{e}")))?;
        prop_assert_eq!(v.verdict, verdict);
        prop_assert_eq!(v.evidence, evidence);
        prop_assert!(v.confidence.is_none_or(|c| c == 0.75));
        // Inside a one-item batch it reads the same.
        let batch = parse::verdicts(&reply, 1).map_err(|e| TestCaseError::fail(format!("{reply}\n{e}")))?;
        prop_assert_eq!(batch[0].verdict, verdict);
    }

    #[test]
    fn two_different_answers_are_never_picked_between(a in 0.0f64..=1.0, b in 0.0f64..=1.0) {
        prop_assume!((a - b).abs() > 1e-6);
        let reply = format!("{{\"score\": {a}}}\nOr rather: {{\"score\": {b}}}");
        prop_assert_eq!(parse::score(&reply).unwrap_err().kind.name(), "ambiguous");
    }

    #[test]
    fn a_cut_off_batch_is_never_read(n in 1usize..5, cut in 1usize..200) {
        let full = format!(
            "{{\"verdicts\": [{}]}}",
            (1..=n).map(|i| format!("{{\"claim\": {i}, \"verdict\": \"supported\", \"evidence\": \"e\"}}")).collect::<Vec<_>>().join(", ")
        );
        prop_assume!(cut < full.len());
        let reply = &full[..cut];
        prop_assert!(parse::verdicts(reply, n).is_err(), "{reply}");
        prop_assert!(parse::claims(reply).is_err(), "{reply}");
    }
}

/// Text that looks like quotes and passages: words, numbers, tags, escapes,
/// ellipses, quotes and dashes of every kind, and any Unicode.
fn quote_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-zA-Z]{1,8}",
        "[0-9]{1,4}",
        Just("<passage n=\"2\">".to_owned()),
        Just("</passage>".to_owned()),
        Just("&lt;".to_owned()),
        Just("…".to_owned()),
        Just("...".to_owned()),
        Just("“".to_owned()),
        Just("—".to_owned()),
        Just("水は".to_owned()),
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|p| p.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_evidence_matcher_never_panics_and_spans_are_real(
        quote in quote_like(),
        passages in prop::collection::vec(quote_like(), 0..4),
    ) {
        use ragaliq::evidence::{Grounding, locate};
        match locate(&quote, &passages) {
            Grounding::Found(f) => {
                prop_assert!(f.passage < passages.len());
                let p = &passages[f.passage];
                prop_assert!(f.span.start < f.span.end && f.span.end <= p.len());
                prop_assert!(p.is_char_boundary(f.span.start) && p.is_char_boundary(f.span.end));
            }
            Grounding::Ungrounded | Grounding::NoQuote => {}
        }
        // A quote taken from a passage (whole words, no tags or ellipses cut
        // in half) is always found.
        if let Some(p) = passages.first().filter(|p| !p.contains(['<', '&', '.', '…'])) {
            let words: Vec<&str> = p.split_whitespace().collect();
            if words.len() >= 2 {
                let taken = words[..words.len().min(6)].join(" ");
                prop_assert!(
                    !matches!(locate(&taken, &passages), Grounding::Ungrounded),
                    "{taken:?} in {p:?}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The found rule reads any text without panicking: what it found is
    /// the response's own text at a real span (of its NFC form), and it
    /// decides only what it found.
    #[test]
    fn the_found_rule_never_panics_and_spans_are_real(
        query in quote_like(),
        reference in prop_oneof![quote_like(), "[-+$€£]?[0-9]{1,3}( ?(%|°C|km|dollars|days))?"],
        response in prop_oneof![quote_like(), "([A-Za-z]{1,6} |[-−+$€£]?[0-9]{1,4}[.,%]? |[?\"'’,;:—] ){0,12}"],
    ) {
        use ragaliq::evidence::{answer_in, find_answer};
        let r = answer_in(&query, &reference, &response);
        prop_assert!(!r.decides_correct() || r.found.is_some());
        prop_assert!(r.found.is_some() || r.doubt.is_none());
        if let Some(f) = &r.found {
            let nfc: String = unicode_normalization::UnicodeNormalization::nfc(response.chars()).collect();
            prop_assert!(f.span.start <= f.span.end && f.span.end <= nfc.len());
            prop_assert!(nfc.is_char_boundary(f.span.start) && nfc.is_char_boundary(f.span.end));
            prop_assert_eq!(&nfc[f.span.clone()], f.text.as_str());
            prop_assert!(f.words.0 <= f.words.1);
        }
        prop_assert_eq!(find_answer(&reference, &response).is_some(), r.found.is_some());
    }
}
