#!/usr/bin/env bash
# The check insta users run in CI to keep snapshot folders clean,
# `cargo insta test --unreferenced=reject`, on the references a test run
# already noted: every .snap in the repository (outside target/) must have
# been used by some test. Run the tests first with
# INSTA_SNAPSHOT_REFERENCES_FILE=<file> (insta and ragaliq append each
# snapshot they use), then this script with that file. One run of the suite
# serves both the README's `cargo test --workspace` and this check, and a
# machine with only the Rust toolchain needs no cargo-insta for it.
#
#   scripts/unreferenced-check.sh REFERENCES_FILE
set -euo pipefail
cd "$(dirname "$0")/.."
refs=${1:?the references file a test run wrote (INSTA_SNAPSHOT_REFERENCES_FILE)}
[ -s "$refs" ] || { echo "no snapshot was noted in $refs: was the suite run with INSTA_SNAPSHOT_REFERENCES_FILE set?"; exit 1; }
used=$(mktemp); all=$(mktemp)
trap 'rm -f "$used" "$all"' EXIT
while IFS= read -r p; do
  [ -e "$p" ] && realpath "$p"
done <"$refs" | sort -u >"$used"
# The snapshots git knows of or would add (ignored files, such as
# recordings of licence-less sets regenerated locally, are not counted).
git ls-files --cached --others --exclude-standard -- '*.snap' | grep -v '^target/' |
  while IFS= read -r p; do realpath "$p"; done | sort -u >"$all"
unused=$(comm -23 "$all" "$used")
if [ -n "$unused" ]; then
  echo "unreferenced snapshots (no test used them; \`cargo insta test --unreferenced=reject\` fails on them too):"
  sed "s|^$PWD/|  |" <<<"$unused"
  exit 1
fi
echo "no unreferenced snapshots: $(wc -l <"$all") in the repository, every one used by a test"
