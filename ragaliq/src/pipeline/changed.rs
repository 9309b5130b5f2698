//! What changed in the pipeline's request since it was recorded: the
//! closest recorded call of the same API, and each difference from it (the
//! model, a message's text as a diff of its lines, a parameter).

use crate::record::Call;
use serde_json::Value;

/// Most diff lines shown per changed text.
const MAX_LINES: usize = 12;

/// Says why the recording holds no answer to the `occurrence`-th asking
/// of `body` on `api` (whose fingerprint is `fingerprint`), against the
/// `recorded` calls: each line after the first starts with `    `, to sit
/// under the message's `  ` lines.
pub(crate) fn why(
    api: &str,
    fingerprint: &str,
    occurrence: u32,
    body: Option<&Value>,
    recorded: &[Call],
) -> String {
    let same: Vec<&Call> = recorded
        .iter()
        .filter(|c| c.fingerprint == fingerprint)
        .collect();
    if !same.is_empty() {
        let held = same.len();
        return format!(
            "the pipeline asked the same request {occurrence} times in this test; the recording holds {} (it asks once more than when it was recorded)",
            if held == 1 {
                "it once".to_owned()
            } else {
                format!("{held} askings")
            }
        );
    }
    let body = body.cloned().unwrap_or(Value::Null);
    // What the call asks now, as the recorded calls are described.
    let now = {
        let ordered = crate::record::Ordered::from_value(&body);
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Some(crate::record::describe_call(api, model, Some(&ordered)))
    };
    let closest = recorded
        .iter()
        .filter(|c| c.api == api)
        .map(|c| (differences(&c.body(), &body), c))
        .min_by_key(|(d, _)| d.iter().map(|d| d.lines().count()).sum::<usize>());
    match closest {
        None if recorded.is_empty() => {
            "the recording holds no call of the pipeline: it was recorded before the test called its pipeline through the endpoint".to_owned()
        }
        None => format!(
            "the recording holds no {api} call: the pipeline asks something it did not ask when it was recorded"
        ),
        Some((d, c)) if d.is_empty() => format!(
            "the closest recorded call ({}) asks the same once read; its fingerprint differs, so a value's type or spelling changed (1 and 1.0, say)",
            c.describe()
        ),
        Some((d, c)) => format!(
            "changed since it was recorded, against the closest recorded call{}:\n    {}",
            if Some(c.describe()) == now {
                String::new()
            } else {
                format!(" ({})", c.describe())
            },
            d.join("\n    ")
        ),
    }
}

/// The differences between a recorded body and the body asked now, each a
/// line (or a diff of lines, its lines after the first indented).
fn differences(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let empty = serde_json::Map::new();
    let (a, b) = (
        old.as_object().unwrap_or(&empty),
        new.as_object().unwrap_or(&empty),
    );
    let text_keys = ["messages", "system", "prompt", "input"];
    if a.get("model") != b.get("model") {
        out.push(format!(
            "model {} → {}",
            shown(a.get("model")),
            shown(b.get("model"))
        ));
    }
    if a.get("messages") != b.get("messages") {
        let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
        let (x, y) = (list(a.get("messages")), list(b.get("messages")));
        for i in 0..x.len().max(y.len()) {
            match (x.get(i), y.get(i)) {
                (Some(m), Some(n)) if m != n => {
                    let (rm, rn) = (role(m), role(n));
                    if rm != rn {
                        out.push(format!("messages[{i}]: role {rm} → {rn}"));
                    }
                    let (tm, tn) = (content(m), content(n));
                    if tm != tn {
                        out.push(format!("messages[{i}] ({rn}) changed:{}", diff(&tm, &tn)));
                    } else if rm == rn {
                        out.push(format!(
                            "messages[{i}] ({rn}): {} → {}",
                            Value::to_string(m),
                            Value::to_string(n)
                        ));
                    }
                }
                (Some(m), None) => out.push(format!(
                    "messages[{i}] ({}) removed:{}",
                    role(m),
                    diff(&content(m), "")
                )),
                (None, Some(n)) => out.push(format!(
                    "messages[{i}] ({}) added:{}",
                    role(n),
                    diff("", &content(n))
                )),
                _ => {}
            }
        }
    }
    for key in ["system", "prompt", "input"] {
        if a.get(key) != b.get(key) {
            let (x, y) = (
                a.get(key).map(text).unwrap_or_default(),
                b.get(key).map(text).unwrap_or_default(),
            );
            out.push(format!("{key} changed:{}", diff(&x, &y)));
        }
    }
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        if key == "model" || text_keys.contains(&key.as_str()) || a.get(key) == b.get(key) {
            continue;
        }
        out.push(match (a.get(key), b.get(key)) {
            (Some(x), Some(y)) => format!("{key} {} → {}", shown(Some(x)), shown(Some(y))),
            (None, Some(y)) => format!("{key} added: {}", shown(Some(y))),
            (Some(x), None) => format!("{key} removed (was {})", shown(Some(x))),
            (None, None) => continue,
        });
    }
    out
}

/// A value in a line: strings as they are, the rest as compact JSON (cut
/// at 120 characters).
fn shown(v: Option<&Value>) -> String {
    let text = match v {
        None => "(none)".to_owned(),
        Some(Value::String(s)) => format!("`{s}`"),
        Some(other) => other.to_string(),
    };
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(120).collect::<String>())
    } else {
        text
    }
}

fn role(message: &Value) -> String {
    message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned()
}

/// A message's text: its `content` string, or its parts' texts (other
/// parts as JSON), one per line.
fn content(message: &Value) -> String {
    message.get("content").map(text).unwrap_or_default()
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p.get("text").and_then(Value::as_str) {
                Some(t) => t.to_owned(),
                None => text(p),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The changed lines of `old` → `new`, each on a line of its own (`-` the
/// recorded, `+` now), at most [`MAX_LINES`].
fn diff(old: &str, new: &str) -> String {
    // Each text ends its last line, so a line added after it is the one
    // line said, not the last line too.
    let ended = |t: &str| {
        if t.is_empty() || t.ends_with('\n') {
            t.to_owned()
        } else {
            format!("{t}\n")
        }
    };
    let (old, new) = (ended(old), ended(new));
    let diff = similar::TextDiff::from_lines(&old, &new);
    let mut lines: Vec<String> = Vec::new();
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => "-",
            similar::ChangeTag::Insert => "+",
            similar::ChangeTag::Equal => continue,
        };
        let line = change.value().trim_end_matches(['\n', '\r']);
        let line = if line.chars().count() > 200 {
            format!("{}…", line.chars().take(200).collect::<String>())
        } else {
            line.to_owned()
        };
        lines.push(format!("{sign} {line}"));
    }
    let more = lines.len().saturating_sub(MAX_LINES);
    lines.truncate(MAX_LINES);
    if more > 0 {
        lines.push(format!("… and {more} more changed lines"));
    }
    lines
        .iter()
        .map(|l| format!("\n      {l}"))
        .collect::<String>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Ordered;
    use serde_json::json;

    fn call(body: Value) -> Call {
        let fp = super::super::api::fingerprint(super::super::api::Api::Chat, Some(&body));
        let ordered = Ordered::from_value(&body);
        Call::new(
            "chat/completions",
            Some(&ordered),
            "a".into(),
            Some("{}".into()),
            Vec::new(),
            Default::default(),
            1,
            fp,
        )
    }

    #[test]
    fn a_changed_prompt_is_said_as_a_diff_of_its_lines() {
        let old = json!({"model": "small", "temperature": 0,
            "messages": [{"role": "system", "content": "Answer from the passages.\nBe brief."},
                         {"role": "user", "content": "What is the refund window?"}]});
        let new = json!({"model": "small", "temperature": 0.2,
            "messages": [{"role": "system", "content": "Answer from the passages.\nBe very brief."},
                         {"role": "user", "content": "What is the refund window?"}]});
        let fp = super::super::api::fingerprint(super::super::api::Api::Chat, Some(&new));
        let why = why("chat/completions", &fp, 1, Some(&new), &[call(old)]);
        assert!(why.contains("messages[0] (system) changed:"), "{why}");
        assert!(
            why.contains("- Be brief.") && why.contains("+ Be very brief."),
            "{why}"
        );
        assert!(
            !why.contains("Answer from the passages"),
            "unchanged lines are not shown: {why}"
        );
        assert!(why.contains("temperature 0 → 0.2"), "{why}");
    }

    #[test]
    fn a_changed_model_and_an_added_message_are_named() {
        let old = json!({"model": "small", "messages": [{"role": "user", "content": "Q?"}]});
        let new = json!({"model": "large", "messages": [{"role": "user", "content": "Q?"},
            {"role": "user", "content": "And more?"}]});
        let fp = super::super::api::fingerprint(super::super::api::Api::Chat, Some(&new));
        let why = why("chat/completions", &fp, 1, Some(&new), &[call(old)]);
        assert!(why.contains("model `small` → `large`"), "{why}");
        assert!(
            why.contains("messages[1] (user) added:\n      + And more?"),
            "{why}"
        );
    }

    #[test]
    fn a_line_added_at_the_end_is_the_one_line_said() {
        let d = diff(
            "Answer briefly.\nUse the passages.",
            "Answer briefly.\nUse the passages.\nElse say so.",
        );
        assert_eq!(d, "\n      + Else say so.");
    }

    #[test]
    fn asking_once_more_is_said_as_such() {
        let body = json!({"model": "m", "messages": []});
        let c = call(body.clone());
        let why = why(
            "chat/completions",
            &c.fingerprint,
            2,
            Some(&body),
            std::slice::from_ref(&c),
        );
        assert!(why.contains("2 times"), "{why}");
    }
}
