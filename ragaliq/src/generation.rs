//! Case generation: questions and grounded answers from a folder of
//! documents, as a case file the suite can load.

use crate::core::RagCase;
use crate::error::Error;
use crate::judge::Judge;
use crate::tasks::GenerateCases;
use std::path::{Path, PathBuf};

/// Why generation stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// A document or the output could not be read or written.
    #[error("{path}: {message}", path = .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The judge failed for a document.
    #[error("{path}: {source}", path = .path.display())]
    Judge {
        /// The document.
        path: PathBuf,
        /// The judge's error.
        source: Box<Error>,
    },
}

/// The documents read: `.txt` and `.md` files directly in `dir`, in name order.
pub const DOCUMENT_EXTENSIONS: [&str; 2] = ["txt", "md"];

/// Asks the judge for up to `per_document` questions and grounded answers
/// per document in `dir`. Each case's context is its document; its
/// `expected_answer` and (as a starting point) its `response` are the
/// generated answer. Ids are `<file stem>-<n>`.
///
/// Like every judge exchange, generation records and replays through the
/// judge's recorder.
pub async fn generate(
    judge: &Judge,
    dir: &Path,
    per_document: usize,
) -> Result<Vec<RagCase>, GenerateError> {
    let io = |path: &Path, e: std::io::Error| GenerateError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let mut documents: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| DOCUMENT_EXTENSIONS.contains(&e))
        })
        .collect();
    documents.sort();
    let mut cases = Vec::new();
    for path in documents {
        let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
        if text.trim().is_empty() {
            continue;
        }
        let stem: String = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let file = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let question = GenerateCases {
            file: file.as_deref(),
            count: per_document,
            document: text.trim(),
        };
        let judged = judge.ask(&question);
        let generated = judged.await.map_err(|source| GenerateError::Judge {
            path: path.clone(),
            source: Box::new(source),
        })?;
        for (i, g) in generated.into_iter().take(per_document).enumerate() {
            cases.push(
                RagCase::new(g.question)
                    .id(format!("{stem}-{}", i + 1))
                    .context([text.trim()])
                    .response(g.answer.clone())
                    .expected_answer(g.answer),
            );
        }
    }
    Ok(cases)
}

/// Writes `cases` as JSON Lines, the format [`suite`](crate::suite()) loads,
/// making the file's folder first if it does not exist (`target/cases.jsonl`
/// in a fresh clone, or with `CARGO_TARGET_DIR` set elsewhere).
pub fn write_jsonl(cases: &[RagCase], path: &Path) -> Result<(), GenerateError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| GenerateError::Io {
            path: dir.to_owned(),
            message: e.to_string(),
        })?;
    }
    let mut out = String::new();
    for case in cases {
        let line = serde_json::to_string(case).map_err(|e| GenerateError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        out.push_str(&line);
        out.push('\n');
    }
    std::fs::write(path, out).map_err(|e| GenerateError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    })
}
