//! The providers' batch APIs: many requests submitted at once, answered
//! within 24 hours (usually within one) at half the price.
//!
//! - OpenAI: a JSONL file of `{custom_id, method, url, body}` lines
//!   uploaded to `POST /v1/files` (`purpose=batch`), `POST /v1/batches`,
//!   polled at `GET /v1/batches/{id}`; the answers are the lines of its
//!   `output_file_id` and `error_file_id` (`GET /v1/files/{id}/content`).
//! - Anthropic: `POST /v1/messages/batches` with `{requests: [{custom_id,
//!   params}]}`, polled at `GET /v1/messages/batches/{id}`; the answers are
//!   the JSONL lines of `GET /v1/messages/batches/{id}/results`.
//!
//! A request's body is exactly what the live transport would send (not
//! streamed), and an answer is read by the live transport's own reader, so
//! a batch's answer is the [`JudgeResponse`] a live call would have given.
//! Answers are matched to requests by `custom_id` only: both providers
//! return them in any order. A line that failed (an error object, a status
//! other than 200, a success with no readable body, a request that expired
//! or was canceled) is reported as [`LineResult::Failed`], never as an
//! answer.

use super::{AnthropicTransport, OpenAiTransport, TransportError, TransportErrorKind};
use super::{RetryPolicy, http, limits};
use crate::core::{ApiKey, JudgeRequest, JudgeResponse, ResponseFormat};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// Which provider's batch API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    /// OpenAI's Batch API (files + batches).
    OpenAi,
    /// Anthropic's Message Batches API.
    Anthropic,
}

/// A client for one provider's batch API.
///
/// ```
/// use ragaliq::batch::BatchApi;
/// let api = BatchApi::openai("https://api.openai.com/v1", None, "OPENAI_API_KEY");
/// assert_eq!(api.provider(), "openai");
/// assert_eq!(api.max_requests(), 50_000);
/// ```
#[derive(Clone, Debug)]
pub struct BatchApi {
    kind: BatchKind,
    base_url: String,
    key: Option<ApiKey>,
    key_variable: String,
    retry: RetryPolicy,
    timeout: Duration,
    idle: Duration,
}

/// What tells a batch apart at its provider, recorded before it is
/// submitted: if the reply to the create is lost (a reset connection, a
/// proxy's 5xx, a crash), the batch may exist anyway, and
/// [`BatchApi::find`] finds it by this instead of submitting (and paying
/// for) the same questions twice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchTag {
    /// A name unique to the record, round and requests:
    /// `ragaliq-<record>-r<round>-<digest of the custom ids>`. OpenAI keeps
    /// it in the batch's `metadata`.
    pub tag: String,
    /// How many requests the batch holds.
    pub requests: usize,
    /// When the submission started (seconds since the epoch): a batch
    /// created earlier is not this one.
    pub since_secs: u64,
}

impl BatchTag {
    /// The tag for `custom_ids` submitted in round `round` of record
    /// `record`, starting now.
    ///
    /// ```
    /// use ragaliq::batch::BatchTag;
    /// let a = BatchTag::new("rec1", 2, &["x".into(), "y".into()]);
    /// let b = BatchTag::new("rec1", 2, &["y".into(), "x".into()]);
    /// assert_eq!(a.tag, b.tag, "the order of the ids does not matter");
    /// assert!(a.tag.starts_with("ragaliq-rec1-r2-"));
    /// assert_eq!(a.requests, 2);
    /// ```
    #[must_use]
    pub fn new(record: &str, round: u32, custom_ids: &[String]) -> BatchTag {
        use sha2::{Digest, Sha256};
        let mut ids: Vec<&str> = custom_ids.iter().map(String::as_str).collect();
        ids.sort_unstable();
        let digest = Sha256::digest(
            ids.join(
                "
",
            )
            .as_bytes(),
        );
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        BatchTag {
            tag: format!("ragaliq-{record}-r{round}-{hex}"),
            requests: custom_ids.len(),
            since_secs: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs(),
        }
    }
}

/// One request of a batch: its `custom_id` and the request.
#[derive(Clone, Debug)]
pub struct BatchLine {
    /// The id the answer comes back under (ragaliq uses the fingerprint).
    pub custom_id: String,
    /// The request.
    pub request: JudgeRequest,
}

/// Where a submitted batch stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchProgress {
    /// The provider's batch id.
    pub id: String,
    /// The provider's word for its state (`in_progress`, `completed`,
    /// `expired`, `ended`, …).
    pub status: String,
    /// Whether the provider is done with it (answers, if any, can be read).
    pub ended: bool,
    /// Requests in the batch.
    pub total: u64,
    /// Requests answered so far.
    pub succeeded: u64,
    /// Requests that failed, expired or were canceled so far.
    pub failed: u64,
    /// Where the answers are: OpenAI's output and error file ids.
    #[serde(default)]
    pub files: Vec<String>,
    /// What the provider said about a batch that failed as a whole.
    #[serde(default)]
    pub message: Option<String>,
}

/// What the provider has for a [`BatchTag`] whose create was not
/// confirmed ([`BatchApi::find`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lookup {
    /// The batch made for the tag: OpenAI keeps the tag in its `metadata`,
    /// so this is that submission's batch and no other's.
    Found(String),
    /// No batch the submission could have made: creating it is safe.
    Absent,
    /// Batches the submission could have made, which the provider gives no
    /// way to tell from other runs' (Anthropic's batches carry no tag: a
    /// parallel shard's batch of as many requests, made in the same
    /// minutes, looks the same). None is taken: a person decides.
    Untagged(Vec<Candidate>),
}

/// A batch at the provider that could be a submission's, listed for a
/// person to decide ([`Lookup::Untagged`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The provider's batch id.
    pub id: String,
    /// When it was made, as the provider writes it.
    pub created_at: String,
    /// The provider's word for its state.
    pub status: String,
}

/// What a batch gave for one request.
#[derive(Clone, Debug, PartialEq)]
pub enum LineResult {
    /// An answer, as the live transport reads it.
    Answered(JudgeResponse),
    /// No answer: why.
    Failed(String),
}

impl BatchApi {
    /// OpenAI's Batch API at `base_url` (up to and including `/v1`), with
    /// the key from `variable` (named in the error when it is missing).
    #[must_use]
    pub fn openai(base_url: &str, key: Option<ApiKey>, variable: &str) -> BatchApi {
        BatchApi::new(BatchKind::OpenAi, base_url, key, variable)
    }

    /// Anthropic's Message Batches API at `base_url`.
    #[must_use]
    pub fn anthropic(base_url: &str, key: Option<ApiKey>, variable: &str) -> BatchApi {
        BatchApi::new(BatchKind::Anthropic, base_url, key, variable)
    }

    fn new(kind: BatchKind, base_url: &str, key: Option<ApiKey>, variable: &str) -> BatchApi {
        BatchApi {
            kind,
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
            key_variable: variable.to_owned(),
            retry: RetryPolicy::default(),
            timeout: limits::BATCH_CALL_TIMEOUT,
            idle: limits::BATCH_IDLE_TIMEOUT,
        }
    }

    /// How failed calls are tried again (default [`RetryPolicy::default`]).
    /// A create whose reply was lost is looked for ([`find`](Self::find))
    /// before it is sent again.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> BatchApi {
        self.retry = retry;
        self
    }

    /// How long one call may take, body included (default
    /// [`limits::BATCH_CALL_TIMEOUT`]), and how long a result file's
    /// download may go without a byte (default
    /// [`limits::BATCH_IDLE_TIMEOUT`]).
    #[must_use]
    pub fn with_timeouts(mut self, call: Duration, idle: Duration) -> BatchApi {
        self.timeout = call;
        self.idle = idle;
        self
    }

    /// Which API.
    #[must_use]
    pub fn kind(&self) -> BatchKind {
        self.kind
    }

    /// The provider's name, as in fingerprints.
    #[must_use]
    pub fn provider(&self) -> &'static str {
        match self.kind {
            BatchKind::OpenAi => "openai",
            BatchKind::Anthropic => "anthropic",
        }
    }

    /// Whether a batch carries the tag of the submission that made it, so
    /// a create whose reply was lost can be found again for certain: OpenAI
    /// keeps it in the batch's `metadata`; Anthropic's Message Batches take
    /// only their requests, and list none.
    #[must_use]
    pub fn can_tag(&self) -> bool {
        matches!(self.kind, BatchKind::OpenAi)
    }

    /// The most requests one batch may hold (OpenAI 50,000; Anthropic 100,000).
    #[must_use]
    pub fn max_requests(&self) -> usize {
        match self.kind {
            BatchKind::OpenAi => 50_000,
            BatchKind::Anthropic => 100_000,
        }
    }

    /// The largest batch in bytes (OpenAI's file 200 MB; Anthropic 256 MB).
    #[must_use]
    pub fn max_bytes(&self) -> usize {
        match self.kind {
            BatchKind::OpenAi => 200 * 1024 * 1024,
            BatchKind::Anthropic => 256 * 1024 * 1024,
        }
    }

    /// The line a request is in the batch: an OpenAI JSONL line, or an
    /// Anthropic `{custom_id, params}` entry.
    #[must_use]
    pub fn line(&self, line: &BatchLine) -> Value {
        match self.kind {
            BatchKind::OpenAi => json!({
                "custom_id": line.custom_id,
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": OpenAiTransport::new(&self.base_url)
                    .with_max_completion_tokens(true)
                    .body(&line.request),
            }),
            BatchKind::Anthropic => json!({
                "custom_id": line.custom_id,
                "params": AnthropicTransport::new(&self.base_url).body(&line.request),
            }),
        }
    }

    /// Splits `lines` into batches within the provider's limits (requests
    /// and bytes), in order.
    #[must_use]
    pub fn split(&self, lines: Vec<BatchLine>) -> Vec<Vec<BatchLine>> {
        self.split_within(lines, self.max_requests(), self.max_bytes())
    }

    fn split_within(
        &self,
        lines: Vec<BatchLine>,
        max_requests: usize,
        max_bytes: usize,
    ) -> Vec<Vec<BatchLine>> {
        let mut out: Vec<Vec<BatchLine>> = Vec::new();
        let mut bytes = 0usize;
        for line in lines {
            let size = self.line(&line).to_string().len() + 1;
            let full = out
                .last()
                .is_none_or(|b| b.len() >= max_requests || bytes + size > max_bytes);
            if full {
                out.push(Vec::new());
                bytes = 0;
            }
            bytes += size;
            out.last_mut().expect("pushed").push(line);
        }
        out
    }

    fn key(&self) -> Result<&ApiKey, TransportError> {
        self.key.as_ref().ok_or_else(|| {
            TransportError::new(TransportErrorKind::MissingApiKey {
                variable: self.key_variable.clone(),
            })
        })
    }

    fn url(&self, path: &str) -> String {
        http::join_path(&self.base_url, path)
    }

    fn authorized(
        &self,
        builder: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, TransportError> {
        let key = self.key()?;
        Ok(match self.kind {
            BatchKind::OpenAi => builder.bearer_auth(key.expose()),
            BatchKind::Anthropic => builder
                .header("x-api-key", key.expose())
                .header("anthropic-version", super::ANTHROPIC_VERSION),
        })
    }

    fn error_message(&self) -> fn(&Value) -> Option<String> {
        match self.kind {
            BatchKind::OpenAi => super::openai::error_message,
            BatchKind::Anthropic => super::anthropic::error_message,
        }
    }

    /// One call built by `build` (again for each attempt), its JSON
    /// answer read; bounded by the call timeout and retried by the policy.
    async fn json(
        &self,
        build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
        url: &str,
    ) -> Result<Value, TransportError> {
        let key = self.key.as_ref();
        let client = http::client()?;
        self.retry
            .run(|| async {
                let builder = self.authorized(build(client).timeout(self.timeout))?;
                let response = http::send_request(builder, url, key, self.error_message()).await?;
                http::read_json(response, key).await
            })
            .await
            .map_err(|e| e.with_endpoint(http::endpoint_label(url)))
    }

    /// The JSONL file at `url`, line by line into `each`: never held whole.
    /// Not retried here (a retry would hand `each` lines twice): the caller
    /// reads the file again.
    async fn lines(&self, url: &str, each: impl FnMut(&str)) -> Result<(), TransportError> {
        let key = self.key.as_ref();
        // The headers within the call timeout; then the body is bounded by
        // the idle timeout between bytes, not by a total: a large file over
        // a slow link may take long, but never stalls unnoticed.
        let builder = self.authorized(http::client()?.get(url))?;
        let response = tokio::time::timeout(
            self.timeout,
            http::send_request(builder, url, key, self.error_message()),
        )
        .await
        .map_err(|_| {
            TransportError::new(TransportErrorKind::Timeout {
                after: self.timeout,
            })
        })??;
        http::read_lines(response, key, self.idle, each)
            .await
            .map_err(|e| e.with_endpoint(http::endpoint_label(url)))
    }

    /// Submits `lines` (one model, within [`split`](Self::split)'s limits)
    /// as one batch tagged `tag`; returns the provider's batch id. `known`
    /// are the ids of batches this record already has (never taken for
    /// this one).
    ///
    /// The create is never sent again blindly: when it fails in a way that
    /// may have created the batch anyway (a timeout, a 408, a reset, a
    /// 5xx), the provider is asked for a batch with this tag first
    /// ([`find`](Self::find)): the one made for the tag is taken (OpenAI),
    /// and only when there is none that could be it is the create sent
    /// again. Where batches carry no tag (Anthropic) and some could be it,
    /// none is taken, nothing is created again, and the submission stops
    /// with an error naming them; when the lookup fails, it stops saying
    /// the batch may exist. A 429 or another 4xx made nothing: it is retried
    /// (429) or fails (other 4xx) without a lookup.
    ///
    /// # Errors
    ///
    /// The upload or the creation failed after the retries (the error says
    /// how), the batch may exist but could not be looked for (the error
    /// says how to find it), or a reply lacks its id.
    pub async fn submit(
        &self,
        lines: &[BatchLine],
        tag: &BatchTag,
        known: &[String],
    ) -> Result<String, TransportError> {
        let key = self.key.as_ref();
        let missing = |what: &str, reply: &Value| {
            TransportError::new(TransportErrorKind::Decode {
                message: format!("no {what} in the reply"),
                body: http::excerpt(reply.to_string().as_bytes(), key),
            })
        };
        let (url, body) = match self.kind {
            BatchKind::OpenAi => {
                let mut file = Vec::new();
                for line in lines {
                    file.extend(self.line(line).to_string().bytes());
                    file.push(b'\n');
                }
                let url = self.url("files");
                // An upload is safe to repeat: an unused file costs nothing.
                let uploaded = self
                    .json(
                        |c| {
                            let part = reqwest::multipart::Part::bytes(file.clone())
                                .file_name("ragaliq-batch.jsonl");
                            let form = reqwest::multipart::Form::new()
                                .text("purpose", "batch")
                                .part("file", part);
                            c.post(&url).multipart(form)
                        },
                        &url,
                    )
                    .await?;
                let file_id = uploaded
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| missing("file id", &uploaded))?;
                let body = json!({
                    "input_file_id": file_id,
                    "endpoint": "/v1/chat/completions",
                    "completion_window": "24h",
                    "metadata": {"created_by": "ragaliq", "ragaliq_tag": tag.tag},
                });
                (self.url("batches"), body)
            }
            BatchKind::Anthropic => {
                let requests: Vec<Value> = lines.iter().map(|l| self.line(l)).collect();
                (
                    self.url("messages/batches"),
                    json!({ "requests": requests }),
                )
            }
        };
        let client = http::client()?;
        let created = self
            .retry
            .run(|| async {
                let builder =
                    self.authorized(client.post(&url).timeout(self.timeout).json(&body))?;
                let sent = async {
                    let response =
                        http::send_request(builder, &url, key, self.error_message()).await?;
                    http::read_json(response, key).await
                }
                .await;
                match sent {
                    // The batch may exist though its reply was lost: look
                    // before asking again. Only then: a 429 or another 4xx
                    // says nothing was made.
                    Err(e) if may_have_created(&e) => match self.find(tag, known).await {
                        Ok(Lookup::Found(id)) => Ok(json!({ "id": id })),
                        // Looked, and nothing could be it: asking again is safe.
                        Ok(Lookup::Absent) => Err(e),
                        // Batches that could be it, or another run's: taking
                        // one could answer this submission with another's,
                        // creating again could pay twice. A person decides.
                        Ok(Lookup::Untagged(candidates)) => {
                            Err(self.untagged(&e, &candidates, tag))
                        }
                        // Not known either way: asking again could make (and
                        // bill) a second batch, so the submission stops here.
                        Err(lookup) => Err(self.unconfirmed(&e, &lookup, tag)),
                    },
                    other => other,
                }
            })
            .await
            .map_err(|e| e.with_endpoint(http::endpoint_label(&url)))?;
        created
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| missing("batch id", &created))
    }

    /// The error of a create that may have made the batch (`create` says
    /// how it failed) where batches carry no tag and `candidates` could be
    /// it: not retryable; it names them, and says why none is taken and
    /// how to cancel one.
    fn untagged(
        &self,
        create: &TransportError,
        candidates: &[Candidate],
        tag: &BatchTag,
    ) -> TransportError {
        let listed: Vec<String> = candidates
            .iter()
            .map(|c| format!("{} ({}, made {})", c.id, c.status, c.created_at))
            .collect();
        TransportError::other(format!(
            "the batch's creation was not confirmed ({create}), and the provider has {} batch(es) of {} request(s) made since {} (two minutes before the submission started, for clocks that differ) that could be it: {}. Anthropic's batches carry no tag to tell this submission's (tag `{}`) from another run's, such as a parallel shard's of as many requests, so none is taken as this one's, and it is not created again, which could pay for the same questions twice. Only you can tell which is yours (what else made batches with this key since then); cancel one you do not want with POST {}/<id>/cancel",
            candidates.len(),
            tag.requests,
            httpdate::fmt_http_date(
                std::time::UNIX_EPOCH
                    + Duration::from_secs(tag.since_secs.saturating_sub(CLOCK_SLACK_SECS))
            ),
            listed.join(", "),
            tag.tag,
            http::redact_url(&self.url("messages/batches")),
        ))
    }

    /// The error of a create that may have made the batch (`create` says
    /// how it failed) when looking for it failed too (`lookup`): not
    /// retryable, since a retry would create again; it says the batch may
    /// exist, and how to find it and cancel it or take it up.
    fn unconfirmed(
        &self,
        create: &TransportError,
        lookup: &TransportError,
        tag: &BatchTag,
    ) -> TransportError {
        let (list, which, cancel) = match self.kind {
            BatchKind::OpenAi => (
                self.url("batches"),
                format!("the one whose metadata.ragaliq_tag is `{}`", tag.tag),
                "POST batches/<id>/cancel",
            ),
            BatchKind::Anthropic => (
                self.url("messages/batches"),
                format!(
                    "one of {} request(s) created since {} (for tag `{}`; Anthropic's batches carry none)",
                    tag.requests,
                    httpdate::fmt_http_date(
                        std::time::UNIX_EPOCH
                            + Duration::from_secs(tag.since_secs.saturating_sub(CLOCK_SLACK_SECS))
                    ),
                    tag.tag
                ),
                "POST messages/batches/<id>/cancel",
            ),
        };
        TransportError::other(format!(
            "the batch may exist at the provider though its creation was not confirmed ({create}), and looking for it failed ({lookup}): it is not created again, which could pay for the same questions twice. Find it in the list at {} ({which}); cancel it ({cancel}) to start over, or resume, which looks for it again before creating",
            http::redact_url(&list)
        ))
    }

    /// What the provider has for `tag`: after a create whose reply was
    /// lost, or a crash before its id was saved. `known` are ids already
    /// accounted for (never taken twice).
    ///
    /// OpenAI keeps the tag in the batch's `metadata`: the batch with it is
    /// [`Lookup::Found`], and no other is ever taken. Anthropic's batches
    /// carry no tag: the batches made since the tag's time (less two
    /// minutes for clocks that differ) with as many requests, not known and
    /// not being canceled, could be it or another run's, and are
    /// [`Lookup::Untagged`]: none is taken, a person decides. Either way the
    /// list is read back to the tag's time, page by page.
    ///
    /// # Errors
    ///
    /// The list could not be read back to the tag's time.
    pub async fn find(&self, tag: &BatchTag, known: &[String]) -> Result<Lookup, TransportError> {
        let fresh = |id: &str| !known.iter().any(|k| k == id);
        // Clocks differ: a batch created up to two minutes "before" the
        // submission started may still be it.
        let since = tag.since_secs.saturating_sub(CLOCK_SLACK_SECS);
        let listed = self.list_since(since).await?;
        let id_of = |b: &Value| b.get("id").and_then(Value::as_str).map(str::to_owned);
        match self.kind {
            BatchKind::OpenAi => Ok(listed
                .iter()
                .filter(|b| {
                    b.pointer("/metadata/ragaliq_tag").and_then(Value::as_str)
                        == Some(tag.tag.as_str())
                })
                .filter_map(id_of)
                .find(|id| fresh(id))
                .map_or(Lookup::Absent, Lookup::Found)),
            BatchKind::Anthropic => {
                let text = |b: &Value, key: &str| {
                    b.get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                let candidates: Vec<Candidate> = listed
                    .iter()
                    .filter(|b| {
                        self.created_secs(b).is_some_and(|c| c >= since)
                            && anthropic_total(b) == tag.requests as u64
                            && b.get("cancel_initiated_at").is_none_or(Value::is_null)
                    })
                    .filter_map(|b| {
                        let id = id_of(b).filter(|id| fresh(id))?;
                        Some(Candidate {
                            id,
                            created_at: text(b, "created_at"),
                            status: text(b, "processing_status"),
                        })
                    })
                    .collect();
                Ok(if candidates.is_empty() {
                    Lookup::Absent
                } else {
                    Lookup::Untagged(candidates)
                })
            }
        }
    }

    /// When a listed batch was made, in seconds since the epoch (OpenAI
    /// writes a number, Anthropic RFC 3339).
    fn created_secs(&self, batch: &Value) -> Option<u64> {
        let created = batch.get("created_at")?;
        match self.kind {
            BatchKind::OpenAi => created.as_u64(),
            BatchKind::Anthropic => created
                .as_str()
                .and_then(http::rfc3339)
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs()),
        }
    }

    /// The batches listed newest first, page by page, until one made before
    /// `since` (or the list's end): a batch made since is never missed for
    /// being on a later page. At most [`MAX_LIST_PAGES`] pages.
    async fn list_since(&self, since: u64) -> Result<Vec<Value>, TransportError> {
        let (path, after_key) = match self.kind {
            BatchKind::OpenAi => ("batches", "after"),
            BatchKind::Anthropic => ("messages/batches", "after_id"),
        };
        let mut out = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let url = with_query(&self.url(path), "limit", "100");
            let url = match &after {
                Some(id) => with_query(&url, after_key, id),
                None => url,
            };
            let page = self.json(|c| c.get(&url), &url).await?;
            let data = page
                .get("data")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let reached = data
                .iter()
                .any(|b| self.created_secs(b).is_some_and(|c| c < since));
            let last = page
                .get("last_id")
                .and_then(Value::as_str)
                .or_else(|| {
                    data.last()
                        .and_then(|b| b.get("id"))
                        .and_then(Value::as_str)
                })
                .map(str::to_owned);
            out.extend(data);
            let more = page
                .get("has_more")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if !more || reached {
                return Ok(out);
            }
            match last {
                Some(id) if after.as_deref() != Some(id.as_str()) => after = Some(id),
                _ => {
                    return Err(TransportError::other(
                        "the batch list says it has more, but names no batch to go on from",
                    ));
                }
            }
        }
        Err(TransportError::other(format!(
            "the batch list holds more than {} batches made since the submission started: not all were looked at",
            MAX_LIST_PAGES * 100
        )))
    }

    /// Where batch `id` stands.
    ///
    /// # Errors
    ///
    /// The poll failed after the retries (bounded by the call timeout).
    pub async fn progress(&self, id: &str) -> Result<BatchProgress, TransportError> {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        match self.kind {
            BatchKind::OpenAi => {
                let url = self.url(&format!("batches/{id}"));
                let v = self.json(|c| c.get(&url), &url).await?;
                let status = text(&v, "status").unwrap_or_default();
                let message = v
                    .pointer("/errors/data")
                    .and_then(Value::as_array)
                    .map(|errors| {
                        errors
                            .iter()
                            .filter_map(|e| e.get("message").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                    .filter(|m| !m.is_empty());
                Ok(BatchProgress {
                    id: id.to_owned(),
                    ended: matches!(
                        status.as_str(),
                        "completed" | "failed" | "expired" | "cancelled"
                    ),
                    status,
                    total: count(&v, "total"),
                    succeeded: count(&v, "completed"),
                    failed: count(&v, "failed"),
                    files: ["output_file_id", "error_file_id"]
                        .iter()
                        .filter_map(|k| text(&v, k))
                        .collect(),
                    message,
                })
            }
            BatchKind::Anthropic => {
                let url = self.url(&format!("messages/batches/{id}"));
                let v = self.json(|c| c.get(&url), &url).await?;
                let status = text(&v, "processing_status").unwrap_or_default();
                // Counts are the server's: summed without overflow.
                let failed = ["errored", "canceled", "expired"]
                    .iter()
                    .fold(0u64, |sum, k| sum.saturating_add(count(&v, k)));
                Ok(BatchProgress {
                    id: id.to_owned(),
                    ended: status == "ended",
                    status,
                    total: anthropic_total(&v),
                    succeeded: count(&v, "succeeded"),
                    failed,
                    files: Vec::new(),
                    message: None,
                })
            }
        }
    }

    /// The answers of an ended batch, by `custom_id`. `requests` are the
    /// batch's requests by `custom_id` (an answer is read as its request's
    /// response format asks); a line for an id not among them is left out.
    /// Requests with no line at all (a batch that expired part way) are
    /// not in the map: the caller counts them as not answered.
    ///
    /// Result files are read line by line as they arrive (each line at most
    /// [`limits::MAX_BATCH_LINE_BYTES`]), so a file of any size is read in
    /// bounded memory beyond the answers kept.
    ///
    /// # Errors
    ///
    /// A results file cannot be fetched (retryable ones may be tried again).
    pub async fn results(
        &self,
        progress: &BatchProgress,
        requests: &BTreeMap<String, JudgeRequest>,
    ) -> Result<BTreeMap<String, LineResult>, TransportError> {
        let mut out = BTreeMap::new();
        let urls: Vec<String> = match self.kind {
            BatchKind::OpenAi => progress
                .files
                .iter()
                .map(|file| self.url(&format!("files/{file}/content")))
                .collect(),
            BatchKind::Anthropic => {
                vec![self.url(&format!("messages/batches/{}/results", progress.id))]
            }
        };
        let key = self.key.as_ref();
        for url in urls {
            self.lines(&url, |line| {
                let Ok(value) = serde_json::from_str::<Value>(line) else {
                    return;
                };
                let Some(id) = value.get("custom_id").and_then(Value::as_str) else {
                    return;
                };
                let Some(request) = requests.get(id) else {
                    return;
                };
                let result = match self.kind {
                    BatchKind::OpenAi => openai_line(&value, request, key),
                    BatchKind::Anthropic => anthropic_line(&value, request, key),
                };
                // A success wins over a failure for the same id (a request
                // retried inside the provider may appear in both files).
                match out.get(id) {
                    Some(LineResult::Answered(_)) => {}
                    _ => {
                        out.insert(id.to_owned(), result);
                    }
                }
            })
            .await?;
        }
        Ok(out)
    }
}

/// Whether a create that failed with `e` may have made the batch anyway:
/// it timed out (here, or a 408 from a server or a proxy that stopped
/// waiting), its connection broke, or a server (or a proxy in front of it)
/// answered 5xx, any of which can happen after the provider made it. A 429
/// or another 4xx is an answer from the provider that it made nothing; an
/// error before the request left (no key, no client) made nothing either.
fn may_have_created(e: &TransportError) -> bool {
    match &e.kind {
        TransportErrorKind::Status { status, .. } => *status >= 500 || *status == 408,
        TransportErrorKind::Timeout { .. }
        | TransportErrorKind::IdleTimeout { .. }
        | TransportErrorKind::Connect { .. }
        | TransportErrorKind::Interrupted { .. }
        | TransportErrorKind::Body { .. } => true,
        _ => false,
    }
}

/// How much earlier than a submission's start (by this machine's clock) a
/// batch the provider made for it may say it was made.
const CLOCK_SLACK_SECS: u64 = 120;

/// The most pages of a batch list read back to a submission's time (100
/// batches each).
const MAX_LIST_PAGES: usize = 20;

/// `url` with `key=value` added to its query (any query of the base URL
/// kept).
fn with_query(url: &str, key: &str, value: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            u.query_pairs_mut().append_pair(key, value);
            u.to_string()
        }
        Err(_) => url.to_owned(),
    }
}

/// `request_counts.<key>` of a batch object (0 when absent).
fn count(v: &Value, key: &str) -> u64 {
    v.get("request_counts")
        .and_then(|c| c.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// All the requests an Anthropic batch object counts, summed without
/// overflow (the numbers are the server's).
fn anthropic_total(v: &Value) -> u64 {
    ["processing", "succeeded", "errored", "canceled", "expired"]
        .iter()
        .fold(0u64, |sum, k| sum.saturating_add(count(v, k)))
}

/// One line of an OpenAI output or error file, the answer to `request`.
fn openai_line(value: &Value, request: &JudgeRequest, key: Option<&ApiKey>) -> LineResult {
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.get("code").and_then(Value::as_str))
            .unwrap_or("an error with no message");
        return LineResult::Failed(message.to_owned());
    }
    let status = value
        .pointer("/response/status_code")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let body = value.pointer("/response/body");
    if status != 200 {
        let said = body
            .and_then(super::openai::error_message)
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        return LineResult::Failed(format!("status code {status}{said}"));
    }
    match body.filter(|b| b.is_object()) {
        Some(body) => match super::openai::read_reply(body, request.max_tokens, key) {
            Ok(response) => LineResult::Answered(response),
            Err(e) => LineResult::Failed(e.to_string()),
        },
        None => LineResult::Failed("status code 200 with no body".into()),
    }
}

/// One line of an Anthropic results file.
fn anthropic_line(value: &Value, request: &JudgeRequest, key: Option<&ApiKey>) -> LineResult {
    let result = value.get("result");
    let kind = result
        .and_then(|r| r.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("missing");
    match kind {
        "succeeded" => match result.and_then(|r| r.get("message")) {
            Some(message) => {
                let prefilled = matches!(request.response_format, ResponseFormat::JsonObject);
                match super::anthropic::read_reply(message, prefilled, key) {
                    Ok(response) => LineResult::Answered(response),
                    Err(e) => LineResult::Failed(e.to_string()),
                }
            }
            None => LineResult::Failed("succeeded with no message".into()),
        },
        "errored" => {
            let error = result.and_then(|r| r.get("error"));
            let message = error
                .and_then(|e| e.pointer("/error/message").or_else(|| e.get("message")))
                .and_then(Value::as_str)
                .unwrap_or("an error with no message");
            LineResult::Failed(format!("errored: {message}"))
        }
        other => LineResult::Failed(format!("{other} (not answered)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Message;

    fn request(format: ResponseFormat) -> JudgeRequest {
        JudgeRequest {
            task: "verify_claim".into(),
            template_version: "t@1".into(),
            model: "m".into(),
            system: "s".into(),
            messages: vec![Message::user("u")],
            temperature: 0.0,
            max_tokens: 10,
            response_format: format,
            sample: 0,
            top_logprobs: 0,
            subject: Value::Null,
        }
    }

    #[test]
    fn openai_lines_that_are_not_answers_say_why() {
        let ok = json!({"custom_id": "a", "response": {"status_code": 200, "body": {
            "model": "gpt-4o-mini", "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1}}}, "error": null});
        assert_eq!(
            openai_line(&ok, &request(ResponseFormat::Text), None),
            LineResult::Answered(
                JudgeResponse::text("{}")
                    .with_tokens(5, 1)
                    .with_model("gpt-4o-mini")
            )
        );
        let cases = [
            (
                json!({"custom_id": "a", "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}),
                "could not be executed",
            ),
            (
                json!({"custom_id": "a", "response": {"status_code": 0, "body": {}}, "error": null}),
                "status code 0",
            ),
            (
                json!({"custom_id": "a", "response": {"status_code": 500, "body": {"error": {"message": "boom"}}}, "error": null}),
                "status code 500: boom",
            ),
            (
                json!({"custom_id": "a", "response": {"status_code": 200}, "error": null}),
                "no body",
            ),
            (
                json!({"custom_id": "a", "response": {"status_code": 200, "body": {"choices": []}}, "error": null}),
                "choices[0]",
            ),
        ];
        for (line, says) in cases {
            match openai_line(&line, &request(ResponseFormat::Text), None) {
                LineResult::Failed(why) => assert!(why.contains(says), "{why} / {says}"),
                other => panic!("{line} gave {other:?}"),
            }
        }
    }

    #[test]
    fn anthropic_lines_read_tool_answers_and_name_failures() {
        let schema = ResponseFormat::JsonSchema {
            name: "t".into(),
            schema: json!({}),
        };
        let ok = json!({"custom_id": "a", "result": {"type": "succeeded", "message": {
            "content": [{"type": "tool_use", "input": {"verdict": "supported"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 7, "output_tokens": 2}}}});
        match anthropic_line(&ok, &request(schema.clone()), None) {
            LineResult::Answered(r) => {
                assert_eq!(r.text, r#"{"verdict":"supported"}"#);
                assert_eq!((r.input_tokens, r.output_tokens), (7, 2));
            }
            other => panic!("{other:?}"),
        }
        let prefilled = json!({"custom_id": "a", "result": {"type": "succeeded", "message": {
            "content": [{"type": "text", "text": "\"a\": 1}"}], "stop_reason": "end_turn"}}});
        match anthropic_line(&prefilled, &request(ResponseFormat::JsonObject), None) {
            LineResult::Answered(r) => assert_eq!(r.text, r#"{"a": 1}"#),
            other => panic!("{other:?}"),
        }
        for (line, says) in [
            (
                json!({"custom_id": "a", "result": {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}}}),
                "errored: bad",
            ),
            (
                json!({"custom_id": "a", "result": {"type": "expired"}}),
                "expired",
            ),
            (
                json!({"custom_id": "a", "result": {"type": "canceled"}}),
                "canceled",
            ),
        ] {
            match anthropic_line(&line, &request(schema.clone()), None) {
                LineResult::Failed(why) => assert!(why.contains(says), "{why}"),
                other => panic!("{other:?}"),
            }
        }
    }

    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    /// Retries without real waiting: attempt counts are tested, not backoff.
    fn fast(max_retries: u32) -> RetryPolicy {
        RetryPolicy::default()
            .with_max_retries(max_retries)
            .with_backoff(Duration::from_millis(1), Duration::from_millis(5))
            .with_jitter(false)
    }

    /// An Anthropic batch API on 127.0.0.1, one line to submit, its tag.
    async fn anthropic_batch() -> (MockServer, BatchApi, Vec<BatchLine>, BatchTag) {
        let server = MockServer::start().await;
        let api = BatchApi::anthropic(
            &format!("{}/v1", server.uri()),
            Some(ApiKey::new("fake-key-batch")),
            "ANTHROPIC_API_KEY",
        )
        .with_retry(fast(3));
        let lines = vec![BatchLine {
            custom_id: "a".repeat(64),
            request: request(ResponseFormat::Text),
        }];
        let tag = BatchTag::new("rec", 1, &["a".repeat(64)]);
        (server, api, lines, tag)
    }

    /// The requests `server` received with `verb`.
    async fn received(server: &MockServer, verb: &str) -> usize {
        server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .filter(|r| r.method.as_str() == verb)
            .count()
    }

    /// The create fails as one that may have made the batch (a proxy's
    /// 502) and the lookup for it fails too: before, the create was sent
    /// again (a second batch, paid twice, when the first exists). Now the
    /// submission stops, saying the batch may exist and how to find it.
    #[tokio::test]
    async fn a_lost_create_whose_lookup_fails_is_not_sent_again() {
        let (server, api, lines, tag) = anthropic_batch().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages/batches"))
            .respond_with(ResponseTemplate::new(502).set_body_string("Bad Gateway"))
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path("/v1/messages/batches"))
            .respond_with(ResponseTemplate::new(503).set_body_string("Unavailable"))
            .mount(&server)
            .await;
        let e = api.submit(&lines, &tag, &[]).await.unwrap_err();
        assert_eq!(received(&server, "POST").await, 1, "created again: {e}");
        assert!(received(&server, "GET").await >= 1, "never looked: {e}");
        assert!(!e.is_retryable(), "{e}");
        let message = e.to_string();
        assert!(
            message.contains("may exist")
                && message.contains(&tag.tag)
                && message.contains("cancel"),
            "{message}"
        );
        println!("lost create, failed lookup: {message}");
    }

    /// A 429 says nothing was created: before, it sent the submission to
    /// the lookup, which on Anthropic (no tags) took another process's
    /// batch of as many requests made in the same minutes. Now it is
    /// retried after its backoff, and the list is never read.
    #[tokio::test]
    async fn a_rate_limited_create_is_retried_never_looked_up() {
        let (server, api, lines, tag) = anthropic_batch().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages/batches"))
            .respond_with(ResponseTemplate::new(429).set_body_json(json!({
                "type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})))
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/v1/messages/batches"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": "msgbatch_ours"})))
            .mount(&server)
            .await;
        // Another process's batch of one request, made just now.
        Mock::given(method("GET"))
            .and(path("/v1/messages/batches"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"data": [{
                "id": "msgbatch_theirs", "created_at": "2999-01-01T00:00:00Z",
                "processing_status": "in_progress",
                "request_counts": {"processing": 1, "succeeded": 0, "errored": 0,
                                   "canceled": 0, "expired": 0}}]})))
            .mount(&server)
            .await;
        let id = api.submit(&lines, &tag, &[]).await.unwrap();
        assert_eq!(id, "msgbatch_ours");
        assert_eq!(received(&server, "GET").await, 0, "the list was read");
        assert_eq!(received(&server, "POST").await, 2);
        // A 400 (refused, nothing made) ends the submission, unlooked-for.
        let (server, api, lines, tag) = anthropic_batch().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(400).set_body_json(json!({
                "type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})))
            .mount(&server)
            .await;
        let e = api.submit(&lines, &tag, &[]).await.unwrap_err();
        assert!(
            matches!(e.kind, TransportErrorKind::Status { status: 400, .. }),
            "{e}"
        );
        assert_eq!(received(&server, "GET").await, 0, "the list was read");
        assert_eq!(received(&server, "POST").await, 1);
    }

    /// A list longer than a page: the batch made for the tag is on the
    /// second (100 newer batches of other runs before it). Before, only
    /// the first page was read, the lost batch was not found, and the
    /// create was sent again: paid twice.
    #[tokio::test]
    async fn the_list_is_read_back_to_the_submissions_time_page_by_page() {
        use wiremock::matchers::query_param;
        let server = MockServer::start().await;
        let api = BatchApi::openai(
            &format!("{}/v1", server.uri()),
            Some(ApiKey::new("fake-key-batch")),
            "OPENAI_API_KEY",
        )
        .with_retry(fast(0));
        let tag = BatchTag::new("rec", 1, &["a".repeat(64)]);
        let now = tag.since_secs;
        let others: Vec<Value> = (0..100)
            .map(|i| {
                json!({"id": format!("batch_other{i}"), "created_at": now + 5,
                            "metadata": {"ragaliq_tag": "ragaliq-someone-else"}})
            })
            .collect();
        Mock::given(method("GET"))
            .and(path("/v1/batches"))
            .and(query_param("after", "batch_other99"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "data": [{"id": "batch_ours", "created_at": now, "metadata": {"ragaliq_tag": tag.tag}},
                         {"id": "batch_old", "created_at": now - 3600, "metadata": {}}],
                "has_more": true, "last_id": "batch_old"})))
            .with_priority(1)
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path("/v1/batches"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "data": others, "has_more": true, "last_id": "batch_other99"})))
            .mount(&server)
            .await;
        assert_eq!(
            api.find(&tag, &[]).await.unwrap(),
            Lookup::Found("batch_ours".into())
        );
        // Read back to a batch older than the submission, and no further.
        assert_eq!(received(&server, "GET").await, 2);

        // A list that says it has more but names nothing to go on from:
        // not all was seen, so it is no "absent".
        let server = MockServer::start().await;
        let api = BatchApi::anthropic(
            &format!("{}/v1", server.uri()),
            Some(ApiKey::new("fake-key-batch")),
            "ANTHROPIC_API_KEY",
        )
        .with_retry(fast(0));
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"data": [], "has_more": true})),
            )
            .mount(&server)
            .await;
        let e = api.find(&tag, &[]).await.unwrap_err();
        assert!(
            e.to_string().contains("names no batch to go on from"),
            "{e}"
        );
    }

    #[test]
    fn batches_split_at_the_providers_limits() {
        let api = BatchApi::anthropic("http://127.0.0.1:1/v1", None, "K");
        let lines: Vec<BatchLine> = (0..5)
            .map(|i| BatchLine {
                custom_id: format!("id{i}"),
                request: request(ResponseFormat::Text),
            })
            .collect();
        assert_eq!(api.split(lines.clone()).len(), 1);
        let size = api.line(&lines[0]).to_string().len() + 1;
        let sizes = |chunks: Vec<Vec<BatchLine>>| chunks.iter().map(Vec::len).collect::<Vec<_>>();
        assert_eq!(
            sizes(api.split_within(lines.clone(), 3, usize::MAX)),
            [3, 2]
        );
        assert_eq!(
            sizes(api.split_within(lines.clone(), 100, 2 * size)),
            [2, 2, 1]
        );
        assert_eq!(
            sizes(api.split_within(lines, 100, 2 * size - 1)),
            [1, 1, 1, 1, 1]
        );
    }
}
