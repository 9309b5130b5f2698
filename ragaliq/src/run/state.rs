//! Small JSON files a run's processes share (the budget's ledger, which
//! exchanges each trial used), read and changed whole under their lock.
//!
//! A missing file is a state nobody wrote yet. A file that exists but cannot
//! be read is an error, never a fresh start: a ledger read as empty would
//! reset the run's spending to $0.

use super::atomic::write_atomic;
use super::lock::{self, LockError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// A run's shared state that could not be used.
#[derive(Debug)]
pub(crate) enum StateError {
    /// Its lock could not be taken.
    Lock(LockError),
    /// It could not be read, parsed or written.
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        problem: String,
    },
}

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateError::Lock(e) => e.fmt(f),
            StateError::File { path, problem } => write!(
                f,
                "the run's shared state {} cannot be used: {problem}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StateError {}

impl From<LockError> for StateError {
    fn from(e: LockError) -> Self {
        StateError::Lock(e)
    }
}

/// Reads the state at `path`: the default when there is no file.
pub(crate) fn read<T: Default + DeserializeOwned>(path: &Path) -> Result<T, StateError> {
    let bad = |problem: String| StateError::File {
        path: path.to_owned(),
        problem,
    };
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(bad(e.to_string())),
    }
}

/// Changes the state at `path` with `change`, under its lock, and writes it
/// back whole; returns what `change` returns.
pub(crate) fn update<T, R>(path: &Path, change: impl FnOnce(&mut T) -> R) -> Result<R, StateError>
where
    T: Default + Serialize + DeserializeOwned,
{
    let _guard = lock::exclusive(path)?;
    let mut state: T = read(path)?;
    let out = change(&mut state);
    let bytes = serde_json::to_vec(&state).map_err(|e| StateError::File {
        path: path.to_owned(),
        problem: e.to_string(),
    })?;
    write_atomic(path, &bytes).map_err(|e| StateError::File {
        path: path.to_owned(),
        problem: e.to_string(),
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_state_is_an_error_not_a_fresh_start() {
        let path = std::env::temp_dir().join(format!("ragaliq-state-{}.json", std::process::id()));
        let _ = std::fs::remove_file(&path);
        assert_eq!(
            read::<u64>(&path).unwrap(),
            0,
            "missing: nothing written yet"
        );
        update(&path, |n: &mut u64| *n += 5).unwrap();
        assert_eq!(read::<u64>(&path).unwrap(), 5);
        std::fs::write(&path, "{\"usd\": 1.5, \"ca").unwrap();
        let e = update(&path, |n: &mut u64| *n += 1).unwrap_err();
        assert!(e.to_string().contains("cannot be used"), "{e}");
        std::fs::remove_file(&path).unwrap();
    }
}
