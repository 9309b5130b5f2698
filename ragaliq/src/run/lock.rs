//! Advisory file locks that fail loudly.
//!
//! A lock guards a *resource* (a recording, the run's ledger, a report
//! folder) and lives in one lock folder shared by every process of the
//! user, whatever built them: `RAGALIQ_LOCK_DIR` when set, else
//! `ragaliq-locks-<uid>` in the system's temporary folder (on Unix; the
//! user's name elsewhere). That default folder is made readable and
//! writable by its owner only, and one that is not the user's own (made
//! first by someone else in a shared `/tmp`, a symbolic link, or writable
//! by others) is refused rather than used. Whose it is is checked against
//! the process's user id, learned from the system (see `own_uid`), never
//! from a variable such as `$USER` that anyone can set; when the user id
//! cannot be learned the folder is refused too, never used unchecked. On
//! other platforms the folder is made and used as found: they have no
//! Unix owner and mode to check. Its file is named
//! by the resource's canonical path, so `tests/snapshots/x.snap`,
//! `./tests/snapshots/x.snap` and the absolute path take the same lock, and
//! an installed `cargo ragaliq` locks what the tests lock.
//!
//! When a file lock cannot be taken (a lock folder that cannot be written,
//! `ENOLCK` on a network file system, a platform without `flock`), what
//! happens depends on the run:
//!
//! - a run of one process (plain `cargo test`, no `RAGALIQ_RUN_ID`) falls
//!   back to a lock within the process — *single-writer mode* — and says so
//!   once on stderr; nothing else of the run writes the same files;
//! - a run that spans processes (cargo-nextest, `RAGALIQ_RUN_ID`) fails with
//!   an error naming the lock file: without it, two processes could
//!   read-merge-write one file at once and lose an update.

use super::current;
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};

/// A lock that could not be taken, in a run where that is an error.
#[derive(Debug)]
pub(crate) struct LockError {
    /// The resource the lock guards.
    pub resource: PathBuf,
    /// The lock file.
    pub lock_file: PathBuf,
    /// Why.
    pub source: io::Error,
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot lock {} (lock file {}): {}; the processes of this run ({}) share it, and without the lock an update could be lost. Make the lock folder writable, or set RAGALIQ_LOCK_DIR to a folder on a local disk",
            self.resource.display(),
            self.lock_file.display(),
            self.source,
            current().id,
        )
    }
}

impl std::error::Error for LockError {}

/// Holds a lock until dropped (also released by the operating system when
/// the process dies).
#[must_use = "the lock is released when the guard is dropped"]
pub(crate) struct LockGuard {
    _file: Option<File>,
    /// The resource's key in [`HELD`], for the in-process fallback.
    in_process: Option<String>,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if let Some(key) = self.in_process.take() {
            let (held, freed) = held();
            crate::core::sync::lock(held).remove(&key);
            freed.notify_all();
        }
    }
}

/// The resources locked within this process by the single-writer fallback.
fn held() -> &'static (Mutex<BTreeSet<String>>, Condvar) {
    static HELD: OnceLock<(Mutex<BTreeSet<String>>, Condvar)> = OnceLock::new();
    HELD.get_or_init(Default::default)
}

/// An exclusive lock on `resource`; other holders (threads or processes)
/// wait.
pub(crate) fn exclusive(resource: &Path) -> Result<LockGuard, LockError> {
    let lock_file = lock_file(resource);
    let locked = open(&lock_file).and_then(|file| file.lock().map(|()| file));
    match locked {
        Ok(file) => Ok(LockGuard {
            _file: Some(file),
            in_process: None,
        }),
        Err(source) if current().spans_processes() => Err(LockError {
            resource: resource.to_owned(),
            lock_file,
            source,
        }),
        Err(source) => {
            warn_single_writer(&lock_file, &source);
            Ok(lock_in_process(&lock_file))
        }
    }
}

fn lock_in_process(lock_file: &Path) -> LockGuard {
    let key = lock_file.display().to_string();
    let (held, freed) = held();
    let mut set = crate::core::sync::lock(held);
    while set.contains(&key) {
        set = freed
            .wait(set)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
    set.insert(key.clone());
    LockGuard {
        _file: None,
        in_process: Some(key),
    }
}

fn warn_single_writer(lock_file: &Path, e: &io::Error) {
    static WARNED: OnceLock<()> = OnceLock::new();
    if WARNED.set(()).is_ok() {
        eprintln!(
            "warning: ragaliq cannot take file locks ({}: {e}); this run is one process, so it locks within the process only (single-writer mode). Do not run another ragaliq process on the same recordings at the same time, or set RAGALIQ_LOCK_DIR to a writable folder on a local disk.",
            lock_file.display()
        );
    }
}

fn open(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        if std::env::var_os("RAGALIQ_LOCK_DIR").is_some_and(|d| !d.is_empty()) {
            std::fs::create_dir_all(dir)?;
        } else {
            own_folder(dir)?;
        }
    }
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
}

/// Where lock files live: `RAGALIQ_LOCK_DIR`, else `ragaliq-locks-<uid>`
/// in the temporary folder (per user, so two users of one machine do not
/// share a folder only one of them may write; by user id on Unix, which a
/// variable cannot fake).
pub(crate) fn lock_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RAGALIQ_LOCK_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    std::env::temp_dir().join(format!("ragaliq-locks-{}", user_tag()))
}

/// The user, for the lock folder's name: the user id on Unix (or
/// `unknown-uid` when it cannot be learned, a folder [`own_folder`] then
/// refuses), the user's name elsewhere.
fn user_tag() -> String {
    #[cfg(unix)]
    {
        own_uid().map_or_else(|_| "unknown-uid".into(), |uid| uid.to_string())
    }
    #[cfg(not(unix))]
    {
        ["USER", "USERNAME", "LOGNAME"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
            .map(|u| super::safe_name(&u))
            .unwrap_or_else(|| "default".into())
    }
}

/// This process's user id, learned once, or why it cannot be.
///
/// The standard library has no `getuid`, and this crate uses no `unsafe`,
/// so it is read from what the system says of the process, never from a
/// variable: on Linux the filesystem user id of `/proc/self/status` (the
/// owner the kernel gives the files and folders the process makes, so the
/// one the lock folder's owner is compared with); where that cannot be
/// read (no `/proc`: macOS, the BSDs, a container without it), the owner
/// of a file the process creates in the temporary folder, under a name
/// nobody else holds (`create_new`: a file or link someone left under that
/// name is never taken for ours) and read through its own handle.
#[cfg(unix)]
fn own_uid() -> Result<u32, String> {
    static UID: OnceLock<Result<u32, String>> = OnceLock::new();
    UID.get_or_init(|| {
        proc_uid().or_else(|from_proc| {
            probe_uid(&std::env::temp_dir())
                .map_err(|from_probe| format!("{from_proc}; {from_probe}"))
        })
    })
    .clone()
}

/// The filesystem user id in `/proc/self/status` (Linux): the fourth
/// number of its `Uid:` line (real, effective, saved, filesystem).
#[cfg(unix)]
fn proc_uid() -> Result<u32, String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("/proc/self/status cannot be read ({e})"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(3))
        .and_then(|id| id.parse().ok())
        .ok_or_else(|| "/proc/self/status has no readable Uid: line".to_owned())
}

/// The owner of a file this process creates in `dir`, then removes.
#[cfg(unix)]
fn probe_uid(dir: &Path) -> Result<u32, String> {
    use std::os::unix::fs::MetadataExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static PROBES: AtomicU64 = AtomicU64::new(0);
    // A name someone else took (guessed from the process id) is passed
    // over, not trusted: up to 16 names, each with the clock's nanoseconds.
    let mut last = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!(
            ".ragaliq-uid-{}-{}-{nanos}",
            std::process::id(),
            PROBES.fetch_add(1, Ordering::Relaxed)
        ));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => {
                let owner = file.metadata().map(|m| m.uid());
                drop(file);
                let _ = std::fs::remove_file(&path);
                return owner
                    .map_err(|e| format!("the owner of {} cannot be read ({e})", path.display()));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(format!(
                    "no file can be made in {} to learn it ({e})",
                    dir.display()
                ));
            }
        }
    }
    Err(format!(
        "every name tried in {} to learn it was taken ({})",
        dir.display(),
        last.map_or_else(String::new, |e| e.to_string())
    ))
}

/// Makes the default lock folder, or checks the one found: a folder (not
/// a link) of this user's, that nobody else may write. A lock folder
/// someone else controls could hold their files under our locks' names.
fn own_folder(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)?;
            }
            Err(e) => return Err(e),
        }
        let meta = std::fs::symlink_metadata(dir)?;
        let us = own_uid();
        check_folder(dir, &meta, us.as_ref().copied().map_err(String::as_str))
            .map_err(|refused| io::Error::new(io::ErrorKind::PermissionDenied, refused))
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Why the default lock folder is not used.
#[cfg(unix)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// It is not a folder (a symbolic link, a file).
    NotAFolder,
    /// Another user owns it.
    OtherOwner {
        /// Its owner's user id.
        owner: u32,
        /// This process's.
        us: u32,
    },
    /// Others may write in it.
    WritableByOthers {
        /// Its permission bits.
        mode: u32,
    },
    /// This process's user id cannot be learned, so whose the folder is
    /// cannot be told: it is not used unchecked.
    UnknownUser {
        /// Why the user id cannot be learned.
        why: String,
    },
}

/// The default lock folder, refused: which, and why.
#[cfg(unix)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FolderRefused {
    /// The folder.
    pub dir: PathBuf,
    /// Why it is not used.
    pub why: Refusal,
}

#[cfg(unix)]
impl std::fmt::Display for FolderRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the lock folder {} ", self.dir.display())?;
        match &self.why {
            Refusal::NotAFolder => write!(f, "is not a folder (a symbolic link?)")?,
            Refusal::OtherOwner { owner, us } => {
                write!(f, "belongs to another user (uid {owner}, you are {us})")?;
            }
            Refusal::WritableByOthers { mode } => {
                write!(f, "can be written by others (mode {mode:o})")?;
            }
            Refusal::UnknownUser { why } => write!(
                f,
                "cannot be checked: this process's user id cannot be learned ({why}), so whether another user made the folder cannot be told"
            )?,
        }
        write!(
            f,
            ": ragaliq does not use it (remove it, or set RAGALIQ_LOCK_DIR to a folder of your own)"
        )
    }
}

#[cfg(unix)]
impl std::error::Error for FolderRefused {}

/// Whether `meta`, the metadata of the folder `dir` (not followed if a
/// link), is a lock folder this process may use, `us` being this process's
/// user id (or why it is not known). Apart from the folder's creation, so
/// a test can put another user in `us`.
#[cfg(unix)]
fn check_folder(
    dir: &Path,
    meta: &std::fs::Metadata,
    us: Result<u32, &str>,
) -> Result<(), FolderRefused> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why| {
        Err(FolderRefused {
            dir: dir.to_owned(),
            why,
        })
    };
    if !meta.is_dir() {
        return refuse(Refusal::NotAFolder);
    }
    let us = match us {
        Ok(us) => us,
        Err(why) => return refuse(Refusal::UnknownUser { why: why.into() }),
    };
    if meta.uid() != us {
        return refuse(Refusal::OtherOwner {
            owner: meta.uid(),
            us,
        });
    }
    if meta.mode() & 0o022 != 0 {
        return refuse(Refusal::WritableByOthers {
            mode: meta.mode() & 0o777,
        });
    }
    Ok(())
}

/// The lock file of `resource`: named by its canonical path (the path of its
/// folder, canonical, for a file that does not exist yet).
pub(crate) fn lock_file(resource: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let canonical = canonical(resource);
    let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
    let hex: String = digest[..10].iter().map(|b| format!("{b:02x}")).collect();
    let stem = resource
        .file_name()
        .map(|n| super::safe_name(&n.to_string_lossy()))
        .unwrap_or_default();
    lock_dir().join(format!("{stem}-{hex}.lock"))
}

/// `path` made absolute with symbolic links, `.` and `..` resolved, as far
/// as it exists.
pub(crate) fn canonical(path: &Path) -> PathBuf {
    if let Ok(c) = path.canonicalize() {
        return c;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    match (absolute.parent(), absolute.file_name()) {
        (Some(parent), Some(name)) => canonical(parent).join(name),
        _ => absolute,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_resource_one_lock_however_it_is_written() {
        let here = std::env::current_dir().unwrap();
        let a = lock_file(Path::new("Cargo.toml"));
        let b = lock_file(&here.join("./src/../Cargo.toml"));
        assert_eq!(a, b);
        let missing = lock_file(Path::new("src/../not-yet-written.snap"));
        assert_eq!(missing, lock_file(&here.join("not-yet-written.snap")));
        assert_ne!(a, missing);
    }

    #[test]
    fn locks_exclude_each_other() {
        let resource =
            std::env::temp_dir().join(format!("ragaliq-lock-test-{}", std::process::id()));
        let guard = exclusive(&resource).unwrap();
        let file = open(&lock_file(&resource)).unwrap();
        assert!(matches!(
            file.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(guard);
        assert!(file.try_lock().is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_folder_that_is_not_the_users_own_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("ragaliq-lockdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        // Made now: the owner's alone.
        let mine = base.join("mine");
        own_folder(&mine).unwrap();
        let mode = std::fs::metadata(&mine).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // A folder anyone may write, as someone could leave in /tmp.
        let open = base.join("open");
        std::fs::create_dir_all(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = own_folder(&open).unwrap_err().to_string();
        assert!(refused.contains("can be written by others"), "{refused}");
        // A link to somewhere else.
        let link = base.join("link");
        std::os::unix::fs::symlink(&mine, &link).unwrap();
        let refused = own_folder(&link).unwrap_err().to_string();
        assert!(refused.contains("is not a folder"), "{refused}");
        // Another user's (root owns /): not ours unless we are root.
        if own_uid() != Ok(0) {
            assert!(own_folder(Path::new("/")).is_err());
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A folder another user made first (simulated: the folder is ours, the
    /// user id given is someone else's) is refused; and so is any folder
    /// when this process's user id cannot be learned. Before, a failed
    /// probe skipped the owner check, and the folder was used whoever made
    /// it.
    #[cfg(unix)]
    #[test]
    fn a_folder_is_used_only_when_it_is_known_to_be_ours() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("ragaliq-lockowner-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        own_folder(&dir).unwrap();
        let meta = std::fs::symlink_metadata(&dir).unwrap();
        let ours = meta.uid();
        assert_eq!(check_folder(&dir, &meta, Ok(ours)), Ok(()));
        let stranger = ours.wrapping_add(1);
        let refused = check_folder(&dir, &meta, Ok(stranger)).unwrap_err();
        assert_eq!(
            refused.why,
            Refusal::OtherOwner {
                owner: ours,
                us: stranger
            }
        );
        assert!(
            refused.to_string().contains("belongs to another user"),
            "{refused}"
        );
        let unknown = check_folder(&dir, &meta, Err("no probe could be made"));
        let refused = unknown.expect_err("the check was skipped: the folder was used unchecked");
        assert!(
            refused.to_string().contains("no probe could be made"),
            "{refused}"
        );
        assert_eq!(
            refused.why,
            Refusal::UnknownUser {
                why: "no probe could be made".into()
            }
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The user id is the system's, whatever `$USER` says: the owner of a
    /// file this process makes, and (on Linux) `/proc/self/status`'s.
    #[cfg(unix)]
    #[test]
    fn the_user_id_is_learned_from_the_system() {
        use std::os::unix::fs::MetadataExt;
        let made = std::env::temp_dir().join(format!("ragaliq-uid-test-{}", std::process::id()));
        std::fs::write(&made, "").unwrap();
        let owner = std::fs::metadata(&made).unwrap().uid();
        std::fs::remove_file(&made).unwrap();
        assert_eq!(own_uid(), Ok(owner));
        assert_eq!(probe_uid(&std::env::temp_dir()), Ok(owner));
        #[cfg(target_os = "linux")]
        assert_eq!(proc_uid(), Ok(owner));
        // Where no file can be made, the probe says so (and the folder is
        // then refused, see above), never guesses.
        let nowhere = probe_uid(Path::new("/nonexistent/ragaliq")).unwrap_err();
        assert!(nowhere.contains("/nonexistent/ragaliq"), "{nowhere}");
    }

    #[test]
    fn the_in_process_fallback_excludes_threads() {
        let lock_file = PathBuf::from("/nonexistent/ragaliq-fallback-test.lock");
        let guard = lock_in_process(&lock_file);
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _g = lock_in_process(&PathBuf::from("/nonexistent/ragaliq-fallback-test.lock"));
            tx.send(()).unwrap();
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(100))
                .is_err(),
            "the second holder waits"
        );
        drop(guard);
        rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
        waiter.join().unwrap();
    }
}
