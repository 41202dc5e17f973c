#!/usr/bin/env bash
# Benchmark of a deep page: grep "err" over Go's source tree, 200 matching
# lines a page. Page 1, and page N reached by --offset (which walks and
# searches every file before it again) and by --cursor (which resumes the
# walk where page N-1 ended), in one hyperfine run; and find's page N the
# same two ways. The page by cursor must cost about what page 1 costs.
#
# Usage: bench/cursor.sh [PAGE] [RUNS]   (needs hyperfine and python3; run from the repository)
set -eu

page=${1:-100}
runs=${2:-10}
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/agentfs-bench-cursor.XXXXXX)
trap 'rm -rf "$work"' EXIT
. bench/build.sh && build_agentfs "$work/agentfs"
src=$(go env GOROOT)/src
a="$work/agentfs --root $src"

# The cursor and offset of page N, found by walking the pages before it.
cursor_of() { # TOOL ARGS...: prints "OFFSET CURSOR" of page $page
  python3 - "$page" "$@" <<'PY'
import json, subprocess, sys
page, cmd = int(sys.argv[1]), sys.argv[2:]
cur = None
for _ in range(page - 1):
    out = json.loads(subprocess.run(cmd + (["--cursor", cur] if cur else []), capture_output=True, check=True).stdout)
    cur = out["nextCursor"]
print(out["nextOffset"], cur)
PY
}
read -r goff gcur < <(cursor_of $a grep err --limit 200)
read -r foff fcur < <(cursor_of $a find '*' --limit 200)
echo "grep page $page: offset $goff; find page $page: offset $foff"
hyperfine -N --warmup 2 --runs "$runs" \
  -n "grep page 1" "$a grep err --limit 200" \
  -n "grep page $page by offset" "$a grep err --limit 200 --offset $goff" \
  -n "grep page $page by cursor" "$a grep err --limit 200 --cursor $gcur" \
  -n "find page 1" "$a find * --limit 200" \
  -n "find page $page by offset" "$a find * --limit 200 --offset $foff" \
  -n "find page $page by cursor" "$a find * --limit 200 --cursor $fcur"
