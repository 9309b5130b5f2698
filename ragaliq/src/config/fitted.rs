//! `[fitted]`: where a file's fitted thresholds and bands came from, and
//! whether they apply to the configured model.

use crate::core::Kind;

/// Where a file's fitted thresholds came from (its `[fitted]` table,
/// written by `cargo ragaliq calibrate --fit`), and whether they apply.
///
/// Thresholds fitted for one model do not carry over to another, kind by
/// kind: each kind `--fit` wrote (claims, answers, passages, graded
/// answers, judged responses) names the model it was fitted for
/// (`claims_model`, `passages_model`, …). A kind fitted for another model
/// than the one configured (by the file, `RAGALIQ_MODEL` or
/// `RAGALIQ_JUDGE`) takes its defaults (a variable that sets one still
/// wins), and the judge's description says so. Files written before the
/// model was kept per kind have one `model` for every kind.
///
/// ```
/// use ragaliq::Config;
/// use std::path::Path;
/// // Claims fitted on `small`, then passages on `large`.
/// let file = "[judge]\nprovider = \"openai-compatible\"\nmodel = \"large\"\nclaim_threshold = 0.31\npassage_threshold = 0.42\n\n[fitted]\nclaims_model = \"small\"\nclaims_kappa = 0.6\npassages_model = \"large\"\npassages_kappa = 0.5\n";
/// let read = |env: &dyn Fn(&str) -> Option<String>| {
///     Config::from_sources(Some((file, Path::new("judge.toml"))), Path::new("."), env).unwrap()
/// };
/// let large = read(&|_| None);
/// assert_eq!(large.claim_threshold, 0.33, "the default, not small's fit");
/// assert_eq!(large.passage_threshold, 0.42, "large's own fit");
/// let small = read(&|v| (v == "RAGALIQ_MODEL").then(|| "small".to_string()));
/// assert_eq!((small.claim_threshold, small.passage_threshold), (0.31, 0.5));
/// assert!(!small.fitted.unwrap().applied());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fitted {
    /// Each kind the table says was fitted, in the order claims, answers,
    /// passages, graded, judged.
    pub kinds: Vec<FittedKind>,
    /// Bands fitted for another model (`<kind>_band_model`), with that
    /// model: the default band stands for each.
    pub bands_not_applied: Vec<(Kind, String)>,
}

/// One kind of threshold a `[fitted]` table says was fitted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FittedKind {
    /// The kind, as its keys begin: `claims`, `answers`, `passages`,
    /// `graded`, `judged`.
    pub kind: &'static str,
    /// The model it was fitted for (`<kind>_model`, else the table's
    /// `model` in files written before); `None` when neither says, and then
    /// it applies.
    pub model: Option<String>,
    /// Whether it applies to the configured model.
    pub applied: bool,
    /// The keys `--fit` wrote for it (`judge.claim_threshold`, …).
    pub keys: Vec<&'static str>,
}

/// Each kind `--fit` writes: the prefix of its `[fitted]` entries, and the
/// keys its thresholds live in.
pub const FITTED_KINDS: [(&str, &[&str]); 5] = [
    (
        "claims",
        &["judge.claim_threshold", "judge.contradiction_ratio"],
    ),
    ("answers", &["thresholds.relevance"]),
    ("passages", &["judge.passage_threshold"]),
    ("graded", &["thresholds.correctness"]),
    ("judged", &["thresholds.criteria"]),
];

impl Fitted {
    /// Reads a `[fitted]` table for the configured `model`.
    pub(super) fn read(table: &toml::Table, model: &str) -> Fitted {
        let legacy = table.get("model").and_then(toml::Value::as_str);
        let kinds = FITTED_KINDS
            .iter()
            .filter(|(kind, _)| {
                let prefix = format!("{kind}_");
                // `contradiction_kappa` is written with a claims fit.
                table.keys().any(|k| k.starts_with(&prefix))
                    || (*kind == "claims" && table.keys().any(|k| k.starts_with("contradiction_")))
            })
            .map(|(kind, keys)| {
                let fitted_for = table
                    .get(&format!("{kind}_model"))
                    .and_then(toml::Value::as_str)
                    .or(legacy)
                    .map(str::to_owned);
                FittedKind {
                    kind,
                    applied: fitted_for.as_deref().is_none_or(|m| m == model),
                    model: fitted_for,
                    keys: keys.to_vec(),
                }
            })
            .collect();
        Fitted {
            kinds,
            bands_not_applied: Vec::new(),
        }
    }

    /// Whether every fitted kind applies to the configured model.
    #[must_use]
    pub fn applied(&self) -> bool {
        self.kinds.iter().all(|k| k.applied) && self.bands_not_applied.is_empty()
    }

    /// The line a judge's description adds when some fitted thresholds do
    /// not apply, else `None`.
    #[must_use]
    pub fn note(&self, model: &str) -> Option<String> {
        // One clause per model the thresholds were fitted for, in the
        // order the kinds come.
        let mut by_model: Vec<(&str, Vec<&str>)> = Vec::new();
        for k in self.kinds.iter().filter(|k| !k.applied) {
            let fitted_for = k.model.as_deref().unwrap_or("another model");
            match by_model.iter_mut().find(|(m, _)| *m == fitted_for) {
                Some((_, keys)) => keys.extend(&k.keys),
                None => by_model.push((fitted_for, k.keys.clone())),
            }
        }
        let clauses: Vec<String> = by_model
            .iter()
            .map(|(fitted_for, keys)| {
                format!(
                    "thresholds fitted for `{fitted_for}` not applied to `{model}`: the defaults stand for {}",
                    keys.join(", ")
                )
            })
            .collect();
        let mut clauses = clauses;
        for (kind, fitted_for) in &self.bands_not_applied {
            clauses.push(format!(
                "the {kind} band fitted for `{fitted_for}` not applied to `{model}`: the default band stands"
            ));
        }
        (!clauses.is_empty()).then(|| clauses.join("; "))
    }
}
