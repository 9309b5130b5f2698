#!/usr/bin/env bash
# Compile cost of ragaliq as a test harness:
#   1. cold build of `ragaliq` with default features, in a fresh target folder;
#   2. incremental rebuild of a test file holding 20 `#[rag_test]` functions
#      after editing one of them.
# The test file is generated in tests/ and removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
cold_dir=$(mktemp -d)
start=$(date +%s.%N)
CARGO_TARGET_DIR="$cold_dir" cargo build -q -p ragaliq
end=$(date +%s.%N)
echo "cold build of ragaliq (debug, default features): $(echo "$end - $start" | bc) s"
rm -rf "$cold_dir"

file=tests/zz_compile_bench.rs
trap 'rm -f "$file"' EXIT
gen() {
  echo "use ragaliq::prelude::*;"
  for i in $(seq 1 20); do
    cat <<RS
#[rag_test(mode = "live")]
async fn case_$i(judge: Judge) {
    let case = RagCase::new("What is rule $i$1?").context(["Rule $i applies."]).response("Rule $i applies.");
    let _ = judge.relevance(&case).await;
}
RS
  done
}
gen "" > "$file"
cargo build -q --tests --test zz_compile_bench
start=$(date +%s.%N)
gen " (edited)" > "$file"
cargo build -q --tests --test zz_compile_bench
end=$(date +%s.%N)
echo "incremental rebuild of a 20-#[rag_test] file after an edit: $(echo "$end - $start" | bc) s"
