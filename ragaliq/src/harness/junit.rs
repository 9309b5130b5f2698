//! The JUnit XML report, written directly: the format is four elements and
//! a few attributes, and the crates that write it bring date, UUID and ANSI
//! parsing crates into every user's build along with them.

use std::fmt::Write as _;

/// One `<testcase>`.
pub(crate) struct Case<'a> {
    pub name: String,
    pub classname: &'a str,
    pub status: Status,
}

/// How a test case ended.
pub(crate) enum Status {
    Passed,
    /// A `<failure>`: the test ran and its check failed.
    Failure {
        message: String,
        text: String,
    },
    /// An `<error>`: the test could not run its check.
    Error {
        message: String,
        text: String,
    },
    /// Passed as far as the run is concerned, with a note in
    /// `<system-out>` (a failure a gate allowed, a gate not checked).
    Allowed {
        text: String,
    },
    /// A `<skipped>`: the test passes meanwhile, its verdict awaiting a
    /// person (`uncertain = "pass"`).
    Skipped {
        message: String,
    },
}

/// The document: one `<testsuite>` named `suite` inside `<testsuites>`
/// named `report`.
pub(crate) fn document(report: &str, suite: &str, cases: &[Case<'_>]) -> String {
    let failures = cases
        .iter()
        .filter(|c| matches!(c.status, Status::Failure { .. }))
        .count();
    let errors = cases
        .iter()
        .filter(|c| matches!(c.status, Status::Error { .. }))
        .count();
    let skipped = cases
        .iter()
        .filter(|c| matches!(c.status, Status::Skipped { .. }))
        .count();
    let mut counts = format!(
        r#"tests="{}" failures="{failures}" errors="{errors}""#,
        cases.len()
    );
    if skipped > 0 {
        let _ = write!(counts, r#" skipped="{skipped}""#);
    }
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(out, r#"<testsuites name="{}" {counts}>"#, escape(report));
    let _ = writeln!(out, r#"    <testsuite name="{}" {counts}>"#, escape(suite));
    for case in cases {
        let open = format!(
            r#"        <testcase name="{}" classname="{}""#,
            escape(&case.name),
            escape(case.classname)
        );
        let (element, message, text) = match &case.status {
            Status::Passed => {
                let _ = writeln!(out, "{open}/>");
                continue;
            }
            Status::Allowed { text } => {
                let _ = writeln!(out, "{open}>");
                let _ = writeln!(
                    out,
                    "            <system-out>{}</system-out>",
                    escape_text(text)
                );
                let _ = writeln!(out, "        </testcase>");
                continue;
            }
            Status::Skipped { message } => {
                let _ = writeln!(out, "{open}>");
                let _ = writeln!(
                    out,
                    r#"            <skipped message="{}"/>"#,
                    escape(message)
                );
                let _ = writeln!(out, "        </testcase>");
                continue;
            }
            Status::Failure { message, text } => ("failure", message, text),
            Status::Error { message, text } => ("error", message, text),
        };
        let _ = writeln!(out, "{open}>");
        let _ = writeln!(
            out,
            r#"            <{element} message="{}" type="{element}">{}</{element}>"#,
            escape(message),
            escape_text(text)
        );
        let _ = writeln!(out, "        </testcase>");
    }
    out.push_str("    </testsuite>\n</testsuites>\n");
    out
}

/// Text fit for an XML 1.0 attribute or element: markup characters
/// escaped, terminal colour codes dropped, and characters XML 1.0 cannot
/// hold at all (other control characters) replaced.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Attributes would fold raw line breaks into spaces.
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            '\u{1b}' if chars.peek() == Some(&'[') => {
                // A CSI sequence (`ESC [ … final`): colour codes in messages.
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            c if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// [`escape`] for an element's text, where line breaks and tabs stay as
/// they are (a reader shows a multi-line reason as lines). A `&#10;` in
/// `escape`'s output can only be a line break: a `&` of the text itself
/// is `&amp;`.
fn escape_text(s: &str) -> String {
    escape(s).replace("&#10;", "\n").replace("&#9;", "\t")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_elements() {
        let cases = [
            Case {
                name: "a::faithfulness".into(),
                classname: "a",
                status: Status::Passed,
            },
            Case {
                name: "b::relevance".into(),
                classname: "b",
                status: Status::Failure {
                    message: "relevance failed: 0.40 against threshold 0.70".into(),
                    text: "why".into(),
                },
            },
            Case {
                name: "c::context_recall".into(),
                classname: "c",
                status: Status::Error {
                    message: "configuration error".into(),
                    text: String::new(),
                },
            },
        ];
        let xml = document("ragaliq", "rag_suite", &cases);
        assert!(
            xml.contains(r#"<testsuites name="ragaliq" tests="3" failures="1" errors="1">"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testcase name="a::faithfulness" classname="a"/>"#),
            "{xml}"
        );
        assert!(xml.contains(r#"<failure message="relevance failed: 0.40 against threshold 0.70" type="failure">why</failure>"#), "{xml}");
        assert!(
            xml.contains(r#"<error message="configuration error" type="error"></error>"#),
            "{xml}"
        );
    }

    #[test]
    fn text_is_escaped_and_never_invalid_xml() {
        assert_eq!(
            escape("a < b & \"c\" 'd' > e\nf"),
            "a &lt; b &amp; &quot;c&quot; &apos;d&apos; &gt; e&#10;f"
        );
        assert_eq!(escape("\u{1b}[31mred\u{1b}[0m ok"), "red ok");
        assert_eq!(escape_text("a\n\tb &#10;"), "a\n\tb &amp;#10;");
        assert_eq!(escape("bell\u{7} nul\u{0}"), "bell\u{fffd} nul\u{fffd}");
    }
}
