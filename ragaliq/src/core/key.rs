//! API keys that never show themselves.

use std::fmt;

/// An API key. Its `Debug` and `Display` never show it, and transports strip
/// it from any server message before that message reaches an error.
///
/// ```
/// use ragaliq::judge::ApiKey;
/// let key = ApiKey::new("example-secret");
/// assert_eq!(format!("{key:?}"), "ApiKey(***)");
/// assert_eq!(key.expose(), "example-secret");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    #[must_use]
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for building a request header.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `***`, whatever
    /// the key's length: a garbled message is better than a leaked key.
    pub(crate) fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            return text.to_owned();
        }
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}
