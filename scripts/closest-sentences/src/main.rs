//! Reads JSON lines `{"id", "claim", "passages"}` on stdin; writes for each
//! `{"id", "sentence", "overlap"}`: the passage sentence ragaliq finds
//! closest to the claim (`null` when none shares a content word with it),
//! and the share of the claim's content words the passages hold.

use std::io::{BufRead, Write};

fn main() {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.expect("stdin is read");
        let item: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("line {}: not JSON: {e}", n + 1));
        let claim = item["claim"].as_str().unwrap_or_default();
        let passages: Vec<String> = item["passages"]
            .as_array()
            .map(|ps| ps.iter().filter_map(|p| p.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        let sentence = ragaliq::evidence::closest_sentence(claim, &passages)
            .map(|found| passages[found.passage][found.span].to_owned());
        let overlap = ragaliq::evidence::question_words_in(claim, &passages.join("\n"));
        let row = serde_json::json!({"id": item["id"], "sentence": sentence, "overlap": overlap});
        writeln!(out, "{row}").expect("stdout is written");
    }
}
