//! A text read as the found rule reads it (see the module above, 1):
//! words in lower case, numbers with what is part of them, dates in one
//! order. `scripts/found_rule.py` ports it step for step.

use super::tables::tables;
use std::ops::Range;

/// One word as the rule reads it, with where it stands.
#[derive(Clone, Debug)]
pub(super) struct Word {
    /// Its text, read (`30`, `usd`, `march`).
    pub text: String,
    /// The bytes of the (NFC) text it covers.
    pub span: Range<usize>,
    /// Its number among the text's words (from 1, articles counted), and
    /// that of the last word it covers (a number in words covers several;
    /// a mark takes the number of the word before it).
    pub first: usize,
    pub last: usize,
    /// Written with a capital letter.
    pub cap: bool,
    /// The first word of a sentence.
    pub opens: bool,
    /// A mark of a number (`$`, `%`, `°C`, or `dollars` after one): part of
    /// the number, no word of its own.
    pub mark: bool,
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

/// The marks a number may carry: a number followed by one is another value.
pub(super) fn is_mark(text: &str) -> bool {
    matches!(text, "percent" | "celsius" | "fahrenheit" | "degrees") || is_currency(text)
}

fn is_currency(text: &str) -> bool {
    tables().has_value("currency-words", text)
}

/// Whether a word holds an (ASCII) digit: a number.
pub(super) fn is_number(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_digit())
}

/// `text` as the rule reads it, in NFC.
pub(super) fn read(text: &str) -> Vec<Word> {
    let words = raw(text);
    let words: Vec<Word> = words
        .into_iter()
        .filter(|w| w.mark || !matches!(w.text.as_str(), "a" | "an" | "the"))
        .collect();
    dates(quantities(number_words(words)))
}

/// Characters to words: runs of letters and digits, lower case (`n't` read
/// as `not`; a sign before a number, and a point or comma between digits,
/// kept in it; a thousands comma dropped), and marks (`$`, `%`, `°C`).
fn raw(text: &str) -> Vec<Word> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    let at = |k: usize| chars.get(k).map_or(text.len(), |(i, _)| *i);
    let alnum = |k: Option<usize>| {
        k.and_then(|k| chars.get(k))
            .is_some_and(|(_, c)| c.is_alphanumeric())
    };
    let digit = |k: Option<usize>| {
        k.and_then(|k| chars.get(k))
            .is_some_and(|(_, c)| c.is_ascii_digit())
    };
    let mut out: Vec<Word> = Vec::new();
    let mut cur = String::new();
    let (mut start, mut cap, mut opens, mut number) = (0, false, true, 0);
    let push = |out: &mut Vec<Word>,
                number: &mut usize,
                opens: &mut bool,
                text: String,
                span: Range<usize>,
                cap: bool| {
        *number += 1;
        out.push(Word {
            text,
            span,
            first: *number,
            last: *number,
            cap,
            opens: *opens,
            mark: false,
        });
        *opens = false;
    };
    let mark = |out: &mut Vec<Word>, number: usize, text: &str, span: Range<usize>| {
        out.push(Word {
            text: text.to_owned(),
            span,
            first: number,
            last: number,
            cap: false,
            opens: false,
            mark: true,
        });
    };
    let mut k = 0;
    while k < n {
        let c = chars[k].1;
        if c.is_alphanumeric() {
            if cur.is_empty() {
                start = at(k);
                cap = c.is_uppercase();
            }
            cur.extend(c.to_lowercase());
            k += 1;
            continue;
        }
        // `isn't`: `is`, then `not`.
        if matches!(c, '\'' | '’')
            && k >= 2
            && matches!(chars[k - 1].1, 'n' | 'N')
            && alnum(Some(k - 2))
            && chars
                .get(k + 1)
                .is_some_and(|(_, t)| matches!(t, 't' | 'T'))
            && !alnum(Some(k + 2))
        {
            cur.pop();
            if !cur.is_empty() {
                let word = std::mem::take(&mut cur);
                push(
                    &mut out,
                    &mut number,
                    &mut opens,
                    word,
                    start..at(k - 1),
                    cap,
                );
            }
            push(
                &mut out,
                &mut number,
                &mut opens,
                "not".to_owned(),
                at(k - 1)..at(k + 2),
                false,
            );
            k += 2;
            continue;
        }
        // `1,776` is 1776; `30.5` is one number.
        if matches!(c, '.' | ',')
            && !cur.is_empty()
            && digit(k.checked_sub(1))
            && digit(Some(k + 1))
        {
            let thousands =
                c == ',' && (k + 1..k + 4).all(|j| digit(Some(j))) && !digit(Some(k + 4));
            if !thousands {
                cur.push('.');
            }
            k += 1;
            continue;
        }
        // A sign: part of the number after it.
        if matches!(c, '-' | '−' | '–' | '+') && digit(Some(k + 1)) && !alnum(k.checked_sub(1))
        {
            start = at(k);
            cap = false;
            cur = if c == '+' {
                String::new()
            } else {
                "-".to_owned()
            };
            k += 1;
            continue;
        }
        // `A$30`: the letters name the dollar.
        if c == '$'
            && let Some(currency) = tables().get("dollar-prefixes", &cur)
        {
            mark(&mut out, number, currency, start..at(k + 1));
            cur.clear();
            k += 1;
            continue;
        }
        if !cur.is_empty() {
            let word = std::mem::take(&mut cur);
            push(&mut out, &mut number, &mut opens, word, start..at(k), cap);
        }
        match c {
            '$' => mark(&mut out, number, "usd", at(k)..at(k + 1)),
            '€' => mark(&mut out, number, "eur", at(k)..at(k + 1)),
            '£' => mark(&mut out, number, "gbp", at(k)..at(k + 1)),
            '¥' => mark(&mut out, number, "jpy", at(k)..at(k + 1)),
            '%' => mark(&mut out, number, "percent", at(k)..at(k + 1)),
            '℃' => mark(&mut out, number, "celsius", at(k)..at(k + 1)),
            '℉' => mark(&mut out, number, "fahrenheit", at(k)..at(k + 1)),
            '°' => {
                let j = k + 1 + usize::from(chars.get(k + 1).is_some_and(|(_, c)| *c == ' '));
                if let Some((_, u)) = chars.get(j)
                    && matches!(u, 'c' | 'C' | 'f' | 'F')
                    && !alnum(Some(j + 1))
                {
                    let unit = if matches!(u, 'c' | 'C') {
                        "celsius"
                    } else {
                        "fahrenheit"
                    };
                    mark(&mut out, number, unit, at(k)..at(j + 1));
                    k = j + 1;
                    continue;
                }
                mark(&mut out, number, "degrees", at(k)..at(k + 1));
            }
            '.' | '!' | '?' | ':' | ';' | '\n' => opens = true,
            _ => {}
        }
        k += 1;
    }
    if !cur.is_empty() {
        push(
            &mut out,
            &mut number,
            &mut opens,
            cur,
            start..text.len(),
            cap,
        );
    }
    out
}

fn unit(w: &str) -> Option<usize> {
    UNITS.iter().position(|u| *u == w)
}

fn tens(w: &str) -> Option<usize> {
    TENS.iter().position(|t| *t == w)
}

/// Number words as one number: `[unit hundred [and]] [tens [unit]]`, or a
/// unit alone (`thirty-one` is 31, `one hundred and five` 105).
fn number_words(words: Vec<Word>) -> Vec<Word> {
    let text_at = |j: usize| words.get(j).filter(|w| !w.mark).map(|w| w.text.as_str());
    let mut out = Vec::with_capacity(words.len());
    let mut k = 0;
    while k < words.len() {
        let Some(t) =
            text_at(k).filter(|t| unit(t).is_some() || tens(t).is_some() || *t == "hundred")
        else {
            out.push(words[k].clone());
            k += 1;
            continue;
        };
        let (mut value, mut j, mut seen) = (0, k, false);
        if let (Some(u), Some("hundred")) = (unit(t), text_at(k + 1)) {
            (value, j, seen) = (u * 100, k + 2, true);
        } else if t == "hundred" {
            (value, j, seen) = (100, k + 1, true);
        }
        if seen
            && text_at(j) == Some("and")
            && text_at(j + 1).is_some_and(|w| unit(w).is_some() || tens(w).is_some())
        {
            j += 1;
        }
        if let Some(t) = text_at(j).and_then(tens) {
            value += 20 + 10 * t;
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
        let (head, tail) = (&words[k], &words[j - 1]);
        out.push(Word {
            text: value.to_string(),
            span: head.span.start..tail.span.end,
            last: tail.last,
            ..head.clone()
        });
        k = j;
    }
    out
}

/// One word over `a` and `b`, written `text`.
fn joined(a: &Word, b: &Word, text: &str, mark: bool) -> Word {
    Word {
        text: text.to_owned(),
        span: a.span.start.min(b.span.start)..a.span.end.max(b.span.end),
        first: a.first.min(b.first),
        last: a.last.max(b.last),
        cap: a.cap,
        opens: a.opens,
        mark,
    }
}

/// `30.50` is `30.5`, `30.00` is `30`; a sign stays.
fn canonical_number(text: &str) -> String {
    let digits = text.strip_prefix('-').unwrap_or(text);
    match digits.split_once('.') {
        Some((whole, part))
            if !whole.is_empty()
                && !part.is_empty()
                && whole.bytes().all(|b| b.is_ascii_digit())
                && part.bytes().all(|b| b.is_ascii_digit()) =>
        {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        _ => text.to_owned(),
    }
}

fn is_plain_number(w: &Word) -> bool {
    !w.mark && is_number(&w.text)
}

/// Signs, currencies, percentages, temperatures, eras and units made part
/// of the number beside them: `30 usd` for `$30`, `30 dollars` and `USD
/// 30`; `-5 celsius` for `minus 5 °C`.
fn quantities(words: Vec<Word>) -> Vec<Word> {
    let t = tables();
    // `minus 5`; then `30.0` as `30`.
    let mut out: Vec<Word> = Vec::with_capacity(words.len());
    for mut w in words {
        if let Some(before) = out.last()
            && !before.mark
            && matches!(before.text.as_str(), "minus" | "negative")
            && !w.mark
            && w.text.starts_with(|c: char| c.is_ascii_digit())
        {
            let before = out.pop().expect("just seen");
            w = joined(&before, &w, &format!("-{}", w.text), false);
        }
        out.push(w);
    }
    for w in &mut out {
        if is_plain_number(w) {
            w.text = canonical_number(&w.text);
        }
    }
    // A currency before a number goes after it.
    let words = out;
    let mut out: Vec<Word> = Vec::with_capacity(words.len());
    let mut k = 0;
    while k < words.len() {
        let w = &words[k];
        let currency = if w.mark {
            is_currency(&w.text).then_some(w.text.as_str())
        } else {
            t.get("currency-words", &w.text)
        };
        if let (Some(currency), Some(next)) = (currency, words.get(k + 1))
            && is_plain_number(next)
            && !out.last().is_some_and(is_plain_number)
        {
            out.push(next.clone());
            out.push(joined(w, w, currency, true));
            k += 2;
            continue;
        }
        out.push(w.clone());
        k += 1;
    }
    // After a number: its marks and unit, one spelling each.
    let words = out;
    let mut out: Vec<Word> = Vec::with_capacity(words.len());
    let mut k = 0;
    while k < words.len() {
        let w = &words[k];
        let next = words.get(k + 1);
        let next_text = next.filter(|n| !n.mark).map(|n| n.text.as_str());
        let after_digits = out.last().is_some_and(is_plain_number);
        let after_number = after_digits || out.last().is_some_and(|p| p.mark && is_mark(&p.text));
        if w.mark
            && w.text == "degrees"
            && let Some(next) = next_text
                .filter(|n| matches!(*n, "c" | "f" | "celsius" | "centigrade" | "fahrenheit"))
        {
            let unit = if matches!(next, "f" | "fahrenheit") {
                "fahrenheit"
            } else {
                "celsius"
            };
            out.push(joined(w, &words[k + 1], unit, true));
            k += 2;
            continue;
        }
        if after_number && !w.mark {
            let two = match (w.text.as_str(), next_text) {
                ("per", Some("cent")) => Some("percent"),
                ("pounds", Some("sterling")) => Some("gbp"),
                ("degrees" | "degree", Some("celsius" | "centigrade" | "c")) => Some("celsius"),
                ("degrees" | "degree", Some("fahrenheit" | "f")) => Some("fahrenheit"),
                _ => None,
            };
            if let Some(two) = two {
                out.push(joined(w, &words[k + 1], two, true));
                k += 2;
                continue;
            }
            let one = t.get("currency-words", &w.text).or(match w.text.as_str() {
                "percent" | "pct" => Some("percent"),
                "celsius" | "centigrade" => Some("celsius"),
                "fahrenheit" => Some("fahrenheit"),
                "degrees" | "degree" => Some("degrees"),
                _ => None,
            });
            if let Some(one) = one {
                out.push(joined(w, w, one, true));
                k += 1;
                continue;
            }
            let plain = if after_digits {
                t.get("eras", &w.text).or_else(|| t.get("units", &w.text))
            } else {
                None
            };
            if let Some(plain) = plain {
                out.push(joined(w, w, plain, false));
                k += 1;
                continue;
            }
        }
        out.push(w.clone());
        k += 1;
    }
    // `$30 dollars`, `$30 CAD`: one mark, the one written last.
    let mut marks: Vec<Word> = Vec::with_capacity(out.len());
    for w in out {
        if let Some(before) = marks.last_mut()
            && w.mark
            && before.mark
            && (before.text == w.text || (is_currency(&before.text) && is_currency(&w.text)))
        {
            *before = joined(before, &w, &w.text, true);
            continue;
        }
        marks.push(w);
    }
    marks
}

/// The month a word names: a month's name, or a short one (`sept`).
fn month(w: &Word) -> Option<&'static str> {
    if w.mark {
        return None;
    }
    let t = tables();
    if t.has("months", &w.text) {
        return t.sets_word("months", &w.text);
    }
    t.get("month-short", &w.text)
}

/// The day a word can be: 1 to 31, with or without `st`, `nd`, `rd`,
/// `th`; without leading zeros.
fn day(w: &Word) -> Option<String> {
    if w.mark {
        return None;
    }
    let t = w.text.as_str();
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| t.strip_suffix(s))
        .unwrap_or(t);
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    (1..=31).contains(&n).then(|| n.to_string())
}

/// Dates as month, day, year: `3 March 1918`, `the 3rd of March, 1918` and
/// `March 3rd, 1918` all read `march 3 1918`; `mar`, `sept` are months
/// only beside a number.
fn dates(words: Vec<Word>) -> Vec<Word> {
    let named = |w: &Word, text: &str| Word {
        text: text.to_owned(),
        ..w.clone()
    };
    let mut out = Vec::with_capacity(words.len());
    let mut k = 0;
    while k < words.len() {
        let w = &words[k];
        let next = words.get(k + 1);
        if let Some(d) = day(w) {
            let j = if next.is_some_and(|n| !n.mark && n.text == "of") {
                k + 2
            } else {
                k + 1
            };
            if let Some(m) = words.get(j).and_then(month) {
                out.push(named(&words[j], m));
                out.push(named(w, &d));
                k = j + 1;
                continue;
            }
        }
        if let Some(m) = month(w) {
            if let Some(d) = next.and_then(day) {
                out.push(named(w, m));
                out.push(named(&words[k + 1], &d));
                k += 2;
                continue;
            }
            if tables().has("months", &w.text) || next.is_some_and(is_plain_number) {
                out.push(named(w, m));
                k += 1;
                continue;
            }
        }
        out.push(w.clone());
        k += 1;
    }
    out
}
