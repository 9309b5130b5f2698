//! Handing a recording to insta, so `cargo insta review`, `accept`,
//! `INSTA_UPDATE`, `INSTA_FORCE_PASS` and `--unreferenced` treat it like any
//! other snapshot.
//!
//! ragaliq calls insta's snapshot assertion itself, with the test's own file,
//! module and line, instead of expanding insta's macro in the user's crate:
//! the macro finds the workspace root by running `cargo metadata` in a child
//! process, once per test process, which under cargo-nextest is once per
//! test. The root is worked out here from the manifest folder instead. The
//! function called is the one insta's own macros call; ragaliq pins the
//! insta minor version it was written against, because that function is not
//! covered by insta's semver promise.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Where a recording's assertion is made, for insta's metadata.
#[derive(Clone, Copy, Debug)]
pub struct Site<'a> {
    /// The source file, relative to the workspace root (`file!()` of the test).
    pub file: &'a str,
    /// The module path (`module_path!()`).
    pub module_path: &'a str,
    /// The function.
    pub function: &'a str,
    /// The line.
    pub line: u32,
    /// The package root (`CARGO_MANIFEST_DIR`).
    pub manifest_dir: &'a str,
}

/// Asserts `contents` as the snapshot at `snapshot` through insta: passes
/// when it matches the accepted `.snap`, else writes it as insta's settings
/// say (`.snap.new` by default) and panics, unless `INSTA_FORCE_PASS` is set.
pub fn assert_snapshot(snapshot: &Path, contents: &str, description: &str, site: Site<'_>) {
    let dir = snapshot.parent().unwrap_or(Path::new("."));
    let name = snapshot
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.strip_suffix(".snap").unwrap_or(&name).to_owned();
    let workspace = workspace_root(site.manifest_dir);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(description);
    settings.bind(|| {
        let result = insta::_macro_support::assert_snapshot(
            (name.as_str(), contents).into(),
            &workspace,
            site.function,
            site.module_path,
            site.file,
            site.line,
            "recording",
        );
        if let Err(e) = result {
            panic!("could not write the recording {}: {e}", snapshot.display());
        }
    });
}

/// The cargo workspace root of the package at `manifest_dir`:
/// `INSTA_WORKSPACE_ROOT` when set (as insta reads it), else the nearest
/// ancestor whose `Cargo.toml` has a `[workspace]` table, else the package.
#[must_use]
pub fn workspace_root(manifest_dir: &str) -> PathBuf {
    if let Some(root) = std::env::var_os("INSTA_WORKSPACE_ROOT").filter(|r| !r.is_empty()) {
        return PathBuf::from(root);
    }
    static ROOTS: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut roots = crate::core::sync::lock(ROOTS.get_or_init(Mutex::default));
    roots
        .entry(manifest_dir.to_owned())
        .or_insert_with(|| find_workspace(Path::new(manifest_dir)))
        .clone()
}

fn find_workspace(manifest_dir: &Path) -> PathBuf {
    manifest_dir
        .ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|text| {
                text.lines()
                    .any(|l| l.trim() == "[workspace]" || l.trim_start().starts_with("[workspace."))
            })
        })
        .unwrap_or(manifest_dir)
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_is_found_without_cargo() {
        let here = env!("CARGO_MANIFEST_DIR");
        let root = find_workspace(Path::new(here));
        assert!(root.join("ragaliq").is_dir(), "{}", root.display());
        assert_eq!(Path::new(here).parent().unwrap(), root);
    }
}
