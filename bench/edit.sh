#!/usr/bin/env bash
# Benchmark of edit, whole process, with hyperfine:
#   1. one edit in the middle of a 2 MiB text file: agentfs edit against
#      sed -i on the same file in the same run (the file is reset before
#      every run, outside the timing; agentfs fsyncs, sed -i does not);
#   2. throughput of 16 concurrent editors, each making $EDITS edits one
#      process at a time: all on one file (serialised by its lock) and each
#      on its own file; reported as edits per second of wall time;
# then the in-process cost of planning the 2 MiB edit (go test -bench).
# Usage: bench/edit.sh   (EDITS=50 by default; results also in bench/out/edit-*)
set -euo pipefail
edits=${EDITS:-50}
source "$(dirname "$0")/setup.sh"

# 2 MiB of 100-byte lines with one marker line in the middle.
head -c 1560000 /dev/urandom | base64 -w 99 > half.txt
truncate -s $((1 << 20)) half.txt
{ cat half.txt; echo 'MARKER = "before"'; cat half.txt; } > orig.txt
truncate -s $((2 << 20)) orig.txt
hyperfine -N --style basic --warmup 3 --min-runs 30 --prepare 'cp orig.txt big.txt' \
  --export-json "$OLDPWD/$out/edit-2mib.json" \
  -n 'agentfs edit 2 MiB' "$agentfs edit big.txt --old before --new after" \
  -n 'sed -i 2 MiB' "sed -i s/before/after/ big.txt"

# editors.sh FILES: 16 workers, each incrementing its own counter line
# $edits times, in one shared file (FILES=one) or one file each (many).
cat > editors.sh <<'SH'
#!/usr/bin/env bash
set -eu
worker() {
  local w=$1 file=$2 n a b
  for ((n = 0; n < EDITS; n++)); do
    printf -v a 'worker-%02d: %04d' "$w" "$n"
    printf -v b 'worker-%02d: %04d' "$w" $((n + 1))
    "$AGENTFS" edit "$file" --old "$a" --new "$b" > /dev/null
  done
}
pids=()
for w in $(seq 0 15); do
  if [ "$1" = one ]; then f=shared.txt; else f=own-$w.txt; fi
  worker "$w" "$f" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
SH
cat > reset.sh <<'SH'
#!/usr/bin/env bash
: > shared.txt
for w in $(seq 0 15); do
  printf 'worker-%02d: 0000\n' "$w" >> shared.txt
  printf 'worker-%02d: 0000\n' "$w" > own-$w.txt
done
SH
chmod +x editors.sh reset.sh
export AGENTFS=$agentfs EDITS=$edits
hyperfine -N --style basic --runs 5 --prepare ./reset.sh \
  --export-json "$OLDPWD/$out/edit-concurrent.json" \
  -n "16 editors, one file" "./editors.sh one" \
  -n "16 editors, 16 files" "./editors.sh many"
# Every edit must have counted: the last run's 16 files, then one more run
# on the shared file.
count() { cat "$@" | grep -c ": $(printf %04d "$edits")\$" || true; }
[ "$(count own-*.txt)" = 16 ] || { echo "lost edits in the 16 files"; exit 1; }
./reset.sh && ./editors.sh one
[ "$(count shared.txt)" = 16 ] || { echo "lost edits in the shared file"; exit 1; }

cd "$OLDPWD"
{
  echo "2 MiB edit, ms (median, min):"
  jq -r '.results[] | "  \(.command): median \(.median*1000|.*10|round/10), min \(.min*1000|.*10|round/10)"' "$out/edit-2mib.json"
  jq -r '"  ratio agentfs/sed (medians): \((.results[0].median / .results[1].median)*100|round/100)"' "$out/edit-2mib.json"
  echo "16 concurrent editors, $edits edits each ($((16 * edits)) edits a run):"
  jq -r --argjson n $((16 * edits)) '.results[] | "  \(.command): \($n / .median | round) edits/s (median of \(.times|length) runs, \(.median*10|round/10) s)"' "$out/edit-concurrent.json"
} | tee "$out/edit-summary.txt"
go test ./core -run '^$' -bench 'Edit' -benchtime 20x | tee "$out/edit-go.txt"
