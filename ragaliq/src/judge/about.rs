//! What a judge is: its model, where its calls go, its limits, what it
//! spent, and the one line that says all that.

use super::{JsonMode, Judge, Refusal};
use crate::core::{Metric, Price, Samples, Strategy, Usage};
use crate::record::Recorder;
use std::sync::atomic::Ordering;

impl Judge {
    /// The recorder this judge serves exchanges through, if any.
    #[must_use]
    pub fn recorder(&self) -> Option<&Recorder> {
        self.session.recorder()
    }

    /// The transport's provider name.
    #[must_use]
    pub fn provider(&self) -> &str {
        self.session.client().transport.provider()
    }

    /// The model asked.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.session.asking().model
    }

    /// Where live calls go: `scheme://host:port` (never a path or key), when
    /// the transport has an address.
    #[must_use]
    pub fn endpoint(&self) -> Option<String> {
        self.session.client().endpoint()
    }

    /// How the server is asked for JSON now (after any negotiation).
    #[must_use]
    pub fn json_mode(&self) -> JsonMode {
        self.session.client().formats.current()
    }

    /// The response formats the server refused in this process, and what
    /// was used instead.
    #[must_use]
    pub fn refusals(&self) -> Vec<Refusal> {
        self.session.client().refusals()
    }

    /// The sampling temperature.
    #[must_use]
    pub fn temperature(&self) -> f64 {
        self.session.asking().temperature
    }

    /// The most judge requests in flight at once, across every judge of
    /// this client in the process.
    #[must_use]
    pub fn concurrency(&self) -> usize {
        self.session.client().concurrency
    }

    /// Calls and tokens spent by this judge, its clones and the judges
    /// derived from it ([`with_recorder`](Self::with_recorder)) so far.
    #[must_use]
    pub fn usage(&self) -> Usage {
        self.session.usage()
    }

    /// The model's price, when known.
    #[must_use]
    pub fn price(&self) -> Option<Price> {
        self.session.client().price
    }

    /// The estimated dollars this judge spent on live calls so far, when the
    /// price is known.
    #[must_use]
    pub fn cost(&self) -> Option<f64> {
        self.price().map(|p| p.cost(&self.usage()))
    }

    /// The run's cost budget in dollars, if any.
    #[must_use]
    pub fn budget(&self) -> Option<f64> {
        self.session.client().budget.as_ref().map(|b| b.max_usd())
    }

    /// Live calls of this judge skipped because the run's budget was spent.
    #[must_use]
    pub fn skipped_calls(&self) -> u64 {
        self.session.skipped_calls()
    }

    /// The threshold `metric` passes at unless an
    /// [`EvalOptions`](crate::EvalOptions) says otherwise.
    #[must_use]
    pub fn default_threshold(&self, metric: Metric) -> f64 {
        self.scoring.threshold(metric)
    }

    /// How verdicts and scores are asked for.
    #[must_use]
    pub fn strategy(&self) -> Strategy {
        self.scoring.verification.strategy
    }

    /// This judge's uncertainty band for `kind` (see [`Band`](crate::Band)).
    #[must_use]
    pub fn band(&self, kind: crate::Kind) -> crate::Band {
        self.scoring.bands.get(kind)
    }

    /// Whether answer correctness decides a found answer with nothing
    /// against it with no call (the found rule; `[scoring] found_rule`).
    #[must_use]
    pub fn found_rule(&self) -> bool {
        self.scoring.found_rule
    }

    /// Whether every question about a follow-up turn shows the
    /// conversation before it (`[judge] follow_up_history`; see
    /// [`JudgeBuilder::with_follow_up_history`](crate::judge::JudgeBuilder::with_follow_up_history)).
    #[must_use]
    pub fn follow_up_history(&self) -> bool {
        self.scoring.follow_up_history
    }

    /// What a test does when an item is still uncertain after the last
    /// judge of the cascade.
    #[must_use]
    pub fn uncertain(&self) -> crate::Uncertain {
        self.scoring.uncertain
    }

    /// P(supported) at or above which a claim is supported (short
    /// questions).
    #[must_use]
    pub fn claim_threshold(&self) -> f64 {
        self.scoring.verification.claim_threshold
    }

    /// How many times P(supported) P(contradicted) must reach for an
    /// unsupported claim to be contradicted (short questions).
    #[must_use]
    pub fn contradiction_ratio(&self) -> f64 {
        self.scoring.verification.contradiction_ratio
    }

    /// Whether an unsupported claim is asked whether the passages
    /// contradict it (short questions).
    #[must_use]
    pub fn asks_contradiction(&self) -> bool {
        self.scoring.verification.contradiction
    }

    /// How answer correctness is decided where a test does not say
    /// (calibration names it).
    #[cfg(feature = "calibration")]
    pub(crate) fn correctness_measure(&self) -> crate::core::Correctness {
        self.scoring.correctness
    }

    /// How many times each question is asked by default.
    #[must_use]
    pub fn samples(&self) -> Samples {
        self.scoring.samples
    }

    /// One line that says which judge this is and where its calls go:
    ///
    /// ```text
    /// openai-compatible `scripted` at http://127.0.0.1:8787 (json_mode schema)
    /// ```
    #[must_use]
    pub fn describe(&self) -> String {
        let at = self.endpoint().map_or_else(
            || "with no server address".to_owned(),
            |e| format!("at {e}"),
        );
        let mut out = format!(
            "{} `{}` {at} (json_mode {})",
            self.provider(),
            self.model(),
            self.json_mode()
        );
        let client = self.session.client();
        match self.strategy() {
            Strategy::Json => out.push_str("; JSON prompts"),
            Strategy::Word => out.push_str("; yes/no questions read from the word written"),
            Strategy::Probability if self.provider() == "anthropic" => out.push_str(
                "; yes/no questions read from the word written (anthropic returns no token probabilities)",
            ),
            Strategy::Probability if client.no_probabilities.load(Ordering::SeqCst) => out.push_str(
                "; yes/no questions: the server returned no token probabilities, so the word written is read",
            ),
            Strategy::Probability => {
                out.push_str(&format!(
                    "; yes/no questions read from token probabilities, claims supported at P >= {}",
                    probability(self.claim_threshold())
                ));
                if self.asks_contradiction() {
                    out.push_str(&format!(
                        ", contradicted at P(contradicted) > {} x P(supported)",
                        probability(self.contradiction_ratio())
                    ));
                }
            }
        }
        if let Some(note) = &self.scoring.fitted_note {
            out.push_str("; ");
            out.push_str(note);
        }
        // Where readings decide nothing: said only when some kind has a
        // band, so a banner without one reads as before bands.
        let banded: Vec<String> = crate::Kind::ALL
            .into_iter()
            .filter(|k| !self.band(*k).is_off())
            .map(|k| format!("{k} {}", self.band(k)))
            .collect();
        let unmeasured = crate::Kind::ALL
            .into_iter()
            .all(|k| self.band(k).is_unmeasured());
        if !banded.is_empty() {
            out.push_str(&format!(
                "; unsure inside its bands ({}), where {}",
                if unmeasured {
                    format!(
                        "every kind {}: nothing was measured for this judge",
                        crate::Band::Unmeasured
                    )
                } else {
                    banded.join(", ")
                },
                match self.uncertain() {
                    crate::Uncertain::Fail => "a test awaits a person and fails meanwhile",
                    crate::Uncertain::Pass => "a test awaits a person and passes meanwhile",
                    crate::Uncertain::Decide => "the threshold decides",
                }
            ));
        }
        let next = self.escalates_to();
        if !next.is_empty() {
            out.push_str(&format!(
                "; escalates what it is unsure of to {}",
                next.iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", then ")
            ));
        }
        let samples = self.samples();
        if samples.max() > 1 {
            out.push_str(&format!("; samples {samples}"));
            if self.temperature() == 0.0 {
                out.push_str(" at temperature 0: a judge that answers the same every time makes every vote unanimous, so the extra samples cost and tell nothing (set temperature above 0)");
            }
        }
        for r in self.refusals() {
            out.push_str(&format!(
                "; the server refused json_mode {}, now {}",
                r.refused, r.now
            ));
        }
        if self.session.client().serial() {
            out.push_str("; the server stopped a streamed reply for another request, so calls now go one at a time");
        }
        out
    }
}

/// A threshold as written in a judge file: fitted ones have three decimals
/// (0.502 is not shown as 0.50), defaults none to spare (0.5, 0.25).
fn probability(p: f64) -> String {
    let text = format!("{p:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod probability_tests {
    #[test]
    fn thresholds_are_shown_as_written() {
        let shown: Vec<String> = [0.5, 0.502, 0.25, 0.0, 1.0].map(super::probability).into();
        assert_eq!(shown, ["0.5", "0.502", "0.25", "0", "1"]);
    }
}
