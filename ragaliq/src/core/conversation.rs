//! [`Conversation`]: a case of turns, each read with what came before it;
//! the [`Window`] of earlier turns a judge is shown, and what it was shown
//! ([`Shown`]).
//!
//! A turn of a conversation is graded as a [`RagCase`] whose
//! [`history`](RagCase::history) holds the turns before it
//! ([`Conversation::case`]). The first turn has none, so it is asked
//! exactly what a single case is asked: same questions, same
//! fingerprints, same recordings.

use super::case::{CaseError, RagCase};
use super::turn::{Grounding, Turn};
use serde::{Deserialize, Serialize};

/// How many earlier turns a judge is shown at most with a follow-up's
/// questions (the newest ones).
pub const HISTORY_TURNS: usize = 3;

/// How many characters of earlier turns a judge is shown at most with a
/// follow-up's questions, counted as [`Said::chars`] counts them (the
/// `User: ` and `Assistant: ` labels and line ends included). Older turns
/// are dropped first; see [`Window::shown`].
pub const HISTORY_CHARS: usize = 2_000;

/// A conversation: turns, each graded with what came before it.
///
/// Every metric reads each turn as a [`RagCase`] whose history is the
/// turns before it ([`case`](Self::case)); the judge is shown the last of
/// them ([`Window`]). An assertion on a conversation checks every turn, or
/// one ([`turn`](Self::turn)).
///
/// ```
/// use ragaliq::{Conversation, Turn};
/// let conversation = Conversation::new([
///     Turn::new("Can I return a jacket?")
///         .context(["Jackets can be returned within 30 days of delivery."])
///         .response("Yes, jackets can be returned."),
///     Turn::new("And how long do I have?")
///         .context(["Jackets can be returned within 30 days of delivery."])
///         .response("30 days from delivery."),
/// ])
/// .id("jacket-return");
/// assert!(conversation.validate().is_ok());
/// let second = conversation.case(2).unwrap();
/// assert_eq!(second.history.len(), 1);
/// assert_eq!(second.turn_number(), 2);
/// assert!(conversation.case(3).is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Conversation {
    /// A stable name (used in reports and recording names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The turns, first to last.
    pub turns: Vec<Turn>,
    /// Free-form labels for filtering.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// What a turn's answer may rest on besides its own passages.
    #[serde(default, skip_serializing_if = "Grounding::is_none")]
    pub grounding: Grounding,
}

impl Conversation {
    /// A conversation of `turns`, first to last.
    #[must_use]
    pub fn new<I: IntoIterator<Item = Turn>>(turns: I) -> Self {
        Conversation {
            turns: turns.into_iter().collect(),
            ..Conversation::default()
        }
    }

    /// Sets the conversation's id.
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the conversation's tags.
    #[must_use]
    pub fn tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Sets what a turn's answer may rest on besides its own passages.
    #[must_use]
    pub fn grounding(mut self, grounding: Grounding) -> Self {
        self.grounding = grounding;
        self
    }

    /// Turn `n` (1 for the first) alone, for an assertion or a metric on
    /// that turn only (read with the turns before it). A turn the
    /// conversation does not have is an error when it is evaluated, never
    /// a panic.
    ///
    /// ```
    /// # use ragaliq::{Conversation, Turn};
    /// let c = Conversation::new([Turn::new("Hi?").response("Hello.")]);
    /// assert_eq!(c.turn(1).number(), 1);
    /// ```
    #[must_use]
    pub fn turn(&self, n: usize) -> TurnOf<'_> {
        TurnOf {
            conversation: self,
            turn: n,
        }
    }

    /// Turn `n` (1 for the first) as a case: its fields, the
    /// conversation's id, tags and grounding, and the turns before it as
    /// its history.
    pub fn case(&self, n: usize) -> Result<RagCase, CaseError> {
        let Some(turn) = n.checked_sub(1).and_then(|i| self.turns.get(i)) else {
            return Err(CaseError {
                id: self.id.clone(),
                problem: format!(
                    "there is no turn {n}: the conversation has {} (turns count from 1)",
                    plural(self.turns.len(), "turn", "turns")
                ),
            });
        };
        let t = turn.clone();
        Ok(RagCase {
            id: self.id.clone(),
            query: t.query,
            context: t.context,
            response: t.response,
            expected_answer: t.expected_answer,
            expected_facts: t.expected_facts,
            tags: self.tags.clone(),
            retrieved_ids: t.retrieved_ids,
            relevant_ids: t.relevant_ids,
            relevant_passages: t.relevant_passages,
            history: self.turns[..n - 1].to_vec(),
            answerable: t.answerable,
            grounding: self.grounding,
        })
    }

    /// Checks every turn as [`RagCase::validate`] does (each read with the
    /// turns before it, which need an answer), and that there is one.
    pub fn validate(&self) -> Result<(), CaseError> {
        if self.turns.is_empty() {
            return Err(CaseError {
                id: self.id.clone(),
                problem: "the conversation has no turns".into(),
            });
        }
        for n in 1..=self.turns.len() {
            // A follow-up's problems name its turn; the first turn's are
            // named here.
            self.case(n)?.validate().map_err(|mut e| {
                if n == 1 {
                    e.problem = format!("turn 1: {}", e.problem);
                }
                e
            })?;
        }
        Ok(())
    }
}

/// One turn of a [`Conversation`], read with the turns before it
/// ([`Conversation::turn`]).
#[derive(Clone, Copy, Debug)]
pub struct TurnOf<'a> {
    /// The conversation.
    pub conversation: &'a Conversation,
    /// The turn's number (1 for the first).
    pub turn: usize,
}

impl TurnOf<'_> {
    /// The turn's number (1 for the first).
    #[must_use]
    pub fn number(&self) -> usize {
        self.turn
    }
}

/// What a judge's metrics and the assertion macros grade: a [`RagCase`]
/// (a single question, or a follow-up with its history), a
/// [`Conversation`] (every turn, each read with the turns before it), or
/// one turn of it ([`Conversation::turn`]). Sealed: those are the three.
///
/// ```
/// use ragaliq::{Conversation, Gradable, RagCase, Turn};
/// fn takes(_: &impl Gradable) {}
/// let conversation = Conversation::new([Turn::new("Hi?").response("Hello.")]);
/// takes(&RagCase::new("q"));
/// takes(&conversation);
/// takes(&conversation.turn(1));
/// ```
pub trait Gradable: sealed::Sealed {
    #[doc(hidden)]
    fn assessed(&self) -> Assessed<'_>;
}

/// What a [`Gradable`] is: not public API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Assessed<'a> {
    /// A single question (a follow-up, when it has a history).
    Case(&'a RagCase),
    /// Every turn of a conversation.
    Conversation(&'a Conversation),
    /// One turn of a conversation (1 for the first).
    Turn(&'a Conversation, usize),
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::RagCase {}
    impl Sealed for super::Conversation {}
    impl Sealed for super::TurnOf<'_> {}
    impl Sealed for super::Assessed<'_> {}
    impl<T: Sealed + ?Sized> Sealed for &T {}
}

impl Gradable for RagCase {
    fn assessed(&self) -> Assessed<'_> {
        Assessed::Case(self)
    }
}

impl Gradable for Conversation {
    fn assessed(&self) -> Assessed<'_> {
        Assessed::Conversation(self)
    }
}

impl Gradable for TurnOf<'_> {
    fn assessed(&self) -> Assessed<'_> {
        Assessed::Turn(self.conversation, self.turn)
    }
}

impl Gradable for Assessed<'_> {
    fn assessed(&self) -> Assessed<'_> {
        *self
    }
}

impl<T: Gradable + ?Sized> Gradable for &T {
    fn assessed(&self) -> Assessed<'_> {
        (**self).assessed()
    }
}

/// The earlier turns a judge is shown with a follow-up's questions: at
/// most `turns` of them (the newest) within `chars` characters, oldest
/// dropped first. The default is [`HISTORY_TURNS`] within
/// [`HISTORY_CHARS`].
///
/// ```
/// use ragaliq::{Turn, Window};
/// let history: Vec<Turn> = (1..=5)
///     .map(|i| Turn::new(format!("Question {i}?")).response(format!("Answer {i}.")))
///     .collect();
/// let shown = Window::DEFAULT.shown(&history);
/// assert_eq!(shown.said.iter().map(|s| s.turn).collect::<Vec<_>>(), [3, 4, 5]);
/// assert_eq!(shown.left_out, 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The most earlier turns shown.
    pub turns: usize,
    /// The most characters of them shown ([`Said::chars`]).
    pub chars: usize,
}

impl Default for Window {
    fn default() -> Self {
        Window::DEFAULT
    }
}

impl Window {
    /// [`HISTORY_TURNS`] turns within [`HISTORY_CHARS`] characters.
    pub const DEFAULT: Window = Window {
        turns: HISTORY_TURNS,
        chars: HISTORY_CHARS,
    };

    /// What of `history` (the turns before a turn, first to last) the
    /// judge is shown: whole turns, newest first, while they fit, oldest
    /// dropped first. The newest earlier turn is always shown: when it
    /// alone is over the cap, its answer is cut at a word to fit, ending in
    /// `[…]` (a follow-up read with none of what it follows would be read
    /// as a first question). An empty history shows nothing.
    #[must_use]
    pub fn shown(&self, history: &[Turn]) -> Shown {
        let mut said: Vec<Said> = Vec::new();
        let mut used = 0usize;
        for (i, turn) in history.iter().enumerate().rev() {
            if said.len() >= self.turns {
                break;
            }
            let s = Said {
                turn: i + 1,
                user: turn.query.trim().to_owned(),
                assistant: turn.response_text().trim().to_owned(),
                cut: false,
            };
            let cost = s.chars();
            if used + cost > self.chars {
                if said.is_empty() {
                    said.push(s.cut_to(self.chars));
                }
                break;
            }
            used += cost;
            said.push(s);
        }
        said.reverse();
        Shown {
            left_out: history.len() - said.len(),
            said,
        }
    }
}

/// What a judge was shown of the conversation before a turn.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Shown {
    /// The earlier turns shown, oldest first.
    pub said: Vec<Said>,
    /// Earlier turns left out (older than those shown).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_out: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Shown {
    /// Whether nothing was shown (a first turn).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.said.is_empty()
    }

    /// The characters shown ([`Said::chars`] summed).
    #[must_use]
    pub fn chars(&self) -> usize {
        self.said.iter().map(Said::chars).sum()
    }
}

/// One earlier turn as a judge was shown it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Said {
    /// Its number in the conversation (1 for the first).
    pub turn: usize,
    /// The user's message.
    pub user: String,
    /// The assistant's answer.
    pub assistant: String,
    /// The answer was cut to fit the window (it ends in `[…]`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

/// What cutting an answer adds.
const CUT_MARK: &str = " […]";

impl Said {
    /// The characters this turn takes in the window: `User: ` and the
    /// message, a line end, `Assistant: ` and the answer, a line end (as
    /// written, before `<` and `>` are escaped).
    #[must_use]
    pub fn chars(&self) -> usize {
        "User: ".len()
            + self.user.chars().count()
            + "\nAssistant: ".len()
            + self.assistant.chars().count()
            + 1
    }

    /// This turn with its answer cut at a word so that it takes at most
    /// `chars` characters (the user's message whole: what was asked is
    /// shown as asked).
    fn cut_to(mut self, chars: usize) -> Said {
        let fixed = self.chars() - self.assistant.chars().count();
        let room = chars.saturating_sub(fixed + CUT_MARK.chars().count());
        let head: String = self.assistant.chars().take(room).collect();
        let head = match head.rfind(char::is_whitespace) {
            Some(end) if head.len() < self.assistant.len() => head[..end].trim_end().to_owned(),
            _ => head,
        };
        self.assistant = format!("{head}{CUT_MARK}");
        self.cut = true;
        self
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(n: usize, answer_chars: usize) -> Vec<Turn> {
        (1..=n)
            .map(|i| Turn::new(format!("Q{i}?")).response("a".repeat(answer_chars)))
            .collect()
    }

    #[test]
    fn the_window_keeps_the_newest_turns_within_the_cap() {
        // Each turn: "User: Q1?" (9) + "\nAssistant: " (12) + 600 + 1 = 622.
        let history = turns(4, 600);
        assert_eq!(Said::chars(&Window::DEFAULT.shown(&history).said[0]), 622);
        let shown = Window::DEFAULT.shown(&history);
        assert_eq!(shown.said.len(), 3, "3 x 622 = 1866 fits in 2000");
        assert_eq!(shown.left_out, 1);
        assert_eq!(shown.said[0].turn, 2);
        let long = turns(4, 900);
        let shown = Window::DEFAULT.shown(&long);
        assert_eq!(
            shown.said.iter().map(|s| s.turn).collect::<Vec<_>>(),
            [3, 4],
            "a third 922-character turn would pass 2000: the oldest goes first"
        );
        assert!(shown.chars() <= HISTORY_CHARS);
    }

    #[test]
    fn an_answer_over_the_cap_alone_is_cut_at_a_word_and_marked() {
        let history = vec![Turn::new("Q?").response("word ".repeat(1000))];
        let shown = Window::DEFAULT.shown(&history);
        assert_eq!(shown.said.len(), 1);
        let said = &shown.said[0];
        assert!(said.cut);
        assert!(said.assistant.ends_with("word […]"), "{}", said.assistant);
        assert!(said.chars() <= HISTORY_CHARS, "{}", said.chars());
        assert_eq!(shown.left_out, 0);
    }

    #[test]
    fn a_first_turn_shows_nothing() {
        assert!(Window::DEFAULT.shown(&[]).is_empty());
    }

    #[test]
    fn a_turn_the_conversation_lacks_is_an_error_naming_how_many_it_has() {
        let c = Conversation::new(turns(2, 5)).id("c");
        let e = c.case(3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid case `c`: there is no turn 3: the conversation has 2 turns (turns count from 1)"
        );
        assert!(c.case(0).is_err());
    }

    #[test]
    fn an_earlier_turn_needs_an_answer() {
        let c = Conversation::new([Turn::new("Q1?"), Turn::new("Q2?").response("A2.")]).id("c");
        let e = c.validate().unwrap_err();
        assert!(e.problem.contains("turn 1 has no answer"), "{e}");
        assert!(
            c.case(1).unwrap().validate().is_ok(),
            "alone, turn 1 is a case"
        );
    }

    #[test]
    fn turns_read_from_yaml_refuse_unknown_fields() {
        let e = serde_saphyr::from_str::<Conversation>("turns:\n- query: q\n  answer: a\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("answer"), "{e}");
    }
}
