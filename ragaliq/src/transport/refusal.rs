//! Telling a server's refusal of a response format from other errors.

/// Whether an error answer says the server refused the response format.
///
/// ```
/// use ragaliq::judge::refuses_response_format;
/// assert!(refuses_response_format(500, "Input should be 'text' or 'json_object'"));
/// assert!(refuses_response_format(400, "'response_format.type' must be 'json_schema' or 'text'"));
/// assert!(!refuses_response_format(400, "maximum context length exceeded"));
/// assert!(!refuses_response_format(503, "response_format busy"));
/// ```
#[must_use]
pub fn refuses_response_format(status: u16, message: &str) -> bool {
    if !matches!(status, 400 | 415 | 422 | 500 | 501) {
        return false;
    }
    let lower = message.to_ascii_lowercase();
    [
        "response_format",
        "response format",
        "json_schema",
        "json_object",
        "json schema",
        "guided_json",
        "structured output",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}
