//! Where judge answers come from: recordings, the judge, or both.

use serde::Deserialize;

/// Where judge answers come from: recordings, the judge, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Recordings only; nothing is sent.
    Replay,
    /// Replay what is recorded, call the judge for the rest and record it.
    Auto,
    /// Call the judge for everything and record afresh.
    Record,
    /// Call the judge; read and write no recording.
    Live,
}

impl Mode {
    /// The accepted spellings.
    pub const NAMES: &'static str = "replay, auto, record, live";

    /// The mode's name, as configuration spells it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mode::Replay => "replay",
            Mode::Auto => "auto",
            Mode::Record => "record",
            Mode::Live => "live",
        }
    }

    /// Parses a mode name.
    #[must_use]
    pub fn from_name(s: &str) -> Option<Mode> {
        match s {
            "replay" => Some(Mode::Replay),
            "auto" => Some(Mode::Auto),
            "record" => Some(Mode::Record),
            "live" => Some(Mode::Live),
            _ => None,
        }
    }

    /// `replay` on CI, `auto` elsewhere. CI is detected exactly as insta
    /// detects it: `CI` set to anything but `false`, `0` or nothing, or, when
    /// `CI` is unset, `TF_BUILD` set.
    #[must_use]
    pub fn default_for(env: &dyn Fn(&str) -> Option<String>) -> Mode {
        let ci = match env("CI").as_deref() {
            Some("false" | "0" | "") => false,
            Some(_) => true,
            None => env("TF_BUILD").is_some(),
        };
        if ci { Mode::Replay } else { Mode::Auto }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
