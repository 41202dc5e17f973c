#!/usr/bin/env bash
# A batch of 1,000 edits on a 2 MiB file, whole process, with hyperfine:
# the file and batch of BenchmarkEditBatch/exact (20,971 numbered lines of
# 100 bytes, each edit the start of one line, spread evenly), the file reset
# before every run outside the timing. Then the size of that edit's result
# at --max-bytes 4096, and the answer to a batch of 90,000 edits (one per
# line of a file of 90,000 lines, 900 kB).
# Usage: bench/edit-batch.sh [OTHER_AGENTFS]   (also times another binary)
set -euo pipefail
other=${1:+$(realpath "$1")}
source "$(dirname "$0")/setup.sh"

python3 - <<'PY'
import json
lines = ["line %06d: %-84s  " % (i, "filler " * 12) for i in range(20971)]
open("orig.txt", "w").write("".join(l + "\n" for l in lines))
step = len(lines) // 1000
edits = [{"oldText": "line %06d:" % (k * step), "newText": "LINE %06d:" % (k * step)} for k in range(1000)]
json.dump({"path": "big.txt", "edits": edits}, open("batch.json", "w"))
json.dump({"path": "big.txt", "edits": edits, "dryRun": True}, open("dry.json", "w"))
open("rows.txt", "w").write("".join("row %05d\n" % k for k in range(90000)))
many = [{"oldText": "row %05d\n" % k, "newText": "ROW %05d\n" % k} for k in range(90000)]
json.dump({"path": "rows.txt", "edits": many}, open("batch90k.json", "w"))
PY
cmds=(-n "agentfs edit, 1000 edits, 2 MiB" "$agentfs edit - < batch.json > /dev/null")
if [ -n "$other" ]; then
  cmds+=(-n "other binary, same batch" "$other edit - < batch.json > /dev/null")
fi
hyperfine --style basic --warmup 1 --runs "${RUNS:-5}" --prepare 'cp orig.txt big.txt' \
  --export-json "$OLDPWD/$out/edit-batch.json" "${cmds[@]}"

cp orig.txt big.txt
for b in "$agentfs" $other; do
  echo "$b: result bytes at --max-bytes 4096: $("$b" --max-bytes 4096 edit - < dry.json | wc -c)"
  start=$(date +%s.%N)
  code=0
  "$b" edit - < batch90k.json > /dev/null 2> err.json || code=$?
  end=$(date +%s.%N)
  echo "$b: 90,000 edits: exit $code in $(echo "$end - $start" | bc) s: $(head -c 300 err.json)"
done
