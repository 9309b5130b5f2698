//! [`RelevantIds`]: which documents a labelled case should retrieve, with an
//! optional grade each (graded relevance, for nDCG).

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The IDs a case should retrieve, in the order they were labelled, each
/// with a grade: 1 for a plain list, the number given for graded relevance.
///
/// A grade is a finite number, 0 or more: 0 marks an ID judged *not*
/// relevant (kept for the record, counted nowhere), above 0 relevant, and
/// nDCG weighs each retrieved ID by its grade. In a case file it is a list
/// (`relevant_ids: [policy-12, faq-3]`) or a map of IDs to grades
/// (`relevant_ids: {policy-12: 3, faq-3: 1}`); it is written back the same
/// way, a list when every grade is 1.
///
/// ```
/// use ragaliq::RelevantIds;
///
/// let plain = RelevantIds::from_ids(["policy-12", "faq-3"]);
/// assert_eq!(plain.grade("faq-3"), Some(1.0));
/// let graded = RelevantIds::graded([("policy-12", 3.0), ("faq-3", 1.0), ("terms-1", 0.0)]);
/// assert_eq!(graded.relevant().count(), 2, "grade 0: judged not relevant");
/// assert!(graded.is_graded());
///
/// let json: RelevantIds = serde_json::from_str(r#"{"policy-12": 3, "faq-3": 1}"#).unwrap();
/// assert_eq!(json, RelevantIds::graded([("policy-12", 3.0), ("faq-3", 1.0)]));
/// assert_eq!(serde_json::to_string(&plain).unwrap(), r#"["policy-12","faq-3"]"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RelevantIds {
    ids: Vec<(String, f64)>,
}

impl RelevantIds {
    /// IDs that are all equally relevant (grade 1 each).
    #[must_use]
    pub fn from_ids<I, S>(ids: I) -> RelevantIds
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        RelevantIds {
            ids: ids.into_iter().map(|id| (id.into(), 1.0)).collect(),
        }
    }

    /// IDs with a grade each (graded relevance). Grades are checked by
    /// [`RagCase::validate`](crate::RagCase::validate): finite, 0 or more.
    #[must_use]
    pub fn graded<I, S>(grades: I) -> RelevantIds
    where
        I: IntoIterator<Item = (S, f64)>,
        S: Into<String>,
    {
        RelevantIds {
            ids: grades.into_iter().map(|(id, g)| (id.into(), g)).collect(),
        }
    }

    /// Whether no ID is labelled at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How many IDs are labelled (relevant or not).
    #[must_use]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Every labelled ID with its grade, in the order labelled.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.ids.iter().map(|(id, g)| (id.as_str(), *g))
    }

    /// The IDs that count as relevant (grade above 0), with their grades.
    pub fn relevant(&self) -> impl Iterator<Item = (&str, f64)> {
        self.iter().filter(|(_, g)| *g > 0.0)
    }

    /// The grade of `id` (its surrounding whitespace ignored), when it is
    /// labelled.
    #[must_use]
    pub fn grade(&self, id: &str) -> Option<f64> {
        let id = id.trim();
        self.ids
            .iter()
            .find(|(labelled, _)| labelled.trim() == id)
            .map(|(_, g)| *g)
    }

    /// Whether any grade is other than 1 (the labels are graded, not a list).
    #[must_use]
    pub fn is_graded(&self) -> bool {
        self.ids.iter().any(|(_, g)| *g != 1.0)
    }

    /// The first problem with the labels, for [`RagCase::validate`]: a
    /// blank ID, an ID labelled twice, a grade that is negative or not a
    /// number.
    ///
    /// [`RagCase::validate`]: crate::RagCase::validate
    pub(crate) fn problem(&self) -> Option<String> {
        for (i, (id, grade)) in self.ids.iter().enumerate() {
            if id.trim().is_empty() {
                return Some(format!("relevant ID {} is empty", i + 1));
            }
            if !grade.is_finite() || *grade < 0.0 {
                return Some(format!(
                    "relevant ID `{}` has grade {grade}; a grade is a number, 0 (not relevant) or more",
                    id.trim()
                ));
            }
            if let Some(first) = self.ids[..i]
                .iter()
                .position(|(other, _)| other.trim() == id.trim())
            {
                return Some(format!(
                    "relevant ID `{}` is labelled twice (entries {} and {})",
                    id.trim(),
                    first + 1,
                    i + 1
                ));
            }
        }
        None
    }
}

impl Serialize for RelevantIds {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.is_graded() {
            let mut map = s.serialize_map(Some(self.ids.len()))?;
            for (id, grade) in &self.ids {
                map.serialize_entry(id, grade)?;
            }
            map.end()
        } else {
            let mut seq = s.serialize_seq(Some(self.ids.len()))?;
            for (id, _) in &self.ids {
                seq.serialize_element(id)?;
            }
            seq.end()
        }
    }
}

impl<'de> Deserialize<'de> for RelevantIds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LabelsVisitor)
    }
}

struct LabelsVisitor;

impl<'de> Visitor<'de> for LabelsVisitor {
    type Value = RelevantIds;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of relevant IDs, or a map of IDs to grades (numbers, 0 or more)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut ids = Vec::new();
        while let Some(id) = seq.next_element::<Id>()? {
            ids.push((id.0, 1.0));
        }
        Ok(RelevantIds { ids })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut ids: Vec<(String, f64)> = Vec::new();
        while let Some((id, grade)) = map.next_entry::<Id, f64>()? {
            if ids.iter().any(|(other, _)| *other == id.0) {
                return Err(de::Error::custom(format!(
                    "relevant ID `{}` is graded twice",
                    id.0
                )));
            }
            ids.push((id.0, grade));
        }
        Ok(RelevantIds { ids })
    }
}

/// An ID as a case file writes it, read as text: in YAML any scalar,
/// verbatim (`y`, `007` and `42` stay `y`, `007` and `42`, never a boolean
/// or a number); in JSON a string (a number there must be quoted, `"42"`,
/// since JSON keeps no spelling of it).
struct Id(String);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an ID as text (in JSON, quote a number: \"42\")")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Id, E> {
                Ok(Id(v))
            }
        }
        d.deserialize_string(IdVisitor)
    }
}

/// Retrieved IDs as a case file writes them (see [`Id`]).
pub(crate) fn ids<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    let ids: Option<Vec<Id>> = Option::deserialize(d)?;
    Ok(ids.map(|ids| ids.into_iter().map(|id| id.0).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_maps_and_numbers_read_alike() {
        let list: RelevantIds = serde_json::from_str(r#"["a", "7"]"#).unwrap();
        assert_eq!(list, RelevantIds::from_ids(["a", "7"]));
        let e = serde_json::from_str::<RelevantIds>(r#"["a", 7]"#).unwrap_err();
        assert!(e.to_string().contains(r#"quote a number: "42""#), "{e}");
        // YAML keeps every ID as written: no boolean `y`, no number `007`.
        let yaml: RelevantIds = serde_saphyr::from_str("[y, no, 007, 42, true]").unwrap();
        assert_eq!(
            yaml,
            RelevantIds::from_ids(["y", "no", "007", "42", "true"])
        );
        let graded: RelevantIds = serde_saphyr::from_str("{y: 2, 007: 1}").unwrap();
        assert_eq!(graded, RelevantIds::graded([("y", 2.0), ("007", 1.0)]));
        let map: RelevantIds = serde_json::from_str(r#"{"a": 2, "b": 0.5}"#).unwrap();
        assert_eq!(map, RelevantIds::graded([("a", 2.0), ("b", 0.5)]));
        let err = serde_json::from_str::<RelevantIds>(r#""a""#).unwrap_err();
        assert!(err.to_string().contains("a list of relevant IDs"), "{err}");
    }

    #[test]
    fn problems_name_the_entry() {
        let twice = RelevantIds::from_ids(["a", "b", " a "]);
        assert_eq!(
            twice.problem().as_deref(),
            Some("relevant ID `a` is labelled twice (entries 1 and 3)")
        );
        let negative = RelevantIds::graded([("a", -1.0)]);
        assert!(negative.problem().unwrap().contains("grade -1"));
        assert!(
            RelevantIds::graded([("a", f64::NAN)])
                .problem()
                .unwrap()
                .contains("grade NaN")
        );
        assert_eq!(
            RelevantIds::from_ids(["a", "  "]).problem().as_deref(),
            Some("relevant ID 2 is empty")
        );
        assert_eq!(RelevantIds::graded([("a", 0.0)]).problem(), None);
    }

    #[test]
    fn a_graded_map_round_trips_and_a_plain_list_stays_a_list() {
        let graded = RelevantIds::graded([("b", 2.0), ("a", 1.0)]);
        let json = serde_json::to_string(&graded).unwrap();
        assert_eq!(json, r#"{"b":2.0,"a":1.0}"#, "labelled order kept");
        assert_eq!(serde_json::from_str::<RelevantIds>(&json).unwrap(), graded);
    }
}
