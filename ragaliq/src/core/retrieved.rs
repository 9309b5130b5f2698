//! What a retrieval metric saw ([`Retrieved`]): each relevant label and the
//! rank it came at, the top of the list, repeats. Carried by an
//! [`Evaluation`](crate::Evaluation) so that a failure message and every
//! report can say which relevant IDs were missed and where they came.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How a case's relevant labels were matched to what was retrieved.
///
/// ```
/// use ragaliq::{MatchedBy, RagCase};
/// let case = RagCase::new("q").context(["Refunds: 30 days."]).relevant_passages(["refunds 30 days"]);
/// let seen = ragaliq::retrieval::mrr().evaluate(&case).unwrap().retrieval.unwrap();
/// assert_eq!(seen.matched_by, MatchedBy::Text);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MatchedBy {
    /// `relevant_ids` against `retrieved_ids`: the same ID, surrounding
    /// whitespace aside (case matters).
    Ids,
    /// `relevant_passages` against the context: the same words, in the
    /// same order, case, punctuation and spacing aside.
    Text,
}

/// A retrieval metric's view of one case.
///
/// ```
/// use ragaliq::{RagCase, retrieval};
/// let case = RagCase::new("q").retrieved_ids(["a", "x", "a", "b"]).relevant_ids(["b", "c", "a"]);
/// let eval = retrieval::recall_at(3).evaluate(&case).unwrap();
/// let seen = eval.retrieval.unwrap();
/// assert_eq!(seen.relevant.iter().map(|r| r.rank).collect::<Vec<_>>(), [Some(4), None, Some(1)]);
/// assert_eq!(seen.repeats[0].first, 1, "`a` again at rank 3 repeats rank 1");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Retrieved {
    /// The metric's cutoff (`recall@5`: 5); `None` for the whole list.
    pub k: Option<usize>,
    /// How many places the retriever returned (repeats included).
    pub listed: usize,
    /// How the labels were matched.
    pub matched_by: MatchedBy,
    /// Every relevant label (grade above 0), in the order labelled, with
    /// the rank where it first came.
    pub relevant: Vec<RelevantAt>,
    /// The top of the list: the places within the cutoff (the whole list
    /// without one), at most [`Retrieved::TOP`].
    pub top: Vec<Place>,
    /// Places holding an ID (or passage) already retrieved higher up: each
    /// takes its place and earns nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<Repeat>,
}

/// A relevant label and where it came.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RelevantAt {
    /// The ID, or the relevant passage's text (matched by text).
    pub id: String,
    /// Its grade (1 unless graded).
    pub grade: f64,
    /// The rank (from 1) it first came at; `None` when it was not retrieved.
    pub rank: Option<usize>,
}

/// One place of the retrieved list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Place {
    /// Its rank, from 1.
    pub rank: usize,
    /// The ID there (matched by text: `passage N`, the context's N-th).
    pub id: String,
    /// The grade it earned: its label's grade at its first place, 0 when
    /// it is not relevant or a repeat.
    pub grade: f64,
    /// For a repeat, the rank of the same ID's first place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_of: Option<usize>,
}

/// An ID retrieved again lower down.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Repeat {
    /// The ID (or `passage N`).
    pub id: String,
    /// The rank it came at again.
    pub rank: usize,
    /// The rank it first came at.
    pub first: usize,
}

impl Retrieved {
    /// The most places [`top`](Self::top) keeps: reports stay small for
    /// long lists.
    pub const TOP: usize = 50;

    /// Whether `rank` is within the cutoff.
    #[must_use]
    pub fn within(&self, rank: usize) -> bool {
        self.k.is_none_or(|k| rank <= k)
    }

    /// `the top 5`, or `the 7 retrieved` without a cutoff.
    pub(crate) fn scope(&self) -> String {
        match self.k {
            Some(k) => format!("the top {k}"),
            None => format!("the {} retrieved", self.listed),
        }
    }

    fn noun(&self) -> &'static str {
        match self.matched_by {
            MatchedBy::Ids => "ID",
            MatchedBy::Text => "passage",
        }
    }

    /// A relevant label as messages name it: its ID, or its passage
    /// quoted and cut to a line.
    pub(crate) fn name(&self, r: &RelevantAt) -> String {
        match self.matched_by {
            MatchedBy::Ids => short(&r.id),
            MatchedBy::Text => format!("\"{}\"", short(&r.id)),
        }
    }

    /// The relevant labels by the rank they came at, those not retrieved
    /// last (in the order labelled).
    pub(crate) fn by_rank(&self) -> Vec<&RelevantAt> {
        let mut by_rank: Vec<&RelevantAt> = self.relevant.iter().collect();
        by_rank.sort_by_key(|r| r.rank.unwrap_or(usize::MAX));
        by_rank
    }

    /// The lines an evaluation's message adds: what was found and where,
    /// what was missed and where it came, repeats, and the top of the list.
    pub(crate) fn lines(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let graded = self.relevant.iter().any(|r| r.grade != 1.0);
        let name = |r: &RelevantAt| {
            let id = self.name(r);
            if graded {
                format!("{id} (grade {})", r.grade)
            } else {
                id
            }
        };
        let by_rank = self.by_rank();
        let found: Vec<String> = by_rank
            .iter()
            .filter_map(|r| {
                r.rank
                    .filter(|rank| self.within(*rank))
                    .map(|rank| format!("{} at rank {rank}", name(r)))
            })
            .collect();
        let missed: Vec<String> = by_rank
            .iter()
            .filter_map(|r| match r.rank {
                Some(rank) if self.within(rank) => None,
                Some(rank) => Some(format!(
                    "{} at rank {rank}, below {}",
                    name(r),
                    self.scope()
                )),
                None => Some(format!("{} not retrieved", name(r))),
            })
            .collect();
        let noun = self.noun();
        if !found.is_empty() {
            writeln!(f, "  relevant {noun}s found: {}", found.join("; "))?;
        }
        if !missed.is_empty() {
            writeln!(
                f,
                "  relevant {noun}s missed ({} of {}): {}",
                missed.len(),
                self.relevant.len(),
                missed.join("; ")
            )?;
        }
        if !self.repeats.is_empty() {
            let repeats: Vec<String> = self
                .repeats
                .iter()
                .map(|r| {
                    format!(
                        "{} again at rank {} (counted once, at rank {})",
                        short(&r.id),
                        r.rank,
                        r.first
                    )
                })
                .collect();
            writeln!(f, "  repeated: {}", repeats.join("; "))?;
        }
        const SHOWN: usize = 10;
        let shown: Vec<String> = self
            .top
            .iter()
            .take(SHOWN)
            .map(|p| {
                let mark = match (p.repeat_of, p.grade > 0.0) {
                    (Some(first), _) => format!(" (repeats rank {first})"),
                    (None, true) if graded => format!(" ✓ {}", p.grade),
                    (None, true) => " ✓".to_owned(),
                    (None, false) => String::new(),
                };
                format!("{} {}{mark}", p.rank, short(&p.id))
            })
            .collect();
        let more = match self.top.len().saturating_sub(SHOWN) {
            0 => String::new(),
            n => format!(" · … {n} more"),
        };
        if shown.is_empty() {
            writeln!(f, "  retrieved: nothing")?;
        } else {
            writeln!(
                f,
                "  {} (✓ relevant): {}{more}",
                match self.k {
                    Some(k) if k < self.listed => format!("top {k} of {} retrieved", self.listed),
                    _ => format!("all {} retrieved", self.listed),
                },
                shown.join(" · ")
            )?;
        }
        Ok(())
    }
}

/// The lines a failure message shows: relevant labels found and missed
/// with their ranks, repeats, and the top of the list, each line indented
/// by two spaces.
///
/// ```
/// use ragaliq::RagCase;
/// let case = RagCase::new("q").retrieved_ids(["x", "a"]).relevant_ids(["a", "b"]);
/// let seen = ragaliq::retrieval::recall_at(1).evaluate(&case).unwrap().retrieval.unwrap();
/// assert_eq!(
///     seen.to_string(),
///     "  relevant IDs missed (2 of 2): a at rank 2, below the top 1; b not retrieved\n  top 1 of 2 retrieved (✓ relevant): 1 x\n"
/// );
/// ```
impl fmt::Display for Retrieved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.lines(f)
    }
}

/// An ID as messages show it: a passage's text on one line, cut to 60
/// characters.
fn short(id: &str) -> String {
    const MAX: usize = 60;
    let one_line = id.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= MAX {
        return one_line;
    }
    let cut: String = one_line.chars().take(MAX - 1).collect();
    format!("{cut}…")
}
