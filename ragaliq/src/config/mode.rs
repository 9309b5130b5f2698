//! `mode`: which of replay, auto, record and live applies, and what
//! decided it (a test's attribute, `RAGALIQ_MODE`, the file, CI).

use super::env::{Resolver, text};
use crate::core::{ConfigError, Mode};
use std::path::{Path, PathBuf};

/// What decided a [`Config`](super::Config)'s mode. Its `Display` is the reason in words
/// (`CI is set`, `RAGALIQ_MODE`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModeOrigin {
    /// `RAGALIQ_MODE` in the environment.
    Variable,
    /// `mode` in the configuration file at this path.
    File(PathBuf),
    /// `#[rag_test(mode = "…")]` on this test (`module::test`).
    Attribute(String),
    /// Code set it after loading ([`Config::set_mode`](super::Config::set_mode); under CI, replay
    /// only).
    Code,
    /// Nothing asked for a mode (or only what CI made ragaliq ignore), and
    /// `CI` is set: replay.
    Ci,
    /// Nothing asked for a mode, and `CI` is not set: auto.
    Default,
}

impl std::fmt::Display for ModeOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModeOrigin::Variable => f.write_str("RAGALIQ_MODE"),
            ModeOrigin::File(path) => write!(f, "{}'s mode", file_label(path)),
            ModeOrigin::Attribute(test) => write!(f, "#[rag_test(mode = …)] on `{test}`"),
            ModeOrigin::Code => f.write_str("set by the program"),
            ModeOrigin::Ci => f.write_str("CI is set"),
            ModeOrigin::Default => f.write_str("the default outside CI"),
        }
    }
}

/// A mode that was asked for and ignored because `CI` is set.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IgnoredMode {
    /// The mode asked for.
    pub mode: Mode,
    /// Who asked: the file or a test's attribute.
    pub origin: ModeOrigin,
}

/// `ragaliq.toml's mode = "auto"`, `#[rag_test(mode = "auto")] on test
/// `rag::refund``.
impl std::fmt::Display for IgnoredMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.origin {
            ModeOrigin::File(path) => {
                write!(f, "{}'s mode = \"{}\"", file_label(path), self.mode)
            }
            ModeOrigin::Attribute(test) => {
                write!(f, "#[rag_test(mode = \"{}\")] on test `{test}`", self.mode)
            }
            other => write!(f, "mode {} ({other})", self.mode),
        }
    }
}

/// A configuration file's name, as messages call it.
fn file_label(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The mode from what asked for one, in precedence order (a test's
/// attribute, `RAGALIQ_MODE`, the file): the first that asked, else the
/// default (`replay` under CI, `auto` elsewhere).
///
/// Under CI, only `RAGALIQ_MODE` may ask for a mode that calls the judge: a
/// file or an attribute that asks for anything but replay is skipped, and
/// the first one skipped that would otherwise have decided is returned as
/// ignored, so that it can be said. A CI job that records on purpose says
/// so in its own environment.
pub(super) fn pick_mode(
    asked: [Option<(Mode, ModeOrigin)>; 3],
    ci: bool,
) -> (Mode, ModeOrigin, Option<IgnoredMode>) {
    let mut ignored = None;
    for (mode, origin) in asked.into_iter().flatten() {
        if ci && mode != Mode::Replay && origin != ModeOrigin::Variable {
            ignored.get_or_insert(IgnoredMode { mode, origin });
            continue;
        }
        return (mode, origin, ignored);
    }
    if ci {
        (Mode::Replay, ModeOrigin::Ci, ignored)
    } else {
        (Mode::Auto, ModeOrigin::Default, ignored)
    }
}

/// The mode and what decided it: a test's `attribute`, then
/// `RAGALIQ_MODE`, then the file's `mode` (`raw`, in the file at
/// `file_path`), under CI (`ci`) only as [`pick_mode`] allows.
pub(super) fn read_mode(
    r: &Resolver<'_>,
    raw: Option<String>,
    attribute: Option<(Mode, String)>,
    file_path: PathBuf,
    ci: bool,
) -> Result<(Mode, ModeOrigin, Option<IgnoredMode>), ConfigError> {
    let valid_mode = |m: &String| Mode::from_name(m).is_some();
    let variable_mode = r
        .pick("RAGALIQ_MODE", "mode", None, text, valid_mode, Mode::NAMES)?
        .map(|m| Mode::from_name(&m).expect("checked"));
    // The variable beats the file: the file's mode is read (and
    // checked) only when the variable does not set one.
    let file_mode = match variable_mode {
        Some(_) => None,
        None => r
            .pick_file("mode", raw, valid_mode, Mode::NAMES)?
            .map(|m| Mode::from_name(&m).expect("checked")),
    };
    Ok(pick_mode(
        [
            attribute.map(|(m, test)| (m, ModeOrigin::Attribute(test))),
            variable_mode.map(|m| (m, ModeOrigin::Variable)),
            file_mode.map(|m| (m, ModeOrigin::File(file_path))),
        ],
        ci,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::config::testing::load;
    use std::collections::HashMap;

    #[test]
    fn ci_defaults_to_replay() {
        assert_eq!(load(None, &[("CI", "true")]).unwrap().mode, Mode::Replay);
        assert_eq!(load(None, &[("CI", "false")]).unwrap().mode, Mode::Auto);
        assert_eq!(
            load(None, &[("CI", "1"), ("RAGALIQ_MODE", "record")])
                .unwrap()
                .mode,
            Mode::Record
        );
    }

    #[test]
    fn under_ci_a_file_may_only_ask_for_replay() {
        for asked in ["auto", "record", "live"] {
            let file = format!("mode = \"{asked}\"\n");
            let c = load(Some(&file), &[("CI", "true")]).unwrap();
            assert_eq!((c.mode, &c.mode_origin), (Mode::Replay, &ModeOrigin::Ci));
            assert_eq!(
                c.mode_reason(),
                format!("CI is set; ragaliq.toml's mode = \"{asked}\" ignored")
            );
            let warning = c.mode_warning().unwrap();
            assert!(
                warning.contains(&format!(
                    "ragaliq.toml's mode = \"{asked}\" (/pkg/ragaliq.toml) is ignored and the mode is replay"
                )) && warning.contains("set RAGALIQ_MODE=record in the job's environment")
                    && !warning.contains('\n'),
                "{warning}"
            );
            // Outside CI the file decides.
            let c = load(Some(&file), &[("CI", "false")]).unwrap();
            assert_eq!(c.mode, Mode::from_name(asked).unwrap());
            assert_eq!(c.mode_reason(), "ragaliq.toml's mode");
            assert!(c.mode_warning().is_none());
            // TF_BUILD (Azure Pipelines) is CI too, as insta has it.
            let c = load(Some(&file), &[("TF_BUILD", "True")]).unwrap();
            assert_eq!(c.mode, Mode::Replay);
        }
        // Replay asked for under CI is no conflict.
        let c = load(Some("mode = \"replay\"\n"), &[("CI", "true")]).unwrap();
        assert_eq!(c.mode, Mode::Replay);
        assert!(matches!(c.mode_origin, ModeOrigin::File(_)));
        assert!(c.mode_ignored.is_none() && c.mode_warning().is_none());
        // The job's own variable records on purpose, and nothing is ignored:
        // the variable beats the file anyway.
        let c = load(
            Some("mode = \"auto\"\n"),
            &[("CI", "true"), ("RAGALIQ_MODE", "record")],
        )
        .unwrap();
        assert_eq!(
            (c.mode, &c.mode_origin),
            (Mode::Record, &ModeOrigin::Variable)
        );
        assert!(c.mode_warning().is_none());
        assert_eq!(
            load(None, &[("CI", "true")]).unwrap().mode_reason(),
            "CI is set"
        );
        assert_eq!(
            load(None, &[]).unwrap().mode_reason(),
            "the default outside CI"
        );
    }

    #[test]
    fn the_attribute_pins_a_mode_except_under_ci() {
        let with = |vars: &[(&str, &str)], attribute: Mode| {
            let vars: HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let env = move |name: &str| vars.get(name).cloned();
            Config::resolve(
                Some(("mode = \"auto\"\n", Path::new("/pkg/ragaliq.toml"))),
                Path::new("/pkg"),
                &env,
                Some((attribute, "rag::refund".to_owned())),
                None,
            )
            .unwrap()
        };
        // Outside CI it beats the variable and the file.
        let c = with(&[("RAGALIQ_MODE", "replay")], Mode::Live);
        assert_eq!(c.mode, Mode::Live);
        assert_eq!(c.mode_reason(), "#[rag_test(mode = …)] on `rag::refund`");
        // Under CI, anything but replay is ignored; the file's auto is too.
        for asked in [Mode::Auto, Mode::Record, Mode::Live] {
            let c = with(&[("CI", "true")], asked);
            assert_eq!((c.mode, &c.mode_origin), (Mode::Replay, &ModeOrigin::Ci));
            assert_eq!(
                c.mode_reason(),
                format!("CI is set; #[rag_test(mode = \"{asked}\")] on test `rag::refund` ignored")
            );
            assert!(c.mode_warning().unwrap().contains("RAGALIQ_MODE=record"));
        }
        // The nightly job's variable decides, and the line says what it
        // overrode.
        let c = with(&[("CI", "true"), ("RAGALIQ_MODE", "record")], Mode::Auto);
        assert_eq!(c.mode, Mode::Record);
        assert_eq!(
            c.mode_reason(),
            "RAGALIQ_MODE; CI is set, so #[rag_test(mode = \"auto\")] on test `rag::refund` is ignored"
        );
        // An attribute that pins replay stays pinned, even for that job.
        let c = with(&[("CI", "true"), ("RAGALIQ_MODE", "record")], Mode::Replay);
        assert_eq!(c.mode, Mode::Replay);
        assert!(c.mode_warning().is_none());
    }
}
