//! A one-word answer: the probability of each answer word from the judge's
//! token probabilities where the server returned them, else the word it
//! wrote.
//!
//! **Where the answer is read.** At the first token of the reply that is
//! an answer word (a leading quote, space or "Answer:" is passed over);
//! when no token written is one, at the first token that carries a word,
//! but only if the answer words hold at least [`MIN_ANSWER_MASS`] of the
//! probability there. Below that the judge was writing something else
//! ("The claim …", with "Yes" far down its list): its P(yes) would be a
//! ratio of two tiny numbers, so no verdict is read from it.
//!
//! **How.** The alternatives at that position whose text is an answer word
//! in any case and spacing (`Yes`, ` yes`, `"no`, `NO.`; for a longer word,
//! also a prefix of at least two letters that begins no other answer word,
//! as tokenizers split `contradict` into `contr`+`ad`+`ict`) are summed per
//! word and renormalised over the answer words, whatever else the judge
//! might have said.
//!
//! **Without probabilities** (a server that returns none, Anthropic,
//! `strategy = "word"`), or where none of the above holds, the first word
//! written decides, with probability 1. A reply that is no answer word is
//! an error that carries it.

use super::{ParseError, ParseErrorKind};
use crate::core::TokenLogprob;

/// The share of a position's probability the answer words must hold for an
/// answer to be read there when the token written is not one of them.
pub const MIN_ANSWER_MASS: f64 = 0.5;

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

/// The letters of a token or word, lower-cased: `" Yes."` is `yes`.
fn letters(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Which of `words` a token or word counts for, if exactly one.
fn which(text: &str, words: &[&str]) -> Option<usize> {
    let t = letters(text);
    if t.is_empty() {
        return None;
    }
    if let Some(i) = words.iter().position(|w| *w == t) {
        return Some(i);
    }
    // A longer word split by the tokenizer, or inflected ("supports").
    let hits: Vec<usize> = words
        .iter()
        .enumerate()
        .filter(|(_, w)| {
            w.len() > 3
                && ((t.len() >= 2 && w.starts_with(t.as_str()))
                    || t.strip_prefix(*w)
                        .is_some_and(|rest| ["s", "ed"].contains(&rest)))
        })
        .map(|(i, _)| i)
        .collect();
    match hits[..] {
        [i] => Some(i),
        _ => None,
    }
}

/// Whether a token carries no word (a space, a quote, a newline).
fn is_blank(token: &str) -> bool {
    !token.chars().any(char::is_alphanumeric)
}

/// Reads a one-word answer among `words` (lower case, e.g. `["yes", "no"]`);
/// see the module for where and how.
///
/// ```
/// use ragaliq::judge::{TokenLogprob, TopLogprob};
/// use ragaliq::parse::answer_word;
/// let alt = |t: &str, p: f64| TopLogprob { token: t.into(), logprob: p.ln() };
/// let words = ["support", "contradict", "neither"];
/// let tokens = vec![TokenLogprob {
///     token: "contr".into(),
///     logprob: 0.5f64.ln(),
///     top: vec![alt("contr", 0.5), alt("support", 0.3), alt("ne", 0.1), alt("The", 0.1)],
/// }];
/// let read = answer_word("contradict", Some(&tokens), &words).unwrap();
/// assert_eq!(read.likeliest(), 1);
/// assert!((read.probabilities[1] - 0.5 / 0.9).abs() < 1e-12);
/// assert!((read.mass - 0.9).abs() < 1e-12);
/// ```
///
/// # Errors
///
/// Neither the probabilities nor the word written give one of `words`.
pub fn answer_word(
    reply: &str,
    logprobs: Option<&[TokenLogprob]>,
    words: &[&str],
) -> Result<WordAnswer, ParseError> {
    let written = reply.split_whitespace().next().unwrap_or_default();
    let word = which(written, words);
    let from_word = |why: &str| -> Option<WordAnswer> {
        let w = word?;
        let mut probabilities = vec![0.0; words.len()];
        probabilities[w] = 1.0;
        Some(WordAnswer {
            probabilities,
            from_probabilities: false,
            mass: 1.0,
            read: format!("the word written: {} ({why})", words[w]),
        })
    };
    let Some(tokens) = logprobs.filter(|t| !t.is_empty()) else {
        return from_word("no token probabilities").ok_or_else(|| not_an_answer(reply, written));
    };
    // The first token written that is an answer word; else the first that
    // carries a word, if the answer words hold enough there.
    let at = tokens
        .iter()
        .position(|t| which(&t.token, words).is_some())
        .map(|i| (i, true))
        .or_else(|| {
            tokens
                .iter()
                .position(|t| !is_blank(&t.token))
                .map(|i| (i, false))
        });
    if let Some((at, written_is_answer)) = at {
        let position = &tokens[at];
        let mut mass = vec![0.0f64; words.len()];
        let mut seen_written = false;
        for alt in &position.top {
            seen_written |= alt.token == position.token;
            if let Some(i) = which(&alt.token, words) {
                mass[i] += alt.logprob.exp();
            }
        }
        // A server that lists no alternatives, or not the token written.
        if !seen_written && let Some(i) = which(&position.token, words) {
            mass[i] += position.logprob.exp();
        }
        let total: f64 = mass.iter().sum();
        let enough = written_is_answer || total >= MIN_ANSWER_MASS;
        if enough && total > 0.0 && total.is_finite() {
            let probabilities: Vec<f64> =
                mass.iter().map(|m| (m / total).clamp(0.0, 1.0)).collect();
            let which_token = if at == 0 {
                "the first token".to_owned()
            } else {
                format!("token {}", at + 1)
            };
            let parts: Vec<String> = words
                .iter()
                .zip(&mass)
                .map(|(w, m)| format!("{w} {m:.3}"))
                .collect();
            let headline = if words.len() == 2 {
                format!("P({}) {:.3}", words[0], probabilities[0])
            } else {
                let best = probabilities
                    .iter()
                    .enumerate()
                    .fold(0, |b, (i, p)| if *p > probabilities[b] { i } else { b });
                format!("{} {:.3}", words[best], probabilities[best])
            };
            return Ok(WordAnswer {
                probabilities,
                from_probabilities: true,
                mass: total.min(1.0),
                read: format!(
                    "{headline} from {which_token}'s {} likeliest ({})",
                    position.top.len().max(1),
                    parts.join(", ")
                ),
            });
        }
        let why = format!(
            "the answer words held {:.3} of the probability at the first word, under {MIN_ANSWER_MASS}",
            total
        );
        return from_word(&why).ok_or_else(|| not_an_answer(reply, written));
    }
    from_word("no token carried a word").ok_or_else(|| not_an_answer(reply, written))
}

fn not_an_answer(reply: &str, written: &str) -> ParseError {
    ParseError::new(
        if reply.trim().is_empty() {
            ParseErrorKind::Empty
        } else {
            ParseErrorKind::NotYesNo {
                word: written.chars().take(40).collect(),
            }
        },
        reply,
    )
}

/// Reads a yes/no reply ([`answer_word`] over `yes` and `no`).
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
/// Neither the probabilities nor the word say yes or no.
pub fn yes_no(reply: &str, logprobs: Option<&[TokenLogprob]>) -> Result<YesNo, ParseError> {
    let read = answer_word(reply, logprobs, &["yes", "no"])?;
    Ok(YesNo {
        p_yes: read.probabilities[0],
        from_probabilities: read.from_probabilities,
        read: read.read,
    })
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
        // A word split over tokens with neither word among the
        // alternatives: the word written.
        let split = token("Ye", &[("Ye", 0.7), ("The", 0.2)]);
        let r = yes_no("Yes", Some(&[split])).unwrap();
        assert_eq!((r.p_yes, r.from_probabilities), (1.0, false));
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
        // The issue's reply: a first token "The" whose alternatives list
        // "Yes" at -9.2 and no "No" read as P(yes) 1.0 before.
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
        // The same position with the word written after it: the word is
        // read where it was written, not at "The".
        let no = token("no", &[("no", 0.8), ("yes", 0.15)]);
        let r = yes_no("The no", Some(&[the, no])).unwrap();
        assert!((r.p_yes - 0.15 / 0.95).abs() < 1e-12, "{}", r.read);
        assert!(r.read.contains("token 2"), "{}", r.read);
    }

    #[test]
    fn the_first_token_that_is_an_answer_word_is_preferred() {
        // "Answer: No": the answer is read at "No", though "Answer" has
        // some yes/no probability too.
        let tokens = [
            token("Answer", &[("Answer", 0.6), ("Yes", 0.3), ("No", 0.1)]),
            token(":", &[(":", 0.99)]),
            token(" No", &[(" No", 0.9), (" Yes", 0.1)]),
        ];
        let r = yes_no("Answer: No", Some(&tokens)).unwrap();
        assert!((r.p_yes - 0.1).abs() < 1e-12, "{}", r.read);
        assert!(r.read.contains("token 3"), "{}", r.read);
    }

    #[test]
    fn real_mass_at_the_first_word_is_read_though_another_token_was_written() {
        let t = token("The", &[("The", 0.4), ("Yes", 0.35), ("No", 0.25)]);
        let r = answer_word("The", Some(&[t]), &["yes", "no"]).unwrap();
        assert!(r.from_probabilities);
        assert!((r.mass - 0.6).abs() < 1e-12);
        assert!((r.probabilities[0] - 0.35 / 0.6).abs() < 1e-12);
        // Under the minimum: no verdict, and the written word is no answer.
        let t = token("The", &[("The", 0.7), ("Yes", 0.2), ("No", 0.1)]);
        assert!(answer_word("The", Some(&[t]), &["yes", "no"]).is_err());
    }

    #[test]
    fn longer_words_count_by_their_first_token_and_inflections() {
        let words = ["support", "contradict", "neither"];
        assert_eq!(which("contr", &words), Some(1));
        assert_eq!(which(" ne", &words), Some(2));
        assert_eq!(which("Neither", &words), Some(2));
        assert_eq!(which("supports", &words), Some(0));
        assert_eq!(which("supported", &words), Some(0));
        assert_eq!(which("s", &words), None, "one letter is no word");
        assert_eq!(which("co", &words), Some(1));
        // yes and no count only whole.
        assert_eq!(which("ye", &["yes", "no"]), None);
        assert_eq!(which("nope", &["yes", "no"]), None);
        // Without probabilities, the first word decides.
        let r = answer_word("Neither.", None, &words).unwrap();
        assert_eq!((r.likeliest(), r.from_probabilities), (2, false));
    }
}
