//! How the judge is asked for its verdicts: short yes/no questions read
//! from token probabilities, the same questions read from the word written,
//! or the longer JSON prompts.

use std::fmt;

/// How verdicts and scores are asked for (`[judge] strategy`).
///
/// Small judges answer short questions well and long ones badly: asked
/// "is the claim supported by the document? yes or no" and read from its
/// token probabilities, Qwen2.5-Coder-1.5B agreed with people far better
/// than with the four-field JSON prompt (BENCHMARKS.md). So a claim is
/// verified by one short question per claim (per chunk of a long context),
/// relevance is P(yes) that the response answers the question, and each
/// passage's relevance P(yes) that it contains the answer.
///
/// ```
/// use ragaliq::Strategy;
/// assert_eq!(Strategy::default(), Strategy::Probability);
/// assert_eq!(Strategy::from_name("json"), Some(Strategy::Json));
/// assert_eq!(Strategy::Word.to_string(), "word");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Strategy {
    /// Short yes/no questions; the answer is P(yes) from the first answer
    /// token's likeliest alternatives where the server returns token
    /// probabilities (OpenAI, llama.cpp, vLLM, …), the word written where
    /// it does not (Anthropic, and servers that return none: said once in
    /// the judge's description).
    #[default]
    Probability,
    /// The same questions, read from the word written; no probabilities
    /// asked for.
    Word,
    /// The JSON prompts: claims verified in batches of `verify_batch` with
    /// evidence quoted and checked, a relevance score with reasoning,
    /// passage verdicts with reasons.
    Json,
}

impl Strategy {
    /// Every strategy's name, for messages.
    pub const NAMES: &'static str = "probability, word, json";

    /// The strategy called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Strategy> {
        match name {
            "probability" => Some(Strategy::Probability),
            "word" => Some(Strategy::Word),
            "json" => Some(Strategy::Json),
            _ => None,
        }
    }

    /// Its name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Probability => "probability",
            Strategy::Word => "word",
            Strategy::Json => "json",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
