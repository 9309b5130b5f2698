//! Runs every case of `tests/data/reply_corpus.jsonl` through the public
//! parsers: realistic judge replies, each with the value it must give or the
//! kind of error it must be refused with.

use ragaliq::parse::{self, ParseError, ParsedVerdict};
use serde_json::{Value, json};

fn verdict_json(v: &ParsedVerdict) -> Value {
    json!({"verdict": v.verdict.label(), "evidence": v.evidence, "confidence": v.confidence})
}

fn run(case: &Value) -> Result<Value, ParseError> {
    let reply = case["reply"].as_str().expect("reply");
    let n = case["n"].as_u64().unwrap_or(0) as usize;
    Ok(match case["parser"].as_str().expect("parser") {
        "claims" => json!(parse::claims(reply)?),
        "verdict" => verdict_json(&parse::verdict(reply)?),
        "verdicts" => Value::Array(
            parse::verdicts(reply, n)?
                .iter()
                .map(verdict_json)
                .collect(),
        ),
        "score" => {
            let s = parse::score(reply)?;
            json!({"score": s.score, "reasoning": s.reasoning})
        }
        "passages" => Value::Array(
            parse::passage_relevance(reply, n)?
                .into_iter()
                .map(|p| json!({"relevant": p.relevant, "reason": p.reason}))
                .collect(),
        ),
        // An answer word read where the question asks for it (the reply's
        // first word, or after `case["after"]`), from the word written.
        "word" => {
            let words: Vec<&str> = case["words"]
                .as_array()
                .map(|w| w.iter().filter_map(Value::as_str).collect())
                .unwrap_or_else(|| vec!["yes", "no"]);
            let at = case["after"]
                .as_str()
                .map_or(parse::AnswerAt::First, parse::AnswerAt::after);
            let read =
                parse::answer_word(reply, None, &parse::AnswerWords::new(words.clone()), &at)?;
            json!({"word": words[read.likeliest()], "reason": read.reason})
        }
        other => panic!("unknown parser {other}"),
    })
}

#[test]
fn every_corpus_case_parses_or_fails_as_recorded() {
    let corpus = include_str!("../data/reply_corpus.jsonl");
    let mut failures = Vec::new();
    let mut count = 0;
    for (line_no, line) in corpus.lines().enumerate() {
        let case: Value = serde_json::from_str(line).expect("corpus line is JSON");
        count += 1;
        let note = case["note"].as_str().unwrap_or("");
        let where_ = format!("line {} ({} / {note})", line_no + 1, case["parser"]);
        match (run(&case), case.get("expect"), case.get("error")) {
            (Ok(got), Some(want), None) if &got == want => {}
            (Err(e), None, Some(kind)) if e.kind.name() == kind => {
                // A refusal always carries the reply it refused.
                if e.raw != case["reply"].as_str().unwrap() {
                    failures.push(format!("{where_}: error lost the raw reply"));
                }
            }
            (got, want, kind) => failures.push(format!(
                "{where_}: got {:?}, wanted {}",
                got.map_err(|e| e.kind.name()),
                want.or(kind).unwrap()
            )),
        }
    }
    assert!(
        count >= 40,
        "the corpus must hold at least 40 cases, has {count}"
    );
    assert!(
        failures.is_empty(),
        "{} of {count} corpus cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
