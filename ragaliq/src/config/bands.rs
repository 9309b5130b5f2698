//! `[bands]`, `RAGALIQ_BAND_<KIND>` and `[[escalate]]`: where a judge's
//! readings are uncertain, and the judges an uncertain item goes to next.

use super::Config;
use super::env::Resolver;
use super::fitted::Fitted;
use super::judge::Provider;
use crate::core::{Band, Bands, ConfigError, Kind};
use crate::transport::redact_url;
use serde::Deserialize;
use std::path::Path;

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBands {
    claims: Option<toml::Value>,
    answers: Option<toml::Value>,
    passages: Option<toml::Value>,
    graded: Option<toml::Value>,
    judged: Option<toml::Value>,
    custom: Option<toml::Value>,
}

impl RawBands {
    fn get(&self, kind: Kind) -> Option<&toml::Value> {
        match kind {
            Kind::Claims => self.claims.as_ref(),
            Kind::Answers => self.answers.as_ref(),
            Kind::Passages => self.passages.as_ref(),
            Kind::Graded => self.graded.as_ref(),
            Kind::Judged => self.judged.as_ref(),
            Kind::Custom => self.custom.as_ref(),
        }
    }
}

const BAND_EXPECTED: &str = "[low, high] with 0 <= low <= high <= 1 (readings from low up to high are uncertain; \"never\" for a side that decides nothing: [0.1, \"never\"] decides no under 0.1 and never yes), \"off\" (every reading decides by the threshold), \"all\" (no reading decides) or \"unmeasured\" (the starting band of a judge nothing was measured for, [0.05, 0.95))";

/// A band as a variable writes it: `off`, `all`, `unmeasured`, `0.1,0.5`,
/// `[0.1, 0.5]` or `0.1,never`.
fn parse_band(text: &str) -> Option<Band> {
    match text.trim() {
        "off" => return Some(Band::Off),
        "all" => return Some(Band::All),
        "unmeasured" => return Some(Band::Unmeasured),
        _ => {}
    }
    let inner = text
        .trim()
        .trim_start_matches('[')
        .trim_end_matches([']', ')']);
    let ends: Vec<Option<f64>> = inner
        .split(',')
        .map(|x| match x.trim().trim_matches('"') {
            "never" => Some(None),
            x => x.parse().ok().map(Some),
        })
        .collect::<Option<_>>()?;
    match ends[..] {
        [low, high] => Band::sides(low, high).ok(),
        _ => None,
    }
}

/// A band as `ragaliq.toml` writes it: `[0.1, 0.5]`, `[0.1, "never"]`,
/// `"off"`, `"all"`, `"unmeasured"`.
fn band_value(value: &toml::Value) -> Option<Band> {
    match value {
        toml::Value::String(s) if ["off", "all", "unmeasured"].contains(&s.as_str()) => {
            parse_band(s)
        }
        toml::Value::Array(a) => {
            let ends: Vec<Option<f64>> = a
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) if s == "never" => Some(None),
                    v => v
                        .as_float()
                        .or_else(|| v.as_integer().map(|i| i as f64))
                        .map(Some),
                })
                .collect::<Option<_>>()?;
            match ends[..] {
                [low, high] => Band::sides(low, high).ok(),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A TOML value as the file writes it, for messages.
fn show_value(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Array(a) => {
            let items: Vec<String> = a.iter().map(show_value).collect();
            format!("[{}]", items.join(", "))
        }
        other => format!("{other:?}"),
    }
}

/// The bands of `[bands]` and the `RAGALIQ_BAND_<KIND>` variables, over
/// the defaults of the judge serving `model` ([`Bands::measured`]).
pub(super) fn read_bands(
    r: &Resolver<'_>,
    raw: Option<&RawBands>,
    model: &str,
) -> Result<Bands, ConfigError> {
    let mut bands = Bands::measured(model);
    for kind in Kind::ALL {
        let var = format!("RAGALIQ_BAND_{}", kind.name().to_ascii_uppercase());
        if let Some(text) = (r.env)(&var) {
            let band = parse_band(&text).ok_or_else(|| ConfigError::Invalid {
                origin: var.clone(),
                value: text.clone(),
                expected: BAND_EXPECTED.into(),
            })?;
            bands.set(kind, band);
            continue;
        }
        if let Some(value) = raw.and_then(|b| b.get(kind)) {
            let band = band_value(value).ok_or_else(|| ConfigError::Invalid {
                origin: format!("{}: bands.{}", r.file, kind.name()),
                value: show_value(value),
                expected: BAND_EXPECTED.into(),
            })?;
            bands.set(kind, band);
        }
    }
    Ok(bands)
}

/// The judge of `[[escalate]]` number `n` (`entry`): resolved as the file
/// `whole` with `entry` (less its `bands`) as its `[judge]` and the
/// entry's `bands` as its `[bands]`, nothing else escalated, and of the
/// `RAGALIQ_*` variables only those that set the mode and collect mode
/// (the rest set the first judge).
pub(super) fn escalation(
    whole: &toml::Table,
    entry: &toml::Table,
    n: usize,
    file: Option<(&str, &Path)>,
    root: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let mut table = whole.clone();
    table.remove("escalate");
    table.remove("fitted");
    table.remove("bands");
    let mut judge = entry.clone();
    if let Some(bands) = judge.remove("bands") {
        table.insert("bands".into(), bands);
    }
    table.insert("judge".into(), toml::Value::Table(judge));
    let path = file.map_or_else(|| root.join("ragaliq.toml"), |(_, p)| p.to_path_buf());
    let only = |name: &str| {
        let kept =
            !name.starts_with("RAGALIQ_") || matches!(name, "RAGALIQ_MODE" | "RAGALIQ_COLLECT");
        if kept { env(name) } else { None }
    };
    Config::resolve(Some(("", &path)), root, &only, None, Some(table)).map_err(|e| match e {
        ConfigError::Invalid {
            origin,
            value,
            expected,
        } => ConfigError::Invalid {
            origin: format!("escalate #{n} ({origin})"),
            value,
            expected,
        },
        ConfigError::File { path, message } => ConfigError::File {
            path,
            message: format!("escalate #{n}: {message}"),
        },
        // The first judge's fixes (`[judge]`, RAGALIQ_MODEL, RAGALIQ_JUDGE)
        // do not reach this judge: name it, and the fix that does.
        ConfigError::Missing { what, .. } if what == "the judge's model" => {
            let text = |key: &str| entry.get(key).and_then(toml::Value::as_str);
            let provider = text("provider").unwrap_or(Provider::OpenAi.name());
            let at = text("base_url").map_or_else(String::new, |u| format!(" at {}", redact_url(u)));
            ConfigError::Missing {
                what: format!(
                    "the model of the judge escalated to (`[[escalate]]` #{n} in {}: {provider}{at})",
                    path.display()
                ),
                how: "add `model = \"<model>\"` to that table, on a line below its `[[escalate]]` and above any `[escalate.bands]` (the name its answers are recorded under: the model its server loaded, e.g. its --alias); `[judge]`'s model, RAGALIQ_MODEL and RAGALIQ_JUDGE set the first judge only".to_owned(),
            }
        }
        ConfigError::Missing { what, how } => ConfigError::Missing {
            what: format!("escalate #{n}: {what}"),
            how,
        },
        other => other,
    })
}

/// The judge's bands ([`read_bands`]), less those fitted for another
/// model than `model`: a `<kind>_band_model` in the file's `[fitted]`
/// (`fitted_table`) that names another model gives that kind its default
/// band, noted in `fitted`.
pub(super) fn judge_bands(
    r: &Resolver<'_>,
    raw: Option<&RawBands>,
    fitted_table: Option<&toml::Table>,
    fitted: Option<&mut Fitted>,
    model: &str,
) -> Result<Bands, ConfigError> {
    let mut bands = read_bands(r, raw, model)?;
    // A band fitted for one model applies to that model only, as a
    // threshold does: another model gets the default band, and the
    // judge's description says so. A variable setting it stands.
    if let (Some(table), Some(fitted)) = (fitted_table, fitted) {
        for kind in Kind::ALL {
            let var = format!("RAGALIQ_BAND_{}", kind.name().to_ascii_uppercase());
            if let Some(fitted_for) = table
                .get(&format!("{}_band_model", kind.name()))
                .and_then(toml::Value::as_str)
                && fitted_for != model
                && (r.env)(&var).is_none()
            {
                bands.set(kind, Bands::measured(model).get(kind));
                fitted.bands_not_applied.push((kind, fitted_for.to_owned()));
            }
        }
    }
    Ok(bands)
}

/// The judges of `[[escalate]]` (`list`), in order, each resolved by
/// [`escalation`].
pub(super) fn escalations(
    list: Option<&Vec<toml::Table>>,
    file: Option<(&str, &Path)>,
    root: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Config>, ConfigError> {
    let escalate = match list {
        None => Vec::new(),
        Some(list) => {
            let whole: toml::Table = match file {
                Some((text, _)) => toml::from_str(text).unwrap_or_default(),
                None => toml::Table::new(),
            };
            let mut out = Vec::with_capacity(list.len());
            for (i, entry) in list.iter().enumerate() {
                out.push(escalation(&whole, entry, i + 1, file, root, env)?);
            }
            out
        }
    };
    Ok(escalate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::testing::{err, load};
    use crate::core::Uncertain;

    #[test]
    fn bands_the_uncertain_policy_and_the_judges_to_escalate_to() {
        let file = "[judge]\nprovider = \"openai-compatible\"\nmodel = \"small\"\nbase_url = \"http://127.0.0.1:8766/v1\"\nclaim_threshold = 0.3\n\n[scoring]\nuncertain = \"pass\"\n\n[bands]\nclaims = [0.1, 0.5]\njudged = \"all\"\n\n[[escalate]]\nprovider = \"openai-compatible\"\nmodel = \"large\"\nbase_url = \"http://127.0.0.1:8767/v1\"\n\n[escalate.bands]\nclaims = [0.2, 0.4]\n";
        let c = load(
            Some(file),
            &[
                ("RAGALIQ_MODEL", "tiny"),
                ("RAGALIQ_BAND_ANSWERS", "0.3,0.8"),
            ],
        )
        .unwrap();
        assert_eq!(c.model, "tiny");
        assert_eq!(c.uncertain, Uncertain::Pass);
        assert_eq!(c.bands.get(Kind::Claims), Band::between(0.1, 0.5).unwrap());
        assert_eq!(c.bands.get(Kind::Judged), Band::All);
        assert_eq!(c.bands.get(Kind::Answers), Band::between(0.3, 0.8).unwrap());
        // A model nothing was measured for starts unmeasured.
        assert_eq!(c.bands.get(Kind::Passages), Band::Unmeasured);
        let next = &c.escalate[0];
        // The escalated judge is its own: its model, server and bands; the
        // file's other settings; no `RAGALIQ_*` variable of the first
        // judge's (RAGALIQ_MODEL sets the first judge only).
        assert_eq!(next.model, "large");
        assert_eq!(next.base_url.as_deref(), Some("http://127.0.0.1:8767/v1"));
        assert_eq!(
            next.bands.get(Kind::Claims),
            Band::between(0.2, 0.4).unwrap()
        );
        assert_eq!(next.bands.get(Kind::Answers), Band::Unmeasured);
        assert_eq!(next.claim_threshold, crate::core::DEFAULT_CLAIM_THRESHOLD);
        assert!(next.escalate.is_empty());
        // Errors name the escalated judge.
        let bad = file.replace("model = \"large\"", "model = \"large\"\ntemperature = 9");
        let e = load(Some(&bad), &[]).unwrap_err().to_string();
        assert!(
            e.starts_with("escalate #1 (ragaliq.toml: judge.temperature)"),
            "{e}"
        );
        // An escalated judge without a model: the error names that judge
        // and a fix that works, and the fix it prints loads.
        let no_model = file.replace("model = \"large\"\n", "");
        let e = load(Some(&no_model), &[("RAGALIQ_MODEL", "tiny")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "the model of the judge escalated to (`[[escalate]]` #1 in /pkg/ragaliq.toml: openai-compatible at http://127.0.0.1:8767/v1) is not set: add `model = \"<model>\"` to that table, on a line below its `[[escalate]]` and above any `[escalate.bands]` (the name its answers are recorded under: the model its server loaded, e.g. its --alias); `[judge]`'s model, RAGALIQ_MODEL and RAGALIQ_JUDGE set the first judge only"
        );
        let fixed = no_model.replace("[[escalate]]\n", "[[escalate]]\nmodel = \"large\"\n");
        let c = load(Some(&fixed), &[("RAGALIQ_MODEL", "tiny")]).unwrap();
        assert_eq!(c.escalate[0].model, "large");
        assert_eq!(
            c.escalate[0].bands.get(Kind::Claims),
            Band::between(0.2, 0.4).unwrap(),
            "its bands stay its own"
        );
        let e = err(Some("[bands]\nclaims = [0.6, 0.5]\n"), &[]);
        assert!(
            e.contains("bands.claims") && e.contains("[0.6, 0.5]"),
            "{e}"
        );
        let e = err(None, &[("RAGALIQ_UNCERTAIN", "maybe")]);
        assert!(e.contains("fail, pass or decide"), "{e}");
    }

    #[test]
    fn a_side_that_decides_nothing_is_spelt_never_in_the_file_and_the_variables() {
        let file = "[judge]\nmodel = \"qwen2.5-coder:1.5b\"\n\n[bands]\nclaims = [0.075, \"never\"]\nanswers = [\"never\", 0.9]\njudged = \"off\"\n";
        let c = load(
            Some(file),
            &[
                ("RAGALIQ_BAND_PASSAGES", "never,0.8"),
                ("RAGALIQ_BAND_CUSTOM", "unmeasured"),
            ],
        )
        .unwrap();
        assert_eq!(c.bands.get(Kind::Claims), Band::NoOnly { low: 0.075 });
        assert_eq!(c.bands.get(Kind::Answers), Band::YesOnly { high: 0.9 });
        assert_eq!(c.bands.get(Kind::Passages), Band::YesOnly { high: 0.8 });
        assert_eq!(c.bands.get(Kind::Judged), Band::Off);
        assert_eq!(c.bands.get(Kind::Custom), Band::Unmeasured);
        // Ollama's name of the kit's 1.5B: its measured band where none is set.
        assert_eq!(c.bands.get(Kind::Graded), Band::All);
        // What the file writes reads back the same.
        for band in [
            c.bands.get(Kind::Claims),
            c.bands.get(Kind::Answers),
            Band::Unmeasured,
        ] {
            let text = format!("[bands]\nclaims = {}\n", band.to_toml());
            assert_eq!(
                load(Some(&text), &[]).unwrap().bands.get(Kind::Claims),
                band,
                "{text}"
            );
        }
        let e = err(Some("[bands]\nclaims = [\"never\", \"sometimes\"]\n"), &[]);
        assert!(
            e.contains("bands.claims") && e.contains("\"never\" for a side"),
            "{e}"
        );
        let e = err(None, &[("RAGALIQ_BAND_CLAIMS", "0.1,nope")]);
        assert!(e.contains("RAGALIQ_BAND_CLAIMS"), "{e}");
    }
}
