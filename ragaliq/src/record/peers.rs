//! The recorders of one recording file in this process, and what each used.
//!
//! A write drops the exchanges its writer no longer asks for; it must not
//! drop what another recorder of the same file uses. Across processes the
//! run's state says what each process used; within a process, this does:
//! each recorder notes every exchange it uses here, and a write keeps what
//! its *peers* used, by trial. A peer is a recorder of the same file whose
//! life overlapped the writer's (both existed at some moment: they work
//! side by side), or one of the same binder (the same code in the same
//! test, made again: a loop, a retry), whose exchanges accumulate as a
//! trial's do across a run's processes. A recorder that was dropped before
//! the writer was made is no peer: a later recording of the file, made
//! after it, replaces its answers, as a re-recording does.

use crate::core::sync::lock;
use crate::run;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Fingerprints used, by trial.
pub(super) type Uses = BTreeMap<String, BTreeSet<String>>;

/// Orders births, deaths and writes of recorders in this process.
static CLOCK: AtomicU64 = AtomicU64::new(1);

fn tick() -> u64 {
    CLOCK.fetch_add(1, Ordering::SeqCst)
}

/// One recorder, as its file's other recorders see it.
struct Entry {
    uses: Arc<Mutex<Uses>>,
    binder: Option<String>,
    born: u64,
    /// When it was dropped; 0 while it lives.
    died: Arc<AtomicU64>,
}

impl Entry {
    fn died(&self) -> Option<u64> {
        Some(self.died.load(Ordering::SeqCst)).filter(|&d| d != 0)
    }
}

/// Every recorder of each file (by canonical path) that may still be
/// another's peer.
fn registry() -> &'static Mutex<HashMap<PathBuf, Vec<Entry>>> {
    static PEERS: OnceLock<Mutex<HashMap<PathBuf, Vec<Entry>>>> = OnceLock::new();
    PEERS.get_or_init(Mutex::default)
}

/// A recorder's place among its file's recorders in this process.
pub(super) struct Peer {
    file: PathBuf,
    uses: Arc<Mutex<Uses>>,
    binder: Option<String>,
    born: u64,
    died: Arc<AtomicU64>,
}

impl Peer {
    /// Joins the recorders of the file at `snapshot`, for `binder` (the
    /// code and test that made the recorder, when a macro did).
    pub(super) fn join(snapshot: &Path, binder: Option<String>) -> Peer {
        let file = run::lock::canonical(snapshot);
        let uses = Arc::<Mutex<Uses>>::default();
        let died = Arc::new(AtomicU64::new(0));
        let mut all = lock(registry());
        let entries = all.entry(file.clone()).or_default();
        let born = tick();
        // A recorder dropped before every living one was made is no one's
        // peer any more, unless a binder of its own may come back.
        let oldest = entries
            .iter()
            .filter(|e| e.died().is_none())
            .map(|e| e.born)
            .min()
            .unwrap_or(born);
        entries.retain(|e| e.binder.is_some() || e.died().is_none_or(|d| d > oldest));
        entries.push(Entry {
            uses: uses.clone(),
            binder: binder.clone(),
            born,
            died: died.clone(),
        });
        Peer {
            file,
            uses,
            binder,
            born,
            died,
        }
    }

    /// Notes that `trial` used the exchange `fingerprint`.
    pub(super) fn note(&self, trial: &str, fingerprint: &str) {
        lock(&self.uses)
            .entry(trial.to_owned())
            .or_default()
            .insert(fingerprint.to_owned());
    }

    /// What this recorder and its peers used, by trial: a write keeps it.
    pub(super) fn kept(&self) -> Uses {
        let now = tick();
        let mut kept = Uses::new();
        let all = lock(registry());
        for e in all.get(&self.file).into_iter().flatten() {
            let overlapped = e.born < now && e.died().is_none_or(|d| d > self.born);
            let same_binder = self.binder.is_some() && e.binder == self.binder;
            if overlapped || same_binder {
                for (trial, fingerprints) in lock(&e.uses).iter() {
                    kept.entry(trial.clone())
                        .or_default()
                        .extend(fingerprints.iter().cloned());
                }
            }
        }
        kept
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.died.store(tick(), Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(peer: &Peer, fingerprint: &str) {
        peer.note("", fingerprint);
    }

    fn kept(peer: &Peer) -> Vec<String> {
        peer.kept()
            .remove("")
            .unwrap_or_default()
            .into_iter()
            .collect()
    }

    #[test]
    fn peers_are_recorders_side_by_side_or_of_one_binder() {
        let dir = std::env::temp_dir().join(format!("ragaliq-peers-{}", std::process::id()));
        let file = dir.join("t.snap");
        // Side by side: each keeps what the other used, whoever writes first
        // and whether or not the other is gone by then.
        let a = Peer::join(&file, None);
        let b = Peer::join(&file, None);
        used(&a, "a");
        used(&b, "b");
        assert_eq!(kept(&a), ["a", "b"]);
        drop(a);
        assert_eq!(kept(&b), ["a", "b"]);
        drop(b);
        // One after the other: the later replaces the earlier's answers.
        let c = Peer::join(&file, None);
        used(&c, "c");
        assert_eq!(kept(&c), ["c"]);
        drop(c);
        // The same binder made again (a loop): its answers accumulate.
        let d = Peer::join(&file, Some("tests/t.rs:3\nt".into()));
        used(&d, "d");
        drop(d);
        let e = Peer::join(&file, Some("tests/t.rs:3\nt".into()));
        used(&e, "e");
        assert_eq!(kept(&e), ["d", "e"]);
        // Another file is another matter.
        let other = Peer::join(&dir.join("u.snap"), None);
        assert!(kept(&other).is_empty());
    }
}
