//! A one-word answer, read where the question asked for it: the
//! probability of each answer word from the judge's token probabilities
//! where the server returned them, else the word it wrote.
//!
//! **Where.** Every question says where its answer word stands
//! ([`AnswerAt`]):
//!
//! - [`AnswerAt::First`], the reply's first word (ragaliq's own questions:
//!   "Answer "yes" or "no"", "Answer with the number first"). Before it only
//!   blanks, quotes (`"`, `'`, `“`, `”`, `‘`, `’`, `«`, `»`, `` ` ``),
//!   markdown `*` and `_`, one reasoning block `<think>…</think>` (a
//!   reasoning model's, read nowhere: a "yes" inside it is never the
//!   answer) and one lead-in, `Answer:`, `Final answer:` or `Verdict:` (any
//!   case), are passed over: `Yes`, ` yes.`, `**No**`, `_Yes_`, `"No`,
//!   `Answer: No`, `Final answer: Yes`, `Verdict: No`,
//!   `<think>\n\n</think>\n\nYes`. A block that never closes (a reply cut
//!   in its reasoning) is refused as truncated.
//! - [`AnswerAt::After`]`(marker)`, the first word after the last `marker`
//!   in the reply (ASCII case ignored), for a question that asks for the
//!   reason first and the answer last (`… Answer: no`). After the marker the
//!   same blanks, quotes and `*` are passed over.
//!
//! Nothing else is passed over, and nowhere else is looked at: an answer
//! word in the judge's reason ("The reply says 'yes, full refund', which
//! breaks the rule. No.") is never read as its answer.
//!
//! **The word written there** runs over letters and digits (joined by `-`
//! or `_` inside a word, by `.` or `,` between digits: `no_evidence`,
//! `4.5`). It is an answer word when its letters, lower-cased, are the
//! word's or one of its listed spellings ([`AnswerWords::spelled`]): `Yes,`
//! is `yes`, `NO.` is `no`; `In` is not `incorrect`, `Yesterday` is not
//! `yes`, and `supports` is `support` only where listed.
//!
//! **Token probabilities** are read at the token that holds the word's
//! first character (what comes before it in that token must hold no letter
//! or digit). There a token counts for an answer word when:
//!
//! - its letters spell the word or a listed spelling, in any case, spacing
//!   and punctuation (`Yes`, ` yes`, `"no`, `NO.`, `.no`); or
//! - it is the token written and the word written is that answer word: the
//!   first piece of a word the tokenizer split (`contr`+`ad`+`ict` for
//!   `contradict`), which the next tokens written complete.
//!
//! The written token counts only for the word written: `Yes` continued into
//! `Yesterday` counts for no answer. An alternative that is only a piece of
//! an answer word (`contr` where `support` was written) counts for no word:
//! what the tokenizer would have written after it is not known, and it is
//! never guessed. The answer words' probabilities there are summed per word
//! and renormalised over the answer words.
//!
//! When the word written there is an answer word, that position is read.
//! When it is not, the probabilities there still give an answer if the
//! answer words hold at least [`MIN_ANSWER_MASS`] of them (the judge wrote
//! "The" with "Yes" and "No" close behind); below that the judge was
//! writing something else, its P(yes) would be a ratio of two tiny
//! numbers, and the reply is refused ([`ParseErrorKind::NotYesNo`], carrying
//! it). A reply without the marker an [`AnswerAt::After`] question asks for
//! is refused too ([`ParseErrorKind::NoAnswerMarker`]).
//!
//! **Without probabilities** (a server that returns none, Anthropic,
//! `strategy = "word"`) the word written at the same place decides, with
//! probability 1, or the reply is refused. Both readings look at one place,
//! so they give the same word or the same refusal; they differ only where
//! the judge wrote no answer word there and the answer words hold most of
//! the probability at that token (read from the probabilities, refused
//! from the word). Where the token probabilities do not show the reply's
//! text at the answer (a server that returned fewer positions than it
//! wrote, tokens that are not the text), the word written decides, and the
//! reading says so.

use super::{ParseError, ParseErrorKind};
use crate::core::TokenLogprob;

/// The share of a position's probability the answer words must hold for an
/// answer to be read there when the word written is not one of them.
pub const MIN_ANSWER_MASS: f64 = 0.5;

/// Where a question's answer word stands in the judge's reply (see the
/// module).
///
/// ```
/// use ragaliq::parse::{AnswerAt, AnswerWords, answer_word};
/// let words = AnswerWords::new(["yes", "no"]);
/// let reply = "The reply says 'yes, full refund', which breaks the rule.\nAnswer: no";
/// // Asked for the reason first and "Answer: <word>" last: read there.
/// let read = answer_word(reply, None, &words, &AnswerAt::after("Answer:")).unwrap();
/// assert_eq!(read.likeliest(), 1);
/// assert_eq!(read.reason, "The reply says 'yes, full refund', which breaks the rule.");
/// // Asked for the word first: "The" is no answer, and the "yes" in the
/// // reason is never read instead.
/// assert!(answer_word(reply, None, &words, &AnswerAt::First).is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AnswerAt {
    /// The reply's first word (after blanks, quotes, markdown `*` and `_`,
    /// a `<think>…</think>` block and one `Answer:`, `Final answer:` or
    /// `Verdict:` lead-in): the question asks for the answer first.
    #[default]
    First,
    /// The first word after the last occurrence of the marker (ASCII case
    /// ignored): the question asks for its reason first and ends with, for
    /// example, `Answer: <word>`.
    After(String),
}

impl AnswerAt {
    /// The answer stands after `marker` (as the prompt sets it, e.g.
    /// `"Answer:"`).
    #[must_use]
    pub fn after(marker: impl Into<String>) -> AnswerAt {
        AnswerAt::After(marker.into())
    }

    /// Where, in words: "the reply's first word", "the word after
    /// `Answer:`".
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            AnswerAt::First => "the reply's first word".to_owned(),
            AnswerAt::After(marker) => format!("the word after `{marker}`"),
        }
    }

    /// Whether a reply cut at its token limit still holds its answer (it is
    /// read at the start).
    #[must_use]
    pub fn at_start(&self) -> bool {
        matches!(self, AnswerAt::First)
    }

    /// Why this place cannot be read, if it cannot: a marker with nothing
    /// to find.
    ///
    /// # Errors
    ///
    /// An [`AnswerAt::After`] marker that is empty or only blanks.
    pub fn check(&self) -> Result<(), String> {
        match self {
            AnswerAt::After(marker) if marker.trim().is_empty() => {
                Err("an answer read after a marker needs a marker that is not blank (for example `Answer:`)".to_owned())
            }
            _ => Ok(()),
        }
    }
}

/// The words a question is answered with (lower case), each with the
/// spellings that count for it besides itself.
///
/// ```
/// use ragaliq::parse::AnswerWords;
/// let words = AnswerWords::new(["support", "contradict", "neither"])
///     .spelled("support", ["supports", "supported"]);
/// assert_eq!(words.which("Supported."), Some(0));
/// assert_eq!(words.which("contradicted"), None, "not listed");
/// assert_eq!(words.which("contr"), None, "a piece is no word");
/// assert!(words.check().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerWords {
    words: Vec<String>,
    /// Per word, its other spellings.
    spellings: Vec<Vec<String>>,
    /// Spellings given for a word not among `words` (an error, said by
    /// [`check`](Self::check)).
    stray: Vec<String>,
}

impl AnswerWords {
    /// The answer words, in the order probabilities are given.
    pub fn new<I, S>(words: I) -> AnswerWords
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let words: Vec<String> = words.into_iter().map(|w| w.into().to_lowercase()).collect();
        AnswerWords {
            spellings: vec![Vec::new(); words.len()],
            words,
            stray: Vec::new(),
        }
    }

    /// Other spellings that count for `word` (inflections a prompt's
    /// wording invites, such as `supports` and `supported` for `support`).
    #[must_use]
    pub fn spelled<I, S>(mut self, word: &str, spellings: I) -> AnswerWords
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let word = word.to_lowercase();
        let spellings = spellings.into_iter().map(|s| s.into().to_lowercase());
        match self.words.iter().position(|w| *w == word) {
            Some(i) => self.spellings[i].extend(spellings),
            None => self.stray.push(word),
        }
        self
    }

    /// The words, in order.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(String::as_str)
    }

    /// How many words.
    #[must_use]
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The answer word whose letters (or a listed spelling's) `text`'s
    /// letters are, in any case, spacing and punctuation: `" Yes."` is
    /// `yes`. `None` for no word, or for two.
    #[must_use]
    pub fn which(&self, text: &str) -> Option<usize> {
        let key = letters(text);
        if key.is_empty() {
            return None;
        }
        let mut found = None;
        for (i, word) in self.words.iter().enumerate() {
            let spells = std::iter::once(word)
                .chain(&self.spellings[i])
                .any(|s| letters(s) == key);
            if spells {
                if found.is_some() {
                    return None;
                }
                found = Some(i);
            }
        }
        found
    }

    /// Why these words cannot be read apart, if they cannot.
    ///
    /// # Errors
    ///
    /// No word; a word with no letter or digit; two words (or spellings)
    /// with the same letters; spellings given for a word not listed.
    pub fn check(&self) -> Result<(), String> {
        if self.words.is_empty() {
            return Err("no answer word".to_owned());
        }
        if let Some(w) = self.stray.first() {
            return Err(format!(
                "spellings are given for `{w}`, which is not an answer word ({})",
                self.words.join(", ")
            ));
        }
        let mut seen: Vec<(String, &str)> = Vec::new();
        for (i, word) in self.words.iter().enumerate() {
            for s in std::iter::once(word).chain(&self.spellings[i]) {
                let key = letters(s);
                if key.is_empty() {
                    return Err(format!("`{s}` has no letter or digit to read"));
                }
                if let Some((_, other)) = seen.iter().find(|(k, o)| *k == key && *o != word) {
                    return Err(format!(
                        "`{s}` spells `{other}` and `{word}` alike: one reply would count for both"
                    ));
                }
                seen.push((key, word));
            }
        }
        Ok(())
    }
}

/// A one-word answer, as read (see the module).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct WordAnswer {
    /// The probability of each answer word, in the order asked, summing to
    /// 1: from the token probabilities, or 1 for the word written.
    pub probabilities: Vec<f64>,
    /// Whether `probabilities` come from token probabilities (else from the
    /// word written).
    pub from_probabilities: bool,
    /// The share of the position's probability the answer words held (1
    /// for the word written).
    pub mass: f64,
    /// What was read, for recordings and messages.
    pub read: String,
    /// What the judge wrote besides its answer: the first line after the
    /// word for [`AnswerAt::First`], what comes before the marker for
    /// [`AnswerAt::After`] (blanks run together); may be empty.
    pub reason: String,
}

impl WordAnswer {
    /// The likeliest answer word's index (the first on a tie).
    #[must_use]
    pub fn likeliest(&self) -> usize {
        let mut best = 0;
        for (i, p) in self.probabilities.iter().enumerate() {
            if *p > self.probabilities[best] {
                best = i;
            }
        }
        best
    }
}

/// A yes/no answer, as read.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct YesNo {
    /// P(yes), in [0, 1]: from the token probabilities, or 1 / 0 from the
    /// word written.
    pub p_yes: f64,
    /// Whether `p_yes` comes from token probabilities (else from the word).
    pub from_probabilities: bool,
    /// What was read, for recordings and messages: `P(yes) 0.93 from the
    /// first token's 10 likeliest (yes 0.91, no 0.07)` or `the word
    /// written: yes (the server returned no token probabilities)`.
    pub read: String,
}

/// The letters and digits of a token or word, lower-cased: `" Yes."` is
/// `yes`.
fn letters(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// What may stand before an answer word: blanks, quotes, markdown `*` and
/// `_`.
fn lead_in(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '“' | '”' | '‘' | '’' | '«' | '»' | '`' | '*' | '_'
        )
}

fn skip_lead_in(text: &str, from: usize) -> usize {
    text[from..]
        .char_indices()
        .find(|(_, c)| !lead_in(*c))
        .map_or(text.len(), |(i, _)| from + i)
}

/// The lead-ins a [`AnswerAt::First`] answer may carry, one of them once
/// (longest first, so `Final answer:` is not read as `Final`).
const LEAD_IN_WORDS: [&str; 3] = ["final answer:", "answer:", "verdict:"];

/// A model's reasoning block, passed over whole before a first-word answer
/// (as the JSON parser drops it): the answer is never read inside it.
const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";

/// Where a reasoning block that opens at `start` ends (just past its
/// close); `Some(start)` when none opens there; `None` when one opens and
/// never closes (a reply cut in its reasoning).
fn past_reasoning(text: &str, start: usize) -> Option<usize> {
    let opens = text
        .get(start..start + THINK_OPEN.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(THINK_OPEN));
    if !opens {
        return Some(start);
    }
    // ASCII lower-casing keeps every byte where it was.
    let close = text[start..].to_ascii_lowercase().find(THINK_CLOSE)?;
    Some(start + close + THINK_CLOSE.len())
}

/// Whether `reply` opens a reasoning block before a first-word answer and
/// never closes it: a reply cut at its token limit inside its reasoning,
/// which room for the block would have let through.
#[must_use]
pub(crate) fn cut_in_reasoning(reply: &str) -> bool {
    past_reasoning(reply, skip_lead_in(reply, 0)).is_none()
}

/// Where the answer stands in `text`: the byte where the marker starts
/// (for [`AnswerAt::After`]) and the byte where the word starts. `None`
/// when the marker is not in `text`.
fn place(text: &str, at: &AnswerAt) -> Option<(Option<usize>, usize)> {
    match at {
        AnswerAt::First => {
            let mut start = skip_lead_in(text, 0);
            // An unclosed block leaves the answer's place at `<think>`,
            // which is no answer word: refused, never read inside it.
            if let Some(past) = past_reasoning(text, start) {
                start = skip_lead_in(text, past);
            }
            if let Some(word) = LEAD_IN_WORDS.iter().find(|w| {
                text.get(start..start + w.len())
                    .is_some_and(|s| s.eq_ignore_ascii_case(w))
            }) {
                start = skip_lead_in(text, start + word.len());
            }
            Some((None, start))
        }
        AnswerAt::After(marker) => {
            // ASCII lower-casing keeps every byte where it was.
            let marker_at = text
                .to_ascii_lowercase()
                .rfind(&marker.to_ascii_lowercase())?;
            Some((
                Some(marker_at),
                skip_lead_in(text, marker_at + marker.len()),
            ))
        }
    }
}

/// The end of the word starting at `start`: letters and digits, `-` and
/// `_` between two of them, `.` and `,` between two digits.
fn word_end(text: &str, start: usize) -> usize {
    let chars: Vec<(usize, char)> = text[start..].char_indices().collect();
    let mut end = 0;
    for (n, &(i, c)) in chars.iter().enumerate() {
        let joins = |prev: fn(char) -> bool| {
            n > 0 && prev(chars[n - 1].1) && chars.get(n + 1).is_some_and(|(_, next)| prev(*next))
        };
        let inside = c.is_alphanumeric()
            || (matches!(c, '-' | '_') && joins(char::is_alphanumeric))
            || (matches!(c, '.' | ',') && joins(|c| c.is_ascii_digit()));
        if !inside {
            break;
        }
        end = i + c.len_utf8();
    }
    start + end
}

/// What stands at `start`, for a message: up to the next blank, at most 40
/// characters.
fn standing(text: &str, start: usize) -> String {
    text[start..]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .chars()
        .take(40)
        .collect()
}

/// The answer's place in `text`: where its word starts and ends, and the
/// marker's start.
struct Place {
    marker: Option<usize>,
    start: usize,
    end: usize,
}

impl Place {
    fn of(text: &str, at: &AnswerAt) -> Option<Place> {
        let (marker, start) = place(text, at)?;
        Some(Place {
            marker,
            start,
            end: word_end(text, start),
        })
    }

    fn word<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start..self.end]
    }

    /// What the judge wrote besides the answer (see [`WordAnswer::reason`]).
    fn reason(&self, text: &str) -> String {
        match self.marker {
            Some(marker) => text[..marker]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            None => text[self.end..]
                .trim_start_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace())
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .trim()
                .to_owned(),
        }
    }
}

/// Reads a one-word answer among `words` standing where `at` says; see the
/// module for where and how.
///
/// ```
/// use ragaliq::judge::{TokenLogprob, TopLogprob};
/// use ragaliq::parse::{AnswerAt, AnswerWords, answer_word};
/// let alt = |t: &str, p: f64| TopLogprob { token: t.into(), logprob: p.ln() };
/// let words = AnswerWords::new(["support", "contradict", "neither"]);
/// // "contradict", written in three tokens: the first one's alternatives.
/// let tokens = vec![
///     TokenLogprob {
///         token: "contr".into(),
///         logprob: 0.5f64.ln(),
///         top: vec![alt("contr", 0.5), alt("support", 0.3), alt("ne", 0.1), alt("The", 0.1)],
///     },
///     TokenLogprob { token: "ad".into(), logprob: 0.0, top: vec![] },
///     TokenLogprob { token: "ict".into(), logprob: 0.0, top: vec![] },
/// ];
/// let read = answer_word("contradict", Some(&tokens), &words, &AnswerAt::First).unwrap();
/// assert_eq!(read.likeliest(), 1);
/// // "contr" is the word written; "ne" is only a piece of a word, not read
/// // as "neither" (what would have followed it is not known).
/// assert!((read.probabilities[1] - 0.5 / 0.8).abs() < 1e-12);
/// assert!((read.mass - 0.8).abs() < 1e-12);
/// ```
///
/// # Errors
///
/// The reply has no answer word where `at` says (and no token
/// probabilities there give one), or no marker an [`AnswerAt::After`]
/// question needs.
pub fn answer_word(
    reply: &str,
    logprobs: Option<&[TokenLogprob]>,
    words: &AnswerWords,
    at: &AnswerAt,
) -> Result<WordAnswer, ParseError> {
    let Some(here) = Place::of(reply, at) else {
        // Only a marker can be missing.
        let marker = match at {
            AnswerAt::After(marker) => marker.clone(),
            AnswerAt::First => String::new(),
        };
        return Err(ParseError::new(
            ParseErrorKind::NoAnswerMarker { marker },
            reply,
        ));
    };
    let written = here.word(reply);
    let word = words.which(written);
    let refused = || {
        ParseError::new(
            if reply.trim().is_empty() {
                ParseErrorKind::Empty
            } else if at.at_start() && cut_in_reasoning(reply) {
                ParseErrorKind::Truncated
            } else {
                ParseErrorKind::NotYesNo {
                    word: standing(reply, here.start),
                }
            },
            reply,
        )
    };
    let from_word = |why: &str| -> Result<WordAnswer, ParseError> {
        let w = word.ok_or_else(refused)?;
        let mut probabilities = vec![0.0; words.len()];
        probabilities[w] = 1.0;
        Ok(WordAnswer {
            probabilities,
            from_probabilities: false,
            mass: 1.0,
            read: format!("the word written: {} ({why})", words.words[w]),
            reason: here.reason(reply),
        })
    };
    let Some(tokens) = logprobs.filter(|t| !t.is_empty()) else {
        return from_word("no token probabilities");
    };
    // The same place in the text the tokens spell: it must hold what the
    // reply holds there, else the tokens are not the reply's.
    let joined: String = tokens.iter().map(|t| t.token.as_str()).collect();
    let there = Place::of(&joined, at).filter(|p| {
        let (a, b) = (p.word(&joined), written);
        a == b
            && (!a.is_empty()
                || joined[p.start..].chars().next() == reply[here.start..].chars().next())
    });
    let Some(there) = there else {
        return from_word("the token probabilities do not show the reply's text at the answer");
    };
    // The token holding the word's first character, and what it holds
    // before it.
    let mut offset = 0;
    let mut at_token = None;
    for (i, t) in tokens.iter().enumerate() {
        let end = offset + t.token.len();
        if there.start < end {
            at_token = Some((i, offset));
            break;
        }
        offset = end;
    }
    let Some((k, token_start)) = at_token else {
        // Nothing stands there, in the tokens or the text.
        return from_word("no token stands at the answer");
    };
    if joined[token_start..there.start]
        .chars()
        .any(char::is_alphanumeric)
    {
        return from_word("the answer shares its first token with the text before it");
    }
    let position = &tokens[k];
    // The written token counts for the word written (whole, or its first
    // piece that the next tokens complete); any other alternative only for
    // an answer word it spells whole.
    let counts = |token: &str| -> Option<usize> {
        if token == position.token {
            word
        } else {
            words.which(token)
        }
    };
    let mut mass = vec![0.0f64; words.len()];
    let mut seen_written = false;
    for alt in &position.top {
        seen_written |= alt.token == position.token;
        if let Some(i) = counts(&alt.token) {
            mass[i] += alt.logprob.exp();
        }
    }
    // A server that lists no alternatives, or not the token written.
    if !seen_written && let Some(i) = word {
        mass[i] += position.logprob.exp();
    }
    let total: f64 = mass.iter().sum();
    let enough = word.is_some() || total >= MIN_ANSWER_MASS;
    if !(enough && total > 0.0 && total.is_finite()) {
        let why = format!(
            "the answer words held {total:.3} of the probability at the answer, under {MIN_ANSWER_MASS}"
        );
        return from_word(&why);
    }
    let probabilities: Vec<f64> = mass.iter().map(|m| (m / total).clamp(0.0, 1.0)).collect();
    let which_token = if k == 0 {
        "the first token".to_owned()
    } else {
        format!("token {}", k + 1)
    };
    let parts: Vec<String> = words
        .words
        .iter()
        .zip(&mass)
        .map(|(w, m)| format!("{w} {m:.3}"))
        .collect();
    let headline = if words.len() == 2 {
        format!("P({}) {:.3}", words.words[0], probabilities[0])
    } else {
        let best = probabilities
            .iter()
            .enumerate()
            .fold(0, |b, (i, p)| if *p > probabilities[b] { i } else { b });
        format!("{} {:.3}", words.words[best], probabilities[best])
    };
    Ok(WordAnswer {
        probabilities,
        from_probabilities: true,
        mass: total.min(1.0),
        read: format!(
            "{headline} from {which_token}'s {} likeliest ({})",
            position.top.len().max(1),
            parts.join(", ")
        ),
        reason: here.reason(reply),
    })
}

/// How many of a reply's tokens, from the first, [`answer_word`] reads for
/// the answer at `at`: through the token that holds the last character of
/// the word written there (its first character, for no word). All of them
/// when the tokens do not spell the reply at its answer, or it has no
/// answer place (nothing is cut where the reading cannot be shown to stay).
///
/// A recording keeps the probabilities of these tokens only: the rest of
/// a reply (a one-word answer's reason, a score's explanation) is never
/// read from its probabilities, and keeping ten alternatives for each of
/// its tokens made a criteria exchange hundreds of lines long. Read again
/// from the tokens kept, [`answer_word`] gives the same answer, to the
/// last digit (`the_tokens_kept_read_as_all_of_them`).
pub(crate) fn tokens_read(reply: &str, tokens: &[TokenLogprob], at: &AnswerAt) -> usize {
    let all = tokens.len();
    let Some(here) = Place::of(reply, at) else {
        return all;
    };
    let joined: String = tokens.iter().map(|t| t.token.as_str()).collect();
    let Some(there) = Place::of(&joined, at) else {
        return all;
    };
    if there.word(&joined) != here.word(reply) || there.start >= joined.len() {
        return all;
    }
    // The byte just past the word (past its first character, for none):
    // the text up to there decides where the word stands and what it is.
    let first = joined[there.start..]
        .chars()
        .next()
        .map_or(1, char::len_utf8);
    let end = there.end.max(there.start + first);
    let mut offset = 0;
    for (i, t) in tokens.iter().enumerate() {
        offset += t.token.len();
        if offset >= end {
            return i + 1;
        }
    }
    all
}

/// Reads a yes/no reply whose answer is its first word ([`answer_word`]
/// over `yes` and `no` at [`AnswerAt::First`]).
///
/// ```
/// use ragaliq::judge::{TokenLogprob, TopLogprob};
/// use ragaliq::parse::yes_no;
/// let alt = |t: &str, p: f64| TopLogprob { token: t.into(), logprob: p.ln() };
/// let tokens = vec![TokenLogprob {
///     token: "Yes".into(),
///     logprob: 0.6f64.ln(),
///     top: vec![alt("Yes", 0.6), alt("yes", 0.1), alt("No", 0.2), alt("The", 0.1)],
/// }];
/// let read = yes_no("Yes", Some(&tokens)).unwrap();
/// assert!((read.p_yes - 0.7 / 0.9).abs() < 1e-12);
/// assert!(read.from_probabilities);
/// // No probabilities: the word.
/// assert_eq!(yes_no("No.", None).unwrap().p_yes, 0.0);
/// assert_eq!(yes_no("Maybe", None).unwrap_err().kind.name(), "not_yes_no");
/// ```
///
/// # Errors
///
/// Neither the probabilities nor the word say yes or no at the reply's
/// first word.
pub fn yes_no(reply: &str, logprobs: Option<&[TokenLogprob]>) -> Result<YesNo, ParseError> {
    let read = answer_word(reply, logprobs, &yes_or_no(), &AnswerAt::First)?;
    Ok(YesNo::from_read(read))
}

impl YesNo {
    /// A reading over [`yes_or_no`]'s words as P(yes).
    pub(crate) fn from_read(read: WordAnswer) -> YesNo {
        YesNo {
            p_yes: read.probabilities.first().copied().unwrap_or(0.0),
            from_probabilities: read.from_probabilities,
            read: read.read,
        }
    }
}

/// `yes` and `no`, the words of ragaliq's short questions.
#[must_use]
pub fn yes_or_no() -> AnswerWords {
    AnswerWords::new(["yes", "no"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::TopLogprob;

    fn token(written: &str, alts: &[(&str, f64)]) -> TokenLogprob {
        TokenLogprob {
            token: written.into(),
            logprob: alts
                .iter()
                .find(|(t, _)| *t == written)
                .map_or(-1.0, |(_, p)| p.ln()),
            top: alts
                .iter()
                .map(|(t, p)| TopLogprob {
                    token: (*t).into(),
                    logprob: p.ln(),
                })
                .collect(),
        }
    }

    fn first(
        reply: &str,
        tokens: Option<&[TokenLogprob]>,
        words: &[&str],
    ) -> Result<WordAnswer, ParseError> {
        answer_word(
            reply,
            tokens,
            &AnswerWords::new(words.iter().copied()),
            &AnswerAt::First,
        )
    }

    /// A recording keeps only the tokens [`tokens_read`] counts; read
    /// again from them, every reply reads as it did from all its tokens
    /// (the same words, probabilities, mass, reason and message), for every
    /// way of cutting it into tokens and each place an answer is read at.
    #[test]
    fn the_tokens_kept_read_as_all_of_them() {
        let replies = [
            "no\nThe response does not meet the criteria because it does not cite the policy number.",
            "Yes",
            " yes. The passage says so.",
            "**No** - it contradicts passage 2",
            "<think>\n\n</think>\n\nYes, it is supported",
            "Answer: No\nbecause",
            "The passage says 'yes, full refund', which breaks the rule.\nAnswer: no\n",
            "contradict, since passage 1 says 14 days",
            "4.5 out of 5: mostly meets it",
            "4\nThe response cites the policy.",
            "The\nyes",
            "Maybe",
            "",
            "é yes",
            "yes-and-no",
        ];
        let places = [AnswerAt::First, AnswerAt::after("Answer:")];
        let word_sets = [
            AnswerWords::new(["yes", "no"]),
            AnswerWords::new(["support", "contradict", "neither"]),
            AnswerWords::new(["1", "2", "3", "4", "5"]),
        ];
        let mut cut_some = 0;
        for reply in replies {
            let chars: Vec<char> = reply.chars().collect();
            for size in 1..=4 {
                // The reply in tokens of `size` characters, each with the
                // likeliest alternatives a server lists.
                let tokens: Vec<TokenLogprob> = chars
                    .chunks(size)
                    .map(|c| {
                        let t: String = c.iter().collect();
                        token(
                            &t,
                            &[(t.as_str(), 0.6), ("No", 0.2), ("yes", 0.1), ("4", 0.05)],
                        )
                    })
                    .collect();
                for at in &places {
                    let n = tokens_read(reply, &tokens, at);
                    assert!(n <= tokens.len());
                    if n < tokens.len() {
                        cut_some += 1;
                    }
                    for words in &word_sets {
                        let full = answer_word(reply, Some(&tokens), words, at);
                        let kept = answer_word(reply, Some(&tokens[..n]), words, at);
                        assert_eq!(
                            kept, full,
                            "{reply:?} in tokens of {size}, {at:?}, kept {n}"
                        );
                    }
                }
            }
        }
        assert!(cut_some > 40, "the reason's tokens are dropped: {cut_some}");
        // The criteria exchange of the issue: "no", then the reason.
        let reply = "no\nThe response does not meet the criteria.";
        let tokens = vec![
            token("no", &[("no", 0.5), ("No", 0.3), ("yes", 0.1)]),
            token("\n", &[("\n", 0.9)]),
            token("The", &[("The", 0.9)]),
            token(" response", &[(" response", 0.9)]),
        ];
        assert_eq!(tokens_read(reply, &tokens, &AnswerAt::First), 1);
    }

    #[test]
    fn reasoning_before_the_answer_and_common_lead_ins_are_passed_over() {
        // Qwen3 with `/no_think` on a server that does not strip the empty
        // block; a closed block with reasoning in it is passed over whole
        // (a "yes" inside it is never read).
        for (reply, p_yes) in [
            ("<think>\n\n</think>\n\nYes", 1.0),
            ("<think>The passage says no refunds. yes?</think>\nNo.", 0.0),
            ("<THINK></THINK>yes", 1.0),
            ("_Yes_", 1.0),
            ("__No__", 0.0),
            ("Final answer: Yes", 1.0),
            ("**Final Answer:** no", 0.0),
            ("Verdict: No", 0.0),
            ("verdict: yes.", 1.0),
            ("Answer: Yes", 1.0),
        ] {
            let r = yes_no(reply, None).unwrap_or_else(|e| panic!("{reply:?}: {e}"));
            assert_eq!(r.p_yes, p_yes, "{reply:?}");
        }
        // Read from the token probabilities at the answer, after the block.
        let tokens = [
            token("<think>", &[("<think>", 1.0)]),
            token("\n\n", &[("\n\n", 1.0)]),
            token("</think>", &[("</think>", 1.0)]),
            token("\n\n", &[("\n\n", 1.0)]),
            token("Yes", &[("Yes", 0.7), ("No", 0.3)]),
        ];
        let r = yes_no("<think>\n\n</think>\n\nYes", Some(&tokens)).unwrap();
        assert!(r.from_probabilities, "{}", r.read);
        assert!((r.p_yes - 0.7).abs() < 1e-12, "{}", r.read);
        assert!(r.read.contains("token 5"), "{}", r.read);
        // Still refused: a block that never closes (the reply was cut in the
        // reasoning), nothing after the block, and a lead-in once only.
        for reply in [
            "<think>\nThe passage",
            "<think>yes</think>",
            "Final answer: Verdict: yes",
            "Answer: Answer: yes",
            "The answer: yes",
        ] {
            assert!(yes_no(reply, None).is_err(), "{reply:?} was read");
        }
    }

    #[test]
    fn variants_of_the_words_are_summed_and_renormalised() {
        let t = token(
            " Yes",
            &[
                (" Yes", 0.5),
                ("yes", 0.1),
                ("YES.", 0.05),
                ("\"No", 0.2),
                ("Maybe", 0.15),
            ],
        );
        let r = yes_no(" Yes", Some(&[t])).unwrap();
        assert!((r.p_yes - 0.65 / 0.85).abs() < 1e-12, "{}", r.p_yes);
        assert!(r.read.starts_with("P(yes) 0.765"), "{}", r.read);
    }

    #[test]
    fn a_leading_quote_or_space_is_passed_over() {
        let tokens = [
            token("\"", &[("\"", 0.9), ("Yes", 0.1)]),
            token("No", &[("No", 0.8), ("Yes", 0.2)]),
        ];
        let r = yes_no("\"No", Some(&tokens)).unwrap();
        assert!((r.p_yes - 0.2).abs() < 1e-12);
        assert!(r.read.contains("token 2"), "{}", r.read);
    }

    #[test]
    fn missing_alternatives_fall_back_to_the_token_then_the_word() {
        // The written token alone (no alternatives listed): it decides.
        let bare = TokenLogprob {
            token: "no".into(),
            logprob: -0.1,
            top: vec![],
        };
        assert_eq!(yes_no("no", Some(&[bare])).unwrap().p_yes, 0.0);
        // The written token not among the alternatives: it counts.
        let unlisted = token("Yes", &[("The", 0.7), ("A", 0.2)]);
        let r = yes_no("Yes", Some(&[unlisted])).unwrap();
        assert_eq!((r.p_yes, r.from_probabilities), (1.0, true));
        // A word split over tokens: its first piece, completed by the next,
        // counts for it.
        let split = [
            token("Ye", &[("Ye", 0.7), ("The", 0.2)]),
            token("s", &[("s", 1.0)]),
        ];
        let r = yes_no("Yes", Some(&split)).unwrap();
        assert_eq!((r.p_yes, r.from_probabilities), (1.0, true));
        // Tokens that are not the reply's text: the word written.
        let other = token("Ye", &[("Ye", 0.7), ("The", 0.2)]);
        let r = yes_no("Yes", Some(&[other])).unwrap();
        assert_eq!((r.p_yes, r.from_probabilities), (1.0, false));
        assert!(
            r.read.contains("do not show the reply's text"),
            "{}",
            r.read
        );
        // And neither: an error carrying the reply.
        let e = yes_no("The claim", Some(&[token("The", &[("The", 0.7)])])).unwrap_err();
        assert_eq!((e.kind.name(), e.raw.as_str()), ("not_yes_no", "The claim"));
        // A server that returns none: the word, and says so.
        let r = yes_no("Yes, it is.", None).unwrap();
        assert!(r.read.contains("no token probabilities"), "{}", r.read);
        assert_eq!(yes_no("  ", None).unwrap_err().kind.name(), "empty");
    }

    #[test]
    fn probabilities_are_always_in_range() {
        for (y, n) in [(1e-300, 1e-300), (1.0, 1e-30), (0.0001, 0.9)] {
            let t = token("yes", &[("yes", y), ("no", n)]);
            let p = yes_no("yes", Some(&[t])).unwrap().p_yes;
            assert!((0.0..=1.0).contains(&p), "{p}");
        }
    }

    #[test]
    fn almost_no_probability_gives_no_verdict() {
        // A first token "The" whose alternatives list "Yes" at -9.2 and no
        // "No" read as P(yes) 1.0 once.
        let the = TokenLogprob {
            token: "The".into(),
            logprob: -0.05,
            top: vec![
                TopLogprob {
                    token: "The".into(),
                    logprob: -0.05,
                },
                TopLogprob {
                    token: "Yes".into(),
                    logprob: -9.2,
                },
            ],
        };
        let e = yes_no("The claim", Some(std::slice::from_ref(&the))).unwrap_err();
        assert_eq!(e.kind.name(), "not_yes_no", "{e}");
        // The answer word written later is in the judge's sentence, not
        // where the question asked for it: never read.
        let no = token(" no", &[(" no", 0.8), (" yes", 0.15)]);
        let e = yes_no("The no", Some(&[the, no])).unwrap_err();
        assert_eq!(e.kind.name(), "not_yes_no", "{e}");
    }

    #[test]
    fn answer_is_a_lead_in_of_a_first_word_answer() {
        // "Answer: No": "Answer:" is passed over, as a lead-in; the answer
        // is read at "No", though "Answer" has some yes/no probability too.
        let tokens = [
            token("Answer", &[("Answer", 0.6), ("Yes", 0.3), ("No", 0.1)]),
            token(":", &[(":", 0.99)]),
            token(" No", &[(" No", 0.9), (" Yes", 0.1)]),
        ];
        let r = yes_no("Answer: No", Some(&tokens)).unwrap();
        assert!((r.p_yes - 0.1).abs() < 1e-12, "{}", r.read);
        assert!(r.read.contains("token 3"), "{}", r.read);
        assert_eq!(yes_no("**Answer:** yes", None).unwrap().p_yes, 1.0);
        // Once: a second lead-in is no answer word.
        assert!(yes_no("Answer: Answer: yes", None).is_err());
    }

    #[test]
    fn real_mass_at_the_first_word_is_read_though_another_token_was_written() {
        let t = token("The", &[("The", 0.4), ("Yes", 0.35), ("No", 0.25)]);
        let r = first("The", Some(&[t]), &["yes", "no"]).unwrap();
        assert!(r.from_probabilities);
        assert!((r.mass - 0.6).abs() < 1e-12);
        assert!((r.probabilities[0] - 0.35 / 0.6).abs() < 1e-12);
        // Under the minimum: no verdict, and the written word is no answer.
        let t = token("The", &[("The", 0.7), ("Yes", 0.2), ("No", 0.1)]);
        assert!(first("The", Some(&[t]), &["yes", "no"]).is_err());
    }

    #[test]
    fn longer_words_count_whole_or_as_the_written_piece() {
        let words = AnswerWords::new(["support", "contradict", "neither"]);
        assert_eq!(words.which("contr"), None, "a piece alone is no word");
        assert_eq!(words.which(" Neither."), Some(2));
        assert_eq!(
            words.which("supports"),
            None,
            "inflections only where listed"
        );
        let listed = words.clone().spelled("support", ["supports", "supported"]);
        assert_eq!(listed.which("Supported"), Some(0));
        // "contradict" split: the written piece counts, once the next
        // tokens complete it; an alternative piece ("ne") counts for no word.
        let tokens = [
            token("contr", &[("contr", 0.6), ("support", 0.2), ("ne", 0.15)]),
            token("ad", &[("ad", 1.0)]),
            token("ict", &[("ict", 1.0)]),
        ];
        let r = answer_word("contradict.", Some(&tokens), &words, &AnswerAt::First).unwrap();
        assert_eq!(r.likeliest(), 1);
        assert!((r.mass - 0.8).abs() < 1e-12, "{}", r.read);
        // The same first piece continued into another word counts for none.
        let tokens = [
            token("contr", &[("contr", 0.6), ("support", 0.2), ("ne", 0.15)]),
            token("ary", &[("ary", 1.0)]),
        ];
        let e = answer_word("contrary", Some(&tokens), &words, &AnswerAt::First).unwrap_err();
        assert_eq!(e.kind.name(), "not_yes_no", "{e}");
        // Without probabilities, the first word decides.
        let r = answer_word("Neither.", None, &words, &AnswerAt::First).unwrap();
        assert_eq!((r.likeliest(), r.from_probabilities), (2, false));
    }

    #[test]
    fn answer_words_that_cannot_be_told_apart_are_refused() {
        assert!(AnswerWords::new(["yes", "no"]).check().is_ok());
        assert!(AnswerWords::new(Vec::<String>::new()).check().is_err());
        let e = AnswerWords::new(["no_evidence", "no-evidence"])
            .check()
            .unwrap_err();
        assert!(e.contains("alike"), "{e}");
        let e = AnswerWords::new(["yes", "no"])
            .spelled("maybe", ["perhaps"])
            .check()
            .unwrap_err();
        assert!(e.contains("`maybe`"), "{e}");
        assert!(AnswerWords::new(["?"]).check().is_err());
        assert!(AnswerAt::after(" ").check().is_err());
        assert!(AnswerAt::after("Answer:").check().is_ok());
    }

    #[test]
    fn the_reason_is_what_the_judge_wrote_besides_the_answer() {
        let reason = |reply: &str, at: &AnswerAt| {
            answer_word(reply, None, &AnswerWords::new(["yes", "no", "4"]), at)
                .unwrap()
                .reason
        };
        let first = AnswerAt::First;
        assert_eq!(
            reason("yes. It cites policy 4.2.", &first),
            "It cites policy 4.2."
        );
        assert_eq!(
            reason("No - it promises a refund.\nMore.", &first),
            "it promises a refund."
        );
        assert_eq!(
            reason("4\n\nPolite, but no next step.", &first),
            "Polite, but no next step."
        );
        assert_eq!(reason("\"Yes\": fine", &first), "fine");
        assert_eq!(
            reason("Answer: no. It promises one.", &first),
            "It promises one."
        );
        assert_eq!(reason("yes", &first), "");
        let after = AnswerAt::after("Answer:");
        assert_eq!(
            reason(
                "It promises a refund.\nIt breaks the rule.\n\nAnswer: no",
                &after
            ),
            "It promises a refund. It breaks the rule."
        );
    }
}
