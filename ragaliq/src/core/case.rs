//! [`RagCase`]: one question, what the retriever found, and what the generator answered.

use super::labels::{self, RelevantIds};
use super::turn::{Grounding, Turn};
use serde::{Deserialize, Serialize};

/// One RAG exchange to evaluate: the user's query, the retrieved context (ranked
/// passages, best first), the generated response and, optionally, what a good
/// answer contains.
///
/// Building a case never fails; [`RagCase::validate`] checks it, and every
/// evaluator calls it first, so a bad case is a [`CaseError`] before any judge
/// call, never a panic deep inside an evaluator.
///
/// ```
/// use ragaliq::RagCase;
///
/// let case = RagCase::new("How long is the refund window?")
///     .id("refund-window")
///     .context(["Refunds are accepted within 30 days of delivery."])
///     .response("You can return items within 30 days of delivery.")
///     .expected_facts(["The refund window is 30 days."]);
/// assert!(case.validate().is_ok());
/// assert_eq!(case.context.len(), 1);
///
/// let empty = RagCase::new("  ").response("Anything.");
/// assert!(empty.validate().is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RagCase {
    /// A stable name for the case (used in reports and recording names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The user's question.
    pub query: String,
    /// Retrieved passages, in rank order (best first).
    #[serde(default)]
    pub context: Vec<String>,
    /// The answer the RAG pipeline generated. `None` until given: the
    /// metrics that grade an answer (faithfulness, hallucination,
    /// relevance, correctness, criteria) refuse a case without one, or with
    /// an empty one, as an input error rather than a score: an empty answer
    /// states nothing, so it would be vacuously faithful.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// A reference answer, used by context recall and context precision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<String>,
    /// Facts a complete answer must rest on, used by context recall.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_facts: Vec<String>,
    /// Free-form labels for filtering.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The IDs the retriever returned, in rank order (best first), for the
    /// retrieval metrics ([`retrieval`](crate::retrieval)). `None` when not
    /// given; `Some` of an empty list when the retriever returned nothing.
    #[serde(
        default,
        deserialize_with = "labels::ids",
        skip_serializing_if = "Option::is_none"
    )]
    pub retrieved_ids: Option<Vec<String>>,
    /// The IDs the retriever should return, each with a grade (1 for a plain
    /// list), for the retrieval metrics.
    #[serde(default, skip_serializing_if = "RelevantIds::is_empty")]
    pub relevant_ids: RelevantIds,
    /// The passages the retriever should return, as text, for a pipeline
    /// whose passages have no IDs: the retrieval metrics then rank the
    /// [`context`](Self::context) and match these by normalised text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relevant_passages: Vec<String>,
    /// The turns of the conversation before this one, first to last
    /// (empty for a single question). Every metric reads the case with the
    /// last of them ([`Window`](crate::Window)); with none, it asks exactly
    /// what it asks of a single question.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Turn>,
    /// Whether the passages can answer the question, as a person labelled
    /// it (see [`Turn::answerable`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answerable: Option<bool>,
    /// What the answer may rest on besides its own passages, when the case
    /// has a history ([`Grounding`]).
    #[serde(default, skip_serializing_if = "Grounding::is_none")]
    pub grounding: Grounding,
}

impl RagCase {
    /// Starts a case from the user's query.
    #[must_use]
    pub fn new(query: impl Into<String>) -> Self {
        RagCase {
            query: query.into(),
            ..RagCase::default()
        }
    }

    /// Sets the case's id.
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

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

    /// Sets the generated response (an empty one is an input error for the
    /// metrics that grade a response).
    #[must_use]
    pub fn response(mut self, response: impl Into<String>) -> Self {
        self.response = Some(response.into());
        self
    }

    /// The response, or `""` when none was given.
    #[must_use]
    pub fn response_text(&self) -> &str {
        self.response.as_deref().unwrap_or_default()
    }

    /// Sets the reference answer.
    #[must_use]
    pub fn expected_answer(mut self, answer: impl Into<String>) -> Self {
        self.expected_answer = Some(answer.into());
        self
    }

    /// Sets the facts a complete answer must rest on.
    #[must_use]
    pub fn expected_facts<I, S>(mut self, facts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.expected_facts = facts.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the case's tags.
    #[must_use]
    pub fn tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the IDs the retriever returned, best first (the retrieval
    /// metrics rank these).
    ///
    /// ```
    /// use ragaliq::RagCase;
    /// let case = RagCase::new("What is the refund window?")
    ///     .retrieved_ids(["faq-3", "policy-12", "terms-1"])
    ///     .relevant_ids(["policy-12"]);
    /// assert!(case.validate().is_ok());
    /// assert_eq!(case.retrieved_ids.as_deref().map(<[String]>::len), Some(3));
    /// ```
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
    ///
    /// ```
    /// use ragaliq::RagCase;
    /// let case = RagCase::new("q").relevant_ids(["policy-12", "faq-3"]);
    /// assert_eq!(case.relevant_ids.len(), 2);
    /// ```
    #[must_use]
    pub fn relevant_ids<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.relevant_ids = RelevantIds::from_ids(ids);
        self
    }

    /// Sets the IDs the retriever should return with a grade each (graded
    /// relevance: nDCG weighs each retrieved ID by its grade; 0 marks an
    /// ID judged not relevant).
    ///
    /// ```
    /// use ragaliq::RagCase;
    /// let case = RagCase::new("q").graded_relevance([("policy-12", 3.0), ("faq-3", 1.0)]);
    /// assert!(case.relevant_ids.is_graded());
    /// ```
    #[must_use]
    pub fn graded_relevance<I, S>(mut self, grades: I) -> Self
    where
        I: IntoIterator<Item = (S, f64)>,
        S: Into<String>,
    {
        self.relevant_ids = RelevantIds::graded(grades);
        self
    }

    /// Sets the passages the retriever should return, as text, for a
    /// pipeline whose passages have no IDs: the retrieval metrics rank the
    /// context and find these in it by normalised text (case, punctuation
    /// and spacing aside).
    ///
    /// ```
    /// use ragaliq::RagCase;
    /// let case = RagCase::new("q")
    ///     .context(["Stores open at nine.", "Refunds: 30 days."])
    ///     .relevant_passages(["refunds 30 days"]);
    /// assert!(case.validate().is_ok());
    /// ```
    #[must_use]
    pub fn relevant_passages<I, S>(mut self, passages: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.relevant_passages = passages.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the turns of the conversation before this one, first to last:
    /// the case is then a follow-up, read with them.
    ///
    /// ```
    /// use ragaliq::{RagCase, Turn};
    /// let case = RagCase::new("And how long do I have?")
    ///     .history([Turn::new("Can I return a jacket?").response("Yes, jackets can be returned.")])
    ///     .response("30 days from delivery.");
    /// assert_eq!(case.turn_number(), 2);
    /// assert!(case.validate().is_ok());
    /// ```
    #[must_use]
    pub fn history<I: IntoIterator<Item = Turn>>(mut self, turns: I) -> Self {
        self.history = turns.into_iter().collect();
        self
    }

    /// Says whether the passages can answer the question, as a person
    /// labelled it (the abstention check reads it instead of asking).
    #[must_use]
    pub fn answerable(mut self, answerable: bool) -> Self {
        self.answerable = Some(answerable);
        self
    }

    /// Sets what the answer may rest on besides its own passages.
    #[must_use]
    pub fn grounding(mut self, grounding: Grounding) -> Self {
        self.grounding = grounding;
        self
    }

    /// The case's turn in its conversation: 1 plus the turns before it.
    #[must_use]
    pub fn turn_number(&self) -> usize {
        self.history.len() + 1
    }

    /// Checks the case: a non-blank query, no blank passage, no blank expected fact,
    /// and retrieval labels that can be read (no blank ID, no ID labelled
    /// twice, grades 0 or more, no blank relevant passage).
    ///
    /// A missing or empty response is valid here (metrics that need one
    /// say so); an empty context is valid (every claim then has no evidence).
    /// A follow-up's earlier turns each need a message and an answer (the
    /// case is read with them), and its own problems name its turn.
    pub fn validate(&self) -> Result<(), CaseError> {
        for (i, turn) in self.history.iter().enumerate() {
            let problem = if turn.query.trim().is_empty() {
                Some(format!("turn {}: the query is empty", i + 1))
            } else if turn.response_text().trim().is_empty() {
                Some(format!(
                    "turn {} has no answer: turn {} is read with it (give it `response`)",
                    i + 1,
                    self.turn_number()
                ))
            } else {
                turn.context
                    .iter()
                    .position(|p| p.trim().is_empty())
                    .map(|p| format!("turn {}: context passage {} is empty", i + 1, p + 1))
            };
            if let Some(problem) = problem {
                return Err(CaseError {
                    id: self.id.clone(),
                    problem,
                });
            }
        }
        self.validate_own().map_err(|mut e| {
            if !self.history.is_empty() {
                e.problem = format!("turn {}: {}", self.turn_number(), e.problem);
            }
            e
        })
    }

    fn validate_own(&self) -> Result<(), CaseError> {
        let id = self.id.clone();
        if self.query.trim().is_empty() {
            return Err(CaseError {
                id,
                problem: "the query is empty".into(),
            });
        }
        if let Some(i) = self.context.iter().position(|p| p.trim().is_empty()) {
            return Err(CaseError {
                id,
                problem: format!("context passage {} is empty", i + 1),
            });
        }
        if let Some(i) = self.expected_facts.iter().position(|f| f.trim().is_empty()) {
            return Err(CaseError {
                id,
                problem: format!("expected fact {} is empty", i + 1),
            });
        }
        if let Some(i) = self
            .retrieved_ids
            .iter()
            .flatten()
            .position(|r| r.trim().is_empty())
        {
            return Err(CaseError {
                id,
                problem: format!("retrieved ID {} is empty", i + 1),
            });
        }
        if let Some(problem) = self.relevant_ids.problem() {
            return Err(CaseError { id, problem });
        }
        if let Some(i) = self
            .relevant_passages
            .iter()
            .position(|p| p.trim().is_empty())
        {
            return Err(CaseError {
                id,
                problem: format!("relevant passage {} is empty", i + 1),
            });
        }
        Ok(())
    }
}

/// A [`RagCase`] that cannot be evaluated, with the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid case{}: {problem}", id.as_deref().map(|i| format!(" `{i}`")).unwrap_or_default())]
pub struct CaseError {
    /// The case's id, when it has one.
    pub id: Option<String>,
    /// What is wrong with it.
    pub problem: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_query_is_named_in_the_error() {
        let err = RagCase::new(" \n").id("c1").validate().unwrap_err();
        assert_eq!(err.to_string(), "invalid case `c1`: the query is empty");
    }

    #[test]
    fn blank_passage_is_reported_by_position() {
        let err = RagCase::new("q")
            .context(["fine", " "])
            .validate()
            .unwrap_err();
        assert_eq!(err.problem, "context passage 2 is empty");
    }

    #[test]
    fn empty_response_and_context_are_valid() {
        assert!(RagCase::new("q").validate().is_ok());
    }

    #[test]
    fn unknown_fields_are_refused_when_deserializing() {
        let err = serde_json::from_str::<RagCase>(r#"{"query":"q","answer":"a"}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `answer`"), "{err}");
    }
}
