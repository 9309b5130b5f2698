//! A suite's results, process by process: each test process of a run writes
//! its trials as a fragment in the run's folder, and the run's report is
//! rebuilt from every fragment, so it counts each trial once however many
//! processes ran them (cargo-nextest runs one trial per process).

use super::report::{JudgeInfo, Report, Spending, TrialResult};
use crate::core::Mode;
use crate::run;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One process's part of a suite run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Fragment {
    /// The process.
    pub pid: u32,
    /// The trials it ran.
    pub results: Vec<TrialResult>,
    /// What it spent.
    pub spending: Spending,
}

/// The folder of a suite's fragments in the current run.
pub(crate) fn dir(suite: &str) -> Option<PathBuf> {
    let run_dir = run::run_dir().ok()?;
    Some(run_dir.join("suites").join(run::safe_name(suite)))
}

/// Writes this process's fragment (atomically) and returns every fragment
/// of the run so far, this one included.
pub(crate) fn publish(dir: &Path, fragment: &Fragment) -> std::io::Result<Vec<Fragment>> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let _guard = run::lock_exclusive(&run::lock_path_for(dir))?;
    let name = format!(
        "{}-{}.json",
        fragment.pid,
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let bytes = serde_json::to_vec(fragment).map_err(std::io::Error::other)?;
    run::write_atomic(&dir.join(name), &bytes)?;
    let mut all = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    entries.sort();
    for path in entries {
        // A fragment is only ever written whole; one that cannot be read
        // is not this run's (a leftover of an interrupted write).
        if let Some(f) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Fragment>(&b).ok())
        {
            all.push(f);
        }
    }
    Ok(all)
}

/// The run's report from its fragments: each trial once (a trial run twice
/// keeps its later result), the spending of every process.
pub(crate) fn report(suite: &str, judge: JudgeInfo, mode: Mode, fragments: &[Fragment]) -> Report {
    let mut by_trial = std::collections::BTreeMap::new();
    for f in fragments {
        for r in &f.results {
            by_trial.insert((r.case.clone(), r.metric), r.clone());
        }
    }
    let spending: Vec<Spending> = fragments.iter().map(|f| f.spending).collect();
    Report::new(
        suite,
        judge,
        mode,
        &run::current().id,
        by_trial.into_values().collect(),
        &spending,
    )
}
