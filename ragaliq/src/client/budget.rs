//! One cost budget per run, even when the run spans processes.
//!
//! The spending of a run that several processes share (under cargo-nextest,
//! or with `RAGALIQ_RUN_ID`) is kept in `target/ragaliq/runs/<run>/budget.json`,
//! read and updated under a file lock: every process sees what the others
//! spent. A run of one process keeps it in memory.
//!
//! The budget is checked before each live call, once the call holds its
//! place under the concurrency limit; calls already in flight finish. So a
//! run can overshoot the budget by at most the calls in flight: the
//! concurrency limit of each process that is running.

use crate::core::sync::lock;
use crate::core::{Price, Usage};
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
    price: Price,
    /// The ledger file, when the run spans processes.
    shared: Option<PathBuf>,
    local: Mutex<Spent>,
}

impl Budget {
    /// A budget of `max_usd` for the current run.
    pub(crate) fn for_run(max_usd: f64, price: Price) -> Budget {
        let shared = run::current()
            .spans_processes()
            .then(|| run::run_dir().ok().map(|d| d.join("budget.json")))
            .flatten();
        Budget::new(max_usd, price, shared)
    }

    pub(crate) fn new(max_usd: f64, price: Price, shared: Option<PathBuf>) -> Budget {
        Budget {
            max_usd,
            price,
            shared,
            local: Mutex::new(Spent::default()),
        }
    }

    pub(crate) fn max_usd(&self) -> f64 {
        self.max_usd
    }

    /// What the run has spent so far.
    #[cfg(test)]
    fn spent(&self) -> Spent {
        match &self.shared {
            Some(path) => {
                let _guard = run::lock_shared(&run::lock_path_for(path));
                read(path)
            }
            None => *lock(&self.local),
        }
    }

    /// `Ok` when a live call may start; else the budget error, counting the
    /// call as skipped.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let refuse = |spent: &mut Spent| {
            spent.skipped += 1;
            Error::BudgetExhausted {
                budget: self.max_usd,
                spent: spent.usd,
                calls: spent.calls,
            }
        };
        match &self.shared {
            Some(path) => {
                let _guard = run::lock_exclusive(&run::lock_path_for(path));
                let mut spent = read(path);
                if spent.usd < self.max_usd {
                    return Ok(());
                }
                let error = refuse(&mut spent);
                write(path, &spent);
                Err(error)
            }
            None => {
                let mut spent = lock(&self.local);
                if spent.usd < self.max_usd {
                    return Ok(());
                }
                Err(refuse(&mut spent))
            }
        }
    }

    /// Adds a live call's cost.
    pub(crate) fn charge(&self, usage: &Usage) {
        let usd = self.price.cost(usage);
        let add = |spent: &mut Spent| {
            spent.usd += usd;
            spent.calls += usage.calls;
        };
        match &self.shared {
            Some(path) => {
                let _guard = run::lock_exclusive(&run::lock_path_for(path));
                let mut spent = read(path);
                add(&mut spent);
                write(path, &spent);
            }
            None => add(&mut lock(&self.local)),
        }
    }
}

/// The ledger; a missing or unreadable file is a run that spent nothing yet
/// (it is only ever written whole, by rename).
fn read(path: &std::path::Path) -> Spent {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write(path: &std::path::Path, spent: &Spent) {
    if let Ok(bytes) = serde_json::to_vec(spent) {
        // A ledger that cannot be written leaves the budget to this
        // process's view; the calls themselves are not failed for it.
        let _ = run::write_atomic(path, &bytes);
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
