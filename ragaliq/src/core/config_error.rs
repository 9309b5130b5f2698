//! Invalid configuration, named by where it came from.

/// Invalid configuration; always names the key, variable or file at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A value that is not one of the accepted ones.
    #[error("{origin} = {value:?} is invalid: expected {expected}")]
    Invalid {
        /// Where the value came from: `RAGALIQ_CONCURRENCY`, or
        /// `ragaliq.toml: judge.concurrency`.
        origin: String,
        /// The value as written.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// A required setting that nobody gave.
    #[error("{what} is not set: {how}")]
    Missing {
        /// The setting, e.g. "the judge's model".
        what: String,
        /// Where to set it, naming the file and the variable.
        how: String,
    },
    /// A value that must not be shown (it may be a secret), with why it is wrong.
    #[error("{origin} is invalid: {problem} (the value is not shown, in case it is a secret)")]
    Hidden {
        /// Where the value came from.
        origin: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A configuration file that cannot be read or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// The reader's or parser's message (with line and column).
        message: String,
    },
    /// A prompt template that cannot be read or parsed.
    #[error("prompt template {origin}: {problem}")]
    Template {
        /// The file (or built-in name).
        origin: String,
        /// What is wrong.
        problem: String,
    },
}
