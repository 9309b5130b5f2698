//! What a judge's exchange and the pipeline's call both write: token
//! counts, a reply kept as readable text, a short quote of a text. A file
//! of its own so that [`recording`](super::recording) (which holds calls)
//! and [`call`](super::call) (which writes them) both import it, and not
//! each other.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Token counts of one exchange (or one pipeline call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tokens {
    /// Prompt tokens.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
}

/// A reply kept as text (it holds no JSON value): written as a literal
/// block (`|`), readable as the judge wrote it, unless only a quoted
/// string reads back exactly.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReplyText {
    pub(crate) text: String,
    pub(crate) block: bool,
}

impl Serialize for ReplyText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.block {
            serde_saphyr::LitStr(&self.text).serialize(s)
        } else {
            self.text.serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for ReplyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|text| ReplyText { text, block: true })
    }
}

/// `s` trimmed and quoted, cut at `max` characters (an ellipsis says so).
pub(crate) fn quote(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= max {
        format!("\"{s}\"")
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("\"{cut}…\"")
    }
}
