//! The options the assertion macros take, checked when the assertion
//! runs, and the metric names `assert_caught!` takes.

use crate::core::{Samples, VerdictWeights};
use crate::metrics::EvalOptions;

/// `samples = 5`, `samples = "auto"` or `samples = Samples::…` in a macro.
#[derive(Clone, Debug, PartialEq)]
pub enum SamplesArg {
    /// A count.
    Count(u32),
    /// A spelling, checked when the assertion runs.
    Text(&'static str),
    /// A value.
    Value(Samples),
}

impl From<u32> for SamplesArg {
    fn from(n: u32) -> Self {
        SamplesArg::Count(n)
    }
}

impl From<&'static str> for SamplesArg {
    fn from(s: &'static str) -> Self {
        SamplesArg::Text(s)
    }
}

impl From<Samples> for SamplesArg {
    fn from(s: Samples) -> Self {
        SamplesArg::Value(s)
    }
}

/// `uncertain = "pass"` or `uncertain = Uncertain::Pass` in a macro.
#[derive(Clone, Debug, PartialEq)]
pub enum UncertainArg {
    /// A spelling, checked when the assertion runs.
    Text(&'static str),
    /// A value.
    Value(crate::Uncertain),
}

impl From<&'static str> for UncertainArg {
    fn from(s: &'static str) -> Self {
        UncertainArg::Text(s)
    }
}

impl From<crate::Uncertain> for UncertainArg {
    fn from(u: crate::Uncertain) -> Self {
        UncertainArg::Value(u)
    }
}

fn resolve_uncertain(arg: Option<UncertainArg>) -> Result<Option<crate::Uncertain>, String> {
    match arg {
        None => Ok(None),
        Some(UncertainArg::Value(u)) => Ok(Some(u)),
        Some(UncertainArg::Text(t)) => t
            .parse()
            .map(Some)
            .map_err(|e: String| format!("uncertain = {e}")),
    }
}

/// The options every assertion macro takes, and the ones only some do. The
/// struct names and fields are what the compiler shows when an option is
/// misspelled: "struct `FaithfulnessOptions` has no field named `treshold`".
macro_rules! options {
    ($( $(#[$doc:meta])* $name:ident { $($field:ident: $ty:ty),* } )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq)]
        #[allow(missing_docs)]
        pub struct $name {
            pub threshold: Option<f64>,
            pub samples: Option<SamplesArg>,
            pub agreement: Option<f64>,
            pub uncertain: Option<UncertainArg>,
            $(pub $field: Option<$ty>,)*
        }

        impl $name {
            /// The options, checked.
            pub fn resolve(self) -> Result<EvalOptions, String> {
                #[allow(unused_mut)]
                let mut o = EvalOptions {
                    threshold: self.threshold,
                    agreement: self.agreement,
                    samples: resolve_samples(self.samples)?,
                    uncertain: resolve_uncertain(self.uncertain)?,
                    ..EvalOptions::default()
                };
                $(o.$field = self.$field;)*
                Ok(o)
            }
        }
    )*};
}

options! {
    /// `assert_faithful!`'s options.
    FaithfulnessOptions { weights: VerdictWeights }
    /// `assert_correct!`'s options.
    CorrectnessOptions { correctness: crate::Correctness }
    /// `assert_judged!`'s options.
    CriteriaOptions {}
    /// `assert_metric!`'s options.
    CustomOptions {}
    /// `assert_no_hallucination!`'s options.
    HallucinationOptions { confidence_floor: f64 }
    /// `assert_relevant!`'s options.
    RelevanceOptions {}
    /// `assert_context_precision!`'s options.
    ContextPrecisionOptions {}
    /// `assert_context_recall!`'s options.
    ContextRecallOptions {}
    /// `assert_abstains!`'s options.
    AbstentionOptions {}
    /// `assert_consistent!`'s options.
    ConsistencyOptions {}
    /// `assert_remembers!`'s options.
    RetentionOptions {}
}

fn resolve_samples(arg: Option<SamplesArg>) -> Result<Option<Samples>, String> {
    let bad = |v: String| format!("samples = {v} is invalid: expected {}", Samples::EXPECTED);
    match arg {
        None => Ok(None),
        Some(SamplesArg::Value(s)) => s.check().map(|()| Some(s)).map_err(|(v, _)| bad(v)),
        Some(SamplesArg::Count(n)) => Samples::parse(&n.to_string())
            .map(Some)
            .ok_or_else(|| bad(n.to_string())),
        Some(SamplesArg::Text(t)) => Samples::parse(t)
            .map(Some)
            .ok_or_else(|| bad(format!("{t:?}"))),
    }
}

/// The metric names `assert_caught!` takes; a misspelled one is reported
/// by the compiler against this list.
#[allow(non_camel_case_types, missing_docs)]
#[derive(Clone, Copy, Debug)]
pub enum MetricName {
    faithfulness,
    hallucination,
    relevance,
    context_precision,
    context_recall,
    correctness,
    abstention,
    consistency,
    retention,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_options_are_checked_when_they_run() {
        assert_eq!(resolve_samples(Some(5.into())), Ok(Some(Samples::Fixed(5))));
        assert_eq!(
            resolve_samples(Some("auto".into())),
            Ok(Some(Samples::Auto { max: 5 }))
        );
        let e = resolve_samples(Some("five".into())).unwrap_err();
        assert!(e.starts_with("samples = \"five\" is invalid"), "{e}");
        assert!(resolve_samples(Some(0.into())).is_err());
    }
}
