//! Locks that outlive a panicking holder.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, also when a thread panicked while holding it: a test that
/// panics mid-evaluation must not take the memo, the usage counters or a
/// recording down with it for every other test in the process, and the data
/// behind these locks is only ever updated whole.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
