#!/usr/bin/env bash
# A tree deeper than the open-file limit: a chain of DEPTH directories
# named d, each holding z.txt ("level N"), with deepest.txt at the bottom.
# Each command runs once under GNU time (wall time, peak memory) and its
# answer is checked: did it find the deepest file, every level's file?
#
#   bench/deep_tree.sh [DEPTH]      # default 25000
#   AGENTFS=/path/to/agentfs bench/deep_tree.sh   # another build, e.g. an older one
#
# The limit on open files is the shell's (ulimit -n), except for the rows
# that lower it to 64. rm -r runs last, on its own copy of the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
depth=${1:-25000}
for tool in rg fdfind find /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y ripgrep fd-find time" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${AGENTFS:-$tmp/agentfs}
if [[ -z ${AGENTFS:-} ]]; then
  . bench/build.sh && build_agentfs "$bin"
fi
mk() {
  python3 - "$depth" "$1" <<'PY'
import os, sys
n, top = int(sys.argv[1]), sys.argv[2]
os.mkdir(top)
fd = os.open(top, os.O_RDONLY)
def write(name, data):
    f = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(f, data)
    os.close(f)
for i in range(n):
    os.mkdir("d", dir_fd=fd)
    write("z.txt", b"level %d\n" % i)
    nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
write("deepest.txt", b"bottom\n")
os.close(fd)
PY
}
mk "$tmp/t"
echo "tree: $depth levels, $((depth + 1)) files; ulimit -n $(ulimit -n); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
# row NAME CHECK COMMAND...: CHECK is a python expression on the output
# (out, a string) saying what the command found.
row() {
  local name=$1 check=$2
  shift 2
  (cd "$tmp/t" && /usr/bin/time -o "$tmp/time" -f '%e %M %x' "$@" >"$tmp/out" 2>"$tmp/err") || true
  read -r secs kib status < <(tail -1 "$tmp/time")
  found=$(python3 -c "import sys; out=open(sys.argv[1], errors='replace').read(); print($check)" "$tmp/out")
  err=$(head -1 "$tmp/err" | tail -c 90 | tr '|' '/')
  printf '| %s | %s | %s | %.2f | %.1f | %s |\n' "$name" "$status" "$found" "$secs" "$(python3 -c "print($kib/1024)")" "${err:-}"
}
deepest='"deepest.txt" if "deepest.txt" in out else "nothing"'
levels='str(out.count("z.txt")) + " z.txt"'
counted='"count " + str(__import__("json").loads(out)["count"]) if out else "nothing"'
echo
echo "| command | exit | found | wall s | peak MiB | end of stderr's first line |"
echo "|:--|--:|:--|--:|--:|:--|"
row "agentfs find deepest.txt" "$deepest" "$bin" find deepest.txt
row "agentfs find z.txt --offset $((depth - 1)) (the last one)" "$levels" "$bin" find z.txt --offset $((depth - 1))
row "agentfs grep level --mode count" "$counted" "$bin" grep level --mode count --limit 1
row "ulimit -n 64; agentfs find deepest.txt" "$deepest" bash -c "ulimit -n 64 && exec $bin find deepest.txt"
row "ulimit -n 64; agentfs grep level --mode count" "$counted" bash -c "ulimit -n 64 && exec $bin grep level --mode count --limit 1"
row "find . -name deepest.txt" "$deepest" find . -name deepest.txt
row "fdfind deepest.txt" "$deepest" fdfind deepest.txt
row "rg --files" "$deepest" rg --files
row "rg -c level" 'str(out.count(chr(10))) + " files"' rg -c level
mk "$tmp/t/r"
row "agentfs rm r -r" 'out.strip() or "nothing"' "$bin" rm r -r
