#!/usr/bin/env bash
# ragaliq against real OpenAI-compatible servers on 127.0.0.1: llama.cpp's
# `llama-server` and llama-cpp-python's server, from the realjudge kit in
# ../shared/realjudge (install it once: ../shared/realjudge/install.sh
# --with-llama-server). Skips, saying so, when the kit is not installed.
#
# For each server, with default settings plus the URL and the model: the
# quickstart and the `refunds` slice of the suite, in live and in record
# mode (recordings go to a temporary folder, not the repository), then the
# recordings replayed offline (the server address made unreachable). Prints
# the banner, every evaluation's outcome, wall time and calls.
#
# Passes when no evaluation ends in a timeout, a transport error, runaway
# generation or a retried refused format (the kit's model is a tiny *base*
# model: its answers are nonsense, so low scores and unreadable replies are
# expected and are not failures), and when replay reproduces the recorded
# outcomes with no call.
#
#   scripts/real-judge-check.sh [python] [cpp]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kit=${REALJUDGE_HOME:-$HOME/.cache/ragaliq-realjudge}
if [ ! -x "$kit/start.sh" ] || [ ! -d "$kit/.venv" ]; then
  echo "real-judge-check: the realjudge kit is not installed in $kit; skipped (install: ../shared/realjudge/install.sh --with-llama-server)"
  exit 0
fi
servers=${*:-python cpp}
model=${REALJUDGE_ALIAS:-gemma-3-270m-q4_k_m}
out=$(mktemp -d)
started=()
cleanup() {
  for port in "${started[@]}"; do "$kit/stop.sh" "$port" >/dev/null 2>&1 || true; done
  rm -rf "$out"
}
trap cleanup EXIT
cd "$root"
cargo build -q --example quickstart --test rag_suite

bad='timed out|could not reach|nothing is listening|stopped sending|broke off|stopped its streamed reply|answered HTTP|refused the response format'
failed=0
run() { # name, url, mode, snapshot dir, command...
  local name=$1 url=$2 mode=$3 dir=$4; shift 4
  local log="$out/$name-$mode-$RANDOM.log" start end
  start=$(date +%s.%N)
  RAGALIQ_JUDGE=$url RAGALIQ_MODEL=$model RAGALIQ_MODE=$mode RAGALIQ_SNAPSHOT_DIR=$dir \
    "$@" >"$log" 2>&1 || true
  end=$(date +%s.%N)
  printf '%s\n' "$(grep -E '^judge:' "$log" | head -1)"
  grep -E '^(faithfulness|hallucination|relevance)|^(case +|refund-)|trials:|judge calls' "$log" | cut -c1-170
  printf 'wall: %.1f s\n' "$(echo "$end - $start" | bc)"
  if grep -Eq "$bad" "$log"; then
    echo "real-judge-check: a transport failure in $name $mode:"; grep -E "$bad" "$log" | head -3
    failed=1
  fi
  LAST_LOG=$log
}

for server in $servers; do
  case $server in
    python) port=8765; env_server="" ;;
    cpp) port=8766; env_server=cpp
         [ -x "$kit/build/llama.cpp/bin/llama-server" ] || { echo "== cpp: llama-server is not built; skipped"; continue; } ;;
    *) echo "real-judge-check: unknown server $server (python, cpp)"; exit 2 ;;
  esac
  REALJUDGE_SERVER=$env_server "$kit/start.sh" "$port" >/dev/null
  started+=("$port")
  url="http://127.0.0.1:$port/v1"
  for slice in quickstart refunds; do
    if [ "$slice" = quickstart ]; then
      cmd=(cargo run -q --example quickstart)
    else
      cmd=(env RAGALIQ_TAGS=refunds cargo test -q --test rag_suite)
    fi
    for mode in live record; do
      echo "== $server: $slice, mode $mode"
      run "$server-$slice" "$url" "$mode" "$out/$server-$slice" "${cmd[@]}"
      recorded=$LAST_LOG
    done
    for f in "$out/$server-$slice"/*.snap.new; do [ -e "$f" ] && mv "$f" "${f%.new}"; done
    echo "== $server: $slice, replayed offline (the server address unreachable)"
    CI=true run "$server-$slice" "http://127.0.0.1:1/v1" replay "$out/$server-$slice" "${cmd[@]}"
    if ! grep -Eq '0 judge calls|judge: 0 calls' "$LAST_LOG"; then
      echo "real-judge-check: the replay of $server $slice made calls"; failed=1
    fi
    # Trials run concurrently: compare the outcomes, not the order they were printed in.
    same() { grep -E '^(faithfulness|hallucination|relevance)|^refund-' "$1" | sed -E 's/ (\?|✗)//g; s/ +/ /g; s/ +$//' | sort ; }
    if ! diff <(same "$recorded") <(same "$LAST_LOG") >/dev/null; then
      echo "real-judge-check: the replay of $server $slice does not reproduce the recorded outcomes"
      diff <(same "$recorded") <(same "$LAST_LOG") | head -10
      failed=1
    fi
  done
  "$kit/stop.sh" "$port" >/dev/null
done
[ "$failed" -eq 0 ] && echo "real-judge-check: passed" || { echo "real-judge-check: FAILED"; exit 1; }
