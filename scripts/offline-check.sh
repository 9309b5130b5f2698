#!/usr/bin/env bash
# The offline guarantee: runs the tests inside a network namespace of their
# own (`unshare -rn`), after a normal build.
#   1. The replayed tests and the quickstart with no network at all (not even
#      loopback is up).
#   2. The whole suite with only loopback up: the tests that talk to a judge
#      talk to servers on 127.0.0.1, and nothing else is reachable.
# Skips (exit 0) where unprivileged network namespaces are not available.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! unshare -rn true 2>/dev/null; then
  echo "offline-check: unshare -rn is not available here; skipped"
  exit 0
fi
echo "offline-check: replay with no network interface at all"
unshare -rn env CI=true cargo test --offline --test rag --test rag_suite --test quickstart --test generate --test calibration --test voting
unshare -rn env CI=true cargo run --offline --example quickstart >/dev/null
if unshare -rn sh -c 'ip link set lo up' 2>/dev/null; then
  echo "offline-check: the whole suite with only loopback"
  unshare -rn sh -c 'ip link set lo up && CI=true cargo test --offline --workspace'
else
  echo "offline-check: cannot bring loopback up in the namespace; whole-suite run skipped"
fi
echo "offline-check: passed"
