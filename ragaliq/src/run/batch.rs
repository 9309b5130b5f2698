//! The batch folder of `cargo ragaliq record --batch`: where test processes
//! in *collect* mode queue the questions no recording answers, and where the
//! round driver puts the answers a provider's batch API gave.
//!
//! ```text
//! <folder>/queue/<fingerprint>.json     a question, queued by a test process
//! <folder>/answers/<fingerprint>.json   its answer, written by the driver
//! <folder>/state.json                   the driver's rounds and batches
//! <folder>/.ragaliq-batch                marks the folder as ragaliq's
//! <folder>/driver.lock                   held by the one driver at work
//! ```
//!
//! A question is named by its fingerprint, so the processes of a round that
//! ask the same question queue it once, and a batch's results are matched to
//! questions by that name (the batch line's `custom_id`), never by order.
//! Every file is written whole (a temporary file renamed into place).
//!
//! A new record only ever removes what is recognisably its own in a folder
//! ([`BatchFolder::prepare`]): never a folder with anything else in it,
//! nothing in a folder that carries neither the marker nor a state of
//! ragaliq's (a `state.json` is a common name: another tool's is not taken
//! for ours), and never the answers, which were paid for.
//!
//! The folder is not a run's folder (`target/ragaliq/runs/<id>/`): a batch
//! may take the provider's whole 24 h window, and a run folder no process
//! joined for 12 h is emptied by the next process that joins it.

use super::atomic::write_atomic;
use crate::core::{Fingerprint, JudgeRequest, JudgeResponse};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// The file that marks a folder as a batch folder ragaliq made.
pub const MARKER: &str = ".ragaliq-batch";

/// The lock file the driver holds for as long as it works on the folder.
pub const DRIVER_LOCK: &str = "driver.lock";

/// What [`BatchFolder::prepare`] did to a folder for a new record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct Prepared {
    /// Answers of an earlier record kept (they answer the same questions
    /// again at no cost).
    pub kept_answers: usize,
    /// Whether the folder was made now.
    pub created: bool,
}

/// Held while one driver works on a batch folder (see
/// [`BatchFolder::lock_driver`]); the operating system releases it when
/// the process dies.
#[derive(Debug)]
#[must_use = "the folder is locked only while the guard lives"]
pub struct DriverLock {
    _file: std::fs::File,
}

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

    /// Makes the folder ready for a new record, removing only what is
    /// recognisably a batch folder's own.
    ///
    /// - A folder that does not exist is made, with its marker.
    /// - A folder that holds anything but the marker, `state.json`,
    ///   `queue/`, `answers/`, `driver.lock`, `round-N.log` and ragaliq's
    ///   temporary files (a typo such as `--dir .` or `--dir tests`) is
    ///   refused, and nothing in it is touched.
    /// - So is a folder without the marker whose `state.json` is not a
    ///   state `cargo ragaliq record --batch` writes (another tool's file
    ///   of that common name), and one without the marker or a state of
    ///   ragaliq's that holds anything this would remove.
    /// - Otherwise the queue, the old state and the round logs go; the
    ///   answers stay (paid for, they answer the same questions again for
    ///   nothing; remove them yourself to ask anew).
    ///
    /// The caller holds the folder's [driver lock](Self::lock_driver) and
    /// has made sure no record is in progress there.
    ///
    /// # Errors
    ///
    /// The folder is not a batch folder (the message lists what it holds),
    /// or cannot be read or written.
    pub fn prepare(&self) -> Result<Prepared, String> {
        let shown = self.dir.display();
        let mut prepared = Prepared::default();
        match std::fs::symlink_metadata(&self.dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&self.dir)
                    .map_err(|e| format!("{shown} cannot be created: {e}"))?;
                prepared.created = true;
            }
            Err(e) => return Err(format!("{shown} cannot be read: {e}")),
            Ok(m) if !m.is_dir() => {
                return Err(format!(
                    "{shown} is not a folder: nothing was changed; choose a folder of its own for the record (--dir)"
                ));
            }
            Ok(_) => {
                self.check_own()?;
                let removable = self.removable()?;
                if !removable.is_empty() && !self.is_batch_folder() {
                    return Err(format!(
                        "{shown} is not known to be a ragaliq batch folder: it holds {} but neither the marker {MARKER} nor a state.json of ragaliq's, so nothing in it was removed. If a batch record of yours made it, remove those files yourself, or choose another folder for the record (--dir)",
                        list(&removable)
                    ));
                }
            }
        }
        self.clear_queue()
            .map_err(|e| format!("the queue in {shown} cannot be emptied: {e}"))?;
        for entry in std::fs::read_dir(&self.dir)
            .map_err(|e| format!("{shown} cannot be read: {e}"))?
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "state.json" || is_round_log(&name) {
                std::fs::remove_file(entry.path())
                    .map_err(|e| format!("{} cannot be removed: {e}", entry.path().display()))?;
            }
        }
        write_atomic(
            &self.dir.join(MARKER),
            b"a batch folder of cargo ragaliq record --batch\n",
        )
        .map_err(|e| format!("{shown} cannot be written: {e}"))?;
        prepared.kept_answers = self.answers();
        Ok(prepared)
    }

    /// Whether the folder is one a batch record wrote: its marker, or (from
    /// before the marker) a state file that is a batch record's (see
    /// [`is_batch_state`]), never merely a file named `state.json`.
    #[must_use]
    pub fn is_batch_folder(&self) -> bool {
        self.dir.join(MARKER).is_file() || self.foreign_state() == Ok(Some(false))
    }

    /// Whether the folder's `state.json` is another's: `None` when there
    /// is none, `Some(true)` when it is not a batch record's state.
    ///
    /// # Errors
    ///
    /// It exists but cannot be read: then whose it is cannot be told.
    fn foreign_state(&self) -> Result<Option<bool>, String> {
        let path = self.state_file();
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(!is_batch_state(&bytes))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!(
                "{} cannot be read ({e}), so whether it is ragaliq's cannot be told; nothing was removed",
                path.display()
            )),
        }
    }

    /// What [`prepare`](Self::prepare) would remove: the round logs, the
    /// queued questions and the queue's temporary files (the state file is
    /// checked apart, by [`check_own`](Self::check_own)).
    fn removable(&self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for (dir, prefix) in [(self.dir.clone(), ""), (self.dir.join("queue"), "queue/")] {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("{} cannot be read: {e}", dir.display())),
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let goes = if prefix.is_empty() {
                    is_round_log(&name)
                } else {
                    is_queued(&name) || name.ends_with(".ragaliq-tmp")
                };
                if goes {
                    out.push(format!("{prefix}{name}"));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Whether the folder (when it exists) holds only what a batch folder
    /// holds; the error names what else it holds.
    ///
    /// # Errors
    ///
    /// It holds something else, or cannot be read.
    pub fn check_own(&self) -> Result<(), String> {
        if !self.dir.exists() {
            return Ok(());
        }
        let strangers = self.strangers()?;
        if !strangers.is_empty() {
            return Err(format!(
                "{} is not a ragaliq batch folder: it holds {}; nothing in it was removed. Choose a folder of its own for the record (--dir; the default is target/ragaliq/batch)",
                self.dir.display(),
                list(&strangers)
            ));
        }
        // Once marked, the state is ours whatever it holds (a newer
        // format, a damaged file): the driver reads it and says what is
        // wrong. Unmarked, it must be a batch record's own.
        if !self.dir.join(MARKER).is_file() && self.foreign_state()? == Some(true) {
            return Err(format!(
                "{} is not a ragaliq batch folder: its state.json is not the state of `cargo ragaliq record --batch` (expected the marker {MARKER}, or a state.json with its format, provider, command, round, waiting and finished fields); nothing in it was removed. Choose a folder of its own for the record (--dir; the default is target/ragaliq/batch)",
                self.dir.display()
            ));
        }
        Ok(())
    }

    /// The folder's entries that a batch folder does not hold.
    fn strangers(&self) -> Result<Vec<String>, String> {
        let shown = self.dir.display();
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.dir)
            .map_err(|e| format!("{shown} cannot be read: {e}"))?
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let ours = match name.as_str() {
                MARKER | "state.json" | DRIVER_LOCK => !is_dir,
                "queue" | "answers" => is_dir,
                n => !is_dir && (is_round_log(n) || n.ends_with(".ragaliq-tmp")),
            };
            if !ours {
                out.push(if is_dir { format!("{name}/") } else { name });
            }
        }
        out.sort();
        Ok(out)
    }

    /// Takes the folder's driver lock, or says who holds it: two drivers
    /// on one folder would poll and write the same answers, clear each
    /// other's queue and submit the same questions twice. The lock file
    /// names its holder (process id and start time).
    ///
    /// # Errors
    ///
    /// Another driver holds it (the message names it), or the lock file
    /// cannot be used.
    pub fn lock_driver(&self) -> Result<DriverLock, String> {
        let path = self.dir.join(DRIVER_LOCK);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| format!("{} cannot be opened: {e}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {
                use std::io::{Seek, Write};
                let since = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let _ = file.set_len(0);
                let _ = file.seek(io::SeekFrom::Start(0));
                let _ = writeln!(file, "pid {} since {since}", std::process::id());
                Ok(DriverLock { _file: file })
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                let holder = holder.trim();
                let who = match holder
                    .strip_prefix("pid ")
                    .and_then(|r| r.split_once(" since "))
                    .and_then(|(pid, t)| Some((pid, t.parse::<u64>().ok()?)))
                {
                    Some((pid, since)) => {
                        let now = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_secs());
                        format!(
                            "process {pid}, at work for {} min",
                            now.saturating_sub(since) / 60
                        )
                    }
                    None => "another process".to_owned(),
                };
                Err(format!(
                    "another `cargo ragaliq record --batch` is at work on {} ({who}): two drivers on one folder would submit the same questions twice; wait for it, or stop it and run --resume",
                    self.dir.display()
                ))
            }
            Err(std::fs::TryLockError::Error(e)) => {
                Err(format!("{} cannot be locked: {e}", path.display()))
            }
        }
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

    /// Empties the queue (a round starts from what its tests ask): the
    /// queued questions and ragaliq's temporary files, nothing else.
    ///
    /// # Errors
    ///
    /// The queue folder exists but cannot be read, or a file cannot be
    /// removed.
    pub fn clear_queue(&self) -> io::Result<()> {
        let dir = self.dir.join("queue");
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_queued(&name) || name.ends_with(".ragaliq-tmp") {
                std::fs::remove_file(entry.path())?;
            }
        }
        Ok(())
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

/// Whether `bytes` are a state `cargo ragaliq record --batch` writes: a
/// JSON object with the fields every state of its has had since before
/// folders were marked (`format`, `provider`, `command`, `round`,
/// `waiting`, `finished`), of their types. A folder from before the marker
/// is recognised by this alone; another tool's `state.json` has no reason
/// to hold all six.
#[must_use]
pub fn is_batch_state(bytes: &[u8]) -> bool {
    use serde_json::Value;
    let Ok(Value::Object(state)) = serde_json::from_slice::<Value>(bytes) else {
        return false;
    };
    let has = |key: &str, kind: fn(&Value) -> bool| state.get(key).is_some_and(kind);
    has("format", Value::is_u64)
        && has("provider", Value::is_string)
        && has("command", Value::is_array)
        && has("round", Value::is_u64)
        && has("waiting", Value::is_array)
        && has("finished", Value::is_boolean)
}

/// `<fingerprint>.json`: a queued question's name.
fn is_queued(name: &str) -> bool {
    name.strip_suffix(".json")
        .is_some_and(|f| f.parse::<Fingerprint>().is_ok())
}

/// `round-N.log`.
fn is_round_log(name: &str) -> bool {
    name.strip_prefix("round-")
        .and_then(|r| r.strip_suffix(".log"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// At most five names, then how many more.
fn list(names: &[String]) -> String {
    let mut out: Vec<String> = names.iter().take(5).map(|n| format!("`{n}`")).collect();
    if names.len() > 5 {
        out.push(format!("{} more", names.len() - 5));
    }
    out.join(", ")
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
                top_logprobs: 0,
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

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ragaliq-prepare-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_folder_with_anything_else_in_it_is_never_emptied() {
        let dir = temp("project");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]").unwrap();
        std::fs::write(dir.join("src/lib.rs"), "").unwrap();
        std::fs::create_dir_all(dir.join("answers")).unwrap();
        let refused = BatchFolder::new(&dir).prepare().unwrap_err();
        assert!(
            refused.contains("is not a ragaliq batch folder"),
            "{refused}"
        );
        assert!(
            refused.contains("`Cargo.toml`") && refused.contains("`src/`"),
            "{refused}"
        );
        assert!(dir.join("Cargo.toml").is_file() && dir.join("src/lib.rs").is_file());
        assert!(!dir.join(MARKER).exists(), "nothing written either");
        // A file where the folder should be.
        let file = dir.join("Cargo.toml");
        assert!(
            BatchFolder::new(&file)
                .prepare()
                .unwrap_err()
                .contains("is not a folder")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn answers_paid_for_stay_when_a_new_record_starts() {
        let dir = temp("answers");
        let folder = BatchFolder::new(&dir);
        let q = question("a");
        let fp = q.request.fingerprint("openai");
        folder
            .write_answer(&fp, &JudgeResponse::text("{}"))
            .unwrap();
        // Answers alone, no state.json (lost), no marker (an older
        // ragaliq): nothing to remove, so the folder is taken and marked.
        let prepared = folder.prepare().unwrap();
        assert_eq!(prepared.kept_answers, 1);
        assert!(dir.join(MARKER).is_file());
        // Marked: the queue and the round logs go, the answers stay.
        folder
            .queue(&question("b").request.fingerprint("openai"), &question("b"))
            .unwrap();
        std::fs::write(dir.join("round-1.log"), "log").unwrap();
        let prepared = folder.prepare().unwrap();
        assert_eq!(prepared.kept_answers, 1);
        assert_eq!(folder.answer(&fp).unwrap(), Some(JudgeResponse::text("{}")));
        assert!(folder.queued().unwrap().is_empty());
        assert!(!dir.join("round-1.log").exists());
        // Unmarked, with neither the marker nor a state of ragaliq's,
        // nothing is removed: whose the folder is cannot be told.
        std::fs::remove_file(dir.join(MARKER)).unwrap();
        folder
            .queue(&question("b").request.fingerprint("openai"), &question("b"))
            .unwrap();
        std::fs::write(dir.join("round-2.log"), "log").unwrap();
        let refused = folder.prepare().unwrap_err();
        assert!(
            refused.contains("round-2.log") && refused.contains(MARKER),
            "{refused}"
        );
        assert_eq!(folder.queued().unwrap().len(), 1);
        assert!(dir.join("round-2.log").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A folder that holds only a `state.json` of another tool (a typo in
    /// `--dir`): before, the name alone made it a batch folder, and a new
    /// record removed the file. Now it is not one, nothing in it is removed
    /// or written, and the error names the folder and what was expected.
    #[test]
    fn a_foreign_state_file_is_never_taken_for_ours_nor_removed() {
        let dir = temp("foreign-state");
        std::fs::create_dir_all(&dir).unwrap();
        let foreign = r#"{"version": 3, "jobs": ["build", "deploy"], "last_run": "yesterday"}"#;
        std::fs::write(dir.join("state.json"), foreign).unwrap();
        let folder = BatchFolder::new(&dir);
        assert!(!folder.is_batch_folder());
        let refused = folder.prepare().unwrap_err();
        assert!(
            refused.contains(&dir.display().to_string())
                && refused.contains("state.json")
                && refused.contains(MARKER)
                && refused.contains("nothing in it was removed"),
            "{refused}"
        );
        assert!(
            folder.check_own().is_err(),
            "the driver checks before it locks"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("state.json")).unwrap(),
            foreign
        );
        assert!(!dir.join(MARKER).exists(), "nothing written either");
        // Not JSON at all: the same.
        std::fs::write(dir.join("state.json"), "not json").unwrap();
        assert!(folder.prepare().is_err());
        assert!(dir.join("state.json").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A state `cargo ragaliq record --batch` wrote before folders had a
    /// marker is still recognised: the folder is a batch folder, and a new
    /// record replaces its state.
    #[test]
    fn a_state_of_ours_without_the_marker_is_still_ours() {
        let dir = temp("our-state");
        std::fs::create_dir_all(&dir).unwrap();
        let ours = r#"{"format": 1, "provider": "openai", "command": ["cargo", "test"],
            "record": "r1", "round": 2, "waiting": [], "failures": {}, "given_up": {},
            "rounds": [], "batches": 1, "submitted": 3, "answered": 3, "failed_lines": 0,
            "input_tokens": 10, "output_tokens": 5, "spent_usd": 0.0, "finished": true}"#;
        std::fs::write(dir.join("state.json"), ours).unwrap();
        let folder = BatchFolder::new(&dir);
        assert!(folder.is_batch_folder());
        assert!(!folder.prepare().unwrap().created);
        assert!(!dir.join("state.json").exists() && dir.join(MARKER).is_file());
        // Once marked, it is ours whatever its state says.
        std::fs::write(dir.join("state.json"), "{}").unwrap();
        assert!(folder.is_batch_folder());
        assert!(!folder.prepare().unwrap().created);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn one_driver_at_a_time_and_the_second_is_told_who() {
        let dir = temp("lock");
        std::fs::create_dir_all(&dir).unwrap();
        let folder = BatchFolder::new(&dir);
        let held = folder.lock_driver().unwrap();
        let refused = folder.lock_driver().unwrap_err();
        assert!(
            refused.contains(&format!("process {}", std::process::id())),
            "{refused}"
        );
        drop(held);
        assert!(folder.lock_driver().is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
