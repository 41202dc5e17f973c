#!/usr/bin/env bash
# Memory of an index build from nothing as the tree grows: the peak of
# RssAnon (sampled every 5 ms from /proc/PID/status, Linux) and the largest
# live heap the collector saw (GODEBUG=gctrace=1), per tree and binary.
#
#   bench/index-memory.sh [DOUBLINGS] [BIN...]   # default 3; agentfs built here
#
# Tree t0 is 4 copies of $(go env GOROOT)/src, each file ending with a
# line naming its copy (every file unique); t(N+1) is two copies of tN,
# each file of the second ending with another line, so that no build
# takes a file for another's copy: t3 is about 4 GB. Trees are kept under
# INDEX_BENCH_DIR (default /var/tmp/agentfs-index-memory) for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
doublings=${1:-3}
shift || true
bins=("$@")
if [[ ${#bins[@]} == 0 ]]; then
  bins=("$(mktemp -d)/agentfs")
  . bench/build.sh && build_agentfs "${bins[0]}"
fi
work=${INDEX_BENCH_DIR:-/var/tmp/agentfs-index-memory}
mkdir -p "$work"
# append FILE-LIST-DIR LINE: LINE appended to every file below the directory.
append() { find "$1" -type f -exec sh -c 'l=$1; shift; for f; do printf "\n// %s\n" "$l" >> "$f"; done' _ "$2" {} +; }
if [[ ! -d $work/t0 ]]; then
  mkdir -p "$work/t0.tmp"
  for i in 1 2 3 4; do cp -r "$(go env GOROOT)/src" "$work/t0.tmp/go$i"; append "$work/t0.tmp/go$i" "go$i"; done
  mv "$work/t0.tmp" "$work/t0"
fi
for n in $(seq 1 "$doublings"); do
  [[ -d $work/t$n ]] && continue
  rm -rf "$work/t$n.tmp" && mkdir "$work/t$n.tmp"
  cp -r "$work/t$((n - 1))" "$work/t$n.tmp/a"
  cp -r "$work/t$((n - 1))" "$work/t$n.tmp/b"
  append "$work/t$n.tmp/b" "t$n"
  mv "$work/t$n.tmp" "$work/t$n"
done
echo "| tree | bytes | files | binary | live heap MB | peak heap MB | peak RssAnon MB | wall s |"
echo "|:--|--:|--:|:--|--:|--:|--:|--:|"
for n in $(seq 0 "$doublings"); do
  for bin in "${bins[@]}"; do
    state=$(mktemp -d)
    log=$(mktemp)
    start=$(date +%s.%N)
    GODEBUG=gctrace=1 AGENTFS_STATE_DIR=$state "$bin" --root "$work/t$n" index . </dev/null >"$log.out" 2>"$log" &
    pid=$!
    peak=0
    while kill -0 "$pid" 2>/dev/null; do
      a=$(awk '/RssAnon/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [[ ${a:-0} -gt $peak ]] && peak=$a
      sleep 0.005
    done
    wait "$pid"
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    heap=$(grep -o '[0-9]*->[0-9]*->[0-9]* MB' "$log" | awk -F'->' '{split($3, a, " "); if ($1 > m) m = $1; if (a[1] > l) l = a[1]} END {print l, m}')
    read -r files bytes < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["files"], r["bytes"])' "$log.out")
    printf '| t%s | %s | %s | %s | %s | %s | %s | %.1f |\n' "$n" "$bytes" "$files" "$bin" ${heap} $((peak >> 10)) "$wall"
    rm -rf "$state" "$log" "$log.out"
  done
done
