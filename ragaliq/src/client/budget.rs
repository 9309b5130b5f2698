//! One cost budget per run, even when the run spans processes.
//!
//! The spending of a run that several processes share (under cargo-nextest,
//! or with `RAGALIQ_RUN_ID`) is kept in `target/ragaliq/runs/<run>/budget.json`,
//! read and updated under a file lock: every process sees what the others
//! spent. A run of one process keeps it in memory.
//!
//! The budget is checked before each live call, once the call holds its
//! place under the run's concurrency limit (one limit for the whole run, see
//! [`Slots`](crate::run::Slots)); calls already in flight finish. Every
//! judge of the run spends from it, each call at its own model's price:
//! the judges of a cascade (`[[escalate]]`) share one budget, in one
//! process as across processes. So a run
//! overshoots the budget by at most `concurrency` calls: those that passed
//! the check before the one that crossed the limit was booked.
//!
//! A budget for a model with no price (a local model, not in the built-in
//! table and without `[cost.prices."<model>"]`) cannot count what a call
//! costs: it refuses every live call with a configuration error naming the
//! model. It is not an error before that: replay spends nothing, so a
//! team's `cost.max_usd` does not stop CI from replaying a local model's
//! recordings.

use crate::core::sync::lock;
use crate::core::{ConfigError, Price, Usage};
use crate::error::Error;
use crate::run;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Mutex;

/// What a run spent, as the ledger holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Spent {
    /// Estimated dollars of live calls.
    pub usd: f64,
    /// Live calls made.
    pub calls: u64,
    /// Live calls refused because the budget was spent.
    pub skipped: u64,
}

/// A run's budget: a limit, a price, and where the spending is kept.
#[derive(Debug)]
pub(crate) struct Budget {
    max_usd: f64,
    /// The model's price; `Err` holds the configuration error every live
    /// call gets when the model has none.
    price: Result<Price, ConfigError>,
    /// The ledger file, when the run spans processes.
    shared: Option<PathBuf>,
    /// What this process's run spent, when the run is this process: one
    /// count for every judge's client built for the run.
    local: std::sync::Arc<Mutex<Spent>>,
    /// Why the ledger cannot be trusted any more, once it cannot.
    broken: Mutex<Option<String>>,
}

impl Budget {
    /// A budget of `max_usd` for the current run.
    pub(crate) fn for_run(max_usd: f64, price: Price) -> Budget {
        static PROCESS: std::sync::OnceLock<std::sync::Arc<Mutex<Spent>>> =
            std::sync::OnceLock::new();
        let shared = run::current()
            .spans_processes()
            .then(|| run::run_dir().ok().map(|d| d.join("budget.json")))
            .flatten();
        Budget {
            local: PROCESS.get_or_init(std::sync::Arc::default).clone(),
            ..Budget::new(max_usd, price, shared)
        }
    }

    pub(crate) fn new(max_usd: f64, price: Price, shared: Option<PathBuf>) -> Budget {
        Budget {
            max_usd,
            price: Ok(price),
            shared,
            local: std::sync::Arc::default(),
            broken: Mutex::new(None),
        }
    }

    /// A budget of `max_usd` for `model`, which has no price: every live
    /// call is refused with a configuration error, and nothing else is.
    pub(crate) fn unpriced(max_usd: f64, model: &str) -> Budget {
        Budget {
            max_usd,
            price: Err(ConfigError::Invalid {
                origin: "budget".into(),
                value: max_usd.to_string(),
                expected: format!(
                    "a price for model `{model}` before a live call can be counted against it: add [cost.prices.\"{model}\"] to ragaliq.toml (input_per_million = 0 and output_per_million = 0 for a local model); replaying needs no price"
                ),
            }),
            shared: None,
            local: std::sync::Arc::default(),
            broken: Mutex::new(None),
        }
    }

    pub(crate) fn max_usd(&self) -> f64 {
        self.max_usd
    }

    /// What the run has spent so far.
    #[cfg(test)]
    fn spent(&self) -> Spent {
        match &self.shared {
            Some(path) => run::state::read(path).unwrap(),
            None => *lock(&self.local),
        }
    }

    /// `Ok` when a live call may start; else the budget error, counting the
    /// call as skipped. A ledger that cannot be read or written (or a charge
    /// that could not be booked) refuses every call: spending that cannot
    /// be counted cannot be limited.
    pub(crate) fn check(&self) -> Result<(), Error> {
        if let Err(e) = &self.price {
            return Err(Error::Config(e.clone()));
        }
        if let Some(problem) = lock(&self.broken).clone() {
            return Err(Error::RunState { problem });
        }
        let max = self.max_usd;
        let decide = |spent: &mut Spent| {
            if spent.usd < max {
                return Ok(());
            }
            spent.skipped += 1;
            Err(Error::BudgetExhausted {
                budget: max,
                spent: spent.usd,
                calls: spent.calls,
            })
        };
        match &self.shared {
            Some(path) => run::state::update(path, decide).map_err(|e| Error::RunState {
                problem: e.to_string(),
            })?,
            None => decide(&mut lock(&self.local)),
        }
    }

    /// Adds a live call's cost to the run's ledger. When it cannot be
    /// booked, every later [`check`](Self::check) refuses, with why.
    pub(crate) fn charge(&self, usage: &Usage) {
        // An unpriced budget never lets a call through to be charged.
        let usd = self.price.as_ref().map_or(0.0, |p| p.cost(usage));
        self.book(usd, usage.calls);
    }

    /// Adds a live call of the pipeline under test to the run's ledger, at
    /// its own model's price (`usd`), when the judge's budget covers the
    /// pipeline too.
    pub(crate) fn charge_usd(&self, usd: f64, calls: u64) {
        self.book(usd, calls);
    }

    fn book(&self, usd: f64, calls: u64) {
        let add = |spent: &mut Spent| {
            spent.usd += usd;
            spent.calls = spent.calls.saturating_add(calls);
        };
        match &self.shared {
            Some(path) => {
                if let Err(e) = run::state::update(path, add) {
                    *lock(&self.broken) = Some(format!(
                        "the cost of a call could not be added to the run's budget ({e}); no further live calls are made"
                    ));
                }
            }
            None => add(&mut lock(&self.local)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price() -> Price {
        Price {
            input_per_million: 1_000_000.0,
            output_per_million: 0.0,
        }
    }

    fn call(tokens: u64) -> Usage {
        Usage {
            calls: 1,
            input_tokens: tokens,
            ..Usage::default()
        }
    }

    #[test]
    fn local_budget_stops_after_the_limit() {
        let b = Budget::new(2.0, price(), None);
        assert!(b.check().is_ok());
        b.charge(&call(1));
        assert!(b.check().is_ok());
        b.charge(&call(1));
        let e = b.check().unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cost budget reached: $2.0000 of $2.00 spent on 2 live calls"),
            "{e}"
        );
        assert_eq!(b.spent().skipped, 1);
    }

    #[test]
    fn an_unpriced_budget_refuses_every_live_call_as_a_configuration_error() {
        let b = Budget::unpriced(5.0, "qwen");
        for _ in 0..2 {
            let e = b.check().unwrap_err();
            assert!(e.is_configuration(), "{e}");
            assert!(!e.is_budget(), "not a spent budget: {e}");
            assert!(e.to_string().contains("[cost.prices.\"qwen\"]"), "{e}");
        }
        assert_eq!(b.spent().skipped, 0);
    }

    #[test]
    fn shared_ledgers_add_up_across_budgets() {
        let path = std::env::temp_dir().join(format!("ragaliq-budget-{}.json", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let a = Budget::new(3.0, price(), Some(path.clone()));
        let b = Budget::new(3.0, price(), Some(path.clone()));
        a.charge(&call(1));
        b.charge(&call(1));
        a.charge(&call(1));
        assert!(b.check().is_err(), "b sees what a spent");
        assert_eq!(a.spent().calls, 3);
        assert_eq!(a.spent().skipped, 1);
        let _ = std::fs::remove_file(&path);
    }
}

#[cfg(test)]
mod ledger_tests {
    use super::*;

    #[test]
    fn an_unreadable_ledger_refuses_calls_instead_of_starting_at_zero() {
        let path = std::env::temp_dir().join(format!("ragaliq-ledger-{}.json", std::process::id()));
        std::fs::write(&path, "{\"usd\": 4.9, \"calls\"").unwrap();
        let b = Budget::new(
            5.0,
            Price {
                input_per_million: 1.0,
                output_per_million: 1.0,
            },
            Some(path.clone()),
        );
        let e = b.check().unwrap_err();
        assert!(
            e.to_string().contains("budget.json") || e.to_string().contains("cannot be used"),
            "{e}"
        );
        assert!(!e.is_budget(), "not a spent budget: an unusable ledger");
        std::fs::remove_file(&path).unwrap();
    }
}
