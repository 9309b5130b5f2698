#!/usr/bin/env bash
# Gates on a whole run, checked the way the guide's CI recipe runs them
# (docs/guide/suites-and-reports.md): a throwaway crate with ragaliq (from
# this workspace) as a dev-dependency and a suite of 50 labelled retrieval
# cases (two relevant IDs each; no judge, no recording), run by
# `cargo nextest run --partition count:k/3` into three report folders, then
# `cargo ragaliq report` over the three with the crate's `[gates]`.
#
#   1. Baseline: every case retrieves both relevant IDs within its top 3
#      (mean recall@3 1.0). Three shards pass; combined, exit 0.
#   2. Five cases lose one relevant ID each: the mean falls 0.05. With
#      `max_drop = { "recall@3" = 0.04 }` against the baseline, the combined
#      report exits 1 and names the gate, the figure and the five cases.
#   3. The same run with `max_drop = 0.05`: exit 0 (a fall of 0.05 is
#      allowed).
#   4. A pass-rate gate in the crate's ragaliq.toml: each shard's low scores
#      are allowed (the shards pass under nextest), 90% passes combined, and
#      95% fails naming the five.
#
#   scripts/gates-check.sh [--keep DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keep=""
[ "${1:-}" = "--keep" ] && keep="$2"
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "gates-check: cargo-nextest is not installed; skipped"
  exit 0
fi
work=${keep:-$(mktemp -d)}
rm -rf "$work"; mkdir -p "$work/tests/cases"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
cleanup() { [ -n "$keep" ] || rm -rf "$work"; }
trap cleanup EXIT

# The binaries as `cargo test --workspace` builds them, never `-p` (why: .ci/run).
cargo build -q --workspace --bins --examples
ragaliq_bin="$CARGO_TARGET_DIR/debug/cargo-ragaliq"

cat >"$work/Cargo.toml" <<TOML
[package]
name = "gates-e2e"
version = "0.1.0"
edition = "2024"
publish = false

[dev-dependencies]
ragaliq = { path = "$root/ragaliq", features = ["suite"] }

[[test]]
name = "retrieval"
harness = false
TOML
cp "$root/Cargo.lock" "$work/Cargo.lock"
mkdir -p "$work/src"; echo "//! A crate under test." >"$work/src/lib.rs"
cat >"$work/tests/retrieval.rs" <<'RS'
use ragaliq::retrieval::recall_at;
fn main() -> std::process::ExitCode {
    ragaliq::suite("tests/cases")
        .metrics([])
        .retrieval([recall_at(3).threshold(1.0)])
        .run()
}
RS
# Fifty cases; those listed in $1 retrieve their second relevant ID fourth.
write_cases() {
  local fallen=" $1 "
  for i in $(seq 1 50); do
    if [[ "$fallen" == *" $i "* ]]; then retrieved="[doc-$i, faq-1, faq-2, ref-$i]"; else retrieved="[doc-$i, ref-$i, faq-1]"; fi
    printf -- "- id: case-%02d\n  query: Question %d?\n  retrieved_ids: %s\n  relevant_ids: [doc-%d, ref-%d]\n" "$i" "$i" "$retrieved" "$i" "$i"
  done >"$work/tests/cases/cases.yaml"
}
# Three nextest shards into reports/$1/k; prints each shard's line.
shards() {
  for k in 1 2 3; do
    set +e
    CI=true RAGALIQ_REPORT_DIR="reports/$1/$k" cargo nextest run --no-fail-fast --partition "count:$k/3" >"$work/$1-$k.log" 2>&1
    local status=$?
    set -e
    echo "  shard $k: exit $status, $(grep -Eo '[0-9]+ tests? run: [0-9]+ passed[^,]*(, [0-9]+ failed)?' "$work/$1-$k.log" | tail -1)"
  done
}
combine() { # name, then extra arguments; prints the gate lines, returns the exit code
  local name=$1; shift
  set +e
  "$ragaliq_bin" ragaliq report "reports/$name/1" "reports/$name/2" "reports/$name/3" --out "reports/$name/all" "$@" >"$work/$name-combine.log" 2>&1
  local status=$?
  set -e
  grep -E "^(gate|gates:|[0-9]+ trials? failed)" "$work/$name-combine.log" | sed 's/^/  /' || true
  return $status
}

cd "$work"
unset RAGALIQ_MODE RAGALIQ_REPORT_DIR RAGALIQ_RUN_ID RAGALIQ_BASELINE GITHUB_STEP_SUMMARY
echo "[gates]" >ragaliq.toml
echo 'max_drop = { "recall@3" = 0.04 }' >>ragaliq.toml

echo "== 1. baseline: three shards, every case in its top 3"
write_cases ""
shards baseline
combine baseline || { cat "$work/baseline-combine.log"; echo "gates-check: the baseline must pass"; exit 1; }

echo "== 2. five cases lose a relevant ID: the mean falls 0.05; max_drop 0.04"
write_cases "3 9 12 40 41"
shards current
if combine current --baseline reports/baseline/all; then
  echo "gates-check: a mean that fell 0.05 passed a max_drop gate of 0.04"; exit 1
fi
grep -q "gate max_drop of recall@3 FAILED: the mean fell 0.0500 against the baseline (1.0000 → 0.9500 over the 50 cases both runs scored), more than the 0.04 allowed; fell most: case-03 1.00 → 0.50 (-0.50), case-09 1.00 → 0.50 (-0.50), case-12 1.00 → 0.50 (-0.50), case-40 1.00 → 0.50 (-0.50), case-41 1.00 → 0.50 (-0.50)" "$work/current-combine.log" \
  || { cat "$work/current-combine.log"; echo "gates-check: the gate's message"; exit 1; }

echo "== 3. the same run, max_drop 0.05"
printf '[gates]\nmax_drop = { "recall@3" = 0.05 }\n' >ragaliq-005.toml
# The five failing trials still fail (no pass-rate gate): only the gate is looked at.
combine current --baseline reports/baseline/all --config ragaliq-005.toml || true
grep -q "gate max_drop of recall@3 passed: the mean fell 0.0500" "$work/current-combine.log" \
  || { cat "$work/current-combine.log"; echo "gates-check: a fall of 0.05 is within 0.05"; exit 1; }

echo "== 4. a pass-rate gate in ragaliq.toml: the shards pass, the run is judged whole"
printf '[gates]\npass_rate = 0.9\n' >ragaliq.toml
shards rated
for k in 1 2 3; do
  grep -Eq "[0-9]+ tests? run: [0-9]+ passed" "$work/rated-$k.log" && ! grep -Eq "[0-9]+ failed" "$work/rated-$k.log" \
    || { cat "$work/rated-$k.log"; echo "gates-check: shard $k must pass: its low scores are the gate's"; exit 1; }
done
combine rated || { cat "$work/rated-combine.log"; echo "gates-check: 45 of 50 is 90%"; exit 1; }
printf '[gates]\npass_rate = 0.95\n' >ragaliq.toml
if combine rated; then echo "gates-check: 90% passed a 95% gate"; exit 1; fi
grep -q "gate pass_rate of recall@3 FAILED: 45 of 50 trials passed (90.0%), below the 95% required (at most 2 of 50 may fail); not passed: case-03 (0.50 < 1.00), case-09 (0.50 < 1.00), case-12 (0.50 < 1.00), case-40 (0.50 < 1.00), case-41 (0.50 < 1.00)" "$work/rated-combine.log" \
  || { cat "$work/rated-combine.log"; echo "gates-check: the gate's message"; exit 1; }
echo "gates-check: passed"
