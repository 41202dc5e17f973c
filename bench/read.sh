#!/usr/bin/env bash
# Benchmark of read on a 1 GiB file: the first 2000-line window, and a
# window near the end reached with byteOffset, against sed and tail|head
# doing the same, in one hyperfine run. The near-end window must cost about
# what the first costs: a continuation seeks, it never re-reads.
#
# Usage: bench/read.sh [RUNS]   (needs hyperfine and python3; run from the repository)
set -eu # no pipefail: head closing a pipe early is expected

runs=${1:-10}
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/agentfs-bench-read.XXXXXX)
trap 'rm -rf "$work"' EXIT

. bench/build.sh && build_agentfs "$work/agentfs"

# One 1 MiB block of source-like and log-like lines of varied length,
# repeated to 1 GiB: realistic lines, cheap to make.
python3 - "$work/block" <<'EOF'
import random, sys
random.seed(7)
words = "func return if else for range err nil ctx context string int64 bytes path file read write the of and to".split()
out, size = [], 0
while size < (1 << 20):
    kind = random.random()
    if kind < 0.3:
        line = "2026-11-30T02:%02d:%02d.%03dZ INFO request id=%08x path=/api/v1/%s status=%d dur=%dms" % (
            random.randrange(60), random.randrange(60), random.randrange(1000), random.getrandbits(32),
            random.choice(words), random.choice([200, 201, 404, 500]), random.randrange(900))
    elif kind < 0.4:
        line = ""
    else:
        line = "\t" * random.randrange(4) + " ".join(random.choice(words) for _ in range(random.randrange(1, 16)))
    out.append(line + "\n")
    size += len(out[-1])
data = "".join(out).encode()
open(sys.argv[1], "wb").write(data)
EOF
block_lines=$(wc -l <"$work/block")
block_bytes=$(stat -c %s "$work/block")
blocks=$(((1 << 30) / block_bytes + 1))
for _ in $(seq "$blocks"); do cat "$work/block"; done >"$work/big.txt"
total_lines=$((block_lines * blocks))
size=$(stat -c %s "$work/big.txt")

# The near-end window starts 3000 lines before the end; its byte offset is
# whole blocks plus the lines of a part of one block.
start=$((total_lines - 3000))
q=$(((start - 1) / block_lines))
r=$(((start - 1) % block_lines))
offset=$((q * block_bytes + $(head -n "$r" "$work/block" | wc -c)))
end=$((start + 1999))
echo "file: $size bytes, $total_lines lines; near-end window: lines $start-$end at byte $offset"

# Check that every command of a pair prints the same window before timing it.
cd "$work"
./agentfs --format text read big.txt --limit 2000 | head -n 2000 >first.agentfs
sed -n '1,2000p;2000q' big.txt >first.sed
cmp first.agentfs first.sed
./agentfs --format text read big.txt --offset "$start" --byte-offset "$offset" --limit 2000 | head -n 2000 >near.agentfs
sed -n "${start},${end}p;${end}q" big.txt >near.sed
tail -c +"$((offset + 1))" big.txt | head -n 2000 >near.tail
cmp near.agentfs near.sed
cmp near.agentfs near.tail

# No shell (-N): a 4 ms command is below what hyperfine can correct for a
# shell's start-up; the pipeline runs in its own sh, as it must.
hyperfine -N --style basic --warmup 2 --runs "$runs" --export-json result.json \
	-n "read first window" "./agentfs read big.txt --limit 2000" \
	-n "read near-end window (byteOffset)" "./agentfs read big.txt --offset $start --byte-offset $offset --limit 2000" \
	-n "sed first window" "sed -n 1,2000p;2000q big.txt" \
	-n "sed near-end window" "sed -n ${start},${end}p;${end}q big.txt" \
	-n "tail -c | head near-end window" "sh -c 'tail -c +$((offset + 1)) big.txt | head -n 2000'"

# Medians are wall time; on a shared machine the CPU time (user+system,
# mean) is the steadier figure, as other processes' load does not count.
python3 - result.json <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
base, base_cpu = res[0]["median"], res[0]["user"] + res[0]["system"]
print("\n%-36s %10s %9s %10s %9s" % ("command", "median ms", "vs first", "cpu ms", "vs first"))
for r in res:
    cpu = r["user"] + r["system"]
    print("%-36s %10.2f %8.2fx %10.2f %8.2fx" % (r["command"], r["median"] * 1000, r["median"] / base, cpu * 1000, cpu / base_cpu))
near = res[1]
print("\nread near-end / read first: %.2f (median), %.2f (cpu)" % (
    near["median"] / base, (near["user"] + near["system"]) / base_cpu))
EOF
