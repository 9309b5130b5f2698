//! Finding the one JSON value in a judge's reply.
//!
//! Models wrap JSON in markdown fences, reasoning blocks and prose, and leave
//! trailing commas. All of that has one reading and is accepted. Two
//! different JSON values, a value cut off mid-way, or no JSON at all do not,
//! and are refused.

use super::{ParseError, ParseErrorKind};
use serde_json::Value;

/// Extracts the single JSON value a reply carries.
pub(crate) fn extract(raw: &str) -> Result<Value, ParseError> {
    let err = |kind| ParseError::new(kind, raw);
    if raw.trim().is_empty() {
        return Err(err(ParseErrorKind::Empty));
    }
    let text = strip_think(raw).ok_or_else(|| err(ParseErrorKind::Truncated))?;
    let text = text.trim();
    if text.is_empty() {
        return Err(err(ParseErrorKind::Empty));
    }
    if let Some(v) = parse_lenient(text) {
        return Ok(v);
    }

    let fenced = fenced_blocks(text);
    let segments = if fenced.is_empty() {
        scan(text)
    } else {
        // Inside fences the JSON may itself be surrounded by stray text.
        let mut all = Scan::default();
        for block in fenced {
            match parse_lenient(block.trim()) {
                Some(v) => all.values.push(v),
                None => all.merge(scan(block)),
            }
        }
        all
    };
    let mut values = segments.values;
    // Prefer objects: prose like "see [1]" must not compete with the answer.
    let objects: Vec<Value> = values.iter().filter(|v| v.is_object()).cloned().collect();
    if !objects.is_empty() {
        values = objects;
    } else {
        values.retain(plausible_array);
    }
    values.dedup();
    let distinct = {
        let mut d: Vec<&Value> = Vec::new();
        for v in &values {
            if !d.contains(&v) {
                d.push(v);
            }
        }
        d.len()
    };
    match distinct {
        1 if !segments.unclosed => Ok(values.swap_remove(0)),
        0 | 1 if segments.unclosed => Err(err(ParseErrorKind::Truncated)),
        0 if looks_like_refusal(text) => Err(err(ParseErrorKind::Refusal)),
        0 => Err(err(ParseErrorKind::NoJson)),
        n => Err(err(ParseErrorKind::Ambiguous { values: n })),
    }
}

/// Strict parse, then once more with trailing commas removed.
fn parse_lenient(text: &str) -> Option<Value> {
    serde_json::from_str(text)
        .ok()
        .or_else(|| serde_json::from_str(&strip_trailing_commas(text)).ok())
}

/// Removes `<think>…</think>` blocks. `None` when a block never closes: the
/// model ran out of tokens while reasoning.
fn strip_think(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    loop {
        let Some(start) = find_ci(rest, "<think>") else {
            out.push_str(rest);
            return Some(out);
        };
        out.push_str(&rest[..start]);
        let after = &rest[start + "<think>".len()..];
        let end = find_ci(after, "</think>")?;
        rest = &after[end + "</think>".len()..];
    }
}

fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    hay.to_ascii_lowercase().find(needle)
}

/// The contents of ```-fenced blocks (an unclosed last fence runs to the end).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        // Skip the info string (`json`, `JSON`, ...) up to the end of the line.
        let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
        let info = &after[..body_start];
        let body = if info.trim_start().starts_with(['{', '[']) {
            after
        } else {
            &after[body_start..]
        };
        match body.find("```") {
            Some(close) => {
                blocks.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => {
                blocks.push(body);
                break;
            }
        }
    }
    blocks
}

#[derive(Default)]
struct Scan {
    values: Vec<Value>,
    /// An object or array was opened and never closed.
    unclosed: bool,
}

impl Scan {
    fn merge(&mut self, other: Scan) {
        self.values.extend(other.values);
        self.unclosed |= other.unclosed;
    }
}

/// Finds the top-level balanced `{…}` / `[…]` segments in prose that parse as JSON.
fn scan(text: &str) -> Scan {
    let bytes = text.as_bytes();
    let mut out = Scan::default();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' || bytes[i] == b'[' {
            match balanced_end(bytes, i) {
                Some(end) => {
                    if let Some(v) = parse_lenient(&text[i..=end]) {
                        out.values.push(v);
                        i = end + 1;
                        continue;
                    }
                }
                None => {
                    // Only an object left open counts as a cut-off answer;
                    // a lone "[" in prose is just prose.
                    if bytes[i] == b'{' && looks_like_json_start(&text[i..]) {
                        out.unclosed = true;
                    }
                }
            }
        }
        i += 1;
    }
    out
}

fn looks_like_json_start(s: &str) -> bool {
    s[1..].trim_start().starts_with('"')
}

/// The index of the bracket closing the one at `start`, string-aware.
fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Removes commas that stand right before a closing bracket, outside strings.
fn strip_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_str = false;
    let mut escaped = false;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            out.push(c);
            continue;
        }
        if c == '"' {
            in_str = true;
        }
        if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// A bare array is an answer only if it holds strings or objects.
fn plausible_array(v: &Value) -> bool {
    match v {
        Value::Array(items) => {
            !items.is_empty() && items.iter().all(|i| i.is_string() || i.is_object())
        }
        _ => false,
    }
}

fn looks_like_refusal(text: &str) -> bool {
    let lower = text.to_lowercase();
    [
        "i can't",
        "i cannot",
        "i can not",
        "i'm sorry",
        "i am sorry",
        "i'm unable",
        "i am unable",
        "i won't",
        "i will not",
        "as an ai",
        "i must decline",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(raw: &str) -> Value {
        extract(raw).unwrap_or_else(|e| panic!("{raw:?}: {e}"))
    }
    fn kind(raw: &str) -> &'static str {
        extract(raw).unwrap_err().kind.name()
    }

    #[test]
    fn plain_fenced_and_prose() {
        assert_eq!(ok(r#"{"a":1}"#), json!({"a":1}));
        assert_eq!(ok("```json\n{\"a\":1}\n```"), json!({"a":1}));
        assert_eq!(ok("Sure! Here it is: {\"a\":1}. Done."), json!({"a":1}));
        assert_eq!(
            ok("<think>hmm {\"a\":2}</think>\n{\"a\":1}"),
            json!({"a":1})
        );
        assert_eq!(ok("{\"a\":[1,2,],}"), json!({"a":[1,2]}));
    }

    #[test]
    fn same_value_twice_is_one_reading() {
        assert_eq!(ok("{\"a\":1}\nAgain: {\"a\":1}"), json!({"a":1}));
    }

    #[test]
    fn refusals_of_the_broken() {
        assert_eq!(kind(""), "empty");
        assert_eq!(kind("<think>only thinking</think>"), "empty");
        assert_eq!(kind("<think>never ends"), "truncated");
        assert_eq!(kind("{\"a\": [1, 2"), "truncated");
        assert_eq!(kind("no json here"), "no_json");
        assert_eq!(kind("I'm sorry, I can't help with that."), "refusal");
        assert_eq!(kind("{\"a\":1} or {\"a\":2}"), "ambiguous");
    }

    #[test]
    fn strings_with_brackets_and_quotes() {
        assert_eq!(
            ok(r#"Result: {"e": "a } tricky \" [ string"}"#),
            json!({"e": "a } tricky \" [ string"})
        );
        assert_eq!(strip_trailing_commas(r#"{"a": ",]"}"#), r#"{"a": ",]"}"#);
    }

    #[test]
    fn prose_brackets_do_not_compete_with_the_answer() {
        assert_eq!(ok("As [1] shows: {\"a\":1}"), json!({"a":1}));
    }
}
