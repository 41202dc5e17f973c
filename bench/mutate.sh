#!/usr/bin/env bash
# Benchmark of the mutating side, whole process, with hyperfine:
#   1. write of a 2 MiB file: agentfs write against cp, cp with the same
#      durability (temp, fsync, rename) and sed -i (temp and rename, no fsync);
#   2. the cost of the locks: rm of a missing path (locks, one lstat) against
#      ls of an empty directory (no lock), and a write of identical content
#      (lock, read and compare, no write);
# then the in-process cost of Lock/unlock (go test -bench).
# Usage: bench/mutate.sh   (results also in bench/out/mutate-*)
# The summary gives medians: fsync on a shared machine has long outliers.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
mkdir -p empty
head -c 1560000 /dev/urandom | base64 -w 100 > new.txt
truncate -s $((2 << 20)) new.txt
tr 'A-Za-z' 'N-ZA-Mn-za-m' < new.txt > old.txt

# Each run replaces old content of the same size (prepare, not timed).
hyperfine -N --style basic --warmup 5 --min-runs 50 --prepare 'cp old.txt big.txt' \
  --export-json "$OLDPWD/$out/mutate-write.json" \
  -n 'agentfs write 2 MiB' "sh -c '$agentfs write big.txt --content-file - < new.txt > /dev/null'" \
  -n 'cp' "sh -c 'cp new.txt big.txt'" \
  -n 'cp + fsync + rename' "sh -c 'cp new.txt .big.tmp && sync .big.tmp && mv .big.tmp big.txt && sync .'" \
  -n 'sed -i' "sh -c 'sed -i s/^X/Y/ big.txt'"

cp new.txt same.txt
hyperfine -N --style basic --warmup 5 --min-runs 100 --export-json "$OLDPWD/$out/mutate-lock.json" \
  -n 'agentfs ls (no lock)' "$agentfs ls empty" \
  -n 'agentfs rm missing (locks)' "$agentfs rm d/e/missing" \
  -n 'agentfs write identical 2 MiB (lock, compare)' "sh -c '$agentfs write same.txt --content-file - < new.txt > /dev/null'"

cd "$OLDPWD"
echo
echo "median, min and mean CPU time of each command, in ms:"
jq -r '.results[] | "  \(.command): median \(.median*1000|.*10|round/10), min \(.min*1000|.*10|round/10), cpu user+sys \((.user+.system)*1000|.*10|round/10)"' \
  "$out/mutate-write.json" "$out/mutate-lock.json" | tee "$out/mutate-summary.txt"
go test ./localfs -run '^$' -bench 'Lock|WriteFile' -benchtime 2000x | tee "$out/mutate-go.txt"
