#!/usr/bin/env bash
# Chaos: recordings, reports and runs survive test processes killed at any
# moment. A throwaway crate (12 `#[rag_test]`s and a suite of 8 cases x 3
# metrics, ragaliq from this workspace) is recorded with `cargo nextest run`
# against the scripted judge (30 ms latency per answer) while a helper
# `kill -9`s random test processes, round after round, until KILLS kills.
# Then:
#   1. every recording and pending recording reads back (`cargo ragaliq status`);
#   2. every test that finished in some round replays its exchanges with the
#      judge gone (pending recordings accepted, `CI=true`): nothing a finished
#      process paid for was lost;
#   3. a clean run in auto mode completes (no run is blocked by what the
#      kills left), and its combined report counts every suite trial once;
#   4. no temporary file is left beside a recording.
#
#   scripts/chaos-check.sh [KILLS] [--keep DIR]      (default 50 kills)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kills_wanted=${1:-50}
keep=""
[ "${2:-}" = "--keep" ] && keep="$3"
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "chaos-check: cargo-nextest is not installed; skipped"
  exit 0
fi
work=${keep:-$(mktemp -d)}
rm -rf "$work"; mkdir -p "$work/tests/cases" "$work/src"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
# Recording happens off CI (on CI insta and ragaliq write nothing); the
# replays below set CI=true themselves.
unset CI TF_BUILD RAGALIQ_MODE RAGALIQ_REPORT_DIR RAGALIQ_RUN_ID GITHUB_STEP_SUMMARY
judge_pid=""
cleanup() {
  [ -n "$judge_pid" ] && kill "$judge_pid" 2>/dev/null || true
  [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT

# The binaries as `cargo test --workspace` builds them, never `-p` (why: .ci/run).
cargo build -q --workspace --bins --examples
ragaliq_bin="$CARGO_TARGET_DIR/debug/cargo-ragaliq"
start_judge() { # latency-ms
  [ -n "$judge_pid" ] && kill "$judge_pid" 2>/dev/null || true
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$CARGO_TARGET_DIR/debug/scripted-judge" "$port" --latency-ms "$1" >"$work/judge.log" 2>&1 &
  judge_pid=$!
  for _ in $(seq 50); do grep -q "scripted judge on" "$work/judge.log" 2>/dev/null && break; sleep 0.1; done
  printf '[judge]\nprovider = "openai-compatible"\nmodel = "scripted"\nbase_url = "http://127.0.0.1:%s/v1"\nconcurrency = 4\n\n# A rule, not a model: read at the thresholds.\n[bands]\nclaims = "off"\nanswers = "off"\npassages = "off"\ngraded = "off"\njudged = "off"\ncustom = "off"\n' "$port" >"$work/ragaliq.toml"
}

cat >"$work/Cargo.toml" <<TOML
[package]
name = "chaos"
version = "0.1.0"
edition = "2024"
publish = false

[dev-dependencies]
ragaliq = { path = "$root/ragaliq", features = ["suite"] }

[[test]]
name = "suite"
harness = false
TOML
cp "$root/Cargo.lock" "$work/Cargo.lock"
echo "//! A crate under test." >"$work/src/lib.rs"
{
  echo "use ragaliq::prelude::*;"
  for i in $(seq 12); do
    cat <<RS
#[rag_test]
async fn answer_$i(judge: Judge) {
    let case = RagCase::new("What is refund rule $i?")
        .context(["Refund rule $i allows returns within $i weeks."])
        .response("Refund rule $i allows returns within $i weeks.");
    assert_faithful!(judge, case);
    assert_relevant!(judge, case);
}
RS
  done
} >"$work/tests/rag.rs"
cat >"$work/tests/suite.rs" <<'RS'
fn main() -> std::process::ExitCode {
    ragaliq::suite("tests/cases")
        .metrics([ragaliq::Metric::Faithfulness, ragaliq::Metric::Hallucination, ragaliq::Metric::Relevance])
        .run()
}
RS
for i in $(seq 8); do
  printf -- '- id: case-%s\n  query: What is shipping rule %s?\n  context: ["Shipping rule %s delivers in %s days."]\n  response: Shipping rule %s delivers in %s days.\n' "$i" "$i" "$i" "$i" "$i" "$i"
done >"$work/tests/cases/cases.yaml"

cd "$work"
cargo nextest run --no-run >/dev/null 2>&1 || cargo nextest run --no-run
# The two test binaries, for the replays below (run once each, not one
# cargo call per test: a cargo call costs half a second here).
test_bin() {
  cargo test --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for m in map(json.loads, sys.stdin):
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])
' "$1"
}
rag_test=$(test_bin rag); suite_test=$(test_bin suite)
[ -x "$rag_test" ] && [ -x "$suite_test" ] || { echo "chaos-check: test binaries not found"; exit 1; }

# The helper: kills a random running test process of this crate every
# 80-400 ms, until told to stop; writes each kill to kills.log.
killer() {
  while [ ! -f "$work/stop-killing" ]; do
    sleep "0.$(( (RANDOM % 33) + 8 ))"
    victim=$(pgrep -f "$CARGO_TARGET_DIR/debug/deps/(rag|suite)-[0-9a-f]+ " | shuf -n 1 || true)
    if [ -n "$victim" ] && kill -9 "$victim" 2>/dev/null; then
      echo "$victim" >>"$work/kills.log"
    fi
  done
}

start_judge 30
: >"$work/kills.log"; : >"$work/finished.txt"
round=0
started=$(date +%s)
while [ "$(wc -l <"$work/kills.log")" -lt "$kills_wanted" ] && [ "$round" -lt 12 ]; do
  round=$((round + 1))
  rm -f "$work/stop-killing"
  killer & killer_pid=$!
  # A round may not hang: a blocked run is a failure of its own.
  set +e
  timeout 180 cargo nextest run --no-fail-fast --retries 0 --test-threads 8 \
    >"$work/round-$round.log" 2>&1
  status=$?
  set -e
  touch "$work/stop-killing"; wait "$killer_pid" 2>/dev/null || true
  if [ "$status" = 124 ]; then
    echo "chaos-check: round $round did not finish in 180 s: a run is blocked"; tail -20 "$work/round-$round.log"; exit 1
  fi
  # Tests whose process ended on its own (passed, or failed as awaiting
  # review), as opposed to killed: their exchanges must all be kept.
  grep -E '^\s+(PASS|FAIL) \[' "$work/round-$round.log" \
    | sed -E 's/.*\] +(\([^)]*\) +)?chaos::([a-z]+) +(.*)$/\2 \3/' >>"$work/finished.txt" || true
  echo "round $round: exit $status, $(wc -l <"$work/kills.log") kills so far"
done
sort -u -o "$work/finished.txt" "$work/finished.txt"
kills=$(wc -l <"$work/kills.log")
echo "chaos: $round rounds, $kills processes killed, $(wc -l <"$work/finished.txt") tests finished at least once, $(( $(date +%s) - started )) s"

# 1. Every recording reads back.
"$ragaliq_bin" ragaliq status tests >"$work/status.log" 2>&1 || true
if ! grep -q "^unreadable (0)" "$work/status.log"; then
  echo "chaos-check: unreadable recordings:"; cat "$work/status.log"; exit 1
fi
unreadable=0
echo "1. 0 unreadable recordings ($(find tests -name '*.snap*' | wc -l) recording files)"

# 2. What finished processes recorded is all there: accept the pending
# recordings, point the judge at a closed port, and replay those tests.
if cargo insta --version >/dev/null 2>&1; then cargo insta accept >/dev/null 2>&1; else
  find tests -name '*.snap.new' | while read -r f; do mv "$f" "${f%.new}"; done
fi
printf '[judge]\nprovider = "openai-compatible"\nmodel = "scripted"\nbase_url = "http://127.0.0.1:9/v1"\n[bands]\nclaims = "off"\nanswers = "off"\npassages = "off"\ngraded = "off"\njudged = "off"\ncustom = "off"\n' >"$work/ragaliq.toml"
rag_finished=$(sed -n 's/^rag //p' "$work/finished.txt")
suite_finished=$(sed -n 's/^suite //p' "$work/finished.txt")
# The test names a replay passed, one a line (libtest's `test NAME ... ok`,
# libtest-mimic's with the name padded).
passed() { sed -nE 's/^test ([^ ]+) +\.\.\. ok$/\1/p' "$1"; }
set +e
# shellcheck disable=SC2086
CI=true "$rag_test" --exact $rag_finished >"$work/replay-rag.log" 2>&1
CI=true "$suite_test" >"$work/replay-suite.log" 2>&1
set -e
missing=0
for t in $rag_finished; do
  passed "$work/replay-rag.log" | grep -qxF "$t" || { echo "lost: rag::$t"; missing=$((missing + 1)); }
done
for t in $suite_finished; do
  passed "$work/replay-suite.log" | grep -qxF "$t" || { echo "lost: suite::$t"; missing=$((missing + 1)); }
done
if [ "$missing" != 0 ]; then
  tail -n 30 "$work/replay-rag.log" "$work/replay-suite.log"
  echo "chaos-check: exchanges of finished processes were lost"; exit 1
fi
echo "2. every exchange of a process that finished is present: $(echo $rag_finished $suite_finished | wc -w) tests replay with no judge"

# 3. A clean run in auto mode: not blocked, every trial counted once.
start_judge 0
timeout 300 cargo nextest run --no-fail-fast --retries 0 --test-threads 8 \
  >"$work/clean.log" 2>&1 || true
if cargo insta --version >/dev/null 2>&1; then cargo insta accept >/dev/null 2>&1; else
  find tests -name '*.snap.new' | while read -r f; do mv "$f" "${f%.new}"; done
fi
RAGALIQ_REPORT_DIR="$work/report" CI=true timeout 300 cargo nextest run --retries 0 \
  >"$work/replay-all.log" 2>&1 || { echo "chaos-check: the clean replay failed"; tail -30 "$work/replay-all.log"; exit 1; }
python3 - "$work/report/report.json" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
keys = collections.Counter((t["case"], t["metric"]) for t in r["results"])
assert len(keys) == 24 and set(keys.values()) == {1}, keys
assert r["summary"]["trials"] == 24 and r["summary"]["passed"] == 24, r["summary"]
print(f"3. the clean run is not blocked; its report counts {len(keys)} trials, each once, all passed")
PY

# 4. No temporary file left beside a recording.
left=$(find tests -name '*.tmp' -o -name '*.ragaliq-tmp' | wc -l)
[ "$left" = 0 ] || { echo "chaos-check: $left temporary files left"; find tests -name '*tmp'; exit 1; }
echo "4. no temporary file left in the source tree"
echo "chaos-check: passed ($kills kills over $round rounds, $unreadable unreadable recordings, 0 exchanges lost)"
