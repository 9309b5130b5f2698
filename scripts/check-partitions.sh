#!/usr/bin/env bash
# Checks that `cargo nextest run --partition count:k/n` splits the data-driven
# suite across n CI machines with every trial run exactly once: the union of
# the partitions is the full list, and no trial is in two of them.
#
#   scripts/check-partitions.sh [N]     (default N = 3)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}
list() { cargo nextest list --test rag_suite --message-format oneline "$@" 2>/dev/null | sort; }
full=$(list)
total=$(wc -l <<<"$full")
[ "$total" -gt 0 ] || { echo "check-partitions: nextest listed no trial"; exit 1; }
union=""
for k in $(seq 1 "$n"); do
  part=$(list --partition "count:$k/$n")
  echo "partition $k/$n: $(wc -l <<<"$part") trials"
  union+="$part"$'\n'
done
union=$(sed '/^$/d' <<<"$union" | sort)
if [ "$(uniq -d <<<"$union")" != "" ]; then
  echo "check-partitions: trials in more than one partition:"; uniq -d <<<"$union"; exit 1
fi
if [ "$union" != "$full" ]; then
  echo "check-partitions: the partitions do not cover the full list"; diff <(echo "$full") <(echo "$union") || true; exit 1
fi
echo "check-partitions: $total trials, each in exactly one of $n partitions"
