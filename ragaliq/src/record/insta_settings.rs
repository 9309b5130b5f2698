//! The insta settings that decide how a recording is written, read as insta
//! reads them: `INSTA_UPDATE`, `INSTA_FORCE_PASS` and `INSTA_OUTPUT` (the
//! variable wins), else `behavior.update`, `behavior.force_pass` and
//! `behavior.output` in the workspace's `.config/insta.yaml`, `insta.yaml`
//! or `.insta.yaml`, else insta's defaults; CI detected as insta detects it.
//!
//! insta exports its own reader only to cargo-insta (behind a feature that
//! builds clap's derive macros into every user's tests), so these few keys
//! are read here, with the same names, values and precedence.

use serde::Deserialize;
use std::path::Path;

/// How a recording that differs from the accepted one is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Update {
    /// `auto`: a pending `.snap.new`, or nothing on CI.
    Auto,
    /// `always` (or `1`): over the accepted `.snap`.
    Always,
    /// `new`: a pending `.snap.new`.
    New,
    /// `unseen`: over the `.snap` when there is none yet, else pending.
    Unseen,
    /// `no` (or `0`): nothing.
    No,
    /// `force`: over the `.snap`, even when it matches.
    Force,
}

/// What insta prints about a recording that differs (`INSTA_OUTPUT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Output {
    /// `diff` and `summary`: what changed, and where it was written.
    Full,
    /// `minimal`: where it was written.
    Minimal,
    /// `none`.
    Nothing,
}

/// The settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    pub update: Update,
    pub force_pass: bool,
    pub output: Output,
}

#[derive(Default, Deserialize)]
struct File {
    #[serde(default)]
    behavior: Behavior,
}

#[derive(Default, Deserialize)]
struct Behavior {
    update: Option<String>,
    force_update: Option<bool>,
    force_pass: Option<bool>,
    output: Option<String>,
}

impl Settings {
    /// The settings for `workspace`, from `env` and its insta configuration
    /// file; an invalid value names the variable or file and what it accepts.
    pub(crate) fn read(
        workspace: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, String> {
        let mut file = File::default();
        for name in [".config/insta.yaml", "insta.yaml", ".insta.yaml"] {
            let path = workspace.join(name);
            if let Ok(text) = std::fs::read_to_string(&path) {
                file = serde_saphyr::from_str(&text)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                break;
            }
        }
        let b = file.behavior;
        let var = |name: &str| env(name).filter(|v| !v.is_empty());
        let flag = |name: &str, from_file: Option<bool>| match var(name).as_deref() {
            None => Ok(from_file.unwrap_or(false)),
            Some("0") => Ok(false),
            Some("1") => Ok(true),
            Some(v) => Err(format!("{name} = {v:?} is invalid: expected 0 or 1")),
        };
        let legacy_force = matches!(var("INSTA_FORCE_UPDATE").as_deref(), Some("1"));
        let update = match var("INSTA_UPDATE")
            .or_else(|| legacy_force.then(|| "force".to_owned()))
            .or(b.update)
            .or_else(|| (b.force_update == Some(true)).then(|| "force".to_owned()))
            .as_deref()
            .unwrap_or("auto")
        {
            "auto" => Update::Auto,
            "always" | "1" => Update::Always,
            "new" => Update::New,
            "unseen" => Update::Unseen,
            "no" | "0" => Update::No,
            "force" => Update::Force,
            other => {
                return Err(format!(
                    "INSTA_UPDATE = {other:?} is invalid: expected auto, always, new, unseen, no or force"
                ));
            }
        };
        let output = match var("INSTA_OUTPUT")
            .or(b.output)
            .as_deref()
            .unwrap_or("diff")
        {
            "diff" | "summary" => Output::Full,
            "minimal" => Output::Minimal,
            "none" => Output::Nothing,
            other => {
                return Err(format!(
                    "INSTA_OUTPUT = {other:?} is invalid: expected diff, summary, minimal or none"
                ));
            }
        };
        Ok(Settings {
            update,
            force_pass: flag("INSTA_FORCE_PASS", b.force_pass)?,
            output,
        })
    }
}

/// Whether this is a CI run, as insta (and ragaliq's default mode) decide:
/// `CI` set to anything but `false`, `0` or nothing, or, when `CI` is
/// unset, `TF_BUILD` set.
pub(crate) fn is_ci(env: &dyn Fn(&str) -> Option<String>) -> bool {
    crate::core::Mode::default_for(env) == crate::core::Mode::Replay
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn variables_beat_the_file_and_defaults_are_insta_s() {
        let dir =
            std::env::temp_dir().join(format!("ragaliq-insta-settings-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".config")).unwrap();
        let s = Settings::read(&dir, &env(&[])).unwrap();
        assert_eq!(
            s,
            Settings {
                update: Update::Auto,
                force_pass: false,
                output: Output::Full
            }
        );
        std::fs::write(
            dir.join(".config/insta.yaml"),
            "behavior:\n  update: always\n  force_pass: true\n  output: minimal\n",
        )
        .unwrap();
        let s = Settings::read(&dir, &env(&[])).unwrap();
        assert_eq!(
            (s.update, s.force_pass, s.output),
            (Update::Always, true, Output::Minimal)
        );
        let s = Settings::read(
            &dir,
            &env(&[("INSTA_UPDATE", "no"), ("INSTA_FORCE_PASS", "0")]),
        )
        .unwrap();
        assert_eq!((s.update, s.force_pass), (Update::No, false));
        let e = Settings::read(&dir, &env(&[("INSTA_UPDATE", "sometimes")])).unwrap_err();
        assert!(e.contains("INSTA_UPDATE") && e.contains("unseen"), "{e}");
        let s = Settings::read(&dir, &env(&[("INSTA_FORCE_UPDATE", "1")])).unwrap();
        assert_eq!(
            s.update,
            Update::Force,
            "the legacy variable is a variable: it beats the file"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
