#!/usr/bin/env bash
# What a user pays before the first test runs: a throwaway crate with ragaliq
# (from this workspace) as its only dev-dependency, 4 `#[rag_test]`s and (with
# --suite) a `harness = false` suite, built from a fresh target folder.
#
#   scripts/bench-downstream.sh [--features "..."] [--no-default-features] [--suite]
#                               [--test-files N] [--ragaliq DIR] [--keep DIR]
#
# --ragaliq names another checkout's root (e.g. a `git worktree` of an older
# commit) to build against, with that checkout's Cargo.lock. The common case
# (#[rag_test] and the assertion macros, no suite) is the default; a suite
# needs `--suite --features suite` on trees where it is a feature.
# --test-files N writes N identical test files (tests/rag.rs, rag2.rs, …), as
# a crate whose tests are spread over several files: each is a crate of its
# own, so what ragaliq leaves to its users to compile is paid N times.
#
# Prints the wall, user and system time of `cargo test --no-run` and the 15
# largest units of `cargo build --timings` (from the same build). Uses the
# workspace's Cargo.lock, so the versions are the ones this repository tests
# with, and works offline once the registry cache holds them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
features=""
default_features=true
keep=""
suite=false
test_files=1
while [ $# -gt 0 ]; do
  case "$1" in
    --features) features="$2"; shift 2 ;;
    --no-default-features) default_features=false; shift ;;
    --keep) keep="$2"; shift 2 ;;
    --suite) suite=true; shift ;;
    --test-files) test_files="$2"; shift 2 ;;
    --ragaliq) root=$(cd "$2" && pwd); shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "bench-downstream: unknown argument $1" >&2; exit 2 ;;
  esac
done
work=${keep:-$(mktemp -d)}
mkdir -p "$work/tests/rag_cases"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

feature_list=""
if [ -n "$features" ]; then
  feature_list=", features = [$(sed 's/[^ ,][^ ,]*/"&"/g' <<<"$features")]"
fi
cat >"$work/Cargo.toml" <<TOML
[package]
name = "downstream"
version = "0.1.0"
edition = "2024"
publish = false

[dev-dependencies]
ragaliq = { path = "$root/ragaliq", default-features = $default_features$feature_list }
TOML
if $suite; then
  printf '\n[[test]]\nname = "suite"\nharness = false\n' >>"$work/Cargo.toml"
fi
mkdir -p "$work/src"
echo "//! A crate under test." >"$work/src/lib.rs"
cat >"$work/tests/rag.rs" <<'RS'
use ragaliq::prelude::*;

fn case(response: &str) -> RagCase {
    RagCase::new("What is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response(response)
}

#[rag_test]
async fn faithful(judge: Judge) {
    assert_faithful!(judge, case("The refund window is 30 days."));
}

#[rag_test]
async fn no_hallucination(judge: Judge) {
    assert_no_hallucination!(judge, case("The refund window is 30 days."), threshold = 0.9);
}

#[rag_test]
async fn relevant(judge: Judge) {
    assert_relevant!(judge, case("The refund window is 30 days."));
}

#[rag_test]
async fn context(judge: Judge) {
    let case = case("The refund window is 30 days.").expected_facts(["Refunds take 30 days."]);
    assert_context_recall!(judge, case);
}
RS
for i in $(seq 2 "$test_files"); do
  cp "$work/tests/rag.rs" "$work/tests/rag$i.rs"
done
if $suite; then
cat >"$work/tests/suite.rs" <<'RS'
fn main() -> std::process::ExitCode {
    ragaliq::suite("tests/rag_cases").run()
}
RS
fi
cat >"$work/tests/rag_cases/cases.yaml" <<'YAML'
- id: refund-window
  query: What is the refund window?
  context: [Refunds are accepted within 30 days of delivery.]
  response: The refund window is 30 days.
YAML
cp "$root/Cargo.lock" "$work/Cargo.lock"

cd "$work"
export CARGO_TARGET_DIR="$work/target"
offline=""
cargo fetch --quiet --offline 2>/dev/null && offline="--offline"
/usr/bin/time -f "cargo test --no-run: %e s wall, %U s user, %S s sys" \
  cargo test --no-run --quiet $offline --timings 2>&1 | grep -v "^ *Timing report" || true
units=$(ls target/cargo-timings/cargo-timing-*.html 2>/dev/null | head -1)
[ -n "$units" ] || { echo "bench-downstream: no timing report" >&2; exit 1; }
python3 - "$units" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S)
units = json.loads(m.group(1))
print(f"{len(units)} units; the 15 largest:")
for u in sorted(units, key=lambda u: -u["duration"])[:15]:
    target = u.get("target", "").strip() or "lib"
    print(f"  {u['duration']:6.1f} s  {u['name']} {u['version']} {target}")
PY
