#!/usr/bin/env bash
# Fingerprints do not depend on Cargo features of other crates: a throwaway
# crate that switches on serde_json's `preserve_order` (as any crate in a
# user's build may, by feature unification) replays this repository's
# committed recordings, `#[rag_test]`s and suite, with CI=true.
#
#   scripts/preserve-order-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="${PRESERVE_ORDER_TARGET_DIR:-$root/target/preserve-order}"
mkdir -p "$work/tests" "$work/src"
cat >"$work/Cargo.toml" <<TOML
[package]
name = "ragaliq-tests"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
tokio = { version = "1.47", features = ["rt-multi-thread", "macros"] }

[dev-dependencies]
ragaliq = { path = "$root/ragaliq" }
serde_json = { version = "1", features = ["preserve_order"] }

[[test]]
name = "rag_suite"
harness = false
TOML
cp "$root/Cargo.lock" "$root/ragaliq.toml" "$work/"
echo "//! Empty." >"$work/src/lib.rs"
cp "$root/tests/rag.rs" "$root/tests/rag_suite.rs" "$work/tests/"
ln -s "$root/tests/rag_cases" "$work/tests/rag_cases"
ln -s "$root/tests/snapshots" "$work/tests/snapshots"
cd "$work"
# The feature really is on in this build.
cargo tree -e features -i serde_json 2>/dev/null | grep -q 'preserve_order' \
  || { echo "preserve-order-check: serde_json/preserve_order is not enabled"; exit 1; }
CI=true cargo test -q --test rag --test rag_suite
echo "preserve-order-check: the committed recordings replay with serde_json/preserve_order on"
