#!/usr/bin/env bash
# The offline guarantee: runs the tests inside a network namespace of their
# own (`unshare -rn`), after a normal build.
#   1. The replayed tests and the quickstart with no network at all (not even
#      loopback is up).
#   (The whole suite with only loopback up is `.ci/run`'s own `cargo test
#   --workspace`, run in such a namespace: one run of the suite for both.)
#   tests/calibration.rs is not run again here: its judges are replayed with
#   `Mode::Replay` named in the test, or answer in-process, so CI=true and a
#   missing loopback change nothing it does; run twice, it was 27 s of CI.
# Skips (exit 0) where unprivileged network namespaces are not available.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! unshare -rn true 2>/dev/null; then
  echo "offline-check: unshare -rn is not available here; skipped"
  exit 0
fi
echo "offline-check: replay with no network interface at all"
unshare -rn env CI=true cargo test --offline --test rag --test rag_suite --test quickstart --test generate --test voting
unshare -rn env CI=true cargo run --offline --example quickstart >/dev/null
echo "offline-check: passed"
