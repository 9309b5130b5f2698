//! The found rule's words, read once from `words.txt` (which
//! `scripts/found_rule.py` reads too, so the rule and its measurement use
//! one list).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

const WORDS: &str = include_str!("words.txt");

/// Every table of `words.txt`: its words, and for a table of `word=value`
/// entries, their values.
pub(super) struct Tables {
    sets: HashMap<&'static str, HashSet<&'static str>>,
    maps: HashMap<&'static str, HashMap<&'static str, &'static str>>,
}

/// The tables, read on first use.
pub(super) fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| read(WORDS))
}

fn read(text: &'static str) -> Tables {
    let mut sets: HashMap<&'static str, HashSet<&'static str>> = HashMap::new();
    let mut maps: HashMap<&'static str, HashMap<&'static str, &'static str>> = HashMap::new();
    let mut name = "";
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            name = section;
            continue;
        }
        for word in line.split_whitespace() {
            match word.split_once('=') {
                Some((k, v)) => {
                    maps.entry(name).or_default().insert(k, v);
                    sets.entry(name).or_default().insert(k);
                }
                None => {
                    sets.entry(name).or_default().insert(word);
                }
            }
        }
    }
    Tables { sets, maps }
}

impl Tables {
    /// Whether `word` is in the table `name`.
    pub(super) fn has(&self, name: &str, word: &str) -> bool {
        self.sets.get(name).is_some_and(|s| s.contains(word))
    }

    /// The value `word` has in the table `name` (`weeks` for `week` in
    /// `units`).
    pub(super) fn get(&self, name: &str, word: &str) -> Option<&'static str> {
        self.maps.get(name).and_then(|m| m.get(word)).copied()
    }

    /// `word` as the table `name` holds it (a `'static` copy), if it does.
    pub(super) fn sets_word(&self, name: &str, word: &str) -> Option<&'static str> {
        self.sets.get(name).and_then(|s| s.get(word)).copied()
    }

    /// Whether some entry of the table `name` has the value `value`.
    pub(super) fn has_value(&self, name: &str, value: &str) -> bool {
        self.maps
            .get(name)
            .is_some_and(|m| m.values().any(|v| *v == value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_the_rule_reads_is_in_the_file() {
        let t = tables();
        for name in [
            "denies",
            "hedges",
            "contrasts",
            "reports",
            "offers",
            "qualifies",
            "relates",
            "plain-negations",
            "copulas",
            "described",
            "name-after",
            "name-before",
            "small",
            "magnitudes",
            "months",
        ] {
            assert!(t.sets.get(name).is_some_and(|s| !s.is_empty()), "{name}");
        }
        for name in [
            "pairs",
            "month-short",
            "units",
            "currency-words",
            "dollar-prefixes",
            "eras",
        ] {
            assert!(t.maps.get(name).is_some_and(|m| !m.is_empty()), "{name}");
        }
        assert_eq!(t.get("units", "kilometres"), Some("km"));
        assert_eq!(t.get("pairs", "up_to"), Some("qualifies"));
        assert!(t.has("denies", "not") && !t.has("denies", "notable"));
        // The classes of doubt share no word: which class a word raises
        // does not depend on the order they are looked at.
        let classes = [
            "denies",
            "hedges",
            "contrasts",
            "reports",
            "offers",
            "qualifies",
        ];
        for (i, a) in classes.iter().enumerate() {
            for b in &classes[i + 1..] {
                let both: Vec<_> = t.sets[a].intersection(&t.sets[b]).collect();
                assert!(both.is_empty(), "{a} and {b} share {both:?}");
            }
        }
    }
}
