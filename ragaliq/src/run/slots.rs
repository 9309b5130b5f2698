//! One concurrency limit for a run that spans processes.
//!
//! The limit is `N` slot files in the run's folder; a request in flight
//! holds an exclusive lock on one of them. A process waits (without
//! blocking its runtime) until a slot is free, and the operating system
//! releases a dead process's slots with its files. So 16 nextest processes
//! with `concurrency = 4` put at most 4 requests in flight, not 64.

use super::lock::canonical;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// A run's slots for one judge configuration.
#[derive(Debug)]
pub(crate) struct Slots {
    dir: PathBuf,
    count: usize,
}

/// A slot held; released when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    _file: File,
}

impl Slots {
    /// The run's `count` slots for the judge configuration `key`, or `None`
    /// when the run is one process (its own limit is the run's).
    pub(crate) fn for_run(key: &str, count: usize) -> Option<Slots> {
        if !super::current().spans_processes() {
            return None;
        }
        let dir = super::run_dir().ok()?;
        Some(Slots::in_dir(dir.join("slots").join(key_hash(key)), count))
    }

    pub(crate) fn in_dir(dir: PathBuf, count: usize) -> Slots {
        Slots {
            dir: canonical(&dir),
            count: count.max(1),
        }
    }

    /// Waits for a free slot among the first `usable()` (at most all of
    /// them: the run's in-flight limit, which may shrink and grow). Polls
    /// every few milliseconds (growing to 20 ms), starting from a slot that
    /// depends on the process, so processes do not all contend for slot 0.
    pub(crate) async fn take(&self, usable: impl Fn() -> usize) -> io::Result<Slot> {
        std::fs::create_dir_all(&self.dir)?;
        let start = std::process::id() as usize;
        let mut wait = Duration::from_millis(1);
        loop {
            let count = usable().clamp(1, self.count);
            for k in 0..count {
                let i = (start + k) % count;
                let file = OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(self.dir.join(format!("slot-{i}.lock")))?;
                match file.try_lock() {
                    Ok(()) => return Ok(Slot { _file: file }),
                    Err(std::fs::TryLockError::WouldBlock) => {}
                    Err(std::fs::TryLockError::Error(e)) => return Err(e),
                }
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_millis(20));
        }
    }
}

/// A short name for a judge configuration's key, safe in a file name.
pub(crate) fn key_hash(key: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(key.as_bytes());
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_more_slots_than_the_limit_are_held() {
        let dir = std::env::temp_dir().join(format!("ragaliq-slots-{}", std::process::id()));
        let slots = Slots::in_dir(dir.clone(), 2);
        let all = || 2;
        let a = slots.take(all).await.unwrap();
        let b = slots.take(all).await.unwrap();
        let third = tokio::time::timeout(Duration::from_millis(50), slots.take(all)).await;
        assert!(third.is_err(), "a third request waits");
        drop(a);
        let c = tokio::time::timeout(Duration::from_secs(5), slots.take(all)).await;
        assert!(c.is_ok(), "a released slot is taken");
        drop((b, c));
        // A limit cut to one: a second request waits though two slots exist.
        let one = slots.take(|| 1).await.unwrap();
        let second = tokio::time::timeout(Duration::from_millis(50), slots.take(|| 1)).await;
        assert!(second.is_err(), "only the first slot is usable");
        drop(one);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
