//! What the assertions of a running `#[rag_test]` body leave for the
//! runner: how the last one failed, and the messages of those that await a
//! person.

use std::sync::{Arc, Mutex};

/// How an assertion ended, for tests that expect a panic: only a score may
/// satisfy `#[should_panic]`, never a judge or configuration failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Failure {
    Score,
    Judge,
}

tokio::task_local! {
    /// How the last assertion of the test whose body is running failed: a
    /// value per test body (the task `run_test` drives), so tests running at
    /// once never see each other's. An assertion in a task the body spawns
    /// is outside it, and not seen.
    pub(super) static FAILURE: Arc<Mutex<Option<Failure>>>;

    /// The messages of the test body's assertions that await a person,
    /// said when the body ends: an assertion awaiting a person does not
    /// stop the test, so the assertions after it are still asked (and,
    /// while recording, recorded: the verdict a person gives then replays
    /// a whole test, not one that stops at its first unsure item), and
    /// every awaiting item is listed at once.
    pub(super) static AWAITING: Arc<Mutex<Vec<String>>>;
}

/// Keeps `message` for the end of the test body; `false` outside a
/// `#[rag_test]` body, where the assertion fails at once.
pub(super) fn defer_awaiting(message: &str) -> bool {
    AWAITING
        .try_with(|cell| crate::core::sync::lock(cell).push(message.to_owned()))
        .is_ok()
}

pub(super) fn note_failure(failure: Failure) {
    let _ = FAILURE.try_with(|cell| *crate::core::sync::lock(cell) = Some(failure));
}
