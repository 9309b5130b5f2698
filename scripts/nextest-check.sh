#!/usr/bin/env bash
# The guide's CI recipe (docs/guide/suites-and-reports.md), run the way a user runs it: a throwaway crate with
# ragaliq (from this workspace) as a dev-dependency, 9 `#[rag_test]`s (one a
# `#[should_panic]` test of a bad answer) and a suite of 8 cases x 3 metrics,
# against the scripted judge on 127.0.0.1.
#
#   1. `cargo nextest run` in auto mode (one process per test) records;
#      every case recording must hold the exchanges of all its trials.
#   2. The pending recordings are accepted (`cargo insta accept`, or a rename
#      when cargo-insta is not installed).
#   3. `CI=true cargo nextest run --partition count:k/3` for k = 1..3, each
#      shard with its own report folder: every trial passes, no call is made.
#   4. `cargo ragaliq report` combines the three shards: every trial counted
#      once, exit code 0; with a broken recording the combined exit code is 1.
#   5. `cargo insta test --unreferenced=reject` passes, and rejects a
#      recording no test uses (when cargo-insta is installed).
#
#   scripts/nextest-check.sh [--keep DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keep=""
[ "${1:-}" = "--keep" ] && keep="$2"
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "nextest-check: cargo-nextest is not installed; skipped"
  exit 0
fi
work=${keep:-$(mktemp -d)}
rm -rf "$work"; mkdir -p "$work/tests/cases"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
cleanup() {
  [ -n "${judge_pid:-}" ] && kill "$judge_pid" 2>/dev/null || true
  [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT

# The binaries as `cargo test --workspace` builds them, never `-p` (why: .ci/run).
cargo build -q --workspace --bins --examples
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$CARGO_TARGET_DIR/debug/scripted-judge" "$port" >"$work/judge.log" 2>&1 &
judge_pid=$!
for _ in $(seq 50); do grep -q "scripted judge on" "$work/judge.log" 2>/dev/null && break; sleep 0.1; done
ragaliq_bin="$CARGO_TARGET_DIR/debug/cargo-ragaliq"

cat >"$work/Cargo.toml" <<TOML
[package]
name = "e2e"
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
mkdir -p "$work/src"; echo "//! A crate under test." >"$work/src/lib.rs"
cat >"$work/ragaliq.toml" <<TOML
[judge]
provider = "openai-compatible"
model = "scripted"
base_url = "http://127.0.0.1:$port/v1"

# A rule, not a model: read at the thresholds (unmeasured, its 0.92s would
# await a person; this check is of recording and replay, not of bands).
[bands]
claims = "off"
answers = "off"
passages = "off"
graded = "off"
judged = "off"
custom = "off"
TOML
{
  echo "use ragaliq::prelude::*;"
  for i in 1 2 3 4 5 6 7 8; do
    cat <<RS
#[rag_test]
async fn answer_$i(judge: Judge) {
    let case = RagCase::new("What is refund rule $i?")
        .context(["Refund rule $i allows returns within $i weeks."])
        .response("Refund rule $i allows returns within $i weeks.");
    assert_faithful!(judge, case);
    assert_no_hallucination!(judge, case);
    assert_relevant!(judge, case);
}
RS
  done
  # A bad answer that must fail: its recording is asserted all the same.
  cat <<'RS'
#[rag_test]
#[should_panic(expected = "assert_faithful! failed")]
async fn a_bad_answer_fails(judge: Judge) {
    let case = RagCase::new("What is refund rule 1?")
        .context(["Refund rule 1 allows returns within 1 weeks."])
        .response("Refunds are paid in gold coins by carrier pigeon.");
    assert_faithful!(judge, case);
}
RS
} >"$work/tests/rag.rs"
cat >"$work/tests/suite.rs" <<'RS'
use ragaliq::Metric;
fn main() -> std::process::ExitCode {
    ragaliq::suite("tests/cases")
        .metrics([Metric::Faithfulness, Metric::Hallucination, Metric::Relevance])
        .run()
}
RS
for i in 1 2 3 4 5 6 7 8; do
  cat <<YAML
- id: case-$i
  query: How long does delivery zone $i take?
  context: [Delivery zone $i takes $i business days.]
  response: Delivery zone $i takes $i business days.
YAML
done >"$work/tests/cases/cases.yaml"

cd "$work"
unset CI TF_BUILD RAGALIQ_MODE RAGALIQ_REPORT_DIR RAGALIQ_RUN_ID GITHUB_STEP_SUMMARY

echo "== 1. record under nextest (auto mode, one process per test)"
set +e
cargo nextest run --no-fail-fast >"$work/record.log" 2>&1
status=$?
set -e
pending=$(find tests -name '*.snap.new' | wc -l)
echo "nextest exit $status; $pending pending recordings"
[ "$status" -ne 0 ] || { echo "nextest-check: new recordings must fail their tests until reviewed"; exit 1; }
[ "$pending" -eq 17 ] || { echo "nextest-check: expected 17 pending recordings (9 tests, 8 cases), found $pending"; exit 1; }
python3 - <<'PY'
import glob, re, sys
for path in sorted(glob.glob("tests/cases/snapshots/*.snap.new")):
    text = open(path).read()
    tasks = re.findall(r"^- task: (\w+)", text, re.M)
    used = set(re.findall(r"^  - (faithfulness|hallucination|relevance)$", text, re.M))
    # One claim per case, supported: extracted, asked once whether the
    # passages support it (short questions, the default), and the answer
    # asked whether it answers the query; no contradiction question.
    if sorted(tasks) != ["answers_query", "claim_supported", "extract_claims"] or used != {"faithfulness", "hallucination", "relevance"}:
        sys.exit(f"nextest-check: {path} lost exchanges: tasks {tasks}, used by {sorted(used)}")
print("every case recording holds the exchanges of all three trials")
PY

echo "== 2. accept"
if cargo insta --version >/dev/null 2>&1; then
  cargo insta accept >/dev/null
else
  find tests -name '*.snap.new' | while read -r f; do mv "$f" "${f%.new}"; done
  echo "(cargo-insta not installed: accepted by renaming)"
fi

echo "== 3. replay in 3 shards (CI=true, no network needed)"
kill "$judge_pid"; judge_pid=""
for k in 1 2 3; do
  CI=true RAGALIQ_REPORT_DIR="reports/$k" cargo nextest run --partition "count:$k/3" >"$work/replay-$k.log" 2>&1 \
    || { cat "$work/replay-$k.log"; echo "nextest-check: shard $k failed"; exit 1; }
  echo "shard $k: $(grep -Eo '[0-9]+ tests? run: [0-9]+ passed[^,]*' "$work/replay-$k.log" | tail -1)"
done

echo "== 4. combine the shards"
"$ragaliq_bin" ragaliq report reports/1 reports/2 reports/3 --out reports/all >"$work/combine.log"
tail -2 "$work/combine.log"
python3 - <<'PY'
import json, sys
r = json.load(open("reports/all/report.json"))
keys = [(t["case"], t["metric"]) for t in r["results"]]
s = r["summary"]
if len(keys) != 24 or len(set(keys)) != 24 or s["passed"] != 24:
    sys.exit(f"nextest-check: combined report has {len(keys)} results, {len(set(keys))} distinct, {s['passed']} passed")
print(f"combined: {s['trials']} trials, each once, {s['passed']} passed; {s['usage']['calls']} calls, {s['usage']['replayed']} replayed; {s['processes']} processes")
PY
cp tests/cases/snapshots/case-1.snap "$work/case-1.keep"
# The judge's yes and no swapped in the recording (answers, not questions:
# it still replays), so its claim is no longer supported.
python3 - tests/cases/snapshots/case-1.snap <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
swap = {"Yes": "No", "No": "Yes", "yes": "no", "no": "yes"}
text = re.sub(r'"(Yes|No|yes|no)"', lambda m: '"' + swap[m.group(1)] + '"', text)
text = re.sub(r"^(    )(Yes|No|yes|no)$", lambda m: m.group(1) + swap[m.group(2)], text, flags=re.M)
open(path, "w").write(text)
PY
set +e
CI=true RAGALIQ_REPORT_DIR=reports/broken cargo nextest run --partition count:1/1 --no-fail-fast >/dev/null 2>&1
"$ragaliq_bin" ragaliq report reports/broken --out reports/broken-all >/dev/null
combined=$?
set -e
cp "$work/case-1.keep" tests/cases/snapshots/case-1.snap
[ "$combined" -eq 1 ] || { echo "nextest-check: a failing trial must make the combined report exit 1, got $combined"; exit 1; }
echo "a run with a failing trial: combined exit code 1"

if cargo insta --version >/dev/null 2>&1; then
  echo "== 5. unreferenced recordings"
  CI=true cargo insta test --unreferenced=reject --test-runner nextest >"$work/unref.log" 2>&1 \
    || { cat "$work/unref.log"; echo "nextest-check: recordings in use were flagged"; exit 1; }
  echo "no recording in use is flagged"
  cp tests/cases/snapshots/case-1.snap tests/cases/snapshots/case-gone.snap
  if CI=true cargo insta test --unreferenced=reject --test-runner nextest >"$work/unref2.log" 2>&1; then
    echo "nextest-check: a recording no test uses was not rejected"; exit 1
  fi
  rm tests/cases/snapshots/case-gone.snap
  echo "a recording no test uses is rejected"
else
  echo "== 5. skipped: cargo-insta is not installed"
fi
echo "nextest-check: passed"
