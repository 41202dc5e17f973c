#!/usr/bin/env bash
# Benchmark of the trigram index (agentfs index, then agentfs grep) against
# ripgrep on a tree of at least 500 MB: the Go source tree copied COPIES
# times under different names.
#
#   bench/index.sh [RUNS] [COPIES]    # default 5 runs per command, 4 copies
#
# The copies are identical, and the build indexes a content once (a file
# of a content read before takes its trigrams). INDEX_BENCH_DISTINCT=1
# makes every file of the corpus differ from the others (copy N's files
# end with a line "// goN"), as forks with small changes do: a build
# that gains nothing from copies.
#
# Rows: one rg scan and the index build from nothing (in one hyperfine
# run), an update with nothing changed, and the index's size against the
# corpus; per query (rare literal, common literal, regex with a literal,
# case-insensitive, regex without a literal) agentfs grep --mode count
# --limit 1000 (one page of up to 1000 files; a query matching more files
# is timed for its first page) with the index against rg --count, in one
# hyperfine run; the freshness
# check: the rare query with nothing changed, beside the floor of a proof
# by stat (find -printf %s), after 100 files were edited in place
# directly, and after 100 were written through agentfs (which changes
# their directories, so those are listed again). Every agentfs answer is
# checked against --no-index. All of it again with a watcher running
# (agentfs index --detach), which spares a search the stat pass. The machine is shared: CPU (user+system,
# means) is given beside wall time, and the load before each row.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
copies=${2:-4}
for tool in rg hyperfine python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y ripgrep hyperfine" >&2; exit 1; }
done
bin=$(mktemp -d)/agentfs
. bench/build.sh && build_agentfs "$bin"
work=${INDEX_BENCH_DIR:-/tmp/agentfs-index-bench}
tree=$work/tree
[[ ${INDEX_BENCH_DISTINCT:-} == 1 ]] && tree=$work/tree-distinct
if [[ ! -d $tree/go$copies ]]; then
  rm -rf "$tree" && mkdir -p "$tree"
  for i in $(seq 1 "$copies"); do cp -r "$(go env GOROOT)/src" "$tree/go$i"; done
  if [[ $tree == */tree-distinct ]]; then
    find "$tree" -type f -print0 | python3 -c '
import sys
for p in filter(None, sys.stdin.buffer.read().split(b"\0")):
    copy = p.rsplit(b"/tree-distinct/", 1)[1].split(b"/")[0]
    with open(p, "ab") as f:
        f.write(b"\n// " + copy + b"\n")
'
  fi
  # Dated back, as a tree that was not just written: a file modified within
  # 2 s of a build is never trusted.
  find "$tree" -exec touch -h -d '-1 hour' {} +
  # touch sets the ctime to now, and a build trusts no file whose ctime is
  # within 2 s of it.
  sleep 3
fi
# Written out before anything is timed: the kernel flushing 500 MB of a
# tree just copied ran during the first rows, and a build's fsync waited
# behind it (the build from nothing took 843 ms instead of 660).
sync
export AGENTFS_STATE_DIR=$work/state
mkdir -p "$AGENTFS_STATE_DIR" && chmod 700 "$AGENTFS_STATE_DIR"
out=$(mktemp -d)
cd "$tree"
load() { cut -d' ' -f1 /proc/loadavg; }
# hf NAME CMD...: hyperfine, interleaving the commands run by run.
hf() {
  local name=$1; shift
  local args=()
  for c in "$@"; do args+=("$c"); done
  hyperfine -N -w 1 -r "$runs" -i --export-json "$out/$name.json" "${args[@]}" >/dev/null 2>&1
}
mean() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][int(sys.argv[2])]; print('%.0f %.0f' % (r['mean']*1000, (r['user']+r['system'])*1000))" "$@"; }

files=$(rg --files | wc -l)
bytes=$(du -sb . | cut -f1)
echo "corpus: $tree ($copies copies of Go's src: $files files, $((bytes >> 20)) MiB); $(nproc) cores; load $(load)"

# One rg scan (a literal found nowhere: every file read) and the build
# from nothing, in one hyperfine run; then an update with nothing changed.
build_load=$(load)
hyperfine -N -w 1 -r "$runs" -i --export-json "$out/build.json" \
  --prepare true "rg --count -F zzqq_nowhere" \
  --prepare "sh -c '$bin index --drop >/dev/null 2>&1; true'" "$bin index" >/dev/null 2>&1
read -r scan_ms scan_cpu < <(mean "$out/build.json" 0)
read -r build_ms build_cpu < <(mean "$out/build.json" 1)
"$bin" index >"$out/built.json"
size=$(python3 -c "import json; print(json.load(open('$out/built.json'))['size'])")
hf update "$bin index"
read -r update_ms update_cpu < <(mean "$out/update.json" 0)

echo
echo "| step | wall ms | CPU ms | ratio to one rg scan | load |"
echo "|:--|--:|--:|--:|--:|"
echo "| rg scan | $scan_ms | $scan_cpu | 1.00 | - |"
echo "| index build from nothing | $build_ms | $build_cpu | $(python3 -c "print('%.2f' % ($build_ms/$scan_ms))") (CPU $(python3 -c "print('%.2f' % ($build_cpu/$scan_cpu))")) | $build_load |"
echo "| index update, nothing changed | $update_ms | $update_cpu | $(python3 -c "print('%.2f' % ($update_ms/$scan_ms))") (CPU $(python3 -c "print('%.2f' % ($update_cpu/$scan_cpu))")) | - |"
echo
copies_of=$(python3 -c "import json; print(json.load(open('$out/built.json')).get('copies', 0))")
echo "index size: $((size >> 20)) MiB, $(python3 -c "print('%.1f' % (100*$size/$bytes))")% of the corpus ($((bytes >> 20)) MiB); files indexed as another's content: $copies_of"

# name | agentfs query flags | rg flags
rows=(
  "rare literal|EPROTONOSUPPORT|-F EPROTONOSUPPORT"
  "common literal|errors.New|-F errors.New"
  "regex with literal|'func \\w+Error\\(' --regex|'func \\w+Error\\('"
  "case-insensitive|readfile --ignore-case|-i -F readfile"
  "regex without literal|'[A-Z][a-z]+[0-9]{2,}' --regex|'[A-Z][a-z]+[0-9]{2,}'"
)
# queries TITLE: the table of the rows above.
queries() {
  echo
  echo "$1"
  echo
  echo "| query | agentfs indexed ms | rg ms | ratio (wall) | agentfs CPU ms | rg CPU ms | ratio (CPU) | load |"
  echo "|:--|--:|--:|--:|--:|--:|--:|--:|"
  local i=0
  for row in "${rows[@]}"; do
    IFS='|' read -r name ours theirs <<<"$row"
    a=$(eval "$bin grep $ours --mode count --limit 1000")
    b=$(eval "$bin grep $ours --mode count --limit 1000 --no-index")
    [[ $a == "$b" ]] || { echo "$name: the indexed answer differs from the scan" >&2; exit 1; }
    l=$(load)
    hf "q$i" "$bin grep $ours --mode count --limit 1000" "rg --count $theirs"
    read -r ams acpu < <(mean "$out/q$i.json" 0)
    read -r rms rcpu < <(mean "$out/q$i.json" 1)
    echo "| $name | $ams | $rms | $(python3 -c "print('%.2f' % ($ams/$rms))") | $acpu | $rcpu | $(python3 -c "print('%.2f' % ($acpu/max($rcpu,1)))") | $l |"
    i=$((i + 1))
  done
}
queries "Each search proves freshness by its stat pass:"

# Freshness: the rare query as the tree changes after the build.
fresh() {
  local name=$1
  a=$("$bin" grep EPROTONOSUPPORT --mode count --limit 1000)
  b=$("$bin" grep EPROTONOSUPPORT --mode count --limit 1000 --no-index)
  [[ $a == "$b" ]] || { echo "$name: the indexed answer differs from the scan" >&2; exit 1; }
  l=$(load)
  hf fresh "$bin grep EPROTONOSUPPORT --mode count --limit 1000" "rg --count -F EPROTONOSUPPORT"
  read -r ams acpu < <(mean "$out/fresh.json" 0)
  read -r rms rcpu < <(mean "$out/fresh.json" 1)
  echo "| $name | $ams | $acpu | $rms | $rcpu | $(python3 -c "print('%.2f' % ($acpu/max($rcpu,1)))") | $l |"
}
# changes FIRST: 100 files from FIRST edited in place directly, then the
# next 100 written through agentfs.
changes() {
  mapfile -t some < <(rg --files --sort path -g '*.go' go1 | sed -n "$1,\$p" | head -200)
  for f in "${some[@]:0:100}"; do printf '// EPROTONOSUPPORT\n' >>"$f"; done
  fresh "100 files edited in place directly"
  for f in "${some[@]:100:100}"; do "$bin" write "$f" --content 'package x // EPROTONOSUPPORT' >/dev/null; done
  fresh "and 100 written through agentfs"
}
echo
echo "| freshness by the stat pass | agentfs indexed ms | agentfs CPU ms | rg ms | rg CPU ms | ratio (CPU) | load |"
echo "|:--|--:|--:|--:|--:|--:|--:|"
"$bin" index >/dev/null
fresh "nothing changed"
# The floor of a proof by stat: a bare walk that lstats every path.
l=$(load)
hf floor "find . -printf %s"
read -r fms fcpu < <(mean "$out/floor.json" 0)
echo "| a bare stat walk, \`find . -printf %s\` (no index) | $fms | $fcpu | - | - | - | $l |"
changes 1
"$bin" index >"$out/reindex.json"
fresh "after \`agentfs index\`"
echo
echo "update after the changes: $(python3 -c "import json; r=json.load(open('$out/reindex.json')); print('%d files read, %d reused, %.2f s' % (r.get('read',0), r.get('reused',0), r['buildSeconds']))")"

# With a watcher: agentfs index --detach leaves one in the background,
# which answers each search with the directories that changed.
ready=$("$bin" index --detach)
[[ $ready == *'"watched":true'* ]] || { echo "the watcher said: $ready" >&2; exit 1; }
trap '"$bin" index --drop >/dev/null 2>&1 || true' EXIT # a run that fails leaves no watcher
queries "With a watcher (\`agentfs index --detach\`):"
echo
echo "| freshness with a watcher | agentfs indexed ms | agentfs CPU ms | rg ms | rg CPU ms | ratio (CPU) | load |"
echo "|:--|--:|--:|--:|--:|--:|--:|"
fresh "nothing changed"
changes 201
"$bin" index --drop >/dev/null # ends the watcher
# Put the tree back for the next run.
rm -rf "$tree"
