//! Finding recordings in a source tree.

use std::path::{Path, PathBuf};

/// Every `.snap` and `.snap.new` file under `roots` that is a ragaliq
/// recording, skipping `target` folders and hidden ones.
pub fn recordings(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for root in roots {
        walk(root, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        if is_recording(dir) {
            out.push(dir.to_path_buf());
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                walk(&path, out);
            }
        } else if (name.ends_with(".snap") || name.ends_with(".snap.new")) && is_recording(&path) {
            out.push(path);
        }
    }
}

fn is_recording(path: &Path) -> bool {
    ragaliq::record::format_of(path).is_some()
}

/// The package root of a file: the nearest ancestor with a `Cargo.toml`.
pub fn package_root(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|a| a.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

/// `path` relative to the current folder, when it lies under it.
pub fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd)
        .unwrap_or(path)
        .display()
        .to_string()
}
