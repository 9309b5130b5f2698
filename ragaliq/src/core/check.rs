//! What ragaliq made of each item of a judge's answer: where a verdict's
//! evidence was found, or why the item was set aside. Kept in recordings
//! beside the answer, so a reviewer sees it without matching quotes to
//! passages by hand.

use std::fmt;

/// One item of an answer, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// The item's number in the question (claim or passage, 1-based).
    pub item: usize,
    /// What was found.
    pub outcome: CheckOutcome,
}

/// What a check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// The evidence quote is in the question's passage `passage` (0-based
    /// among the passages asked), as `quote`.
    Found {
        /// The passage, 0-based in the exchange's passages.
        passage: usize,
        /// The passage text the quote covers.
        quote: String,
    },
    /// The verdict needs evidence and its quote is in no passage.
    Ungrounded,
    /// The verdict needs evidence and quotes none.
    NoQuote,
    /// The item could not be read (and was asked again alone).
    Unreadable(String),
    /// The item was set aside (an extracted claim not in the response).
    Dropped(String),
    /// How a one-word answer was read: P(yes) and the alternatives it came
    /// from, or the word written.
    Read(String),
}

impl fmt::Display for CheckOutcome {
    /// The text form recordings use, the passage written by its number in
    /// the question (`passage 2`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckOutcome::Found { passage, quote } => {
                write!(f, "found in passage {}: {quote:?}", passage + 1)
            }
            CheckOutcome::Ungrounded => f.write_str("ungrounded: the quote is in no passage"),
            CheckOutcome::NoQuote => f.write_str("no quote: the verdict cites no evidence"),
            CheckOutcome::Unreadable(why) => write!(f, "unreadable: {why}"),
            CheckOutcome::Dropped(why) => write!(f, "dropped: {why}"),
            CheckOutcome::Read(how) => write!(f, "read: {how}"),
        }
    }
}
