//! Where an expected answer stands in a response, and whether the response
//! denies it there: the found rule of answer correctness.
//!
//! 1. **Accepted answers.** A reference that starts with `Accepted
//!    answers:` lists every double-quoted string after it (`\"` inside one
//!    is a quote); any other reference is one accepted answer, whole.
//! 2. **Clauses.** The response is cut into clauses at `.` `:` `,` (except
//!    between two digits: `30.5`, `20:00`, `1,776`), at `!` `?` `;`, at an
//!    en or em dash, and at a `-` with blanks on both sides.
//! 3. **Words.** Each clause, and each accepted answer, is read as
//!    normalised words: lower case; `n't` read as ` not` (`isn't`: `is`,
//!    `not`); a comma between digits before exactly three digits dropped
//!    (`1,776` is `1776`); any other `.` or `,` between digits kept inside
//!    the number (`30.5` is one word); any other character that is no
//!    letter or digit a blank; `a`, `an`, `the` left out; number words as
//!    one number (`thirty-one` is `31`, `one hundred and five` is `105`).
//! 4. **Found.** An accepted answer is found where its words stand one
//!    after another among the response's (a match may run over a clause
//!    bound, as in `U.S. Army`). Whole words only: `130` is not `30`.
//! 5. **Denied.** An occurrence is denied when a clause it touches holds a
//!    negation: `not` (and `n't`), `no`, `never`, `neither`, `nor`,
//!    `none`, `cannot`, `false`, `untrue`, `incorrect`, `wrong`, `myth`,
//!    `misconception`, `except`, `unlike`, or the pairs `rather than`,
//!    `instead of`, `other than`, anywhere in that clause. A limit is no
//!    denial: `no`/`not` before a comparative with `than` within the next
//!    two words (`no later than 30 days`, `not more than 30 days`), and
//!    `not only`, `not just`.
//! 6. **Decided.** The answer is correct with no question asked when some
//!    occurrence of some accepted answer is found and not denied.
//!
//! The rule errs towards asking: a negation in the clause denies even
//! where a reader would not (`The window is 30 days not 14` without its
//! comma). Chosen and measured on public sets, with its cases in
//! `tests/fixtures/answer_found.json` (BENCHMARKS.md, bench/bands).

use crate::core::AnswerFound;
use std::ops::Range;

/// What the found rule reads of a response against a reference.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnswerIn {
    /// Where an accepted answer stands in the response: the first
    /// occurrence not denied, else the first; `None` when none is found.
    pub found: Option<AnswerFound>,
    /// When every occurrence found is denied: the negation that denies the
    /// first (`not`, `rather than`).
    pub denied: Option<String>,
}

impl AnswerIn {
    /// Whether the rule decides the answer correct: found, and not denied.
    #[must_use]
    pub fn decides_correct(&self) -> bool {
        self.found.is_some() && self.denied.is_none()
    }
}

/// The found rule (see the module) on `response` against `reference`.
///
/// ```
/// use ragaliq::evidence::answer_in;
/// let found = answer_in("30 days", "Refunds take thirty days.");
/// assert!(found.decides_correct());
/// assert_eq!(found.found.unwrap().to_string(), "«thirty days» (words 3–4)");
/// let denied = answer_in("30 days", "It is not 30 days; it is 14.");
/// assert_eq!((denied.found.is_some(), denied.denied.as_deref()), (true, Some("not")));
/// assert!(!answer_in("30 days", "No later than 30 days.").denied.is_some());
/// assert!(answer_in("30", "It takes 130 days.").found.is_none());
/// ```
#[must_use]
pub fn answer_in(reference: &str, response: &str) -> AnswerIn {
    let clauses = clauses(response);
    let mut number = 0;
    let mut seq: Vec<(Word, usize)> = Vec::new();
    let mut cues: Vec<Option<String>> = Vec::with_capacity(clauses.len());
    for (c, range) in clauses.iter().enumerate() {
        let words = words(&response[range.clone()], range.start, &mut number);
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        cues.push(negation_in(&texts));
        seq.extend(words.into_iter().map(|w| (w, c)));
    }
    let mut first: Option<(AnswerFound, Option<String>)> = None;
    for answer in accepted_answers(reference) {
        let mut n = 0;
        let wanted: Vec<String> = words(&answer, 0, &mut n)
            .into_iter()
            .map(|w| w.text)
            .collect();
        if wanted.is_empty() || wanted.len() > seq.len() {
            continue;
        }
        for at in 0..=seq.len() - wanted.len() {
            let run = &seq[at..at + wanted.len()];
            if !run.iter().zip(&wanted).all(|((w, _), x)| w.text == *x) {
                continue;
            }
            let cue = run.iter().find_map(|(_, c)| cues[*c].clone());
            let (head, tail) = (&run[0].0, &run[run.len() - 1].0);
            let span = head.span.start..tail.span.end;
            let found = AnswerFound {
                answer: answer.clone(),
                text: response[span.clone()].to_owned(),
                words: (head.first, tail.last),
                span,
            };
            if cue.is_none() {
                return AnswerIn {
                    found: Some(found),
                    denied: None,
                };
            }
            if first.is_none() {
                first = Some((found, cue));
            }
        }
    }
    match first {
        Some((found, cue)) => AnswerIn {
            found: Some(found),
            denied: cue,
        },
        None => AnswerIn {
            found: None,
            denied: None,
        },
    }
}

/// The answers `reference` accepts (see the module, 1): those an
/// `Accepted answers: "A"; "B"` line lists in double quotes (`\"` inside
/// one is a quote; an answer never closed is not one), or else the whole
/// reference, trimmed.
///
/// ```
/// use ragaliq::evidence::accepted_answers;
/// assert_eq!(accepted_answers(r#"Accepted answers: "1776"; "July 4, 1776""#), ["1776", "July 4, 1776"]);
/// assert_eq!(accepted_answers(" 30 days from delivery. "), ["30 days from delivery."]);
/// ```
#[must_use]
pub fn accepted_answers(reference: &str) -> Vec<String> {
    let r = reference.trim();
    let Some(list) = r.strip_prefix("Accepted answers:") else {
        return vec![r.to_owned()];
    };
    let mut out = Vec::new();
    let mut chars = list.chars();
    while chars.by_ref().any(|c| c == '"') {
        let mut answer = String::new();
        let mut closed = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('"') => answer.push('"'),
                    Some(other) => {
                        answer.push('\\');
                        answer.push(other);
                    }
                    None => answer.push('\\'),
                },
                '"' => {
                    closed = true;
                    break;
                }
                c => answer.push(c),
            }
        }
        if closed {
            out.push(answer);
        }
    }
    out
}

/// `text` as the rule compares it (see the module, 3): its normalised
/// words, one blank between each.
///
/// ```
/// use ragaliq::evidence::normalise_answer;
/// assert_eq!(normalise_answer("The Treaty of 1,648 — thirty-one years isn't 30.5!"), "treaty of 1648 31 years is not 30.5");
/// ```
#[must_use]
pub fn normalise_answer(text: &str) -> String {
    let mut n = 0;
    words(text, 0, &mut n)
        .into_iter()
        .map(|w| w.text)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Plain matching: where an accepted answer of `reference` stands in
/// `response` (see the module, 1 to 4), denied there or not; `None` when
/// none does. The floor a judge must beat on graded answers.
///
/// ```
/// use ragaliq::evidence::find_answer;
/// let found = find_answer("30 days", "It is not 30 days; it is 14.").unwrap();
/// assert_eq!((found.text.as_str(), found.words), ("30 days", (4, 5)));
/// assert!(find_answer("30 days from delivery.", "Up to 30 days after they are delivered.").is_none());
/// assert!(find_answer(r#"Accepted answers: "Paris"; "City of Light""#, "It is the city of light.").is_some());
/// ```
#[must_use]
pub fn find_answer(reference: &str, response: &str) -> Option<AnswerFound> {
    answer_in(reference, response).found
}

/// One normalised word, with where it stands: its bytes in the text, and
/// its number (from 1, articles counted) and that of the last word it
/// covers (a number written in words covers several).
#[derive(Clone, Debug)]
struct Word {
    text: String,
    span: Range<usize>,
    first: usize,
    last: usize,
}

const UNITS: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 8] = [
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

fn unit(w: &str) -> Option<u32> {
    UNITS.iter().position(|u| *u == w).map(|i| i as u32)
}

fn tens(w: &str) -> Option<u32> {
    TENS.iter()
        .position(|t| *t == w)
        .map(|i| 20 + 10 * i as u32)
}

/// The clauses of `text`, as byte ranges (see the module, 2).
fn clauses(text: &str) -> Vec<Range<usize>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let digit = |k: Option<usize>| {
        k.and_then(|k| chars.get(k))
            .is_some_and(|(_, c)| c.is_numeric())
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut k = 0;
    while k < chars.len() {
        let (at, c) = chars[k];
        let bound = match c {
            '.' | ':' | ',' => !(digit(k.checked_sub(1)) && digit(Some(k + 1))),
            '!' | '?' | ';' | '–' | '—' => true,
            _ => false,
        };
        // A run of dashes between blanks, the blanks with it.
        let dashes = c.is_whitespace() && {
            let mut j = k + 1;
            while chars
                .get(j)
                .is_some_and(|(_, d)| matches!(d, '-' | '–' | '—'))
            {
                j += 1;
            }
            j > k + 1 && chars.get(j).is_some_and(|(_, d)| d.is_whitespace())
        };
        if bound || dashes {
            out.push(start..at);
            let mut j = k + 1;
            if dashes {
                while chars
                    .get(j)
                    .is_some_and(|(_, d)| matches!(d, '-' | '–' | '—'))
                {
                    j += 1;
                }
                j += 1;
            }
            start = chars.get(j).map_or(text.len(), |(i, _)| *i);
            k = j;
            continue;
        }
        k += 1;
    }
    out.push(start..text.len());
    out.retain(|r| !text[r.clone()].trim().is_empty());
    out
}

/// The normalised words of `text` (see the module, 3), their spans offset
/// by `offset`, numbered on from `number`.
fn words(text: &str, offset: usize, number: &mut usize) -> Vec<Word> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let word_char = |k: usize| {
        chars
            .get(k)
            .is_some_and(|(_, c)| c.is_alphanumeric() || *c == '_')
    };
    let digit = |k: usize| chars.get(k).is_some_and(|(_, c)| c.is_numeric());
    let mut raw: Vec<(String, Range<usize>)> = Vec::new();
    let mut current = String::new();
    let mut start = 0;
    let mut end = 0;
    let mut k = 0;
    let flush =
        |current: &mut String, start: usize, end: usize, raw: &mut Vec<(String, Range<usize>)>| {
            if !current.is_empty() {
                raw.push((std::mem::take(current), start..end));
            }
        };
    while k < chars.len() {
        let (at, c) = chars[k];
        if c.is_alphanumeric() {
            if current.is_empty() {
                start = at;
            }
            current.extend(c.to_lowercase());
            end = at + c.len_utf8();
            k += 1;
            continue;
        }
        // `n't`: the word before it, and `not`.
        if matches!(c, '\'' | '’')
            && k >= 2
            && matches!(chars[k - 1].1, 'n' | 'N')
            && word_char(k - 2)
            && chars
                .get(k + 1)
                .is_some_and(|(_, t)| matches!(t, 't' | 'T'))
            && !word_char(k + 2)
        {
            let n_at = chars[k - 1].0;
            current.pop();
            let t_end = chars[k + 1].0 + 1;
            if !current.is_empty() {
                raw.push((std::mem::take(&mut current), start..n_at));
            }
            raw.push(("not".to_owned(), n_at..t_end));
            k += 2;
            continue;
        }
        if matches!(c, '.' | ',') && !current.is_empty() && k >= 1 && digit(k - 1) && digit(k + 1) {
            // `1,776`: a thousands comma, dropped; any other point or comma
            // between digits stays in the number.
            let thousands = c == ',' && (k + 1..k + 4).all(digit) && !digit(k + 4);
            if !thousands {
                current.push('.');
            }
            k += 1;
            continue;
        }
        flush(&mut current, start, end, &mut raw);
        k += 1;
    }
    flush(&mut current, start, end, &mut raw);
    // Numbered as written (articles counted), then articles left out.
    let numbered: Vec<(String, Range<usize>, usize)> = raw
        .into_iter()
        .map(|(w, r)| {
            *number += 1;
            (w, (r.start + offset)..(r.end + offset), *number)
        })
        .filter(|(w, _, _)| !matches!(w.as_str(), "a" | "an" | "the"))
        .collect();
    // Number words: [unit hundred [and]] [tens [unit]] or a unit alone.
    let mut out = Vec::with_capacity(numbered.len());
    let mut k = 0;
    let text_at = |j: usize| numbered.get(j).map(|(w, _, _)| w.as_str());
    while k < numbered.len() {
        let t = numbered[k].0.as_str();
        if unit(t).is_none() && tens(t).is_none() && t != "hundred" {
            let (w, r, n) = &numbered[k];
            out.push(Word {
                text: w.clone(),
                span: r.clone(),
                first: *n,
                last: *n,
            });
            k += 1;
            continue;
        }
        let mut value = 0;
        let mut j = k;
        let mut seen = false;
        if let (Some(u), Some("hundred")) = (unit(t), text_at(k + 1)) {
            value = u * 100;
            j = k + 2;
            seen = true;
        } else if t == "hundred" {
            value = 100;
            j = k + 1;
            seen = true;
        }
        if seen
            && text_at(j) == Some("and")
            && text_at(j + 1).is_some_and(|w| unit(w).is_some() || tens(w).is_some())
        {
            j += 1;
        }
        if let Some(t) = text_at(j).and_then(tens) {
            value += t;
            j += 1;
            if let Some(u) = text_at(j).and_then(unit).filter(|u| (1..10).contains(u)) {
                value += u;
                j += 1;
            }
        } else if let Some(u) = text_at(j).and_then(unit).filter(|_| seen || j == k) {
            value += u;
            j += 1;
        }
        let j = j.max(k + 1);
        out.push(Word {
            text: value.to_string(),
            span: numbered[k].1.start..numbered[j - 1].1.end,
            first: numbered[k].2,
            last: numbered[j - 1].2,
        });
        k = j;
    }
    out
}

const NEGATIONS: [&str; 15] = [
    "not",
    "no",
    "never",
    "neither",
    "nor",
    "none",
    "cannot",
    "false",
    "untrue",
    "incorrect",
    "wrong",
    "myth",
    "misconception",
    "except",
    "unlike",
];
const NEGATING_PAIRS: [(&str, &str); 3] =
    [("rather", "than"), ("instead", "of"), ("other", "than")];
const COMPARATIVES: [&str; 15] = [
    "later", "earlier", "sooner", "more", "less", "fewer", "longer", "shorter", "greater",
    "higher", "lower", "older", "younger", "bigger", "smaller",
];

/// The negation in a clause's words, if any (see the module, 5).
fn negation_in(words: &[&str]) -> Option<String> {
    for (k, w) in words.iter().enumerate() {
        let next = words.get(k + 1).copied().unwrap_or("");
        if matches!(*w, "no" | "not")
            && COMPARATIVES.contains(&next)
            && words[(k + 2).min(words.len())..(k + 4).min(words.len())].contains(&"than")
        {
            continue;
        }
        if *w == "not" && matches!(next, "only" | "just") {
            continue;
        }
        if NEGATIONS.contains(w) {
            return Some((*w).to_owned());
        }
        if NEGATING_PAIRS.contains(&(*w, next)) {
            return Some(format!("{w} {next}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expected_answer_is_found_as_whole_normalised_words() {
        let at = |reference: &str, response: &str| {
            find_answer(reference, response).map(|f| (f.text, f.words))
        };
        // Found where it stands, in the response's own words; articles
        // count as words of the response but are skipped in the match.
        assert_eq!(
            at("the 30 days", "You have thirty days."),
            Some(("thirty days".to_owned(), (3, 4)))
        );
        assert_eq!(
            at("30 days", "It is not 30 days; it is 14."),
            Some(("30 days".to_owned(), (4, 5)))
        );
        // Whole words only: 30 is not 130, day is not days.
        assert_eq!(at("30 days", "Within 130 days."), None);
        assert_eq!(at("30 day", "Within 30 days."), None);
        // A thousands comma is part of the number; a point or another
        // comma between digits too (a decimal); other commas split.
        assert_eq!(
            at("1776", "Signed in 1,776, they say."),
            Some(("1,776".to_owned(), (3, 3)))
        );
        assert_eq!(at("1776", "Items 1,7760 and more."), None);
        assert_eq!(normalise_answer("1,2345 and 12,345"), "1.2345 and 12345");
        assert_eq!(at("30", "It costs 30.5 dollars."), None);
        // Punctuation, case and dashes never decide.
        assert!(find_answer("U.S. Route-66", "along u s route 66").is_some());
        // Number words, compounds and hundreds.
        assert_eq!(
            normalise_answer("thirty-one, one hundred and five, a hundred"),
            "31 105 100"
        );
        // An empty answer finds nothing.
        assert_eq!(at("  ", "anything"), None);
        assert_eq!(at("The", "the end"), None, "an article alone is no answer");
    }

    #[test]
    fn accepted_answers_are_the_quoted_ones() {
        assert_eq!(
            accepted_answers(r#"Accepted answers: "Paris"; "the \"City of Light\""; "unclosed"#),
            ["Paris", "the \"City of Light\""]
        );
        assert_eq!(
            accepted_answers("Accepted answers: none"),
            Vec::<String>::new()
        );
        let found = find_answer(
            r#"Accepted answers: "Lyon"; "City of Light""#,
            "Paris, the city of light.",
        )
        .unwrap();
        assert_eq!(found.answer, "City of Light");
        assert_eq!(found.text, "city of light");
        assert_eq!(found.words, (3, 5));
    }

    #[test]
    fn a_denied_answer_is_found_and_decides_nothing() {
        let denied = |reference: &str, response: &str| answer_in(reference, response).denied;
        assert_eq!(
            denied("30 days", "It is not 30 days; it is 14.").as_deref(),
            Some("not")
        );
        assert_eq!(
            denied("30 days", "Rather than 30 days, it is 14.").as_deref(),
            Some("rather than")
        );
        assert_eq!(
            denied("30 days", "It isn't 30 days.").as_deref(),
            Some("not")
        );
        // A limit is no denial; `not only` neither.
        assert_eq!(
            denied("30 days", "No later than 30 days after delivery."),
            None
        );
        assert_eq!(denied("30 days", "Not only 30 days, but more."), None);
        // Only the clause counts: the denial of another clause does not
        // reach the answer's.
        let r = answer_in("30 days", "It is 30 days; it is not 14.");
        assert!(r.decides_correct(), "{r:?}");
        // One occurrence not denied is enough.
        let r = answer_in("30 days", "Not 14 days. It is 30 days.");
        assert!(r.decides_correct(), "{r:?}");
        assert_eq!(r.found.unwrap().words, (6, 7));
        // A number point or colon does not cut a clause.
        assert!(answer_in("20:00", "Not before 8; it opens at 20:00.").decides_correct());
    }

    /// The cases the rule was measured with (bench/bands), shared with the
    /// measurement script: the Rust rule reads each as it does.
    #[test]
    fn the_rule_reads_every_case_of_its_fixture_as_measured() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/answer_found.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let cases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert!(cases.len() >= 30, "{}", cases.len());
        let mut wrong = Vec::new();
        for c in &cases {
            let (reference, response) = (
                c["reference"].as_str().unwrap(),
                c["response"].as_str().unwrap(),
            );
            let r = answer_in(reference, response);
            let got = (r.found.is_some(), r.denied.is_some());
            let want = (
                c["found"].as_bool().unwrap(),
                c["negated"].as_bool().unwrap(),
            );
            if got != want {
                wrong.push(format!(
                    "{reference:?} in {response:?}: {got:?}, expected {want:?} ({})",
                    c["why"]
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
