//! Finding a judge's evidence in the passages.
//!
//! A verdict that cites evidence (`supported`, `partially_supported`,
//! `contradicted`) is only as good as its quote: a judge can quote the claim
//! itself, invent a sentence, or paste ragaliq's own delimiter tags. So every
//! quote is looked for in the case's passages, by this rule:
//!
//! 1. **Normalised.** ragaliq's delimiter tags (`<passage n="2">`,
//!    `</passage>`, `<claim …>`, …) are removed and `&lt;`/`&gt;` read back;
//!    case is folded; every character that is not a letter or a digit
//!    separates words, so quotes, dashes, punctuation and white space of any
//!    kind never decide a match; in scripts written without spaces (Chinese,
//!    Japanese) each character is a word. What is left is a list of words.
//! 2. **Ellipses split a quote.** `…` or `...` cuts a quote into fragments,
//!    which must all be found in one passage, in order.
//! 3. **A contiguous span, small differences allowed.** A fragment is found
//!    when some run of consecutive words of the passage equals it word for
//!    word, allowing one word inserted, left out or changed per 8 words of
//!    the fragment (none under 8); a word also equals itself with or without
//!    a final `s` (plural or third person). A word with a digit in it is a
//!    number, and numbers are facts: they are never changed, inserted or
//!    left out.
//! 4. **At least two words.** A quote of fewer than two words quotes
//!    nothing, and is not evidence.
//!
//! A quote that meets the rule is *grounded*, at the passage and byte span
//! it was found at; one that does not is *ungrounded*; a verdict that needs
//! evidence and gives none has *no quote*.
//!
//! # An expected answer found in a response
//!
//! Answer correctness decides an answer correct with no call where the
//! expected answer stands in it and is not denied there, and calibration
//! measures plain matching (found, denied or not), the floor a judge must
//! beat on graded answers, by one rule: [`answer`].

pub mod answer;

pub use answer::{AnswerIn, accepted_answers, answer_in, find_answer, normalise_answer};

use std::ops::Range;

/// Where a quote was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The passage, 0-based, in the order given.
    pub passage: usize,
    /// The bytes of that passage the quote covers, from its first word found
    /// to its last.
    pub span: Range<usize>,
}

/// What became of a quote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grounding {
    /// Found, here.
    Found(Found),
    /// Not in any passage.
    Ungrounded,
    /// Empty, or fewer than two words.
    NoQuote,
}

/// Looks for `quote` in `passages` by the rule of this module; the first
/// passage it is found in, in order, wins.
///
/// ```
/// use ragaliq::evidence::{Grounding, locate};
/// let passages = ["Refunds are accepted within 30 days of delivery.".to_owned()];
/// let Grounding::Found(f) = locate("<passage n=\"1\">refunds are “accepted” within 30 days</passage>", &passages) else {
///     panic!()
/// };
/// assert_eq!(&passages[0][f.span], "Refunds are accepted within 30 days");
/// assert_eq!(locate("Refunds are paid in gold.", &passages), Grounding::Ungrounded);
/// assert_eq!(locate("", &passages), Grounding::NoQuote);
/// ```
#[must_use]
pub fn locate(quote: &str, passages: &[String]) -> Grounding {
    let cleaned = untagged(quote);
    let fragments: Vec<Vec<String>> = split_ellipses(&cleaned)
        .iter()
        .map(|f| words(f).into_iter().map(|w| w.text).collect::<Vec<_>>())
        .filter(|f: &Vec<String>| !f.is_empty())
        .collect();
    if fragments.iter().map(Vec::len).sum::<usize>() < 2 {
        return Grounding::NoQuote;
    }
    for (i, passage) in passages.iter().enumerate() {
        let passage_words = words(&untagged(passage));
        // Offsets are into the untagged passage; map them back when the
        // passage itself held nothing to remove (the usual case).
        let same = untagged(passage) == *passage;
        let mut from = 0;
        let mut span: Option<Range<usize>> = None;
        let mut all = true;
        for fragment in &fragments {
            match find(fragment, &passage_words[from..]) {
                Some((start, end)) => {
                    let (start, end) = (from + start, from + end);
                    let bytes = passage_words[start].at.start..passage_words[end - 1].at.end;
                    span = Some(match span {
                        None => bytes,
                        Some(s) => s.start..bytes.end,
                    });
                    from = end;
                }
                None => {
                    all = false;
                    break;
                }
            }
        }
        if all && let Some(span) = span {
            let span = if same { span } else { 0..passage.len() };
            return Grounding::Found(Found { passage: i, span });
        }
    }
    Grounding::Ungrounded
}

/// Whether an extracted `claim` comes from `source` (the response, and the
/// query its pronouns may be resolved from), by this rule: every number of
/// the claim appears in the source, and at least three in four of its other
/// content words do (words as for quotes, without the small words — *the*,
/// *is*, *of*, … — that carry no content of their own).
///
/// ```
/// use ragaliq::evidence::claim_in_text;
/// let response = "Our stores open at nine in the morning and close at 18:00.";
/// assert!(claim_in_text("The stores close at 18:00.", response));
/// assert!(!claim_in_text("The stores close at 20:00.", response));
/// assert!(!claim_in_text("Parking is free for customers.", response));
/// ```
#[must_use]
pub fn claim_in_text(claim: &str, source: &str) -> bool {
    let have: Vec<String> = words(&untagged(source))
        .into_iter()
        .map(|w| w.text)
        .collect();
    let found = |w: &str| have.iter().any(|h| same(h, w));
    let content = content_words(claim);
    let (numbers, others): (Vec<&String>, Vec<&String>) = content
        .iter()
        .partition(|w| w.chars().any(|c| c.is_ascii_digit()));
    if !numbers.iter().all(|n| found(n)) {
        return false;
    }
    let present = others.iter().filter(|w| found(w)).count();
    present * 4 >= others.len() * 3
}

/// Whether an extracted `claim` comes from `response`, the query read
/// only for what the response refers to, by this rule:
///
/// - it comes from the response alone ([`claim_in_text`]), the words it
///   lacks there (one in four may be) not taken from the question; or
/// - it comes from the response and the query's last line, the question
///   the response answers (a one-line query is read whole), and either
///   one of its content words is in the response and not in that line
///   (the response's own fact, its subject named from the question), or
///   the response opens by answering yes or no: its first clause holds
///   only *yes*, *no*, *sure*, *of course* and the like, or small words
///   and auxiliaries (*It is.*, *There is:*, *You can.*), so the
///   question's proposition is what it affirms or denies. A claim made of
///   the question's words alone is otherwise the question restated, not
///   said by the response ("Shipping is free on small orders." from "Is
///   shipping free on small orders?" answered "Shipping is free on orders
///   over 50 euros.", or answered with a refusal), and is dropped. A
///   denial counts as the response's own where the response denies and
///   the question does not ("Dental isn't part of Basic." says "The Basic
///   plan does not cover dental check-ups."); so a refusal worded with a
///   *not* ("I'm not able to say") still keeps a denial of the question,
///   a limit of the rule; or
/// - it comes from the response and the whole query, and one of its
///   content words (numbers included) is in the response and not in the
///   query: the response's own fact, what it refers to resolved from
///   earlier lines ("The blender can be returned within 30 days" from "you
///   can return it within 30 days").
///
/// So the lines before a query's last one (a conversation's history folded
/// into the query: "User: I bought a blender last week.\n…\nUser: Can I
/// return it?") supply no claim of their own: "The customer bought a
/// blender last week" is the history's, not the response's, and is
/// dropped, whatever the response says ("Yes." included).
///
/// ```
/// use ragaliq::evidence::claim_from_response;
/// let query = "User: I bought a blender last week for $40.\nAssistant: Thanks!\nUser: Can I return it?";
/// let response = "Yes, you can return it within 30 days.";
/// assert!(!claim_from_response("The customer bought a blender last week.", response, query));
/// assert!(!claim_from_response("The customer bought a blender last week.", "Yes.", query));
/// assert!(claim_from_response("The blender can be returned within 30 days.", response, query));
/// // A one-line query is read whole: a yes answers it, and so does "It is."
/// assert!(claim_from_response("EU roaming is included.", "Yes.", "Is EU roaming included?"));
/// assert!(claim_from_response("EU roaming is included.", "It is, up to 20 GB.", "Is EU roaming included?"));
/// // The question restated, which the response does not say: dropped.
/// let asked = "Is shipping free on small orders?";
/// assert!(!claim_from_response("Shipping is free on small orders.", "Shipping is free on orders over 50 euros.", asked));
/// assert!(!claim_from_response("Shipping is free on small orders.", "I cannot answer questions about shipping.", asked));
/// assert!(claim_from_response("Shipping is free on orders over 50 euros.", "Shipping is free on orders over 50 euros.", asked));
/// ```
#[must_use]
pub fn claim_from_response(claim: &str, response: &str, query: &str) -> bool {
    let last = query
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(query);
    let of = |text: &str| -> Vec<String> {
        words(&untagged(text)).into_iter().map(|w| w.text).collect()
    };
    let found = |have: &[String], w: &str| have.iter().any(|h| same(h, w));
    let said = of(response);
    // A content word of the claim that the response says and `asked` does
    // not: the response's own fact; or a denial where the response denies
    // and `asked` does not ("Dental isn't part of Basic." said, "The Basic
    // plan does not cover dental check-ups." claimed).
    let claimed = content_words(claim);
    let negates = |have: &[String]| have.iter().any(|w| NEGATIONS.contains(&w.as_str()));
    let owns = |asked: &[String]| {
        claimed.iter().any(|w| found(&said, w) && !found(asked, w))
            || (negates(&claimed) && negates(&said) && !negates(asked))
    };
    // From the response alone, where the words it lacks (a claim is read
    // with one in four missing, for paraphrase) are not the question's.
    let question = of(last);
    if claim_in_text(claim, response)
        && !claimed
            .iter()
            .any(|w| !found(&said, w) && found(&question, w))
    {
        return true;
    }
    if claim_in_text(claim, &format!("{response}\n{last}")) {
        return owns(&question) || answers_yes_or_no(response);
    }
    if !claim_in_text(claim, &format!("{response}\n{query}")) {
        return false;
    }
    owns(&of(query))
}

/// The words of a denial (*isn't* is read as *isn* and *t*).
const NEGATIONS: [&str; 7] = ["not", "no", "never", "t", "cannot", "none", "nor"];

/// The words a response may open with to answer a yes/no question, beside
/// [`SMALL`]'s: the answer words, auxiliaries, and their negations
/// (*don't* is read as *don* and *t*).
#[rustfmt::skip] // kept compact, as SMALL is
const ANSWERING: [&str; 40] = [
    "yes", "yeah", "yep", "yup", "no", "nope", "sure", "correct", "right", "indeed",
    "absolutely", "certainly", "definitely", "exactly", "true", "false", "course", "not",
    "do", "does", "did", "could", "would", "should", "may", "might", "must", "had", "cannot",
    "don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "hasn", "haven", "t",
];

/// Whether `response` opens by answering a yes/no question: its first
/// clause (up to the first `.`, `!`, `?`, `,`, `;`, `:` or line break) has
/// words, all of them answer words, auxiliaries or small words.
fn answers_yes_or_no(response: &str) -> bool {
    let first = response
        .trim_start()
        .split(['.', '!', '?', ',', ';', ':', '\n'])
        .next()
        .unwrap_or_default();
    let said = words(&untagged(first));
    !said.is_empty()
        && said
            .iter()
            .all(|w| ANSWERING.contains(&w.text.as_str()) || SMALL.contains(&w.text.as_str()))
}

/// Whether an extracted item is the user's *wh*-question echoed back, by
/// this rule: it ends with `?`, its last sentence opens with *what*,
/// *when*, *where*, *which*, *who*, *whom*, *whose*, *why* or *how*, and its
/// words are, exactly and in order, the last words of the query (its last
/// line's, where a conversation's history is folded into it). Such an
/// item states nothing to check, so the claim extraction drops it before a
/// question is asked about it (issue 47, item 5).
///
/// A yes/no question echoed ("Can I return a jacket I bought online?") is
/// kept by this rule: an answer's "Yes." or "It is." affirms exactly that
/// proposition, and judging the echo is what checks it ([`claim_from_response`]
/// keeps it only where the answer opens so, or says a word of its own). Anything else ending with `?`
/// is kept too: "Did you know the warranty is 5 years?" claims something,
/// and so does a question the user did not ask. Measured on the committed
/// recordings: the kit's 0.5B listed 24 such echoes among 468 items, the
/// 1.5B none among 762 (it echoed 3 yes/no questions, which are kept).
///
/// ```
/// use ragaliq::evidence::the_question_echoed;
/// let query = "I paid £120 for a year and cancelled after 3 months. How much do I get back?";
/// assert!(the_question_echoed("How much do I get back?", query));
/// assert!(the_question_echoed(query, query));
/// assert!(the_question_echoed("How long do I have?", "User: Can I return it?\nUser: How long do I have?"));
/// // A yes/no question carries the proposition a "yes" affirms.
/// assert!(!the_question_echoed("Can I return it?", "Can I return it?"));
/// // Not the user's words: a claim in question form, or another question.
/// assert!(!the_question_echoed("How long is the 5-year warranty?", "How long is the warranty?"));
/// assert!(!the_question_echoed("Did you know the warranty is 5 years?", "How long is the warranty?"));
/// assert!(!the_question_echoed("How long is the warranty.", "How long is the warranty?"));
/// ```
#[must_use]
pub fn the_question_echoed(item: &str, query: &str) -> bool {
    const WH: [&str; 9] = [
        "what", "when", "where", "which", "who", "whom", "whose", "why", "how",
    ];
    let item = item.trim();
    if !item.ends_with('?') {
        return false;
    }
    let last_sentence = sentences(item).last().map_or(item, |s| &item[s.clone()]);
    let opens_wh = words(last_sentence)
        .first()
        .is_some_and(|w| WH.contains(&w.text.as_str()));
    let of = |text: &str| -> Vec<String> {
        words(&untagged(text)).into_iter().map(|w| w.text).collect()
    };
    let (echoed, asked) = (of(item), of(query));
    opens_wh && !echoed.is_empty() && asked.ends_with(&echoed)
}

/// Whether two claims say the same: the same content words, in any order.
///
/// ```
/// use ragaliq::evidence::same_claim;
/// assert!(same_claim("Our stores open at nine in the morning.", "We store open at nine in the morning."));
/// assert!(!same_claim("Stores open at nine.", "Stores close at nine."));
/// ```
#[must_use]
pub fn same_claim(a: &str, b: &str) -> bool {
    let (a, b) = (content_words(a), content_words(b));
    !a.is_empty()
        && a.len() == b.len()
        && a.iter().all(|w| b.iter().any(|v| same(v, w)))
        && b.iter().all(|w| a.iter().any(|v| same(v, w)))
}

/// The sentence of the passages closest to `claim`: the one whose content
/// words (numbers included) overlap the claim's most, counted against both
/// lengths (2 × shared / (the claim's + the sentence's), the Dice
/// coefficient), so a long sentence that shares two words among many
/// others is not closer than a short one about the claim's subject; ties
/// go to the sentence sharing more words, then the earlier one. `None`
/// when no sentence shares a single content word with it: no passage
/// speaks to the claim.
///
/// ragaliq shows this sentence, and says that it found it, beside a claim
/// the judge found unsupported when the judge was asked a yes/no question
/// and quoted nothing: a reviewer sees the passage the claim is about
/// without the judge being asked for a quote (asking for one alongside the
/// verdict made small judges' verdicts worse).
///
/// ```
/// use ragaliq::evidence::closest_sentence;
/// let passages = [
///     "Shipping takes five days. Refunds are paid to the original card.".to_owned(),
/// ];
/// let found = closest_sentence("Refunds are paid in gold coins.", &passages).unwrap();
/// assert_eq!(&passages[0][found.span], "Refunds are paid to the original card.");
/// assert_eq!(closest_sentence("Parking is free.", &passages), None);
/// ```
#[must_use]
pub fn closest_sentence(claim: &str, passages: &[String]) -> Option<Found> {
    let wanted = distinct(content_words(claim));
    if wanted.is_empty() {
        return None;
    }
    // (overlap, shared) of the best so far.
    let mut best: Option<((f64, usize), Found)> = None;
    for (i, passage) in passages.iter().enumerate() {
        for span in sentences(passage) {
            let have = distinct(content_words(&passage[span.clone()]));
            let shared = wanted
                .iter()
                .filter(|w| have.iter().any(|h| same(h, w)))
                .count();
            if shared == 0 {
                continue;
            }
            let overlap = 2.0 * shared as f64 / (wanted.len() + have.len()) as f64;
            let better = best
                .as_ref()
                .is_none_or(|((o, s), _)| overlap > *o || (overlap == *o && shared > *s));
            if better {
                best = Some(((overlap, shared), Found { passage: i, span }));
            }
        }
    }
    best.map(|(_, found)| found)
}

/// `words` once each, in their first order.
fn distinct(mut words: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    words.retain(|w| seen.insert(w.clone()));
    words
}

/// The sentences of `text`, as byte spans without their surrounding space:
/// ended by `.`, `!`, `?` or `;` before a space (or the end), or by a line
/// break.
fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let next_is_space = bytes
            .get(i + c.len_utf8())
            .is_none_or(|b| b.is_ascii_whitespace());
        let ends = matches!(c, '.' | '!' | '?' | ';') && next_is_space || c == '\n';
        if ends {
            let end = if c == '\n' { i } else { i + c.len_utf8() };
            push_trimmed(text, start..end, &mut out);
            start = i + c.len_utf8();
        }
    }
    push_trimmed(text, start..text.len(), &mut out);
    out
}

fn push_trimmed(text: &str, span: Range<usize>, out: &mut Vec<Range<usize>>) {
    let piece = &text[span.clone()];
    let lead = piece.len() - piece.trim_start().len();
    let trail = piece.len() - piece.trim_end().len();
    if piece.trim().chars().any(char::is_alphanumeric) {
        out.push(span.start + lead..span.end - trail);
    }
}

/// Whether a response states something, by this rule: it starts with
/// *yes* or *no* (the answer to a yes/no question), or one of its sentences
/// that is not a question, an apology, a greeting or a refusal (*sorry*,
/// *not sure*, *don't know*, *cannot find*, *unable*, *thank you*, *good
/// question*, *let me check*, *hello*, *depends*, *anything else*) has two
/// content words or a number.
///
/// A judge that lists no claim for such a response is asked again once,
/// then the evaluation is undecided: it is never scored as vacuously
/// faithful. On the labelled extraction set the rule agreed with the
/// person's "no claims" on 25 of 25 dev responses and 23 of 24 test ones
/// (it takes "Please ask our support team." for a statement).
///
/// ```
/// use ragaliq::evidence::states_something;
/// assert!(states_something("Refunds take 30 days."));
/// assert!(states_something("Yes."));
/// assert!(!states_something("I'm not sure, sorry."));
/// assert!(!states_something("Could you tell me which account you mean?"));
/// assert!(!states_something(""));
/// ```
#[must_use]
pub fn states_something(text: &str) -> bool {
    const NOTHING: [&str; 17] = [
        "sorry",
        "not sure",
        "don't know",
        "do not know",
        "cannot find",
        "can't find",
        "not able",
        "unable",
        "cannot help",
        "can't help",
        "thanks for",
        "thank you",
        "good question",
        "let me check",
        "hello",
        "depends",
        "anything else",
    ];
    let lower = text.trim().to_lowercase().replace('’', "'");
    let first = words(&lower).into_iter().next().map(|w| w.text);
    if matches!(first.as_deref(), Some("yes" | "no")) {
        return true;
    }
    sentences(&lower).into_iter().any(|span| {
        let sentence = &lower[span];
        !sentence.ends_with('?')
            && !NOTHING.iter().any(|m| sentence.contains(m))
            && (content_words(sentence).len() >= 2 || sentence.chars().any(|c| c.is_ascii_digit()))
    })
}

/// The share of `question`'s content words (numbers included) that
/// `passage` holds, with or without a final `s`; 0 when the question has
/// none. Plain matching's reading of a passage, with no judge: the floor
/// `cargo ragaliq calibrate` sets beside a judge's reading of labelled
/// passages (a judge that ranks them no better earns nothing over it).
///
/// ```
/// use ragaliq::evidence::question_words_in;
/// // "when", "do", "refunds", "arrive": two of the four are there.
/// let q = "When do refunds arrive?";
/// assert_eq!(question_words_in(q, "Refunds arrive within 5 days."), 0.5);
/// assert_eq!(question_words_in(q, "A refund arrives in 5 days."), 0.5);
/// assert_eq!(question_words_in(q, "Our stores open at nine."), 0.0);
/// assert_eq!(question_words_in("Is it?", "Anything."), 0.0);
/// ```
#[must_use]
pub fn question_words_in(question: &str, passage: &str) -> f64 {
    let wanted = content_words(question);
    if wanted.is_empty() {
        return 0.0;
    }
    let have = distinct(content_words(passage));
    let found = wanted
        .iter()
        .filter(|w| have.iter().any(|h| same(h, w)))
        .count();
    found as f64 / wanted.len() as f64
}

/// Small words that carry no content of their own.
const SMALL: [&str; 48] = [
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "as", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these",
    "those", "there", "their", "they", "we", "our", "you", "your", "he", "she", "his", "her", "i",
    "my", "me", "us", "can", "will", "also", "has", "have",
];

fn content_words(text: &str) -> Vec<String> {
    words(&untagged(text))
        .into_iter()
        .map(|w| w.text)
        .filter(|w| !SMALL.contains(&w.as_str()))
        .collect()
}

/// The names of ragaliq's delimiter tags (see the prompts).
const TAGS: [&str; 8] = [
    "passage", "passages", "context", "claim", "claims", "query", "response", "expected",
];

/// `text` without ragaliq's delimiter tags, `&lt;`/`&gt;` read back.
fn untagged(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('>');
        let name: String = after
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        match close {
            Some(close) if TAGS.contains(&name.to_ascii_lowercase().as_str()) => {
                out.push(' ');
                rest = &after[close + 1..];
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace("&lt;", "<").replace("&gt;", ">")
}

fn split_ellipses(text: &str) -> Vec<String> {
    text.replace('…', "...")
        .split("...")
        .map(str::to_owned)
        .collect()
}

/// A word and where it is.
struct Word {
    text: String,
    at: Range<usize>,
}

/// Whether `c` is written without spaces between words (CJK ideographs,
/// kana): each such character is a word of its own.
fn unspaced(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

/// The words of `text`: runs of letters and digits, case folded.
fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if let Some(s) = start.filter(|_| !c.is_alphanumeric() || unspaced(c)) {
            out.push(Word {
                text: text[s..i].to_lowercase(),
                at: s..i,
            });
            start = None;
        }
        if unspaced(c) {
            out.push(Word {
                text: c.to_string(),
                at: i..i + c.len_utf8(),
            });
        } else if c.is_alphanumeric() && start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(Word {
            text: text[s..].to_lowercase(),
            at: s..text.len(),
        });
    }
    out
}

/// Two words are the same, also with or without a final `s`.
fn same(a: &str, b: &str) -> bool {
    a == b || a.strip_suffix('s') == Some(b) || b.strip_suffix('s') == Some(a)
}

/// The words of `passage` (`start..end`) that `fragment` matches with the
/// fewest edits, when that is within the rule's allowance.
fn find(fragment: &[String], passage: &[Word]) -> Option<(usize, usize)> {
    let k = fragment.len();
    let allowed = k / 8;
    let n = passage.len();
    if n == 0 || k == 0 {
        return None;
    }
    // Semi-global alignment: the fragment whole, the passage any span.
    // cost[j] and start[j] for the row of fragment word i, at passage j.
    let mut cost: Vec<usize> = vec![0; n + 1];
    let mut start: Vec<usize> = (0..=n).collect();
    for word in fragment {
        let mut next_cost = vec![0; n + 1];
        let mut next_start = vec![0; n + 1];
        next_cost[0] = cost[0]
            + if word.chars().any(|c| c.is_ascii_digit()) {
                k + 1
            } else {
                1
            };
        next_start[0] = 0;
        // An edit that touches a number costs more than any allowance.
        let edit = |w: &str| {
            if w.chars().any(|c| c.is_ascii_digit()) {
                k + 1
            } else {
                1
            }
        };
        for j in 1..=n {
            let other = &passage[j - 1].text;
            let substitute = cost[j - 1]
                + if same(word, other) {
                    0
                } else {
                    edit(word).max(edit(other))
                };
            let skip_fragment = cost[j] + edit(word);
            let skip_passage = next_cost[j - 1] + edit(other);
            let (c, s) = [
                (substitute, start[j - 1]),
                (skip_fragment, start[j]),
                (skip_passage, next_start[j - 1]),
            ]
            .into_iter()
            .min_by_key(|(c, _)| *c)
            .unwrap_or((usize::MAX, 0));
            next_cost[j] = c;
            next_start[j] = s;
        }
        cost = next_cost;
        start = next_start;
    }
    let (end, best) = (1..=n).map(|j| (j, cost[j])).min_by_key(|(_, c)| *c)?;
    (best <= allowed && start[end] < end).then_some((start[end], end))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_closest_sentence_is_the_one_about_the_claim_not_the_longest() {
        // A claim about Sundays: the sentence about Sundays, not the
        // weekday hours that share "store" and "open" with it but speak of
        // other days.
        let passages = ["Our store is open Monday to Saturday, from 9 am to 6 pm, with late opening on Thursdays. The store is closed on Sundays.".to_owned()];
        let found = super::closest_sentence("The store is open on Sundays.", &passages).unwrap();
        assert_eq!(&passages[0][found.span], "The store is closed on Sundays.");
        // A sentence that holds the whole claim still wins over a short one
        // that shares a word.
        let passages = [
            "Refunds are paid to the original card within 5 to 7 days. Gold members ship free."
                .to_owned(),
        ];
        let found = super::closest_sentence("Refunds are paid in gold coins.", &passages).unwrap();
        assert_eq!(
            &passages[0][found.span],
            "Refunds are paid to the original card within 5 to 7 days."
        );
    }

    /// The question restated as a claim is the response's only where the
    /// response says it: answered yes or no, or with a fact of its own.
    /// Built to fool the rule both ways.
    #[test]
    fn the_question_restated_is_the_responses_claim_only_where_it_answers_it() {
        let q = "Is shipping free on small orders?";
        let restated = "Shipping is free on small orders.";
        // Answers that do not say it: another fact, a refusal, a hedge, a
        // greeting.
        for response in [
            "Shipping is free on orders over 50 euros.",
            "I'm not able to answer questions about shipping.",
            "That depends. Is there anything else I can help you with?",
            "Hello! Thanks for reaching out.",
        ] {
            assert!(!claim_from_response(restated, response, q), "{response}");
        }
        // Answers that affirm or deny the question's proposition, however
        // briefly, and with a denial after the comma.
        for response in [
            "Yes.",
            "Yes, on every order.",
            "Sure! Every order ships free.",
            "Of course.",
            "It is.",
            "It does not, sorry.",
            "No, only on orders over 50 euros.",
            "Nope.",
        ] {
            assert!(claim_from_response(restated, response, q), "{response}");
        }
        let denied = "Shipping is not free on small orders.";
        assert!(claim_from_response(
            denied,
            "No, only on orders over 50 euros.",
            q
        ));
        assert!(!claim_from_response(
            denied,
            "Orders over 50 euros ship free.",
            q
        ));
        // A rival named, a changed unit: the question's, not the response's.
        assert!(!claim_from_response(
            "Shipping is free with DHL.",
            "Shipping is free with UPS.",
            "Is shipping free with DHL?"
        ));
        assert!(!claim_from_response(
            "Shipping is free over 50 dollars.",
            "Shipping is free over 50 euros.",
            "Is shipping free over 50 dollars?"
        ));
        // The response's denial, in the question's words.
        assert!(claim_from_response(
            "The Basic plan does not cover dental check-ups.",
            "Dental isn't part of Basic. If you want check-ups covered you'd need Plus.",
            "Does the Basic plan cover dental check-ups?"
        ));
        assert!(!claim_from_response(
            "The Basic plan covers dental check-ups.",
            "Dental isn't part of Basic. If you want check-ups covered you'd need Plus.",
            "Does the Basic plan cover dental check-ups?"
        ));
        // The response's own fact, its subject named from the question: kept
        // whatever the response opens with.
        assert!(claim_from_response(
            "Small orders ship for 4 euros.",
            "They ship for 4 euros.",
            "How much is shipping on small orders?"
        ));
    }

    use super::*;

    fn p(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| (*t).to_owned()).collect()
    }

    fn found_text(quote: &str, passages: &[String]) -> Option<String> {
        match locate(quote, passages) {
            Grounding::Found(f) => Some(passages[f.passage][f.span].to_owned()),
            _ => None,
        }
    }

    #[test]
    fn case_quotes_dashes_and_white_space_never_decide() {
        let ps = p(&["The deposit – one month’s rent – is returned within 10 days."]);
        assert_eq!(
            found_text("the deposit - one month's rent -\n is returned", &ps).as_deref(),
            Some("The deposit – one month’s rent – is returned")
        );
        assert!(found_text("«The DEPOSIT» — one month's rent", &ps).is_some());
    }

    #[test]
    fn ragaliq_tags_are_not_part_of_a_quote() {
        let ps = p(&["Gift cards are non-refundable.", "Sale items are final."]);
        // The wrong passage number in the tag does not matter: the text is found.
        let Grounding::Found(f) = locate("<passage n=\"1\">Sale items are final.</passage>", &ps)
        else {
            panic!()
        };
        assert_eq!(f.passage, 1);
        assert!(found_text("&lt;passage n=\"2\"&gt;Sale items are final.", &ps).is_none());
    }

    #[test]
    fn the_claim_quoted_as_evidence_is_ungrounded() {
        let ps = p(&[
            "More than 1,500 people died.",
            "The Titanic sank on 15 April 1912.",
        ]);
        assert_eq!(
            locate(
                "<passage n=3>Fewer than 1,000 people died in the sinking.</passage>",
                &ps
            ),
            Grounding::Ungrounded
        );
    }

    #[test]
    fn small_differences_are_allowed_only_in_long_quotes() {
        let ps = p(&[
            "Customers may return unused items within 30 days of delivery for a full refund of the price paid.",
        ]);
        // Nine words, one changed: allowed (1 per 8).
        assert!(
            found_text(
                "customers may return all unused items within 30 days of delivery",
                &ps
            )
            .is_some()
        );
        // But a number is never a small difference.
        assert!(
            found_text(
                "customers may return unused items within 31 days of delivery",
                &ps
            )
            .is_none()
        );
        assert!(
            found_text(
                "customers may return unused items within thirty days of delivery",
                &ps
            )
            .is_none()
        );
        // Short: exact, but plurals match.
        assert!(found_text("unused item within 30 days", &ps).is_some());
        assert!(found_text("used items within 30 days", &ps).is_none());
        // Two words changed in nine: not allowed.
        assert!(
            found_text(
                "customers may return new items within sixty days of delivery",
                &ps
            )
            .is_none()
        );
    }

    #[test]
    fn ellipses_need_every_fragment_in_one_passage_in_order() {
        let ps = p(&[
            "Claims must be submitted within 90 days. Claims submitted later are rejected unless the delay was caused by a hospital stay.",
            "Dental care is not included.",
        ]);
        assert_eq!(
            found_text("Claims must be submitted within 90 days … unless the delay was caused by a hospital stay", &ps).as_deref(),
            Some("Claims must be submitted within 90 days. Claims submitted later are rejected unless the delay was caused by a hospital stay")
        );
        assert!(found_text("unless the delay ... Claims must be submitted", &ps).is_none());
        assert!(found_text("within 90 days ... Dental care is not included", &ps).is_none());
    }

    #[test]
    fn a_quote_of_one_word_is_no_quote() {
        let ps = p(&["Yes, refunds are possible."]);
        assert_eq!(locate("yes", &ps), Grounding::NoQuote);
        assert_eq!(locate("  …  ", &ps), Grounding::NoQuote);
        assert_eq!(
            locate("<passage n=\"1\"></passage>", &ps),
            Grounding::NoQuote
        );
    }

    #[test]
    fn unicode_is_matched_as_written() {
        let ps = p(&[
            "Wasser siedet bei 100 °C auf Meereshöhe.",
            "水は100度で沸騰する。",
        ]);
        assert!(found_text("siedet bei 100 °C auf MEERESHÖHE", &ps).is_some());
        assert_eq!(
            found_text("水は100度で沸騰する", &ps).as_deref(),
            Some("水は100度で沸騰する")
        );
        assert!(found_text("水は90度で沸騰する", &ps).is_none());
        assert!(found_text("bei 100 °F", &ps).is_none());
    }
}
