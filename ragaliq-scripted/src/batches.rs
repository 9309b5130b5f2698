//! Fake batch APIs: OpenAI's files + batches and Anthropic's message
//! batches, answering every line by the scripted rule, with the behaviour
//! a client must survive.
//!
//! - State moves over polls: OpenAI `validating` → `in_progress` →
//!   `finalizing` → `completed`; Anthropic `in_progress` → `ended`.
//! - Results come in reverse order of submission (both providers promise
//!   no order).
//! - Faults, each consumed as it is used, so a later round goes through:
//!   per-line errors (OpenAI: a line with status 500 in the error file;
//!   Anthropic: `errored`), OpenAI lines with `status_code` 0 and an empty
//!   body, a batch that expires part way (the lines after the first few
//!   come back `batch_expired` / `expired`), polls answered 500, creates
//!   whose reply is lost (the batch is created, the client gets a 502, as
//!   from a proxy that dropped the answer), and creates that fail before
//!   the provider (a 502 and no batch); `create_status` answers both with
//!   another status (a 408, say).
//! - Batches can be listed (`GET /v1/batches`, `GET /v1/messages/batches`),
//!   newest first, with OpenAI's `metadata` and each batch's `created_at`,
//!   and an Anthropic batch canceled (`POST
//!   /v1/messages/batches/{id}/cancel`) lists its `cancel_initiated_at`.

use serde_json::{Value, json};
use std::collections::HashMap;

/// Faults the fake batch APIs inject (see the module).
#[derive(Clone, Debug, Default)]
pub struct BatchFaults {
    /// Polls a batch takes to end (at least 1; default 2).
    pub polls_to_end: u32,
    /// The next this many lines fail with a per-line error.
    pub line_errors: u64,
    /// The next this many OpenAI lines come back with `status_code` 0.
    pub status_zero: u64,
    /// The next batch expires after answering this many of its lines.
    pub expire_after: Option<usize>,
    /// The next this many polls are answered 500.
    pub poll_errors: u64,
    /// The next this many creates make the batch but answer 502, as a
    /// proxy that lost the provider's reply does.
    pub lost_creates: u64,
    /// The next this many creates answer 502 and make nothing, as a proxy
    /// that failed before the provider saw the request does.
    pub dropped_creates: u64,
    /// The status lost and dropped creates answer (502 when `None`).
    pub create_status: Option<u16>,
}

#[derive(Default)]
pub(crate) struct Store {
    pub faults: BatchFaults,
    files: HashMap<String, Vec<u8>>,
    batches: HashMap<String, Batch>,
    next: u64,
    /// Batches created, and lines submitted in them.
    pub created: u64,
    pub lines: u64,
    pub polls: u64,
}

struct Batch {
    anthropic: bool,
    /// OpenAI's `metadata`, as given.
    metadata: Value,
    /// Seconds since the epoch.
    created_at: u64,
    /// (custom_id, request body)
    lines: Vec<(String, Value)>,
    polls: u32,
    ended: Option<Ended>,
    /// Anthropic: when a cancel was asked for (seconds since the epoch).
    canceled_at: Option<u64>,
}

struct Ended {
    expired: bool,
    /// OpenAI: output and error file ids; Anthropic: the results JSONL.
    output: Option<String>,
    errors: Option<String>,
    results: String,
    succeeded: u64,
    failed: u64,
}

/// One request to a batch endpoint: (status, body, content type).
pub(crate) type Reply = (u16, Vec<u8>, &'static str);

fn json_reply(status: u16, v: Value) -> Reply {
    (status, v.to_string().into_bytes(), "application/json")
}

fn error(status: u16, message: &str) -> Reply {
    json_reply(
        status,
        json!({"error": {"type": "invalid_request_error", "message": message}}),
    )
}

/// Whether `path` is a batch endpoint.
pub(crate) fn is_batch_path(path: &str) -> bool {
    path.ends_with("/files") || path.contains("/files/") || path.contains("/batches")
}

impl Store {
    fn id(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{:06}", self.next)
    }

    /// Handles one request; `answer` answers one line's body by the rule.
    pub(crate) fn handle(
        &mut self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &[u8],
        authorized: bool,
        answer: &dyn Fn(&str, &Value) -> (u16, Value),
    ) -> Reply {
        if !authorized {
            return error(401, "no API key");
        }
        let path = path.trim_end_matches('/');
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match (method, parts.as_slice()) {
            ("POST", [_, "files"]) => self.upload(content_type, body),
            ("GET", [_, "files", id, "content"]) => match self.files.get(*id) {
                Some(bytes) => (200, bytes.clone(), "application/jsonl"),
                None => error(404, &format!("no file {id}")),
            },
            ("POST", [_, "batches"]) => {
                if let Some(dropped) = self.drop_create() {
                    return dropped;
                }
                let created = self.create_openai(body);
                self.lose(created)
            }
            ("GET", [_, "batches"]) => self.list(false),
            ("GET", [_, "messages", "batches"]) => self.list(true),
            ("GET", [_, "batches", id]) => self.poll(id, false, answer),
            ("POST", [_, "messages", "batches"]) => {
                if let Some(dropped) = self.drop_create() {
                    return dropped;
                }
                let created = self.create_anthropic(body);
                self.lose(created)
            }
            ("POST", [_, "messages", "batches", id, "cancel"]) => {
                match self.batches.get_mut(*id).filter(|b| b.anthropic) {
                    Some(batch) => {
                        batch.canceled_at.get_or_insert_with(now_secs);
                        json_reply(
                            200,
                            json!({"id": id, "type": "message_batch", "processing_status": "canceling"}),
                        )
                    }
                    None => error(404, &format!("no batch {id}")),
                }
            }
            ("GET", [_, "messages", "batches", id]) => self.poll(id, true, answer),
            ("GET", [_, "messages", "batches", id, "results"]) => {
                match self.batches.get(*id).and_then(|b| b.ended.as_ref()) {
                    Some(ended) => (
                        200,
                        ended.results.clone().into_bytes(),
                        "application/x-jsonl",
                    ),
                    None => error(404, &format!("batch {id} has no results yet")),
                }
            }
            _ => error(404, &format!("no route {method} {path}")),
        }
    }

    /// The answer of a create that failed on its way (a proxy's 502), or
    /// `create_status`.
    fn failed_create(&self) -> Reply {
        let status = self.faults.create_status.unwrap_or(502);
        (
            status,
            format!("<html><body>{status} from a proxy</body></html>").into_bytes(),
            "text/html",
        )
    }

    /// A create's reply, or a 502 in its place when a lost reply is due
    /// (the batch exists all the same).
    fn lose(&mut self, created: Reply) -> Reply {
        if created.0 == 200 && self.faults.lost_creates > 0 {
            self.faults.lost_creates -= 1;
            return self.failed_create();
        }
        created
    }

    /// A 502 (or `create_status`) and no batch, when a dropped create is
    /// due.
    fn drop_create(&mut self) -> Option<Reply> {
        if self.faults.dropped_creates == 0 {
            return None;
        }
        self.faults.dropped_creates -= 1;
        Some(self.failed_create())
    }

    /// Every batch, newest first, as the providers list them.
    fn list(&self, anthropic: bool) -> Reply {
        let mut all: Vec<(&String, &Batch)> = self
            .batches
            .iter()
            .filter(|(_, b)| b.anthropic == anthropic)
            .collect();
        all.sort_by(|a, b| b.1.created_at.cmp(&a.1.created_at).then(b.0.cmp(a.0)));
        let data: Vec<Value> = all
            .into_iter()
            .map(|(id, b)| {
                let total = b.lines.len();
                if anthropic {
                    json!({"id": id, "type": "message_batch", "created_at": rfc3339(b.created_at),
                           "cancel_initiated_at": b.canceled_at.map(rfc3339),
                           "processing_status": if b.ended.is_some() { "ended" } else { "in_progress" },
                           "request_counts": {"processing": if b.ended.is_some() { 0 } else { total },
                                              "succeeded": b.ended.as_ref().map_or(0, |e| e.succeeded),
                                              "errored": b.ended.as_ref().map_or(0, |e| e.failed),
                                              "canceled": 0, "expired": 0}})
                } else {
                    json!({"id": id, "object": "batch", "created_at": b.created_at, "metadata": b.metadata,
                           "status": if b.ended.is_some() { "completed" } else { "in_progress" },
                           "request_counts": {"total": total, "completed": 0, "failed": 0}})
                }
            })
            .collect();
        json_reply(
            200,
            json!({"object": "list", "data": data, "has_more": false}),
        )
    }

    /// `multipart/form-data` with a `purpose` field and a `file` part. A
    /// small reader, enough for what reqwest sends: the fake needs no
    /// general multipart parser.
    fn upload(&mut self, content_type: &str, body: &[u8]) -> Reply {
        let Some(boundary) = content_type
            .split(';')
            .find_map(|p| p.trim().strip_prefix("boundary="))
            .map(|b| b.trim_matches('"').to_owned())
        else {
            return error(400, "expected multipart/form-data with a boundary");
        };
        let text = String::from_utf8_lossy(body);
        let delimiter = format!("--{boundary}");
        let mut purpose = None;
        let mut file = None;
        for part in text.split(delimiter.as_str()) {
            let Some((head, content)) = part.split_once("\r\n\r\n") else {
                continue;
            };
            let content = content.strip_suffix("\r\n").unwrap_or(content);
            if head.contains("name=\"purpose\"") {
                purpose = Some(content.to_owned());
            } else if head.contains("name=\"file\"") {
                file = Some(content.as_bytes().to_vec());
            }
        }
        if purpose.as_deref() != Some("batch") {
            return error(400, "purpose must be batch");
        }
        let Some(file) = file else {
            return error(400, "no file part");
        };
        let id = self.id("file-");
        let bytes = file.len();
        self.files.insert(id.clone(), file);
        json_reply(
            200,
            json!({"id": id, "object": "file", "bytes": bytes, "purpose": "batch", "filename": "ragaliq-batch.jsonl"}),
        )
    }

    fn create_openai(&mut self, body: &[u8]) -> Reply {
        let Ok(request) = serde_json::from_slice::<Value>(body) else {
            return error(400, "bad JSON");
        };
        if request["completion_window"] != "24h" || request["endpoint"] != "/v1/chat/completions" {
            return error(
                400,
                "completion_window must be 24h and endpoint /v1/chat/completions",
            );
        }
        let Some(file) = request["input_file_id"]
            .as_str()
            .and_then(|id| self.files.get(id))
        else {
            return error(400, "no such input_file_id");
        };
        let mut lines = Vec::new();
        let mut models = std::collections::BTreeSet::new();
        for line in String::from_utf8_lossy(file)
            .lines()
            .filter(|l| !l.is_empty())
        {
            let Ok(line) = serde_json::from_str::<Value>(line) else {
                return error(400, "the input file has a line that is not JSON");
            };
            if line["method"] != "POST" || line["url"] != "/v1/chat/completions" {
                return error(
                    400,
                    "every line needs method POST and url /v1/chat/completions",
                );
            }
            let Some(custom_id) = line["custom_id"].as_str() else {
                return error(400, "a line has no custom_id");
            };
            models.insert(line["body"]["model"].to_string());
            lines.push((custom_id.to_owned(), line["body"].clone()));
        }
        if models.len() > 1 {
            return error(400, "one model per batch file");
        }
        let id = self.id("batch_");
        self.created += 1;
        self.lines += lines.len() as u64;
        let total = lines.len();
        self.batches.insert(
            id.clone(),
            Batch {
                anthropic: false,
                metadata: request["metadata"].clone(),
                created_at: now_secs(),
                lines,
                polls: 0,
                ended: None,
                canceled_at: None,
            },
        );
        json_reply(
            200,
            json!({"id": id, "object": "batch", "status": "validating", "endpoint": "/v1/chat/completions",
                   "request_counts": {"total": total, "completed": 0, "failed": 0}}),
        )
    }

    fn create_anthropic(&mut self, body: &[u8]) -> Reply {
        let Ok(request) = serde_json::from_slice::<Value>(body) else {
            return error(400, "bad JSON");
        };
        let Some(requests) = request["requests"].as_array() else {
            return error(400, "requests: expected an array");
        };
        let mut lines = Vec::new();
        for r in requests {
            let Some(custom_id) = r["custom_id"].as_str() else {
                return error(400, "a request has no custom_id");
            };
            let valid = !custom_id.is_empty()
                && custom_id.len() <= 64
                && custom_id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return error(400, "custom_id must match ^[a-zA-Z0-9_-]{1,64}$");
            }
            lines.push((custom_id.to_owned(), r["params"].clone()));
        }
        let id = self.id("msgbatch_");
        self.created += 1;
        self.lines += lines.len() as u64;
        let processing = lines.len();
        self.batches.insert(
            id.clone(),
            Batch {
                anthropic: true,
                metadata: Value::Null,
                created_at: now_secs(),
                lines,
                polls: 0,
                ended: None,
                canceled_at: None,
            },
        );
        json_reply(
            200,
            json!({"id": id, "type": "message_batch", "processing_status": "in_progress",
                   "request_counts": {"processing": processing, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
                   "results_url": null}),
        )
    }

    fn poll(
        &mut self,
        id: &str,
        anthropic: bool,
        answer: &dyn Fn(&str, &Value) -> (u16, Value),
    ) -> Reply {
        self.polls += 1;
        if self.faults.poll_errors > 0 {
            self.faults.poll_errors -= 1;
            return json_reply(
                500,
                json!({"error": {"type": "server_error", "message": "scripted poll failure"}}),
            );
        }
        let polls_to_end = self.faults.polls_to_end.max(1);
        let Some(batch) = self
            .batches
            .get_mut(id)
            .filter(|b| b.anthropic == anthropic)
        else {
            return error(404, &format!("no batch {id}"));
        };
        batch.polls += 1;
        if batch.ended.is_none() && batch.polls >= polls_to_end {
            let lines = std::mem::take(&mut batch.lines);
            let ended = finish(
                &mut self.faults,
                &mut self.files,
                &mut self.next,
                &lines,
                anthropic,
                answer,
            );
            let batch = self.batches.get_mut(id).expect("present");
            batch.lines = lines;
            batch.ended = Some(ended);
        }
        let batch = &self.batches[id];
        let total = batch.lines.len() as u64;
        let stage = batch.polls;
        let reply = match (&batch.ended, anthropic) {
            (None, false) => json!({"id": id, "object": "batch",
                "status": if stage <= 1 { "validating" } else if stage + 1 >= polls_to_end { "finalizing" } else { "in_progress" },
                "request_counts": {"total": total, "completed": 0, "failed": 0}}),
            (Some(e), false) => json!({"id": id, "object": "batch",
                "status": if e.expired { "expired" } else { "completed" },
                "output_file_id": e.output, "error_file_id": e.errors,
                "request_counts": {"total": total, "completed": e.succeeded, "failed": e.failed}}),
            (None, true) => {
                json!({"id": id, "type": "message_batch", "processing_status": "in_progress",
                "request_counts": {"processing": total, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
                "results_url": null})
            }
            (Some(e), true) => {
                json!({"id": id, "type": "message_batch", "processing_status": "ended",
                "request_counts": {"processing": 0, "succeeded": e.succeeded,
                                   "errored": if e.expired { 0 } else { e.failed },
                                   "canceled": 0, "expired": if e.expired { e.failed } else { 0 }},
                "results_url": format!("/v1/messages/batches/{id}/results")})
            }
        };
        json_reply(200, reply)
    }
}

/// Answers a batch's lines (in reverse order, with the faults due).
fn finish(
    faults: &mut BatchFaults,
    files: &mut HashMap<String, Vec<u8>>,
    next: &mut u64,
    lines: &[(String, Value)],
    anthropic: bool,
    answer: &dyn Fn(&str, &Value) -> (u16, Value),
) -> Ended {
    let expire_after = faults.expire_after.take();
    let mut output = Vec::new();
    let mut errors = Vec::new();
    let (mut succeeded, mut failed) = (0, 0);
    let path = if anthropic {
        "/v1/messages"
    } else {
        "/v1/chat/completions"
    };
    for (i, (custom_id, body)) in lines.iter().enumerate().rev() {
        let expired = expire_after.is_some_and(|n| i >= n);
        let line = if expired {
            failed += 1;
            if anthropic {
                json!({"custom_id": custom_id, "result": {"type": "expired"}})
            } else {
                json!({"id": format!("batch_req_{i}"), "custom_id": custom_id, "response": null,
                       "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
            }
        } else if faults.line_errors > 0 {
            faults.line_errors -= 1;
            failed += 1;
            if anthropic {
                json!({"custom_id": custom_id, "result": {"type": "errored", "error": {"type": "error",
                       "error": {"type": "api_error", "message": "Internal server error"}}}})
            } else {
                json!({"id": format!("batch_req_{i}"), "custom_id": custom_id,
                       "response": {"status_code": 500, "request_id": format!("req_{i}"),
                                    "body": {"error": {"message": "The server had an error processing your request.", "type": "server_error"}}},
                       "error": null})
            }
        } else if !anthropic && faults.status_zero > 0 {
            faults.status_zero -= 1;
            failed += 1;
            json!({"id": format!("batch_req_{i}"), "custom_id": custom_id,
                   "response": {"status_code": 0, "request_id": "", "body": {}}, "error": null})
        } else {
            let (status, reply) = answer(path, body);
            if status == 200 {
                succeeded += 1;
            } else {
                failed += 1;
            }
            if anthropic {
                if status == 200 {
                    json!({"custom_id": custom_id, "result": {"type": "succeeded", "message": reply}})
                } else {
                    json!({"custom_id": custom_id, "result": {"type": "errored", "error": {"type": "error", "error": reply["error"]}}})
                }
            } else {
                json!({"id": format!("batch_req_{i}"), "custom_id": custom_id,
                       "response": {"status_code": status, "request_id": format!("req_{i}"), "body": reply},
                       "error": null})
            }
        };
        let goes_to_errors = !anthropic && (expired || line["response"]["status_code"] == 500);
        let target = if goes_to_errors {
            &mut errors
        } else {
            &mut output
        };
        target.extend(line.to_string().bytes());
        target.push(b'\n');
    }
    let mut file = |bytes: Vec<u8>| {
        (!bytes.is_empty()).then(|| {
            *next += 1;
            let id = format!("file-out{:06}", *next);
            files.insert(id.clone(), bytes);
            id
        })
    };
    if anthropic {
        Ended {
            expired: expire_after.is_some(),
            output: None,
            errors: None,
            results: String::from_utf8(output).unwrap_or_default(),
            succeeded,
            failed,
        }
    } else {
        Ended {
            expired: expire_after.is_some(),
            output: file(output),
            errors: file(errors),
            results: String::new(),
            succeeded,
            failed,
        }
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Seconds since the epoch as RFC 3339 (`2024-09-24T18:37:24Z`), as
/// Anthropic writes `created_at` (Howard Hinnant's civil-from-days).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_868_800), "2000-03-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }
}
