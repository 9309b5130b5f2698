//! A suite's results, process by process: each test process of a run writes
//! its trials as a fragment in the run's folder, and the run's report is
//! rebuilt from every fragment, so it counts each trial once however many
//! processes ran them (cargo-nextest runs one trial per process).
//!
//! Fragments are numbered in the order they are published, under the
//! folder's lock, so a trial published twice (a nextest retry) is reported
//! with its later result; and the run's report is built and written while
//! that lock is held, so a process that read fewer fragments can never
//! overwrite a report built from more.

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
    /// Its place in the order fragments were published (set when published).
    #[serde(default)]
    pub seq: u64,
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

/// Writes this process's fragment (atomically) as the next in the run's
/// order, and hands every fragment of the run so far, in that order, to
/// `with_all`, all under the folder's lock; returns what `with_all` returns.
pub(crate) fn publish<R>(
    dir: &Path,
    mut fragment: Fragment,
    with_all: impl FnOnce(&[Fragment]) -> R,
) -> Result<R, String> {
    let _guard = run::lock::exclusive(dir).map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut all = read_all(dir).map_err(io)?;
    fragment.seq = all.iter().map(|f| f.seq).max().map_or(1, |s| s + 1);
    let name = format!("{:012}-{}.json", fragment.seq, fragment.pid);
    let bytes = serde_json::to_vec(&fragment).map_err(|e| e.to_string())?;
    run::write_atomic(&dir.join(name), &bytes).map_err(io)?;
    all.push(fragment);
    Ok(with_all(&all))
}

/// Every readable fragment in `dir`, in the order they were published.
fn read_all(dir: &Path) -> std::io::Result<Vec<Fragment>> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir)?.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        // A fragment is only ever written whole (a temporary file renamed
        // into place); anything else here is not one.
        if let Some(f) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Fragment>(&b).ok())
        {
            all.push(f);
        }
    }
    // By number, not by name: `9999` comes before `10000`.
    all.sort_by_key(|f| (f.seq, f.pid));
    Ok(all)
}

/// The run's report from its fragments: each trial once (a trial run twice
/// keeps its later result), the spending of every process.
pub(crate) fn report(suite: &str, judge: JudgeInfo, mode: Mode, fragments: &[Fragment]) -> Report {
    let mut by_trial = std::collections::BTreeMap::new();
    for f in fragments {
        for r in &f.results {
            // By the trial's name: a case's criteria, or its retrieval
            // metrics, are trials of one metric each.
            by_trial.insert((r.case.clone(), r.label()), r.clone());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fragment(pid: u32, case: &str, score: f64) -> Fragment {
        let r: TrialResult = serde_json::from_value(serde_json::json!({
            "case": case, "metric": "relevance", "score": score, "threshold": 0.7,
            "outcome": if score >= 0.7 { "passed" } else { "failed" }, "reasoning": "",
            "usage": {"calls": 0, "input_tokens": 0, "output_tokens": 0},
            "file": "cases.yaml", "line": 1
        }))
        .unwrap();
        Fragment {
            pid,
            seq: 0,
            results: vec![r],
            spending: Spending::default(),
        }
    }

    #[test]
    fn trials_of_one_metric_with_their_own_names_are_each_kept() {
        // Two criteria and two retrieval metrics of one case, each run in
        // a process of its own (nextest): four trials, not two.
        let named = |metric: &str, name: &str| {
            let mut f = fragment(1, "case", 1.0);
            f.results[0].metric = metric.parse().unwrap();
            f.results[0].name = Some(name.into());
            f
        };
        let all = [
            named("criteria", "no-promise"),
            named("criteria", "cites"),
            named("retrieval", "recall@5"),
            named("retrieval", "mrr"),
        ];
        let judge = JudgeInfo {
            provider: "p".into(),
            model: "m".into(),
        };
        let report = report("s", judge, Mode::Replay, &all);
        let labels: Vec<String> = report.results.iter().map(TrialResult::label).collect();
        assert_eq!(
            labels,
            ["criteria:cites", "criteria:no-promise", "mrr", "recall@5"]
        );
    }

    #[test]
    fn a_later_fragment_wins_whatever_its_process_id() {
        let dir = std::env::temp_dir().join(format!("ragaliq-fragments-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Numbered 9 and 10: by name, "…10-…" would sort before "…9-…".
        for seq in 1..=8 {
            let mut f = fragment(100 + seq as u32, &format!("other-{seq}"), 1.0);
            f.seq = seq;
            std::fs::write(
                dir.join(format!("{seq:012}-{}.json", f.pid)),
                serde_json::to_vec(&f).unwrap(),
            )
            .unwrap();
        }
        publish(&dir, fragment(99999, "flaky", 0.2), |_| ()).unwrap();
        let all = publish(&dir, fragment(10000, "flaky", 0.9), |all| all.to_vec()).unwrap();
        assert_eq!(all.iter().map(|f| f.seq).max(), Some(10));
        let judge = JudgeInfo {
            provider: "p".into(),
            model: "m".into(),
        };
        let report = report("s", judge, Mode::Replay, &all);
        let flaky = report.results.iter().find(|r| r.case == "flaky").unwrap();
        assert_eq!(
            flaky.score,
            Some(0.9),
            "the retry's result, published later"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
