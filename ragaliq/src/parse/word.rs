//! A yes/no question's answer: P(yes) from the judge's token probabilities
//! where the server returned them, else the word it wrote.
//!
//! The probability is read at the first token of the reply that is a word
//! (a leading quote or space is passed over): the alternatives there whose
//! text is `yes` or `no` in any case and spacing (`Yes`, ` yes`, `"no`,
//! `NO.`) are summed per answer, and P(yes) is yes's share of the two —
//! renormalised over the answer words, whatever else the judge might have
//! said. A reply whose alternatives hold neither word is read from the
//! word written; a reply that is neither is an error that carries it.

use super::{ParseError, ParseErrorKind};
use crate::core::TokenLogprob;

/// A yes/no answer, as read.
#[derive(Clone, Debug, PartialEq)]
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

/// `yes`, `no`, or `None`, for a token or word in any case, with spaces,
/// quotes and punctuation around it.
fn answer_word(text: &str) -> Option<bool> {
    let word = text
        .trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    match word.as_str() {
        "yes" => Some(true),
        "no" => Some(false),
        _ => None,
    }
}

/// Whether a token carries no word (a space, a quote, a newline).
fn is_blank(token: &str) -> bool {
    !token.chars().any(char::is_alphanumeric)
}

/// Reads a yes/no reply (see the module).
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
    let written = reply.split_whitespace().next().unwrap_or_default();
    let word = answer_word(written);
    if let Some(tokens) = logprobs.filter(|t| !t.is_empty()) {
        let at = tokens.iter().position(|t| !is_blank(&t.token)).unwrap_or(0);
        let position = &tokens[at];
        let (mut yes, mut no) = (0.0f64, 0.0f64);
        let mut seen_written = false;
        for alt in &position.top {
            seen_written |= alt.token == position.token;
            match answer_word(&alt.token) {
                Some(true) => yes += alt.logprob.exp(),
                Some(false) => no += alt.logprob.exp(),
                None => {}
            }
        }
        // A server that lists no alternatives, or not the token written.
        if !seen_written {
            match answer_word(&position.token) {
                Some(true) => yes += position.logprob.exp(),
                Some(false) => no += position.logprob.exp(),
                None => {}
            }
        }
        if yes + no > 0.0 && (yes + no).is_finite() {
            let p_yes = (yes / (yes + no)).clamp(0.0, 1.0);
            let which = if at == 0 {
                "the first token".to_owned()
            } else {
                format!("token {} (the first word)", at + 1)
            };
            return Ok(YesNo {
                p_yes,
                from_probabilities: true,
                read: format!(
                    "P(yes) {p_yes:.3} from {which}'s {} likeliest (yes {yes:.3}, no {no:.3})",
                    position.top.len().max(1)
                ),
            });
        }
        if let Some(w) = word {
            return Ok(YesNo {
                p_yes: if w { 1.0 } else { 0.0 },
                from_probabilities: false,
                read: format!(
                    "the word written: {} (neither yes nor no among the first word's {} likeliest tokens)",
                    if w { "yes" } else { "no" },
                    position.top.len()
                ),
            });
        }
    } else if let Some(w) = word {
        return Ok(YesNo {
            p_yes: if w { 1.0 } else { 0.0 },
            from_probabilities: false,
            read: format!(
                "the word written: {} (no token probabilities)",
                if w { "yes" } else { "no" }
            ),
        });
    }
    Err(ParseError::new(
        if reply.trim().is_empty() {
            ParseErrorKind::Empty
        } else {
            ParseErrorKind::NotYesNo {
                word: written.chars().take(40).collect(),
            }
        },
        reply,
    ))
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
}
