#!/usr/bin/env bash
# A 2,000-file loop, as a CI job writes it, against cat and grep in the same
# loop and against one agentfs call with every path (issue 15.4).
# Usage: bench/multipath.sh [agentfs binary]   (needs hyperfine)
set -euo pipefail
bin=${1:-$(mktemp -d)/agentfs}
[ -x "$bin" ] || { . bench/build.sh && build_agentfs "$bin"; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in $(seq -w 1 2000); do
  printf 'package p\n\n// file %s\nfunc F%s() int { return %s }\n' "$i" "$i" "$i" > "$dir/f$i.go"
done
cd "$dir"
export AGENTFS_STATE_DIR="$dir/.state"
hyperfine --runs 3 --warmup 1 -N --export-markdown /dev/stdout \
  -n 'cat, 2000 calls' "bash -c 'for f in f*.go; do cat \"\$f\" >/dev/null; done'" \
  -n 'agentfs read, 2000 calls' "bash -c 'for f in f*.go; do $bin read \"\$f\" >/dev/null; done'" \
  -n 'agentfs read, 1 call' "bash -c '$bin --max-bytes 8388608 read f*.go >/dev/null'" \
  -n 'grep, 2000 calls' "bash -c 'for f in f*.go; do grep -n F1 \"\$f\" >/dev/null || true; done'" \
  -n 'agentfs grep, 2000 calls' "bash -c 'for f in f*.go; do $bin grep F1 \"\$f\" >/dev/null; done'" \
  -n 'agentfs grep, 1 call' "bash -c '$bin --max-bytes 8388608 grep F1 f*.go >/dev/null'"
