//! [`RagCase`]: one question, what the retriever found, and what the generator answered.

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

    /// Checks the case: a non-blank query, no blank passage, no blank expected fact.
    ///
    /// A missing or empty response is valid here (metrics that need one
    /// say so); an empty context is valid (every claim then has no evidence).
    pub fn validate(&self) -> Result<(), CaseError> {
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
