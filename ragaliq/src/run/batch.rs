//! The batch folder of `cargo ragaliq record --batch`: where test processes
//! in *collect* mode queue the questions no recording answers, and where the
//! round driver puts the answers a provider's batch API gave.
//!
//! ```text
//! <folder>/queue/<fingerprint>.json     a question, queued by a test process
//! <folder>/answers/<fingerprint>.json   its answer, written by the driver
//! <folder>/state.json                   the driver's rounds and batches
//! ```
//!
//! A question is named by its fingerprint, so the processes of a round that
//! ask the same question queue it once, and a batch's results are matched to
//! questions by that name (the batch line's `custom_id`), never by order.
//! Every file is written whole (a temporary file renamed into place).
//!
//! The folder is not a run's folder (`target/ragaliq/runs/<id>/`): a batch
//! may take the provider's whole 24 h window, and a run folder no process
//! joined for 12 h is emptied by the next process that joins it.

use super::atomic::write_atomic;
use crate::core::{Fingerprint, JudgeRequest, JudgeResponse};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// A question queued for a provider's batch API: the request as the judge
/// would have sent it, and the provider it was meant for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueuedRequest {
    /// The provider's name, as in fingerprints (`openai`, `anthropic`).
    pub provider: String,
    /// The request.
    pub request: JudgeRequest,
}

/// A batch folder (see the module).
///
/// ```
/// use ragaliq::run::BatchFolder;
/// let folder = BatchFolder::new(std::env::temp_dir().join("ragaliq-doc-batch"));
/// assert!(folder.dir().ends_with("ragaliq-doc-batch"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchFolder {
    dir: PathBuf,
}

impl BatchFolder {
    /// The folder at `dir` (created on the first write).
    #[must_use]
    pub fn new(dir: impl Into<PathBuf>) -> BatchFolder {
        BatchFolder { dir: dir.into() }
    }

    /// Where it is.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The driver's state file.
    #[must_use]
    pub fn state_file(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    /// Replaces the driver's state file with `bytes`, whole (a temporary
    /// file renamed into place: a crash leaves the old state or the new).
    ///
    /// # Errors
    ///
    /// The file cannot be written.
    pub fn write_state(&self, bytes: &[u8]) -> io::Result<()> {
        write_atomic(&self.state_file(), bytes)
    }

    fn queue_file(&self, fingerprint: &Fingerprint) -> PathBuf {
        self.dir.join("queue").join(format!("{fingerprint}.json"))
    }

    fn answer_file(&self, fingerprint: &Fingerprint) -> PathBuf {
        self.dir.join("answers").join(format!("{fingerprint}.json"))
    }

    /// The answer the batch gave to `fingerprint`'s question, if it came.
    ///
    /// # Errors
    ///
    /// An answer file that exists but cannot be read or parsed: never taken
    /// for a missing one, which would queue (and pay for) the question again.
    pub fn answer(&self, fingerprint: &Fingerprint) -> io::Result<Option<JudgeResponse>> {
        let path = self.answer_file(fingerprint);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not an answer: {e}", path.display()),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Queues `question` under `fingerprint` (once: a question already
    /// queued is left as it is).
    ///
    /// # Errors
    ///
    /// The queue file cannot be written.
    pub fn queue(&self, fingerprint: &Fingerprint, question: &QueuedRequest) -> io::Result<()> {
        let path = self.queue_file(fingerprint);
        if path.is_file() {
            return Ok(());
        }
        let bytes = serde_json::to_vec_pretty(question).map_err(io::Error::other)?;
        write_atomic(&path, &bytes)
    }

    /// Every queued question without an answer, by fingerprint.
    ///
    /// # Errors
    ///
    /// The queue cannot be listed, or a queued file cannot be read or parsed
    /// (its name says which).
    pub fn queued(&self) -> io::Result<Vec<(Fingerprint, QueuedRequest)>> {
        let dir = self.dir.join("queue");
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in entries {
            let path = entry?.path();
            let Some(fingerprint) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<Fingerprint>().ok())
            else {
                // Temporary files of a write in progress, and anything else.
                continue;
            };
            if self.answer_file(&fingerprint).is_file() {
                continue;
            }
            let bytes = std::fs::read(&path)?;
            let question = serde_json::from_slice(&bytes).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not a queued question: {e}", path.display()),
                )
            })?;
            out.push((fingerprint, question));
        }
        out.sort_by_key(|(f, _)| *f);
        Ok(out)
    }

    /// Keeps the batch's `answer` to `fingerprint`'s question.
    ///
    /// # Errors
    ///
    /// The answer file cannot be written.
    pub fn write_answer(
        &self,
        fingerprint: &Fingerprint,
        answer: &JudgeResponse,
    ) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(answer).map_err(io::Error::other)?;
        write_atomic(&self.answer_file(fingerprint), &bytes)
    }

    /// Empties the queue (a round starts from what its tests ask).
    ///
    /// # Errors
    ///
    /// The queue folder exists but cannot be removed.
    pub fn clear_queue(&self) -> io::Result<()> {
        match std::fs::remove_dir_all(self.dir.join("queue")) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// How many answers the folder holds.
    #[must_use]
    pub fn answers(&self) -> usize {
        std::fs::read_dir(self.dir.join("answers"))
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                    .count()
            })
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Message, ResponseFormat};

    fn question(task: &str) -> QueuedRequest {
        QueuedRequest {
            provider: "openai".into(),
            request: JudgeRequest {
                task: task.into(),
                template_version: "t@1".into(),
                model: "m".into(),
                system: "s".into(),
                messages: vec![Message::user("u")],
                temperature: 0.0,
                max_tokens: 10,
                response_format: ResponseFormat::JsonObject,
                sample: 0,
                subject: serde_json::Value::Null,
            },
        }
    }

    #[test]
    fn questions_are_queued_once_and_leave_the_queue_when_answered() {
        let dir = std::env::temp_dir().join(format!("ragaliq-batch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let folder = BatchFolder::new(&dir);
        let a = question("a");
        let b = question("b");
        let (fa, fb) = (
            a.request.fingerprint("openai"),
            b.request.fingerprint("openai"),
        );
        folder.queue(&fa, &a).unwrap();
        folder.queue(&fa, &a).unwrap();
        folder.queue(&fb, &b).unwrap();
        assert_eq!(folder.queued().unwrap().len(), 2);
        assert_eq!(folder.answer(&fa).unwrap(), None);

        let answer = JudgeResponse::text("{}").with_tokens(3, 1);
        folder.write_answer(&fa, &answer).unwrap();
        assert_eq!(folder.answer(&fa).unwrap(), Some(answer));
        let left = folder.queued().unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].0, fb);
        assert_eq!(folder.answers(), 1);

        // A broken answer is an error, not a missing answer to ask again.
        std::fs::write(dir.join("answers").join(format!("{fb}.json")), "{").unwrap();
        assert!(folder.answer(&fb).is_err());

        folder.clear_queue().unwrap();
        assert!(folder.queued().unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
