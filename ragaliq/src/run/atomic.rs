//! Writing a file whole or not at all.
//!
//! The bytes go to a temporary file beside the target, which is then renamed
//! over it: a reader sees the old file or the new one, never half of one,
//! however the writer dies. The file's data reaches the disk before the
//! rename, and the folder's entry after it (`fsync` of both), so a power
//! loss cannot leave a renamed but empty recording or ledger either. A writer holds a lock on its temporary file
//! while it writes, so a temporary file left by a writer that was killed
//! (unlocked, and older than a few seconds) is recognised and removed by the
//! next write of the same target, instead of staying in the source tree.
//!
//! A target that is a symbolic link is written through: its target gets
//! the new bytes and the link stays a link (a judge file shared between
//! projects by a link, say). A file that exists keeps its permissions.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The suffix of ragaliq's temporary files.
const SUFFIX: &str = ".ragaliq-tmp";

/// How old an unlocked temporary file must be before it counts as left
/// behind: a live writer locks its file right after creating it, so an
/// unlocked one this old belongs to a writer that is gone.
const LEFT_BEHIND: Duration = Duration::from_secs(2);

/// Writes `bytes` to `path` atomically (see the module).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let resolved = through_links(path)?;
    let path = resolved.as_path();
    // Kept: a renamed temporary file would otherwise carry the default mode.
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = file_name(path);
    let tmp = dir.join(format!(
        ".{name}.{}-{}{SUFFIX}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| -> io::Result<()> {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        // Held until the rename: an unlocked temporary file is an orphan.
        let _ = file.try_lock();
        if let Some(permissions) = &permissions {
            file.set_permissions(permissions.clone())?;
        }
        file.write_all(bytes)?;
        // The data on disk before the name points at it.
        file.sync_all()?;
        syncs::count();
        std::fs::rename(&tmp, path)?;
        sync_dir(dir);
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    remove_left_behind(path);
    Ok(())
}

/// The file a write to `path` must replace: `path` itself, or, for a
/// symbolic link, the file it points to (following links to links, at
/// most 40, as the kernel does).
fn through_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)?;
                // A relative target is relative to the link's folder.
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// Makes a folder's entries durable (the rename above). Best effort: some
/// platforms and file systems cannot open or sync a folder, and the write
/// itself has succeeded by then.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir)
        && d.sync_all().is_ok()
    {
        syncs::count();
    }
}

/// How many syncs this thread made, for the tests that check each write
/// makes them (a power loss cannot be simulated in a test).
mod syncs {
    #[cfg(test)]
    thread_local!(pub(super) static COUNT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });

    pub(super) fn count() {
        #[cfg(test)]
        COUNT.with(|c| c.set(c.get() + 1));
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Removes the temporary files of `path` whose writer is gone: ragaliq's
/// own (`.name.<pid>-<n>.ragaliq-tmp`) and those of earlier ragaliq
/// versions (`.name.<pid>-<n>.tmp`). Writes call it; so does a recording's
/// merge, which may find nothing to write.
pub(crate) fn remove_left_behind(path: &Path) {
    let dir = path.parent().unwrap_or(Path::new("."));
    let prefix = format!(".{}.", file_name(path));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        let ours = file.ends_with(SUFFIX) || file.ends_with(".tmp");
        if !(ours && file.starts_with(&prefix)) {
            continue;
        }
        let path: PathBuf = entry.path();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age >= LEFT_BEHIND);
        if old && File::open(&path).is_ok_and(|f| f.try_lock().is_ok()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_file_left_by_a_dead_writer_is_removed_by_the_next_write() {
        let dir = std::env::temp_dir().join(format!("ragaliq-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("x.snap.new");
        // A writer killed before its rename: the file is there, unlocked.
        let orphan = dir.join(".x.snap.new.4242-0.ragaliq-tmp");
        let old_style = dir.join(".x.snap.new.4242-1.tmp");
        let live = dir.join(".x.snap.new.4343-0.ragaliq-tmp");
        let other = dir.join(".y.snap.new.4242-0.ragaliq-tmp");
        for p in [&orphan, &old_style, &live, &other] {
            std::fs::write(p, "half").unwrap();
            let past = SystemTime::now() - Duration::from_secs(60);
            File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(past)
                .unwrap();
        }
        // A writer still at work holds its lock.
        let held = File::open(&live).unwrap();
        held.lock().unwrap();
        write_atomic(&target, b"whole").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
        assert!(!orphan.exists() && !old_style.exists());
        assert!(
            live.exists(),
            "a locked temporary file belongs to a live writer"
        );
        assert!(other.exists(), "another target's files are not touched");
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_file_and_its_folder_are_synced_around_the_rename() {
        let dir = std::env::temp_dir().join(format!("ragaliq-atomic-sync-{}", std::process::id()));
        let target = dir.join("ledger.json");
        let before = syncs::COUNT.with(std::cell::Cell::get);
        write_atomic(&target, b"{}").unwrap();
        let made = syncs::COUNT.with(std::cell::Cell::get) - before;
        // The file always; the folder where the platform can (Linux can).
        assert!(made >= 1, "the file's data was not synced");
        #[cfg(target_os = "linux")]
        assert_eq!(made, 2, "the folder's entry was not synced");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_stays_a_link_and_a_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("ragaliq-atomic-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("shared")).unwrap();
        let real = dir.join("shared/judge.toml");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.join("judge.toml");
        std::os::unix::fs::symlink("shared/judge.toml", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link was replaced by a file"
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "permissions were not kept: {mode:o}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_target_is_replaced_never_rewritten_in_place() {
        use std::io::Read;
        let dir = std::env::temp_dir().join(format!("ragaliq-atomic-inode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("r.snap");
        write_atomic(&target, b"first version").unwrap();
        // A reader that opened the old file keeps reading all of it.
        let mut reader = File::open(&target).unwrap();
        write_atomic(&target, b"second").unwrap();
        let mut seen = String::new();
        reader.read_to_string(&mut seen).unwrap();
        assert_eq!(seen, "first version");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "second");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
