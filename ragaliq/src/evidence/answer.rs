//! Where an expected answer stands in a response, and whether anything in
//! the response casts doubt on it: the found rule of answer correctness.
//!
//! The rule decides an answer correct with no call only where a person
//! would: the response gives the expected answer and nothing else in it
//! takes it back, hedges it, or offers another value in its place.
//! Otherwise (when in doubt) the judge is asked. Its words are in
//! `answer/words.txt`; its cases in `tests/fixtures/answer_found.json`,
//! which `scripts/found_rule.py` (the port that measures it on public sets,
//! bench/bands/README.md) reads too.
//!
//! 1. **Accepted answers.** A reference that starts with `Accepted
//!    answers:` lists every double-quoted string after it (`\"` inside one
//!    is a quote); any other reference is one accepted answer, whole.
//! 2. **Words.** Texts are read in NFC (so text from PDFs and macOS, often
//!    NFD, matches as typed) as words: lower case; `n't` read as `not`;
//!    `a`, `an`, `the` left out; number words as one number (`thirty-one`
//!    is 31); a thousands comma dropped (`1,776` is 1776), any other point
//!    or comma between digits kept (`30.5` is one number; `30.50` is
//!    `30.5`). What is part of a number is read with it: a sign (`-5`,
//!    `−5`, `minus 5`), a currency (`$30`, `30 dollars`, `USD 30` all read
//!    `30 usd`; `A$30` is Australian), a percentage (`30%`, `30 per
//!    cent`), a temperature (`-5 °C`, `minus 5 degrees Celsius`), an era
//!    (`500 BC`) and a unit (`30 kilometres` is `30 km`, `1 day` is `1
//!    days`). Dates read month, day, year whatever their order (`3 March
//!    1918`, `the 3rd of March, 1918`, `March 3rd, 1918`).
//! 3. **Found.** An accepted answer is found where its words stand one
//!    after another among the response's; one that ends in a number is
//!    not found where a currency, percentage, temperature, era or
//!    magnitude (`million`) follows that number: `$30` is not `30 euros`,
//!    `30%` not `30 users`, `-5 °C` not `5 °C`, `15` not `15 million`.
//! 4. **Doubt.** A found answer is in doubt ([`DoubtKind`]) when the
//!    question itself holds its words (finding them proves nothing); when
//!    a yes or no does not open the response on its own (`No charge` is
//!    no "no"), or its opposite stands in it, or what follows it shares no
//!    word with the question; when a `?` or a quotation mark stands outside it; when a word
//!    outside it denies (`not`, `wrong`), hedges or makes a condition
//!    (`maybe`, `about`, `if`, `only`), contrasts or tells of a change
//!    (`but`, `until`, `used to`), reports (`says`), offers options (`or`,
//!    `between`), or qualifies (`at least`, `up to`, `per`, `twice`; a
//!    word the question holds excepted: a limit the question sets is its
//!    own), or, for a name, relates (`student`, `wife`); when `'s`, `is
//!    the year …`, or, after a number, a unit the question lacks (`$12 a
//!    week`) follows it; and when something else offers a value of its
//!    kind: another number or month for an answer with a number; for a
//!    name (an answer written with a capital), another capitalised word
//!    the question lacks (a small word opening a sentence excepted) or a
//!    word that makes a longer name (`Washington state`, `north Dakota`);
//!    for a yes or no, a number or name the question lacks; for any other
//!    answer (and a name in a response written all in lower case), any
//!    word that is neither the question's nor a small word.
//! 5. **Decided.** Found, with no doubt: correct, with no call.
//!
//! The rule errs towards asking: a right answer with a hedge, a second
//! number or a `not` in it goes to the judge. What it decides is recorded
//! as an item a person can overrule (`metrics/correctness.rs`).

mod read;
mod tables;

use crate::core::{AnswerFound, Doubt, DoubtKind};
use read::{Word, is_mark, is_number, read};
use std::borrow::Cow;
use std::collections::HashSet;
use tables::tables;
use unicode_normalization::{UnicodeNormalization, is_nfc_quick};

/// What the found rule reads of a response against a reference.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnswerIn {
    /// Where an accepted answer stands in the response (its first
    /// occurrence); `None` when none is found.
    pub found: Option<AnswerFound>,
    /// Found, and what in the response casts doubt on it.
    pub doubt: Option<Doubt>,
}

impl AnswerIn {
    /// Whether the rule decides the answer correct: found, with no doubt.
    #[must_use]
    pub fn decides_correct(&self) -> bool {
        self.found.is_some() && self.doubt.is_none()
    }
}

/// `text` in NFC: borrowed when it already is.
pub(crate) fn nfc(text: &str) -> Cow<'_, str> {
    match is_nfc_quick(text.chars()) {
        unicode_normalization::IsNormalized::Yes => Cow::Borrowed(text),
        _ => Cow::Owned(text.nfc().collect()),
    }
}

/// The found rule (see the module) on `response` against `reference`, for
/// the question `query`.
///
/// ```
/// use ragaliq::evidence::answer_in;
/// let q = "How long is the refund window?";
/// let found = answer_in(q, "30 days", "You have thirty days to return it.");
/// assert!(found.decides_correct());
/// assert_eq!(found.found.unwrap().to_string(), "«thirty days» (words 3–4)");
/// let hedged = answer_in(q, "30 days", "It was 30 days until March; since then it is 14 days.");
/// assert_eq!(hedged.doubt.unwrap().to_string(), "«until»: a contrast, a correction or a change over time");
/// assert!(answer_in(q, "$30", "30 euros").found.is_none());
/// assert!(!answer_in("Is it 30 days or 14 days?", "14 days", "14 days.").decides_correct());
/// ```
#[must_use]
pub fn answer_in(query: &str, reference: &str, response: &str) -> AnswerIn {
    let text = nfc(response);
    let words = read(&text);
    let mut hits: Vec<Hit> = Vec::new();
    for answer in accepted_answers(reference) {
        let wanted: Vec<String> = read(&nfc(&answer)).into_iter().map(|w| w.text).collect();
        let at = occurrences(&wanted, &words);
        if !at.is_empty() {
            hits.push(Hit { answer, wanted, at });
        }
    }
    let Some(first) = hits.first() else {
        return AnswerIn {
            found: None,
            doubt: None,
        };
    };
    let (s, e) = first.at[0];
    let run = &words[s..e];
    let span = covered(run);
    let found = AnswerFound {
        answer: first.answer.clone(),
        text: text[span.clone()].to_owned(),
        words: (
            run.iter().map(|w| w.first).min().unwrap_or_default(),
            run.iter().map(|w| w.last).max().unwrap_or_default(),
        ),
        span,
    };
    let query = nfc(query);
    AnswerIn {
        doubt: doubt(&read(&query), &hits, &words, &text),
        found: Some(found),
    }
}

/// The bytes a run of words covers, from the first byte of any to the last
/// (a currency written before its number is read after it).
fn covered(run: &[Word]) -> std::ops::Range<usize> {
    let start = run.iter().map(|w| w.span.start).min().unwrap_or_default();
    let end = run.iter().map(|w| w.span.end).max().unwrap_or(start);
    start..end
}

/// An accepted answer found, its words, and where (ranges of words).
struct Hit {
    answer: String,
    wanted: Vec<String>,
    at: Vec<(usize, usize)>,
}

/// Where the words `wanted` stand one after another among `words`. One
/// that ends in a number is not found where a mark, an era or a magnitude
/// of that number follows it (see the module, 3).
fn occurrences(wanted: &[String], words: &[Word]) -> Vec<(usize, usize)> {
    let n = wanted.len();
    if n == 0 || n > words.len() {
        return Vec::new();
    }
    let t = tables();
    let ends_in_number = wanted.last().is_some_and(|w| is_number(w));
    (0..=words.len() - n)
        .filter(|&k| {
            words[k..k + n]
                .iter()
                .zip(wanted)
                .all(|(w, x)| w.text == *x)
        })
        .filter(|&k| {
            let Some(after) = words.get(k + n).filter(|_| ends_in_number) else {
                return true;
            };
            !(after.mark && is_mark(&after.text)
                || !after.mark
                    && (t.has("magnitudes", &after.text) || t.has_value("eras", &after.text)))
        })
        .map(|k| (k, k + n))
        .collect()
}

/// A word as a set of the question's words compares it: `s` taken from a
/// plural of four letters or more.
fn stem(w: &str) -> &str {
    match w.strip_suffix('s') {
        Some(s) if w.len() > 3 => s,
        _ => w,
    }
}

/// The classes of doubt a word raises wherever it stands outside the
/// answer, in the order they are looked at.
const CLASSES: [(&str, DoubtKind); 6] = [
    ("denies", DoubtKind::Denies),
    ("hedges", DoubtKind::Hedges),
    ("contrasts", DoubtKind::Contrasts),
    ("reports", DoubtKind::Reports),
    ("offers", DoubtKind::Offers),
    ("qualifies", DoubtKind::Qualifies),
];

/// What casts doubt on the answers found (see the module, 4), the first
/// thing found in the order there.
fn doubt(query: &[Word], hits: &[Hit], words: &[Word], text: &str) -> Option<Doubt> {
    let t = tables();
    let says = |kind: DoubtKind, words: &str| {
        Some(Doubt {
            kind,
            words: words.to_owned(),
        })
    };
    let raw = |w: &Word| &text[w.span.clone()];
    let query_words: HashSet<&str> = query.iter().map(|w| stem(&w.text)).collect();
    let query_texts: HashSet<&str> = query.iter().map(|w| w.text.as_str()).collect();
    // 1. The question holds the answer.
    if let Some(h) = hits
        .iter()
        .find(|h| !occurrences(&h.wanted, query).is_empty())
    {
        return says(DoubtKind::Echoes, &h.answer);
    }
    let inside: HashSet<usize> = hits
        .iter()
        .flat_map(|h| h.at.iter().flat_map(|&(s, e)| s..e))
        .collect();
    let spans: Vec<std::ops::Range<usize>> = hits
        .iter()
        .flat_map(|h| h.at.iter().map(|&(s, e)| covered(&words[s..e])))
        .collect();
    let outside: Vec<usize> = (0..words.len()).filter(|k| !inside.contains(k)).collect();
    let wanted = &hits[0].wanted;
    let yes_no = matches!(wanted.as_slice(), [w] if w == "yes" || w == "no");
    // 2. A yes or no opens the response on its own (`No charge` is no
    // "no"), and its opposite stands nowhere.
    if yes_no {
        let alone = words.first().is_some_and(|w| {
            w.text == wanted[0]
                && !text[w.span.end..]
                    .trim_start()
                    .starts_with(char::is_alphanumeric)
        });
        if !alone {
            return says(DoubtKind::NotFirst, &hits[0].answer);
        }
        let other = if wanted[0] == "yes" { "no" } else { "yes" };
        if let Some(w) = words.iter().find(|w| !w.mark && w.text == other) {
            return says(DoubtKind::Opposes, raw(w));
        }
    }
    // 3. A question mark or a quotation mark outside the answer.
    for (i, c) in text.char_indices() {
        let quote = matches!(c, '"' | '“' | '”' | '„' | '«' | '»');
        if (c == '?' || quote) && !spans.iter().any(|s| s.contains(&i)) {
            let kind = if quote {
                DoubtKind::Quotes
            } else {
                DoubtKind::Questions
            };
            return says(kind, &c.to_string());
        }
    }
    // 4. Words outside the answer.
    let name = hits
        .iter()
        .any(|h| h.answer.chars().any(char::is_uppercase));
    let plain = |k: usize| words.get(k).filter(|w| !w.mark).map(|w| w.text.as_str());
    for &k in &outside {
        let Some(word) = plain(k) else { continue };
        let next = plain(k + 1).unwrap_or_default();
        if let Some(pair) = t.get("pairs", &format!("{word}_{next}"))
            && !inside.contains(&(k + 1))
            && !(pair == "qualifies" && query_words.contains(word))
        {
            let kind = if pair == "qualifies" {
                DoubtKind::Qualifies
            } else {
                DoubtKind::Contrasts
            };
            return says(kind, &text[covered(&words[k..k + 2])]);
        }
        let number_beside =
            k.checked_sub(1).is_some_and(|j| is_number(&words[j].text)) || is_number(next);
        if word == "may" && !number_beside {
            return says(DoubtKind::Hedges, raw(&words[k]));
        }
        if matches!(word, "c" | "ca") && is_number(next) {
            return says(DoubtKind::Hedges, raw(&words[k]));
        }
        for (class, kind) in CLASSES {
            if !t.has(class, word)
                || (kind == DoubtKind::Denies
                    && wanted.as_slice() == ["no"]
                    && t.has("plain-negations", word))
                || (kind == DoubtKind::Qualifies && query_words.contains(stem(word)))
            {
                continue;
            }
            return says(kind, raw(&words[k]));
        }
        if name && t.has("relates", word) {
            return says(DoubtKind::Relates, raw(&words[k]));
        }
    }
    // 5. What follows the answer.
    let numeric = hits.iter().any(|h| h.wanted.iter().any(|w| is_number(w)));
    let query_units: HashSet<&str> = query_texts
        .iter()
        .filter_map(|q| t.get("units", q))
        .collect();
    for &(s, e) in hits.iter().flat_map(|h| h.at.iter()) {
        let Some(after) = plain(e) else { continue };
        if after == "s" {
            return says(
                DoubtKind::Possessive,
                &text[covered(&words[s..e]).end.min(words[e].span.start)..words[e].span.end],
            );
        }
        if t.has("copulas", after)
            && let Some(what) = plain(e + 1)
            && t.has("described", what)
            && !query_words.contains(stem(what))
        {
            return says(DoubtKind::Describes, &text[covered(&words[e..e + 2])]);
        }
        if numeric
            && let Some(unit) = t.get("units", after)
            && !query_words.contains(stem(after))
            && !query_units.contains(unit)
        {
            return says(DoubtKind::Qualifies, raw(&words[e]));
        }
    }
    // 6. Another value of the answer's kind.
    if numeric || yes_no {
        let months = hits
            .iter()
            .any(|h| h.wanted.iter().any(|w| t.has("months", w)));
        for &k in &outside {
            let Some(word) = plain(k) else { continue };
            if is_number(word) && !query_texts.contains(word) {
                return says(DoubtKind::AnotherNumber, raw(&words[k]));
            }
            if months && t.has("months", word) && !query_texts.contains(word) {
                return says(DoubtKind::AnotherNumber, raw(&words[k]));
            }
        }
        if numeric {
            return None;
        }
    }
    if name {
        for &(s, e) in hits.iter().flat_map(|h| h.at.iter()) {
            if let Some(after) = plain(e)
                && t.has("name-after", after)
                && !query_words.contains(stem(after))
            {
                return says(DoubtKind::AnotherName, raw(&words[e]));
            }
            if let Some(before) = s.checked_sub(1).and_then(plain)
                && t.has("name-before", before)
                && !query_words.contains(stem(before))
            {
                return says(DoubtKind::AnotherName, raw(&words[s - 1]));
            }
        }
    }
    if yes_no || (name && text.chars().any(char::is_uppercase)) {
        // A capitalised word is a name unless it is a number, the
        // question's, a small word opening a sentence, or `I`.
        let not_a_name = |w: &&Word| {
            w.mark
                || is_number(&w.text)
                || query_words.contains(stem(&w.text))
                || (w.opens && t.has("small", &w.text))
                || w.text == "i"
        };
        if let Some(w) = outside
            .iter()
            .map(|&k| &words[k])
            .find(|w| w.cap && !not_a_name(w))
        {
            return says(DoubtKind::AnotherName, raw(w));
        }
        if yes_no {
            // What follows a yes or no is about the question: one of its
            // words, where it says anything (`Yes, and pigs fly` is not).
            let said: Vec<&Word> = outside
                .iter()
                .map(|&k| &words[k])
                .filter(|w| !w.mark && !t.has("small", &w.text))
                .collect();
            if !said.is_empty() && !said.iter().any(|w| query_words.contains(stem(&w.text))) {
                return says(DoubtKind::Beside, raw(said[0]));
            }
        }
        return None;
    }
    let beside = outside
        .iter()
        .map(|&k| &words[k])
        .find(|w| !w.mark && !t.has("small", &w.text) && !query_words.contains(stem(&w.text)));
    beside.and_then(|w| says(DoubtKind::Beside, raw(w)))
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

/// `text` as the rule compares it (see the module, 2): its words, one
/// blank between each.
///
/// ```
/// use ragaliq::evidence::normalise_answer;
/// assert_eq!(normalise_answer("The Treaty of 1,648 — thirty-one years isn't 30.50!"), "treaty of 1648 31 years is not 30.5");
/// assert_eq!(normalise_answer("USD 30, $30 and thirty dollars"), "30 usd 30 usd and 30 usd");
/// assert_eq!(normalise_answer("It was signed on the 3rd of March, 1918 at −5 °C."), "it was signed on march 3 1918 at -5 celsius");
/// ```
#[must_use]
pub fn normalise_answer(text: &str) -> String {
    read(&nfc(text))
        .into_iter()
        .map(|w| w.text)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Plain matching: where an accepted answer of `reference` stands in
/// `response` (see the module, 1 to 3), whatever else the response says;
/// `None` when none does. The floor a judge must beat on graded answers.
///
/// ```
/// use ragaliq::evidence::find_answer;
/// let found = find_answer("30 days", "It is not 30 days; it is 14.").unwrap();
/// assert_eq!((found.text.as_str(), found.words), ("30 days", (4, 5)));
/// assert!(find_answer("30 days from delivery.", "Up to 30 days after they are delivered.").is_none());
/// assert!(find_answer(r#"Accepted answers: "Paris"; "City of Light""#, "It is the city of light.").is_some());
/// assert!(find_answer("-5 °C", "It is 5 °C.").is_none());
/// ```
#[must_use]
pub fn find_answer(reference: &str, response: &str) -> Option<AnswerFound> {
    answer_in("", reference, response).found
}

#[cfg(test)]
mod tests;
