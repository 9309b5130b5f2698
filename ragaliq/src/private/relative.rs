//! Paths as the person who ran `cargo test` types them, for messages.

use std::path::{Path, PathBuf};

/// `path` as the person who ran `cargo test` types it: relative to the
/// folder they ran it in when it lies inside it, else absolute. That
/// folder is the shell's `PWD`, which cargo leaves as it was while it runs
/// the test in the package's folder: for `cargo test -p shop` in a
/// workspace, the workspace root, not `shop/`. Without `PWD` (a shell that
/// sets none) the path is absolute, which works from anywhere.
pub(super) fn relative(path: &Path) -> PathBuf {
    relative_to(path, std::env::var_os("PWD").map(PathBuf::from).as_deref())
}

fn relative_to(path: &Path, pwd: Option<&Path>) -> PathBuf {
    let Some(here) = pwd.filter(|p| p.is_absolute() && p.is_dir()) else {
        return path.to_path_buf();
    };
    if let Ok(inside) = path.strip_prefix(here) {
        return inside.to_path_buf();
    }
    // The shell's folder may name a link the test's paths resolve.
    let (Ok(here), Some(parent)) = (here.canonicalize(), path.parent()) else {
        return path.to_path_buf();
    };
    match (parent.canonicalize(), path.file_name()) {
        (Ok(parent), Some(name)) => parent
            .strip_prefix(&here)
            .map_or_else(|_| path.to_path_buf(), |p| p.join(name)),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_shown_from_where_cargo_test_ran() {
        let dir = std::env::temp_dir().join(format!("ragaliq-relative-{}", std::process::id()));
        let snapshots = dir.join("shop/tests/snapshots");
        std::fs::create_dir_all(&snapshots).unwrap();
        let snap = snapshots.join("returns__x.snap");
        // `cargo test -p shop` in the workspace folder.
        assert_eq!(
            relative_to(&snap, Some(&dir)),
            Path::new("shop/tests/snapshots/returns__x.snap")
        );
        // `cargo test` in the package's folder.
        assert_eq!(
            relative_to(&snap, Some(&dir.join("shop"))),
            Path::new("tests/snapshots/returns__x.snap")
        );
        // Through `..` (a folder named by a link resolves the same way).
        assert_eq!(
            relative_to(&snap, Some(&snapshots.join("../.."))),
            Path::new("tests/snapshots/returns__x.snap")
        );
        // Elsewhere, or no PWD: absolute, which works from anywhere.
        std::fs::create_dir_all(dir.join("other")).unwrap();
        assert_eq!(relative_to(&snap, Some(&dir.join("other"))), snap);
        assert_eq!(
            relative_to(&snap, Some(Path::new("/nonexistent-ragaliq"))),
            snap
        );
        assert_eq!(relative_to(&snap, None), snap);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
