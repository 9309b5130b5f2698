//! Generates a case file from a folder of documents: the judge writes
//! questions and grounded answers, and the result is a JSON Lines file that
//! `ragaliq::suite()` loads.
//!
//! ```sh
//! cargo run --example generate -- examples/docs target/generated.jsonl
//! ```
//!
//! The judge's answers replay from `examples/recordings/generate.snap`
//! (recorded against the scripted judge on 127.0.0.1); other folders need a
//! judge: set `RAGALIQ_JUDGE` and a key, and the new exchanges are recorded.

use ragaliq::record::{Location, Recorder};
use ragaliq::{Config, Judge};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Where the recording lives.
pub fn location() -> Location {
    Location::at(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/recordings/generate.snap"),
        "examples/generate.rs",
        "RAGALIQ_MODE=record cargo run --example generate -- examples/docs target/generated.jsonl",
    )
}

/// Questions per document.
pub const PER_DOCUMENT: usize = 3;

#[allow(dead_code)] // `tests/generate.rs` includes this file as a module.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [docs, out] = args.as_slice() else {
        eprintln!("usage: cargo run --example generate -- <docs folder> <out file.jsonl>");
        return ExitCode::from(2);
    };
    match run(Path::new(docs), Path::new(out)).await {
        Ok(n) => {
            println!("wrote {n} cases to {out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("generate: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(docs: &Path, out: &Path) -> Result<usize, Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = Config::load_from(&root, &|name| std::env::var(name).ok())?;
    let recorder = Arc::new(Recorder::new(location(), config.mode));
    let judge = Judge::from_config(&config)?.with_recorder(recorder.clone());
    let cases = ragaliq::generate(&judge, docs, PER_DOCUMENT).await?;
    ragaliq::generation::write_jsonl(&cases, out)?;
    if let Some(pending) = recorder.save_pending("examples/generate.rs")? {
        println!(
            "new exchanges recorded in {}: review them with `cargo insta review`",
            pending.display()
        );
    }
    Ok(cases.len())
}
