//! Passages without IDs: the one rule that says two passages are the same.

use unicode_normalization::{Recompositions, UnicodeNormalization};

/// `text` as relevant passages are matched: its words (runs of letters and
/// digits) in lower case, one space apart, in Unicode NFC. Case,
/// punctuation, spacing, line breaks and how an accented letter is encoded
/// (one character, or a letter and a combining mark, as PDFs and macOS
/// often write it) do not count; every word and its order do.
///
/// ```
/// use ragaliq::retrieval::normalise;
/// assert_eq!(normalise("  Refunds: within 30 days.\n(Receipts required!)"), "refunds within 30 days receipts required");
/// assert_ne!(normalise("within 30 days"), normalise("within 14 days"));
/// assert_eq!(normalise("Cafe\u{301} menu"), normalise("Café menu"));
/// ```
#[must_use]
pub fn normalise(text: &str) -> String {
    Normalised::new(text).collect()
}

/// Whether `text`, normalised, is `normal` (itself normalised), compared as
/// they go: no allocation, and most passages differ at their first word.
pub(crate) fn is(text: &str, normal: &str) -> bool {
    Normalised::new(text).eq(normal.chars())
}

/// Whether two texts are the same once normalised.
pub(crate) fn same(a: &str, b: &str) -> bool {
    Normalised::new(a).eq(Normalised::new(b))
}

/// The characters of [`normalise`]'s result, made as they are read.
struct Normalised<'a> {
    /// ASCII text, read byte by byte (most passages: no decoding, no
    /// Unicode tables); else `chars`, composed (NFC).
    ascii: Option<std::slice::Iter<'a, u8>>,
    chars: Recompositions<std::str::Chars<'a>>,
    /// The rest of a character whose lower case is several.
    lower: Option<std::char::ToLowercase>,
    /// A word's first character, held while the space before it is given.
    held: Option<char>,
    /// A word has been given, and something else has come since.
    gap: bool,
    started: bool,
}

impl<'a> Normalised<'a> {
    fn new(text: &'a str) -> Normalised<'a> {
        Normalised {
            ascii: text.is_ascii().then(|| text.as_bytes().iter()),
            chars: text.nfc(),
            lower: None,
            held: None,
            gap: false,
            started: false,
        }
    }

    fn lowered(&mut self, c: char) -> Option<char> {
        if c.is_ascii() {
            return Some(c.to_ascii_lowercase());
        }
        let mut lower = c.to_lowercase();
        let first = lower.next();
        self.lower = Some(lower);
        first
    }
}

impl Iterator for Normalised<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        if let Some(bytes) = &mut self.ascii {
            if let Some(b) = self.held.take() {
                return Some(b.to_ascii_lowercase());
            }
            loop {
                let b = char::from(*bytes.next()?);
                if !b.is_ascii_alphanumeric() {
                    self.gap = true;
                    continue;
                }
                if self.gap && self.started {
                    self.gap = false;
                    self.held = Some(b);
                    return Some(' ');
                }
                self.gap = false;
                self.started = true;
                return Some(b.to_ascii_lowercase());
            }
        }
        if let Some(lower) = &mut self.lower {
            if let Some(c) = lower.next() {
                return Some(c);
            }
            self.lower = None;
        }
        if let Some(c) = self.held.take() {
            return self.lowered(c);
        }
        loop {
            let c = self.chars.next()?;
            if !c.is_alphanumeric() {
                self.gap = true;
                continue;
            }
            if self.gap && self.started {
                self.gap = false;
                self.held = Some(c);
                return Some(' ');
            }
            self.gap = false;
            self.started = true;
            return self.lowered(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_of_every_script_are_words() {
        assert_eq!(normalise("Æble-grød, ÉTÉ 2024"), "æble grød été 2024");
        assert_eq!(normalise("—"), "");
        assert_eq!(normalise("İ"), "i̇", "a lower case of two characters");
    }

    #[test]
    fn nfd_text_is_the_same_as_its_nfc_form() {
        // "Müller, Café Zoë" as a PDF or macOS writes it: a letter, then a
        // combining mark.
        let nfd = "Mu\u{308}ller, Cafe\u{301} Zoe\u{308}";
        let nfc = "Müller, Café Zoë";
        assert_eq!(normalise(nfd), "müller café zoë");
        assert!(same(nfd, nfc));
        assert!(is(nfd, &normalise(nfc)) && is(nfc, &normalise(nfd)));
    }

    #[test]
    fn comparing_as_they_go_agrees_with_normalising() {
        let texts = [
            "Stores open at NINE, Monday–Saturday!",
            "stores open at nine monday saturday",
            "stores open at nine monday",
            "  stores\nopen at nine monday saturday  ",
            "",
            "...",
            "İstanbul",
            "i̇stanbul",
        ];
        for a in texts {
            for b in texts {
                assert_eq!(same(a, b), normalise(a) == normalise(b), "{a:?} {b:?}");
                assert_eq!(
                    is(a, &normalise(b)),
                    normalise(a) == normalise(b),
                    "{a:?} {b:?}"
                );
            }
        }
    }
}
