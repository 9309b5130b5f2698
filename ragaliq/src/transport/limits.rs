//! What ragaliq reads from a server at most, and how long it waits for it.
//!
//! A judge server is external input: a broken proxy can send an error page
//! without end, a stream whose line never ends, a batch result file of
//! gigabytes, or a `Retry-After` of a year. Each read below stops at its
//! limit with an error that names it
//! ([`TransportErrorKind::TooLarge`](crate::TransportErrorKind::TooLarge)),
//! and each wait is bounded, so one bad server cannot fill memory or hold a
//! run for ever.
//!
//! ```
//! use ragaliq::judge::limits;
//! // A judge's reply is a few kilobytes; 8 MiB is far beyond any of them.
//! assert_eq!(limits::MAX_REPLY_BYTES, 8 * 1024 * 1024);
//! assert!(limits::MAX_ERROR_BYTES < limits::MAX_REPLY_BYTES);
//! // One streamed event is never larger than a whole reply.
//! assert!(limits::MAX_EVENT_BYTES <= limits::MAX_REPLY_BYTES);
//! ```

use std::time::Duration;

/// The most bytes of a success response read whole: a judge's reply (its
/// JSON envelope included), a batch's state, a file upload's answer. A
/// reply limited to a few thousand tokens is a few kilobytes.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// The most bytes of an error response read: its message is in the first
/// few hundred; the rest is not read (the connection is dropped).
pub const MAX_ERROR_BYTES: usize = 64 * 1024;

/// The longest line of a streamed reply (server-sent events). A stream
/// whose line never ends fails at this length.
pub const MAX_EVENT_LINE_BYTES: usize = 1024 * 1024;

/// The most bytes of one streamed event's data: its `data:` lines
/// together, as they pile up until the blank line that ends the event. An
/// event is a part of a reply, so it is bounded as a whole reply is
/// ([`MAX_REPLY_BYTES`]); a server whose `data:` lines never meet a blank
/// line fails here instead of filling memory one short line at a time.
pub const MAX_EVENT_BYTES: usize = MAX_REPLY_BYTES;

/// The most token positions of a reply's log-probabilities kept. ragaliq
/// reads a yes/no answer at the first positions of the reply, and may read
/// one position per numbered line of a batched answer, so a reply keeps as
/// many positions as its `max_tokens` allows (a server writes no more
/// tokens than that), but never more than this: positions past it, from a
/// server that sends log-probabilities without end (chunks with no text,
/// which the reply's byte limit never sees grow), are dropped, not kept.
pub const MAX_LOGPROB_TOKENS: usize = 4096;

/// The longest line of a batch's result file. The file itself is read line
/// by line, so its size is not bounded, only each line's.
pub const MAX_BATCH_LINE_BYTES: usize = 8 * 1024 * 1024;

/// The longest time a rate-limit header's reset is taken at
/// (`x-ratelimit-reset-*`, `anthropic-ratelimit-*-reset`): a window that
/// says it refills in a year is taken to refill in a day.
pub const MAX_RATE_RESET: Duration = Duration::from_secs(24 * 3600);

/// The longest `Retry-After` (or `retry-after-ms`) taken as given. Any
/// pause is also bounded by the retry budget: a call that would wait
/// longer than its budget fails at once, naming the header.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// How long one call around a batch (an upload, a create, a poll, a list)
/// may take, body included. Each is retried as a live call is.
pub const BATCH_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a batch's result file may go without sending a byte before
/// its download fails (and is retried).
pub const BATCH_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
