//! [`Turn`]: one turn of a conversation, and the [`Grounding`] that says
//! what else of earlier turns its answer may rest on. A file of its own so
//! that [`RagCase`](super::RagCase) (whose history is turns) and
//! [`Conversation`](super::Conversation) (which makes cases of its turns)
//! both import it, and not each other.

use super::labels::{self, RelevantIds};
use serde::{Deserialize, Serialize};

/// One turn of a conversation: the user's message, what the pipeline
/// retrieved for it, what the assistant answered and, where the team has
/// them, the turn's labels.
///
/// ```
/// use ragaliq::Turn;
/// let turn = Turn::new("And how long do I have?")
///     .context(["Jackets can be returned within 30 days of delivery."])
///     .response("You have 30 days from delivery.")
///     .expected_answer("30 days from delivery")
///     .retrieved_ids(["policy-12"])
///     .relevant_ids(["policy-12"]);
/// assert_eq!(turn.query, "And how long do I have?");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Turn {
    /// The user's message.
    pub query: String,
    /// The passages the pipeline retrieved for it, best first.
    #[serde(default)]
    pub context: Vec<String>,
    /// What the assistant answered. A turn that later turns follow needs
    /// one: they are read with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// The turn's reference answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<String>,
    /// Facts a complete answer to the turn rests on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_facts: Vec<String>,
    /// The IDs the retriever returned for the turn, best first.
    #[serde(
        default,
        deserialize_with = "labels::ids",
        skip_serializing_if = "Option::is_none"
    )]
    pub retrieved_ids: Option<Vec<String>>,
    /// The IDs the retriever should return for the turn.
    #[serde(default, skip_serializing_if = "RelevantIds::is_empty")]
    pub relevant_ids: RelevantIds,
    /// The passages the retriever should return, as text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relevant_passages: Vec<String>,
    /// Whether the turn's passages can answer it, as a person labelled it
    /// (MTRAG-UN's unanswerable turns): `false` makes the abstention check
    /// expect the answer to say it cannot answer, with no question about
    /// the passages; `None` asks the judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answerable: Option<bool>,
}

/// The builders a turn and a single case share.
macro_rules! turn_builders {
    () => {
        /// Sets the retrieved passages, best first.
        #[must_use]
        pub fn context<I, S>(mut self, passages: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.context = passages.into_iter().map(Into::into).collect();
            self
        }

        /// Sets the answer.
        #[must_use]
        pub fn response(mut self, response: impl Into<String>) -> Self {
            self.response = Some(response.into());
            self
        }

        /// Sets the reference answer.
        #[must_use]
        pub fn expected_answer(mut self, answer: impl Into<String>) -> Self {
            self.expected_answer = Some(answer.into());
            self
        }

        /// Sets the facts a complete answer rests on.
        #[must_use]
        pub fn expected_facts<I, S>(mut self, facts: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.expected_facts = facts.into_iter().map(Into::into).collect();
            self
        }

        /// Sets the IDs the retriever returned, best first.
        #[must_use]
        pub fn retrieved_ids<I, S>(mut self, ids: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.retrieved_ids = Some(ids.into_iter().map(Into::into).collect());
            self
        }

        /// Sets the IDs the retriever should return, all equally relevant.
        #[must_use]
        pub fn relevant_ids<I, S>(mut self, ids: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.relevant_ids = RelevantIds::from_ids(ids);
            self
        }

        /// Sets the passages the retriever should return, as text.
        #[must_use]
        pub fn relevant_passages<I, S>(mut self, passages: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.relevant_passages = passages.into_iter().map(Into::into).collect();
            self
        }

        /// Says whether the passages can answer the question, as a person
        /// labelled it (the abstention check reads it instead of asking).
        #[must_use]
        pub fn answerable(mut self, answerable: bool) -> Self {
            self.answerable = Some(answerable);
            self
        }
    };
}

impl Turn {
    /// Starts a turn from the user's message.
    #[must_use]
    pub fn new(query: impl Into<String>) -> Self {
        Turn {
            query: query.into(),
            ..Turn::default()
        }
    }

    turn_builders!();

    /// The answer, or `""` when none was given.
    #[must_use]
    pub fn response_text(&self) -> &str {
        self.response.as_deref().unwrap_or_default()
    }
}

/// What, besides a turn's own passages, its answer may rest on, for
/// faithfulness and hallucination: what earlier turns retrieved, and what
/// the user said (earlier and in the turn). Off by default: an answer
/// rests on its own passages. Either is taken from the turns the judge is
/// shown ([`Window`](super::Window)), and listed after the turn's own passages, what the
/// user said as `User (turn N): …`.
///
/// ```
/// use ragaliq::Grounding;
/// assert!(Grounding::default().is_none());
/// assert!(!Grounding::ALL.is_none());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Grounding {
    /// The passages earlier turns retrieved.
    #[serde(default)]
    pub earlier_passages: bool,
    /// What the user said, in earlier turns and in this one.
    #[serde(default)]
    pub user_messages: bool,
}

impl Grounding {
    /// A turn's answer rests on its own passages only.
    pub const NONE: Grounding = Grounding {
        earlier_passages: false,
        user_messages: false,
    };
    /// What earlier turns retrieved counts as evidence too.
    pub const EARLIER_PASSAGES: Grounding = Grounding {
        earlier_passages: true,
        user_messages: false,
    };
    /// What the user said counts as evidence too.
    pub const USER_MESSAGES: Grounding = Grounding {
        earlier_passages: false,
        user_messages: true,
    };
    /// Earlier turns' passages and what the user said count as evidence too.
    pub const ALL: Grounding = Grounding {
        earlier_passages: true,
        user_messages: true,
    };

    /// Whether nothing but the turn's own passages counts.
    #[must_use]
    pub fn is_none(&self) -> bool {
        *self == Grounding::NONE
    }
}
