//! Passages without IDs: the one rule that says two passages are the same.

/// `text` as relevant passages are matched: its words (runs of letters and
/// digits) in lower case, one space apart. Case, punctuation, spacing and
/// line breaks do not count; every word and its order do.
///
/// ```
/// use ragaliq::retrieval::normalise;
/// assert_eq!(normalise("  Refunds: within 30 days.\n(Receipts required!)"), "refunds within 30 days receipts required");
/// assert_ne!(normalise("within 30 days"), normalise("within 14 days"));
/// ```
#[must_use]
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        for c in word.chars() {
            out.extend(c.to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_of_every_script_are_words() {
        assert_eq!(normalise("Æble-grød, ÉTÉ 2024"), "æble grød été 2024");
        assert_eq!(normalise("—"), "");
    }
}
