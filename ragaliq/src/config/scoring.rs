//! `[thresholds]` and `[scoring]`: what passes, and how verdicts become a
//! score (weights, samples, agreement, correctness, the uncertain policy).

use super::env::{Resolver, boolean, float, text};
use crate::core::{ConfigError, DEFAULT_AGREEMENT, Metric, Samples, Uncertain, VerdictWeights};
use serde::Deserialize;

pub(super) const WEIGHTS_EXPECTED: &str =
    "ratio, weighted, strict, or four numbers \"supported,partial,no_evidence,contradicted\"";

pub(super) fn parse_weights(v: &str) -> Option<VerdictWeights> {
    if let Some(w) = VerdictWeights::preset(v.trim()) {
        return Some(w);
    }
    let n: Vec<f64> = v
        .split(',')
        .map(|x| x.trim().parse().ok())
        .collect::<Option<_>>()?;
    let w = match n[..] {
        [a, b, c, d] => VerdictWeights::new(a, b, c, d),
        _ => return None,
    };
    w.is_finite().then_some(w)
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawThresholds {
    pub(super) faithfulness: Option<f64>,
    pub(super) hallucination: Option<f64>,
    pub(super) relevance: Option<f64>,
    pub(super) context_precision: Option<f64>,
    pub(super) context_recall: Option<f64>,
    pub(super) correctness: Option<f64>,
    pub(super) criteria: Option<f64>,
    pub(super) custom: Option<f64>,
    pub(super) retrieval: Option<f64>,
    pub(super) abstention: Option<f64>,
    pub(super) consistency: Option<f64>,
    pub(super) retention: Option<f64>,
}

impl RawThresholds {
    pub(super) fn get(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::Faithfulness => self.faithfulness,
            Metric::Hallucination => self.hallucination,
            Metric::Relevance => self.relevance,
            Metric::ContextPrecision => self.context_precision,
            Metric::ContextRecall => self.context_recall,
            Metric::Correctness => self.correctness,
            Metric::Criteria => self.criteria,
            Metric::Custom => self.custom,
            Metric::Retrieval => self.retrieval,
            Metric::Abstention => self.abstention,
            Metric::Consistency => self.consistency,
            Metric::Retention => self.retention,
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScoring {
    pub(super) weights: Option<RawWeights>,
    pub(super) confidence_floor: Option<f64>,
    pub(super) correctness: Option<String>,
    pub(super) samples: Option<RawSamples>,
    pub(super) agreement: Option<f64>,
    pub(super) evidence: Option<String>,
    pub(super) uncertain: Option<String>,
    pub(super) found_rule: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawSamples {
    Count(i64),
    Name(String),
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawWeights {
    Preset(String),
    Table(RawWeightTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWeightTable {
    pub(super) supported: f64,
    pub(super) partially_supported: f64,
    pub(super) no_evidence: f64,
    pub(super) contradicted: f64,
}

/// What `[thresholds]`, `[scoring]` and `judge.criteria_form` say, read
/// and checked.
pub(super) struct ScoringSettings {
    pub threshold_values: [f64; Metric::ALL.len()],
    pub weights: VerdictWeights,
    pub confidence_floor: Option<f64>,
    pub correctness: crate::core::Correctness,
    pub criteria_form: crate::core::CriteriaForm,
    pub samples: Samples,
    pub evidence_checked: bool,
    pub agreement: f64,
    pub uncertain: Uncertain,
    pub found_rule: bool,
}

/// `[thresholds]` (`thresholds`), `[scoring]` (`scoring`) and
/// `judge.criteria_form` (`raw_criteria_form`), with their variables, in
/// the order they are checked.
pub(super) fn read_scoring(
    r: &Resolver<'_>,
    thresholds: &RawThresholds,
    scoring: RawScoring,
    raw_criteria_form: Option<String>,
    file_name: &str,
) -> Result<ScoringSettings, ConfigError> {
    let mut threshold_values = Metric::ALL.map(Metric::default_threshold);
    for (slot, metric) in threshold_values.iter_mut().zip(Metric::ALL) {
        let var = format!("RAGALIQ_THRESHOLD_{}", metric.name().to_uppercase());
        let key = format!("thresholds.{}", metric.name());
        if let Some(t) = r.pick(
            &var,
            &key,
            thresholds.get(metric),
            float,
            |t| (0.0..=1.0).contains(t),
            "a number from 0 to 1",
        )? {
            *slot = t;
        }
    }

    let weights = match ((r.env)("RAGALIQ_WEIGHTS"), scoring.weights) {
        (Some(v), _) => parse_weights(&v).ok_or_else(|| ConfigError::Invalid {
            origin: "RAGALIQ_WEIGHTS".into(),
            value: v,
            expected: WEIGHTS_EXPECTED.into(),
        })?,
        (None, Some(RawWeights::Preset(name))) => {
            VerdictWeights::preset(&name).ok_or_else(|| ConfigError::Invalid {
                origin: format!("{file_name}: scoring.weights"),
                value: name,
                expected: WEIGHTS_EXPECTED.into(),
            })?
        }
        (None, Some(RawWeights::Table(t))) => {
            let w = VerdictWeights::new(
                t.supported,
                t.partially_supported,
                t.no_evidence,
                t.contradicted,
            );
            if !w.is_finite() {
                return Err(ConfigError::Invalid {
                    origin: format!("{file_name}: scoring.weights"),
                    value: format!("{w:?}"),
                    expected: "finite numbers".into(),
                });
            }
            w
        }
        (None, None) => VerdictWeights::RATIO,
    };
    let confidence_floor = r.pick(
        "RAGALIQ_CONFIDENCE_FLOOR",
        "scoring.confidence_floor",
        scoring.confidence_floor,
        float,
        |t| (0.0..=1.0).contains(t),
        "a number from 0 to 1",
    )?;
    let correctness = r
        .pick(
            "RAGALIQ_CORRECTNESS",
            "scoring.correctness",
            scoring.correctness,
            text,
            |v| v.parse::<crate::core::Correctness>().is_ok(),
            crate::core::Correctness::NAMES,
        )?
        .map_or(crate::core::Correctness::default(), |v| {
            v.parse().expect("checked")
        });
    let criteria_form = r
        .pick(
            "RAGALIQ_CRITERIA_FORM",
            "judge.criteria_form",
            raw_criteria_form,
            text,
            |v| crate::core::CriteriaForm::from_name(v).is_some(),
            crate::core::CriteriaForm::NAMES,
        )?
        .map_or(crate::core::CriteriaForm::YesNo, |v| {
            crate::core::CriteriaForm::from_name(&v).expect("checked")
        });
    let samples = match ((r.env)("RAGALIQ_SAMPLES"), scoring.samples) {
        (Some(v), _) => Samples::parse(&v).ok_or_else(|| ConfigError::Invalid {
            origin: "RAGALIQ_SAMPLES".into(),
            value: v.clone(),
            expected: Samples::EXPECTED.into(),
        })?,
        (None, Some(raw)) => {
            let text = match &raw {
                RawSamples::Count(n) => n.to_string(),
                RawSamples::Name(s) => s.clone(),
            };
            Samples::parse(&text).ok_or_else(|| ConfigError::Invalid {
                origin: format!("{file_name}: scoring.samples"),
                value: text,
                expected: Samples::EXPECTED.into(),
            })?
        }
        (None, None) => Samples::default(),
    };
    let evidence_checked = r
        .pick(
            "RAGALIQ_EVIDENCE",
            "scoring.evidence",
            scoring.evidence,
            text,
            |v| v == "checked" || v == "off",
            "checked or off",
        )?
        .is_none_or(|v| v == "checked");
    let agreement = r
        .pick(
            "RAGALIQ_AGREEMENT",
            "scoring.agreement",
            scoring.agreement,
            float,
            |a| *a > 0.5 && *a <= 1.0,
            "a share over 0.5 and up to 1 (0.6: 3 of 5 samples must agree)",
        )?
        .unwrap_or(DEFAULT_AGREEMENT);

    let uncertain = r
        .pick(
            "RAGALIQ_UNCERTAIN",
            "scoring.uncertain",
            scoring.uncertain,
            text,
            |v| v.parse::<Uncertain>().is_ok(),
            "fail, pass or decide",
        )?
        .map_or(Uncertain::default(), |v| v.parse().expect("checked"));
    let found_rule = r
        .pick(
            "RAGALIQ_FOUND_RULE",
            "scoring.found_rule",
            scoring.found_rule,
            boolean,
            |_| true,
            "true (a found answer with nothing against it is decided with no call) or false (the judge is asked about every answer)",
        )?
        .unwrap_or(true);
    Ok(ScoringSettings {
        threshold_values,
        weights,
        confidence_floor,
        correctness,
        criteria_form,
        samples,
        evidence_checked,
        agreement,
        uncertain,
        found_rule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::testing::{err, load};

    #[test]
    fn correctness_names_and_the_chosen_defaults() {
        let c = load(None, &[]).unwrap();
        assert_eq!(c.correctness, crate::core::Correctness::Direct);
        assert_eq!(c.threshold(Metric::Correctness), 0.5);
        assert_eq!(c.threshold(Metric::Criteria), 0.45);
        for (name, measure) in [
            ("direct", crate::core::Correctness::Direct),
            ("claims", crate::core::Correctness::F1),
            ("f1", crate::core::Correctness::F1),
            ("recall", crate::core::Correctness::Recall),
        ] {
            let file = format!("[scoring]\ncorrectness = \"{name}\"\n");
            assert_eq!(load(Some(&file), &[]).unwrap().correctness, measure);
            let var = load(None, &[("RAGALIQ_CORRECTNESS", name)]).unwrap();
            assert_eq!(var.correctness, measure);
        }
        let e = err(None, &[("RAGALIQ_CORRECTNESS", "exact")]);
        assert!(
            e.contains("RAGALIQ_CORRECTNESS")
                && e.contains("direct, f1 (or claims), precision, recall"),
            "{e}"
        );
    }

    #[test]
    fn samples_from_file_and_environment() {
        let c = load(Some("[scoring]\nsamples = 5\nagreement = 0.8\n"), &[]).unwrap();
        assert_eq!((c.samples, c.agreement), (Samples::Fixed(5), 0.8));
        let c = load(Some("[scoring]\nsamples = \"auto\"\n"), &[]).unwrap();
        assert_eq!(c.samples, Samples::Auto { max: 5 });
        let c = load(None, &[("RAGALIQ_SAMPLES", "3")]).unwrap();
        assert_eq!(c.samples, Samples::Fixed(3));
        assert!(
            err(None, &[("RAGALIQ_SAMPLES", "lots")])
                .starts_with("RAGALIQ_SAMPLES = \"lots\" is invalid")
        );
        assert!(err(Some("[scoring]\nagreement = 0.5\n"), &[]).contains("scoring.agreement"));
    }

    #[test]
    fn weights_from_table_and_numbers() {
        let c = load(Some("[scoring.weights]\nsupported = 1\npartially_supported = 0.25\nno_evidence = 0\ncontradicted = -2\n"), &[]).unwrap();
        assert_eq!(c.weights, VerdictWeights::new(1.0, 0.25, 0.0, -2.0));
        let c = load(None, &[("RAGALIQ_WEIGHTS", "1, 0.5, -1, -1")]).unwrap();
        assert_eq!(c.weights, VerdictWeights::STRICT);
    }
}
