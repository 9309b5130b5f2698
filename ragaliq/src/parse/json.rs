//! Finding the one JSON value in a judge's reply, and reading it with the
//! repairs that have exactly one meaning.
//!
//! The rules, in order:
//!
//! 1. An empty or blank reply is an error. Everything up to the last
//!    `</think>` is dropped (a model's reasoning is never read: no number in
//!    it is used); a `<think>` that never closes, or nothing after it, is an
//!    error.
//! 2. The reply must hold exactly one JSON value (an object, or an array of
//!    strings or objects). Prose, markdown fences (malformed ones too), role
//!    headers, chat-template tokens and wrapper tags around it are ignored;
//!    byte-identical copies count once; two different values are an error;
//!    no JSON is an error, and no number is picked out of prose.
//! 3. Repaired, because each has one meaning: trailing commas; a missing
//!    comma between complete array items; single-quoted strings; Python's
//!    `True`, `False` and `None`; `//` and `/* */` comments; raw newlines
//!    in strings; invalid escapes (`\'`, `\$`, `\sigma`), kept as the text
//!    they are; smart quotes used as delimiters; unquoted keys; a bare
//!    unquoted word that is exactly a verdict label; numbers written `.8`.
//! 4. Not repaired: unbalanced brackets, broken key quoting, an unescaped
//!    `"` inside a string, lists elided with `...`, and truncation. A cut-off
//!    object still tells which of its pairs were complete and followed by a
//!    comma before the break; the single-verdict and score readers use that,
//!    and nothing else does.

use super::{ParseError, ParseErrorKind};
use crate::core::Verdict;

/// A JSON value as the judge wrote it, objects in written order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum J {
    Null,
    Bool(bool),
    /// The number and how it was written.
    Number(f64, String),
    String(String),
    Array(Vec<J>),
    Object(Vec<(String, J)>),
    /// A bare word: a verdict label, or `NaN` / `Infinity`, kept so that
    /// the readers can say exactly what is wrong with it.
    Word(String),
}

impl J {
    pub(crate) fn describe(&self) -> String {
        match self {
            J::Null => "null".into(),
            J::Bool(_) => "a boolean".into(),
            J::Number(_, raw) => format!("the number {raw}"),
            J::String(_) => "a string".into(),
            J::Array(a) => format!("an array of {}", a.len()),
            J::Object(o) => {
                let keys: Vec<&str> = o.iter().map(|(k, _)| k.as_str()).collect();
                if keys.is_empty() {
                    "an empty object".into()
                } else {
                    format!("an object with keys {}", keys.join(", "))
                }
            }
            J::Word(w) => format!("the unquoted word `{w}`"),
        }
    }
}

/// What a reply holds.
#[derive(Debug)]
pub(crate) enum Found {
    /// Exactly one value.
    Value(J),
    /// The reply was cut off inside an object; these pairs of it were
    /// complete and followed by a comma.
    Truncated(Vec<(String, J)>),
}

/// Extracts the single JSON value a reply carries.
pub(crate) fn extract(raw: &str) -> Result<Found, ParseError> {
    let err = |kind| ParseError::new(kind, raw);
    if raw.trim().is_empty() {
        return Err(err(ParseErrorKind::Empty));
    }
    let text = after_thinking(raw).ok_or_else(|| err(ParseErrorKind::Truncated))?;
    if text.trim().is_empty() {
        return Err(err(ParseErrorKind::Empty));
    }
    let chars: Vec<char> = text.chars().collect();
    let mut values: Vec<(String, J)> = Vec::new();
    let mut truncated: Option<Vec<(String, J)>> = None;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '{' || chars[i] == '[' {
            let mut p = Parser {
                s: &chars,
                i,
                partial: None,
            };
            match p.value(0) {
                Ok(v) if candidate(&v) => {
                    let source: String = chars[i..p.i].iter().collect();
                    // A closing bracket right after the value: the
                    // brackets do not balance, and that is not repaired.
                    let next = chars[p.i..].iter().find(|c| !c.is_whitespace());
                    if matches!(next, Some('}' | ']')) {
                        return Err(err(ParseErrorKind::WrongShape {
                            detail: format!(
                                "unbalanced brackets: a stray `{}` after the JSON value",
                                next.copied().unwrap_or('}')
                            ),
                        }));
                    }
                    values.push((source, v));
                    i = p.i;
                    continue;
                }
                Ok(_) => {}
                Err(Stop::End) => {
                    // Cut off: only an object that has begun with a key
                    // counts as an answer; a lone "[" in prose is prose.
                    if chars[i] == '{' && looks_like_object(&chars[i + 1..]) {
                        truncated = Some(p.partial.take().unwrap_or_default());
                        break;
                    }
                }
                Err(Stop::Invalid) => {
                    // Go on after the point of failure, so that nothing
                    // inside a broken value is taken for the answer.
                    i = i.max(p.i);
                    continue;
                }
            }
        }
        i += 1;
    }
    let mut distinct: Vec<(String, J)> = Vec::new();
    for (source, v) in values {
        if !distinct.iter().any(|(s, _)| *s == source) {
            distinct.push((source, v));
        }
    }
    match (distinct.len(), truncated) {
        (_, Some(pairs)) => {
            if distinct.is_empty() {
                Ok(Found::Truncated(pairs))
            } else {
                Err(err(ParseErrorKind::Truncated))
            }
        }
        (1, None) => Ok(Found::Value(distinct.swap_remove(0).1)),
        (0, None) if looks_like_refusal(&text) => Err(err(ParseErrorKind::Refusal)),
        (0, None) => Err(err(ParseErrorKind::NoJson)),
        (n, None) => Err(err(ParseErrorKind::Ambiguous { values: n })),
    }
}

/// The JSON value a reply carries, written back as compact JSON in the
/// judge's key order (repairs applied, bare verdict words quoted); `None`
/// when the reply holds no complete JSON value. Read by the same readers,
/// it gives the same result as the reply itself.
pub(crate) fn canonical(raw: &str) -> Option<String> {
    fn write(v: &J, out: &mut String) {
        match v {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Number(x, written) => {
                if serde_json::from_str::<serde_json::Number>(written).is_ok() {
                    out.push_str(written);
                } else {
                    out.push_str(&serde_json::to_string(x).unwrap_or_else(|_| "null".into()));
                }
            }
            J::String(s) | J::Word(s) => {
                out.push_str(&serde_json::to_string(s).unwrap_or_default());
            }
            J::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            J::Object(pairs) => {
                out.push('{');
                for (i, (k, item)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push(':');
                    write(item, out);
                }
                out.push('}');
            }
        }
    }
    match extract(raw).ok()? {
        Found::Value(v) => {
            let mut out = String::new();
            write(&v, &mut out);
            Some(out)
        }
        Found::Truncated(_) => None,
    }
}

/// Extracts a value that must be complete.
pub(crate) fn extract_complete(raw: &str) -> Result<J, ParseError> {
    match extract(raw)? {
        Found::Value(v) => Ok(v),
        Found::Truncated(_) => Err(ParseError::new(ParseErrorKind::Truncated, raw)),
    }
}

/// The text after the last `</think>`; `None` when a `<think>` never closes.
fn after_thinking(raw: &str) -> Option<String> {
    // ASCII lower-casing keeps byte offsets, so they index `raw` too.
    let lower = raw.to_ascii_lowercase();
    let rest = match lower.rfind("</think>") {
        Some(end) => &raw[end + "</think>".len()..],
        None => raw,
    };
    if rest.to_ascii_lowercase().contains("<think>") {
        return None;
    }
    Some(rest.to_owned())
}

/// Whether a value may be an answer: objects, and arrays of strings or objects.
fn candidate(v: &J) -> bool {
    match v {
        J::Object(_) => true,
        J::Array(items) => {
            !items.is_empty()
                && items
                    .iter()
                    .all(|i| matches!(i, J::String(_) | J::Object(_)))
        }
        _ => false,
    }
}

/// `{` followed by a key (or by nothing: cut right after it): the start of
/// an object, not a brace in prose.
fn looks_like_object(rest: &[char]) -> bool {
    let mut i = rest.iter().take_while(|c| c.is_whitespace()).count();
    match rest.get(i) {
        None | Some('"' | '\'' | '“' | '‘') => true,
        Some(c) if c.is_ascii_alphabetic() || *c == '_' => {
            while rest
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            rest[i..]
                .iter()
                .find(|c| !c.is_whitespace())
                .is_none_or(|c| *c == ':')
        }
        Some(_) => false,
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

/// Why a parse stopped.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    /// The input ended inside the value.
    End,
    /// Not JSON, even repaired.
    Invalid,
}

/// Deeper nesting than this is refused, so no reply can exhaust the stack.
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    s: &'a [char],
    i: usize,
    /// The top-level object's complete pairs, kept for a cut-off reply.
    partial: Option<Vec<(String, J)>>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn at(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }

    /// Skips whitespace and comments.
    fn ws(&mut self) -> Result<(), Stop> {
        loop {
            match (self.peek(), self.at(1)) {
                (Some(c), _) if c.is_whitespace() => self.i += 1,
                (Some('/'), Some('/')) => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                (Some('/'), Some('*')) => {
                    self.i += 2;
                    loop {
                        match (self.peek(), self.at(1)) {
                            (Some('*'), Some('/')) => {
                                self.i += 2;
                                break;
                            }
                            (None, _) => return Err(Stop::End),
                            _ => self.i += 1,
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<J, Stop> {
        if depth > MAX_DEPTH {
            return Err(Stop::Invalid);
        }
        self.ws()?;
        match self.peek() {
            None => Err(Stop::End),
            Some('{') => self.object(depth),
            Some('[') => self.array(depth),
            Some(q) if opening_quote(q).is_some() => self.string().map(J::String),
            Some(c) if c == '-' || c == '.' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.word(),
            Some(_) => Err(Stop::Invalid),
        }
    }

    fn object(&mut self, depth: usize) -> Result<J, Stop> {
        self.i += 1;
        let top = depth == 0;
        let mut pairs: Vec<(String, J)> = Vec::new();
        let mut done: Vec<(String, J)> = Vec::new();
        loop {
            if top {
                self.partial = Some(done.clone());
            }
            self.ws()?;
            match self.peek() {
                None => return Err(Stop::End),
                Some('}') => {
                    self.i += 1;
                    return Ok(J::Object(pairs));
                }
                _ => {}
            }
            let key = self.key()?;
            self.ws()?;
            match self.peek() {
                None => return Err(Stop::End),
                Some(':') => self.i += 1,
                Some(_) => return Err(Stop::Invalid),
            }
            let value = match self.value(depth + 1) {
                Ok(v) => v,
                Err(e) => {
                    if top && e == Stop::End {
                        self.partial = Some(done);
                    }
                    return Err(e);
                }
            };
            pairs.push((key.clone(), value.clone()));
            self.ws()?;
            match self.peek() {
                None => return Err(Stop::End),
                Some(',') => {
                    self.i += 1;
                    done.push((key, value));
                }
                Some('}') => {}
                Some(_) => return Err(Stop::Invalid),
            }
        }
    }

    fn key(&mut self) -> Result<String, Stop> {
        match self.peek() {
            None => Err(Stop::End),
            Some(q) if opening_quote(q).is_some() => self.string(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let start = self.i;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.i += 1;
                }
                Ok(self.s[start..self.i].iter().collect())
            }
            Some(_) => Err(Stop::Invalid),
        }
    }

    fn array(&mut self, depth: usize) -> Result<J, Stop> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.ws()?;
            match self.peek() {
                None => return Err(Stop::End),
                Some(']') => {
                    self.i += 1;
                    return Ok(J::Array(items));
                }
                _ => {}
            }
            items.push(self.value(depth + 1)?);
            self.ws()?;
            match self.peek() {
                None => return Err(Stop::End),
                Some(',') => self.i += 1,
                Some(']') => {}
                // A missing comma between two complete items.
                Some(c) if c == '{' || c == '[' || opening_quote(c).is_some() => {}
                Some(c) if c == '-' || c.is_ascii_digit() || c.is_ascii_alphabetic() => {}
                Some(_) => return Err(Stop::Invalid),
            }
        }
    }

    fn string(&mut self) -> Result<String, Stop> {
        let open = self.peek().ok_or(Stop::End)?;
        let close = opening_quote(open).ok_or(Stop::Invalid)?;
        self.i += 1;
        let mut out = String::new();
        loop {
            let c = self.peek().ok_or(Stop::End)?;
            self.i += 1;
            if c == close {
                return Ok(out);
            }
            if c != '\\' {
                // Raw newlines, tabs and other quote marks are kept as written.
                out.push(c);
                continue;
            }
            let e = self.peek().ok_or(Stop::End)?;
            self.i += 1;
            match e {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                '/' => out.push('/'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'u' => out.push(self.unicode_escape()?),
                // The escaped delimiter of a single- or smart-quoted string.
                e if e == close && close != '"' => out.push(e),
                // An invalid escape: kept as the text it is.
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }

    fn unicode_escape(&mut self) -> Result<char, Stop> {
        let hex = |p: &mut Self| -> Result<u32, Stop> {
            let mut n = 0u32;
            for _ in 0..4 {
                let d = p
                    .peek()
                    .ok_or(Stop::End)?
                    .to_digit(16)
                    .ok_or(Stop::Invalid)?;
                n = n * 16 + d;
                p.i += 1;
            }
            Ok(n)
        };
        let first = hex(self)?;
        if (0xD800..0xDC00).contains(&first) {
            if self.peek() == Some('\\') && self.at(1) == Some('u') {
                self.i += 2;
                let second = hex(self)?;
                if (0xDC00..0xE000).contains(&second) {
                    let c = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                    return char::from_u32(c).ok_or(Stop::Invalid);
                }
            }
            return Err(Stop::Invalid);
        }
        char::from_u32(first).ok_or(Stop::Invalid)
    }

    fn number(&mut self) -> Result<J, Stop> {
        let start = self.i;
        if self.peek() == Some('-') {
            self.i += 1;
        }
        let int_start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let int_digits = self.i - int_start;
        if int_digits > 1 && self.s[int_start] == '0' {
            return Err(Stop::Invalid);
        }
        let mut frac_digits = 0;
        if self.peek() == Some('.') {
            self.i += 1;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
                frac_digits += 1;
            }
            if frac_digits == 0 {
                // "1." or "...": not a number (elided lists are not repaired).
                return Err(if self.peek().is_none() {
                    Stop::End
                } else {
                    Stop::Invalid
                });
            }
        }
        if int_digits == 0 && frac_digits == 0 {
            return Err(if self.peek().is_none() {
                Stop::End
            } else {
                Stop::Invalid
            });
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.i += 1;
            if matches!(self.peek(), Some('+' | '-')) {
                self.i += 1;
            }
            let exp_start = self.i;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
            if self.i == exp_start {
                return Err(if self.peek().is_none() {
                    Stop::End
                } else {
                    Stop::Invalid
                });
            }
        }
        if self.peek().is_none() {
            // A number at the very end of the input may have been cut.
            return Err(Stop::End);
        }
        let raw: String = self.s[start..self.i].iter().collect();
        let parsed = if raw.starts_with('.') || raw.starts_with("-.") {
            raw.replacen('.', "0.", 1).parse::<f64>()
        } else {
            raw.parse::<f64>()
        };
        match parsed {
            Ok(x) if x.is_finite() => Ok(J::Number(x, raw)),
            _ => Err(Stop::Invalid),
        }
    }

    fn word(&mut self) -> Result<J, Stop> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            self.i += 1;
        }
        if self.peek().is_none() {
            return Err(Stop::End);
        }
        let word: String = self.s[start..self.i].iter().collect();
        Ok(match word.as_str() {
            "true" | "True" => J::Bool(true),
            "false" | "False" => J::Bool(false),
            "null" | "None" => J::Null,
            w if Verdict::from_label(w).is_some() => J::Word(word),
            "NaN" | "nan" | "Infinity" | "inf" | "-Infinity" => J::Word(word),
            _ => return Err(Stop::Invalid),
        })
    }
}

/// The closing quote for an opening one: `"`, `'`, and smart quotes.
fn opening_quote(c: char) -> Option<char> {
    match c {
        '"' => Some('"'),
        '\'' => Some('\''),
        '“' => Some('”'),
        '‘' => Some('’'),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> J {
        match extract(raw).unwrap_or_else(|e| panic!("{raw:?}: {e}")) {
            Found::Value(v) => v,
            Found::Truncated(p) => panic!("{raw:?}: truncated, pairs {p:?}"),
        }
    }

    fn kind(raw: &str) -> &'static str {
        match extract(raw) {
            Err(e) => e.kind.name(),
            Ok(Found::Truncated(_)) => "truncated",
            Ok(Found::Value(v)) => panic!("{raw:?} was accepted: {v:?}"),
        }
    }

    fn obj(pairs: &[(&str, J)]) -> J {
        J::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    fn s(x: &str) -> J {
        J::String(x.into())
    }

    #[test]
    fn plain_fenced_prose_and_thinking() {
        assert_eq!(ok(r#"{"a":"x"}"#), obj(&[("a", s("x"))]));
        assert_eq!(ok("```json\n{\"a\":\"x\"}\n```"), obj(&[("a", s("x"))]));
        assert_eq!(
            ok("``json {\"a\":\"x\"}"),
            obj(&[("a", s("x"))]),
            "a malformed fence"
        );
        assert_eq!(
            ok("Sure! Here it is: {\"a\":\"x\"}. Done."),
            obj(&[("a", s("x"))])
        );
        assert_eq!(
            ok("<think>{\"a\":\"y\"} score 0.2</think>\n{\"a\":\"x\"}"),
            obj(&[("a", s("x"))])
        );
        assert_eq!(
            ok("<|im_start|>assistant\n<answer>{\"a\":\"x\"}</answer><|im_end|>"),
            obj(&[("a", s("x"))])
        );
        assert_eq!(
            ok("[INST] grade [/INST] {\"a\":\"x\"}"),
            obj(&[("a", s("x"))])
        );
    }

    #[test]
    fn one_meaning_repairs() {
        assert_eq!(
            ok("{\"a\":[\"x\",\"y\",],}"),
            obj(&[("a", J::Array(vec![s("x"), s("y")]))])
        );
        assert_eq!(
            ok("{\"a\":[\"x\" \"y\"]}"),
            obj(&[("a", J::Array(vec![s("x"), s("y")]))])
        );
        assert_eq!(ok("{'a': 'it\\'s'}"), obj(&[("a", s("it's"))]));
        assert_eq!(
            ok("{\"a\": True, \"b\": None}"),
            obj(&[("a", J::Bool(true)), ("b", J::Null)])
        );
        assert_eq!(
            ok("{\"a\": \"x\" // note\n /* more */}"),
            obj(&[("a", s("x"))])
        );
        assert_eq!(ok("{\"a\": \"line\none\"}"), obj(&[("a", s("line\none"))]));
        assert_eq!(
            ok(r#"{"a": "cost \$5, \sigma, it\'s"}"#),
            obj(&[("a", s(r"cost \$5, \sigma, it\'s"))])
        );
        assert_eq!(ok("{“a”: “x”}"), obj(&[("a", s("x"))]));
        assert_eq!(
            ok("{a: \"x\", b_2: \"y\"}"),
            obj(&[("a", s("x")), ("b_2", s("y"))])
        );
        assert_eq!(
            ok("{\"verdict\": SUPPORTED}"),
            obj(&[("verdict", J::Word("SUPPORTED".into()))])
        );
        assert_eq!(
            ok("{\"s\": .8}"),
            obj(&[("s", J::Number(0.8, ".8".into()))])
        );
    }

    #[test]
    fn what_is_not_repaired() {
        assert_eq!(kind("{\"a\": [\"x\", \"y\""), "truncated");
        assert_eq!(
            kind("{\"a\": \"x\"}}"),
            "wrong_shape",
            "a stray closing brace"
        );
        assert_eq!(
            kind("{\"a\": {\"b\": \"x\"} and more"),
            "no_json",
            "no inner object of a broken one"
        );
        assert_eq!(kind("{\"verdict: \"supported\"}"), "no_json");
        assert_eq!(kind("{\"claims\": [\"He said \"hi\" loudly\"]}"), "no_json");
        assert_eq!(kind("{\"claims\": [\"a\", \"b\", ...]}"), "no_json");
        assert_eq!(kind("{\"v\": maybe}"), "no_json");
    }

    #[test]
    fn copies_and_rivals() {
        assert_eq!(
            ok("{\"a\":\"x\"}\nAgain: {\"a\":\"x\"}"),
            obj(&[("a", s("x"))])
        );
        assert_eq!(kind("{\"a\":\"x\"} or {\"a\":\"y\"}"), "ambiguous");
        assert_eq!(
            kind("{\"a\":\"x\"} and {\"a\": \"x\"}"),
            "ambiguous",
            "not byte-identical"
        );
        assert_eq!(ok("As [1] shows: {\"a\":\"x\"}"), obj(&[("a", s("x"))]));
    }

    #[test]
    fn refusals_of_the_broken() {
        assert_eq!(kind(""), "empty");
        assert_eq!(kind("<think>only thinking</think>"), "empty");
        assert_eq!(kind("<think>never ends {\"a\":\"x\"}"), "truncated");
        assert_eq!(kind("no json here, score 0.9"), "no_json");
        assert_eq!(kind("I'm sorry, I can't help with that."), "refusal");
    }

    #[test]
    fn truncated_objects_keep_their_finished_pairs() {
        match extract("{\"verdict\": \"supported\", \"evidence\": \"the pass").unwrap() {
            Found::Truncated(pairs) => {
                assert_eq!(pairs, vec![("verdict".to_string(), s("supported"))])
            }
            other => panic!("{other:?}"),
        }
        match extract("{\"reasoning\": \"ok\", \"score\": 0.8").unwrap() {
            Found::Truncated(pairs) => assert_eq!(pairs, vec![("reasoning".to_string(), s("ok"))]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowing() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(extract(&deep).is_err());
    }
}
