//! The data-driven suite over `tests/rag_cases/` (YAML, JSON, JSONL and CSV
//! case files): one trial per case and metric, replaying the recordings in
//! `tests/rag_cases/snapshots/`, made through the real record path against
//! the scripted judge on 127.0.0.1 (see `ragaliq.toml`).
//!
//! ```sh
//! cargo test --test rag_suite                 # all trials
//! cargo test --test rag_suite -- refund       # the refund cases
//! cargo test --test rag_suite -- --list       # list them
//! ```

use ragaliq::Metric;
use std::process::ExitCode;

fn main() -> ExitCode {
    ragaliq::suite("tests/rag_cases")
        .metrics([
            Metric::Faithfulness,
            Metric::Hallucination,
            Metric::Relevance,
            Metric::ContextPrecision,
        ])
        .run()
}
