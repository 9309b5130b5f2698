//! Estimated cost: a price per model turns token usage into dollars, and a
//! budget stops live calls once it is spent.

use super::evaluation::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A model's price in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Dollars per million input (prompt) tokens.
    pub input_per_million: f64,
    /// Dollars per million output (completion) tokens.
    pub output_per_million: f64,
}

impl Price {
    /// The estimated cost of `usage` (live calls only: replayed answers cost nothing).
    ///
    /// ```
    /// use ragaliq::Usage;
    /// use ragaliq::config::Price;
    /// let price = Price { input_per_million: 0.15, output_per_million: 0.60 };
    /// let usage = Usage { calls: 2, input_tokens: 1_000_000, output_tokens: 500_000, replayed: 7, ..Usage::default() };
    /// assert!((price.cost(&usage) - 0.45).abs() < 1e-12);
    /// ```
    #[must_use]
    pub fn cost(&self, usage: &Usage) -> f64 {
        (usage.input_tokens as f64 * self.input_per_million
            + usage.output_tokens as f64 * self.output_per_million)
            / 1_000_000.0
    }

    /// The price of the same model through a provider's batch API: half,
    /// as OpenAI's Batch API and Anthropic's Message Batches charge.
    ///
    /// ```
    /// use ragaliq::config::Price;
    /// let live = Price { input_per_million: 0.15, output_per_million: 0.60 };
    /// assert_eq!(live.batch(), Price { input_per_million: 0.075, output_per_million: 0.30 });
    /// ```
    #[must_use]
    pub fn batch(self) -> Price {
        Price {
            input_per_million: self.input_per_million / 2.0,
            output_per_million: self.output_per_million / 2.0,
        }
    }

    /// Whether both prices are finite and not negative.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        [self.input_per_million, self.output_per_million]
            .iter()
            .all(|p| p.is_finite() && *p >= 0.0)
    }
}

/// Built-in list prices (USD per million tokens, as published by the
/// providers when this table was written). Override or extend them with
/// `[cost.prices."<model>"]` in `ragaliq.toml`.
pub const BUILTIN_PRICES: &[(&str, f64, f64)] = &[
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1", 2.00, 8.00),
    ("claude-haiku-4-5", 1.00, 5.00),
    ("claude-sonnet-4-5", 3.00, 15.00),
    ("scripted", 0.0, 0.0),
];

/// The price of `model`: an override, else the built-in table, else none.
pub(crate) fn price_for(model: &str, overrides: &BTreeMap<String, Price>) -> Option<Price> {
    overrides.get(model).copied().or_else(|| {
        BUILTIN_PRICES
            .iter()
            .find(|(name, ..)| *name == model)
            .map(|&(_, input, output)| Price {
                input_per_million: input,
                output_per_million: output,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_win_and_unknown_models_have_no_price() {
        let mut o = BTreeMap::new();
        o.insert(
            "gpt-4o".to_string(),
            Price {
                input_per_million: 1.0,
                output_per_million: 2.0,
            },
        );
        assert_eq!(price_for("gpt-4o", &o).unwrap().input_per_million, 1.0);
        assert_eq!(
            price_for("gpt-4o-mini", &o).unwrap().output_per_million,
            0.60
        );
        assert!(price_for("my-local-model", &o).is_none());
    }
}
