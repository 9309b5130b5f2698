#!/usr/bin/env bash
# Re-records every recording this repository makes against the scripted
# judge (ragaliq-scripted): the tests' and examples' recordings and the
# labelled claims' `scripted`, `flipping` and `flipping-x5` judges. Run it
# after a change to a prompt template, a schema or the scripted rule; it
# leaves `.snap.new` files for `cargo insta review` (or `--accept` to take
# them all, for a change whose effect you have already read in the diffs).
#
#   scripts/rerecord-scripted.sh [--accept]
#
# Real models' recordings (the labelled sets' snapshots/qwen*, and the
# quickstart's examples/recordings/quickstart.snap, made with the 1.5B) are
# not touched: those need the realjudge kit (see tests/labelled_claims/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

accept=false
[[ "${1:-}" == "--accept" ]] && accept=true

export CARGO_TERM_COLOR=never
cargo build -q -p ragaliq-scripted --bin scripted-judge
judge=target/debug/scripted-judge

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
# Ports as ragaliq.toml, tests/voting.rs and the labelled claims' judge files say.
$judge 8787 >/dev/null 2>&1 & pids+=($!)
$judge 8788 --flip 0.2 --seed 7 >/dev/null 2>&1 & pids+=($!)
for port in 8787 8788; do
  for _ in $(seq 50); do
    (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
    sleep 0.1
  done
done

unset CI RAGALIQ_JUDGE RAGALIQ_MODEL RAGALIQ_PROVIDER
export RAGALIQ_MODE=record
# A test whose recording changed fails, as insta does: that is expected here.
RAGALIQ_BASE_URL=http://127.0.0.1:8787/v1 cargo test -q -p ragaliq-tests \
  --test rag --test rag_suite --test recorded --no-fail-fast >/dev/null 2>&1 || true
RAGALIQ_BASE_URL=http://127.0.0.1:8788/v1 cargo test -q -p ragaliq-tests \
  --test voting >/dev/null 2>&1 || true
cargo run -q -p cargo-ragaliq -- ragaliq calibrate tests/labelled_claims \
  --judge scripted=tests/labelled_claims/judges/scripted.toml \
  --judge flipping=tests/labelled_claims/judges/flipping.toml \
  --judge flipping-x5=tests/labelled_claims/judges/flipping-x5.toml >/dev/null 2>&1 || true

pending=$(find . -name '*.snap.new' -not -path './target/*' | sort)
if [[ -z "$pending" ]]; then
  echo "rerecord: every recording is unchanged"
  exit 0
fi
echo "rerecord: $(wc -l <<<"$pending") recordings changed:"
sed 's/^/  /' <<<"$pending"
if $accept; then
  cargo insta accept >/dev/null
  echo "rerecord: accepted"
else
  echo "rerecord: review them with \`cargo insta review\`"
fi
