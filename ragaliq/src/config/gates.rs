//! `[gates]`: what a whole run must reach (suites and `cargo ragaliq
//! report`).

use crate::core::{ConfigError, GateRule, Gates};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGates {
    pass_rate: Option<RawRule>,
    min_mean: Option<RawRule>,
    max_drop: Option<RawRule>,
    baseline: Option<String>,
}

/// A gate's figure: one number for every metric, or a table of metrics
/// (`"*"` for the others) to figures.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawRule {
    Every(f64),
    Each(BTreeMap<String, f64>),
}

/// The run's gates from `[gates]`, a baseline relative to the file's
/// folder `file_dir`.
pub(super) fn read_gates(
    raw: Option<RawGates>,
    file_dir: &Path,
    file_name: &str,
) -> Result<Gates, ConfigError> {
    let gates = match raw {
        None => Gates::default(),
        Some(g) => {
            let rule = |raw: Option<RawRule>| match raw {
                None => GateRule::default(),
                Some(RawRule::Every(v)) => GateRule::every(v),
                Some(RawRule::Each(map)) => {
                    let mut rule = map
                        .get("*")
                        .map_or_else(GateRule::default, |v| GateRule::every(*v));
                    for (metric, v) in map.into_iter().filter(|(m, _)| m != "*") {
                        rule = rule.with(metric, v);
                    }
                    rule
                }
            };
            let mut gates = Gates::new();
            gates.pass_rate = rule(g.pass_rate);
            gates.min_mean = rule(g.min_mean);
            gates.max_drop = rule(g.max_drop);
            gates.baseline = g.baseline.map(|b| file_dir.join(b));
            gates.check(&format!("{file_name}: gates"))?;
            gates
        }
    };
    Ok(gates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::testing::{err, load};

    #[test]
    fn gates_read_as_one_number_or_a_table_per_metric() {
        let c = load(
            Some("[gates]\npass_rate = 0.95\nmin_mean = { \"recall@5\" = 0.8, \"*\" = 0.5 }\nmax_drop = { faithfulness = 0.02 }\nbaseline = \"last/report.json\"\n"),
            &[],
        )
        .unwrap();
        assert_eq!(c.gates.pass_rate.for_metric("anything"), Some(0.95));
        assert_eq!(c.gates.min_mean.for_metric("recall@5"), Some(0.8));
        assert_eq!(c.gates.min_mean.for_metric("mrr"), Some(0.5));
        assert_eq!(c.gates.max_drop.for_metric("relevance"), None);
        assert_eq!(
            c.gates.baseline.as_deref(),
            Some(Path::new("/pkg/last/report.json"))
        );
        assert_eq!(
            err(Some("[gates]\npass_rate = 95\n"), &[]),
            "ragaliq.toml: gates.pass_rate = \"95\" is invalid: expected a number from 0 to 1"
        );
        assert!(
            err(Some("[gates]\npass_rates = 0.9\n"), &[]).contains("unknown field `pass_rates`"),
            "a misspelled gate is refused, not ignored"
        );
        assert!(load(None, &[]).unwrap().gates.is_empty());
    }
}
