//! `bench retrieval N DIR`: retrieval measured against labels for N cases,
//! as a ratio to reading their case file.
//!
//! Two seeded sets of N cases, written as JSON Lines case files: IDs (ten
//! retrieved of 5,000 documents, one to four relevant, a third graded, one
//! case in ten with a repeat) and passages without IDs (ten passages of
//! about 25 words, one or two relevant passages labelled in other case and
//! punctuation, matched by normalised text). For each: the suite's own
//! loader reads the file (parsing and checking every case), then six
//! measures are computed for every case (`Ranking::of` and each score),
//! then the same six as evaluations with their messages and details (what
//! each suite trial keeps).

use ragaliq::RagCase;
use ragaliq::harness::cases::load_file;
use ragaliq::retrieval::{self, Ranking, RetrievalMetric};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// xorshift64*, seeded per case.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(0x9E37_79B9_7F4A_7C15 ^ seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: [&str; 16] = [
    "refund", "order", "delivery", "within", "days", "receipt", "store", "warranty", "the", "of",
    "is", "returns", "card", "account", "shipping", "free",
];

fn ids_case(i: usize) -> RagCase {
    let mut rng = Rng::new(i as u64);
    let mut retrieved: Vec<String> = (0..10)
        .map(|_| format!("doc-{}", rng.below(5000)))
        .collect();
    if i.is_multiple_of(10) {
        retrieved[7] = retrieved[2].clone();
    }
    let relevant: Vec<String> = (0..1 + rng.below(4))
        .map(|j| {
            if rng.below(2) == 0 {
                retrieved[rng.below(10)].clone()
            } else {
                format!("doc-{}", 5000 + i * 4 + j)
            }
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let case = RagCase::new(format!("Question {i}?"))
        .id(format!("ids-{i}"))
        .retrieved_ids(retrieved);
    if i.is_multiple_of(3) {
        case.graded_relevance(relevant.into_iter().map(|r| (r, 1.0 + rng.below(3) as f64)))
    } else {
        case.relevant_ids(relevant)
    }
}

fn text_case(i: usize) -> RagCase {
    let mut rng = Rng::new(i as u64 ^ 0xABCD);
    let passages: Vec<String> = (0..10)
        .map(|p| {
            let words: Vec<&str> = (0..20 + rng.below(10))
                .map(|_| WORDS[rng.below(WORDS.len())])
                .collect();
            format!("Passage {p} of case {i}: {}.", words.join(" "))
        })
        .collect();
    // Labelled as a person would paste them: other case, no punctuation.
    let relevant: Vec<String> = (0..1 + rng.below(2))
        .map(|k| {
            passages[(i + k * 3) % 10]
                .to_uppercase()
                .replace([':', '.'], " ")
        })
        .collect();
    RagCase::new(format!("Question {i}?"))
        .id(format!("text-{i}"))
        .context(passages)
        .relevant_passages(relevant)
}

fn write(dir: &Path, name: &str, cases: impl Iterator<Item = RagCase>) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    let text: String = cases
        .map(|c| serde_json::to_string(&c).unwrap() + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn metrics() -> [RetrievalMetric; 6] {
    [
        retrieval::hit_rate_at(10),
        retrieval::recall_at(10),
        retrieval::precision_at(10),
        retrieval::mrr(),
        retrieval::average_precision(),
        retrieval::ndcg_at(10),
    ]
}

pub fn run(n: usize, dir: &Path) {
    let sets = [
        (
            "IDs",
            write(dir, "retrieval-ids.jsonl", (0..n).map(ids_case)),
        ),
        (
            "passages by text",
            write(dir, "retrieval-text.jsonl", (0..n).map(text_case)),
        ),
    ];
    let metrics = metrics();
    for (name, path) in sets {
        let bytes = std::fs::metadata(&path).unwrap().len();
        let started = Instant::now();
        let cases = load_file(&path).expect("the benchmark's case file");
        let read = started.elapsed().as_secs_f64();
        assert_eq!(cases.len(), n);

        let started = Instant::now();
        let mut sum = 0.0;
        for c in &cases {
            let ranking = Ranking::of(&c.case).expect("labelled");
            for m in &metrics {
                sum += m.score(&ranking);
            }
        }
        let computed = started.elapsed().as_secs_f64();

        let started = Instant::now();
        let mut evaluated = 0.0;
        for c in &cases {
            for m in &metrics {
                evaluated += m.evaluate(&c.case).expect("labelled").score;
            }
        }
        let with_messages = started.elapsed().as_secs_f64();
        assert!(
            (sum - evaluated).abs() < 1e-6 * n as f64,
            "the same scores both ways"
        );
        println!(
            "retrieval {n} cases, {name} ({:.1} MB): read the case file {read:.3} s; 6 measures for every case {computed:.3} s ({:.2}x reading, {:.2} µs per case); as evaluations with messages {with_messages:.3} s ({:.2}x reading); mean score {:.4}",
            bytes as f64 / 1e6,
            computed / read,
            computed * 1e6 / n as f64,
            with_messages / read,
            sum / (6 * n) as f64
        );
    }
}
