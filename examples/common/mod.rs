//! What the examples that replay a real model share: the judge
//! `examples/quickstart.toml` describes (Qwen2.5-Coder-1.5B-Instruct on the
//! realjudge kit's llama-server), bound to the example's own recording in
//! `examples/recordings/`, and the line that closes a run.

use ragaliq::record::{Location, Recorder};
use ragaliq::{Config, ConfigError, Judge};
use std::path::Path;
use std::sync::Arc;

/// The judge and its recorder for example `name`, recording to
/// `examples/recordings/<name>.snap` (or the folder `RAGALIQ_SNAPSHOT_DIR`
/// names). `RAGALIQ_CONFIG` names another judge file; `RAGALIQ_*`
/// variables override it as usual.
pub fn judge(name: &str) -> Result<(Judge, Arc<Recorder>), Box<dyn std::error::Error>> {
    let env = |v: &str| std::env::var(v).ok();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = config()?;
    let dir = env("RAGALIQ_SNAPSHOT_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| root.join("examples/recordings"), |d| root.join(d));
    let location = Location::at(
        dir.join(format!("{name}.snap")),
        format!("examples/{name}.rs"),
        format!("RAGALIQ_MODE=record cargo run --example {name}"),
    );
    let recorder = Arc::new(Recorder::new(location, config.mode));
    let judge = Judge::from_config(&config)?.with_recorder(recorder.clone());
    println!("judge: {}", judge.describe());
    Ok((judge, recorder))
}

/// Prints what the run spent, and keeps new exchanges for review (also
/// after a failure: answers paid for are not asked again).
pub fn finish(
    name: &str,
    judge: &Judge,
    recorder: &Recorder,
    complete: bool,
) -> std::io::Result<()> {
    let usage = judge.usage();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let snapshot = &recorder.location().snapshot;
    println!(
        "\n{} judge calls, {} answers replayed from {}",
        usage.calls,
        usage.replayed,
        snapshot.strip_prefix(root).unwrap_or(snapshot).display()
    );
    if let Some(pending) = recorder.save_pending_after(complete, &format!("examples/{name}.rs"))? {
        println!(
            "new exchanges recorded in {}: review them with `cargo insta review`",
            pending.display()
        );
    }
    Ok(())
}

/// The examples' judge file, `examples/quickstart.toml` (or the one
/// `RAGALIQ_CONFIG` names), with the `RAGALIQ_*` variables over it.
#[allow(dead_code)] // not every example that shares this module reads it
pub fn config() -> Result<Config, ConfigError> {
    let env = |v: &str| std::env::var(v).ok();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if env("RAGALIQ_CONFIG").is_some_and(|c| !c.is_empty()) {
        Config::load_from(root, &env)
    } else {
        let file = root.join("examples/quickstart.toml");
        let text = std::fs::read_to_string(&file).map_err(|e| ConfigError::File {
            path: file.display().to_string(),
            message: e.to_string(),
        })?;
        Config::from_sources(Some((&text, &file)), root, &env)
    }
}
