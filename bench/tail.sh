#!/usr/bin/env bash
# Benchmark of read --offset -100 (the last 100 lines, as tail -n 100) on
# logs of 2 MB, 60 MB and 230 MB, against tail -n 100 and against a read of
# the first 100 lines, in one hyperfine run. The tail of the 230 MB log must
# cost about what the tail of the 2 MB one costs: it reads backwards from the
# end. The 60 MB log (at most 64 MiB) also has its lines counted, for
# totalLines, which is the one cost that grows with the size.
#
# Usage: bench/tail.sh [RUNS]   (needs hyperfine and python3; run from the repository)
set -eu

runs=${1:-10}
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/agentfs-bench-tail.XXXXXX)
trap 'rm -rf "$work"' EXIT

. bench/build.sh && build_agentfs "$work/agentfs"

# One 1 MiB block of log lines, repeated: realistic lines, cheap to make.
python3 - "$work/block" <<'EOF'
import random, sys
random.seed(7)
words = "GET POST PUT /api/v1/users /api/v1/files /healthz cache miss hit upstream timeout retry".split()
out, size = [], 0
while size < (1 << 20):
    line = "2026-11-30T02:%02d:%02d.%03dZ %s request id=%08x %s %s status=%d dur=%dms" % (
        random.randrange(60), random.randrange(60), random.randrange(1000),
        random.choice(["INFO", "INFO", "INFO", "WARN", "ERROR"]), random.getrandbits(32),
        random.choice(words), random.choice(words), random.choice([200, 201, 404, 500]), random.randrange(900))
    out.append(line + "\n")
    size += len(out[-1])
open(sys.argv[1], "wb").write("".join(out).encode())
EOF
block_bytes=$(stat -c %s "$work/block")
make_log() { # NAME MEGABYTES
	local blocks=$(($2 * 1000000 / block_bytes + 1))
	for _ in $(seq "$blocks"); do cat "$work/block"; done >"$work/$1"
	echo "$1: $(stat -c %s "$work/$1") bytes, $(wc -l <"$work/$1") lines"
}
make_log small.log 2
make_log mid.log 60
make_log big.log 230

# Check that agentfs and tail print the same lines before timing them.
cd "$work"
for f in small.log mid.log big.log; do
	./agentfs --format text read "$f" --offset -100 >tail.agentfs
	tail -n 100 "$f" >tail.tail
	cmp tail.agentfs tail.tail
done
./agentfs --format text read big.log --limit 100 | head -n 100 >head.agentfs
head -n 100 big.log | cmp - head.agentfs
./agentfs read big.log --offset -100 | python3 -c 'import json,sys; r=json.load(sys.stdin); print("big.log tail window:", {k: r[k] for k in ("startLine","endLine","totalLines","totalBytes")})'
./agentfs read mid.log --offset -100 | python3 -c 'import json,sys; r=json.load(sys.stdin); print("mid.log tail window:", {k: r[k] for k in ("startLine","endLine","totalLines","totalBytes")})'

# No shell (-N): these commands take a few milliseconds.
hyperfine -N --style basic --warmup 2 --runs "$runs" --export-json result.json \
	-n "read --offset -100, 2 MB" "./agentfs read small.log --offset -100" \
	-n "read --offset -100, 60 MB (lines counted)" "./agentfs read mid.log --offset -100" \
	-n "read --offset -100, 230 MB" "./agentfs read big.log --offset -100" \
	-n "tail -n 100, 2 MB" "tail -n 100 small.log" \
	-n "tail -n 100, 230 MB" "tail -n 100 big.log" \
	-n "read --limit 100 (head), 230 MB" "./agentfs read big.log --limit 100" \
	-n "agentfs version (start-up floor)" "./agentfs version"

# Medians are wall time; on a shared machine the CPU time (user+system,
# mean) is the steadier figure, as other processes' load does not count.
python3 - result.json <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
by = {r["command"]: r for r in res}
base = by["read --offset -100, 2 MB"]
cpu = lambda r: r["user"] + r["system"]
print("\n%-42s %10s %10s %10s" % ("command", "median ms", "cpu ms", "vs 2 MB"))
for r in res:
    print("%-42s %10.2f %10.2f %9.2fx" % (r["command"], r["median"] * 1000, cpu(r) * 1000, r["median"] / base["median"]))
big, tail = by["read --offset -100, 230 MB"], by["tail -n 100, 230 MB"]
head = by["read --limit 100 (head), 230 MB"]
print("\nread tail 230 MB / 2 MB: %.2f (median), %.2f (cpu)" % (big["median"] / base["median"], cpu(big) / cpu(base)))
print("read tail / tail -n 100 on 230 MB: %.2f (median), %.2f (cpu)" % (big["median"] / tail["median"], cpu(big) / cpu(tail)))
print("read tail / read head on 230 MB: %.2f (median), %.2f (cpu)" % (big["median"] / head["median"], cpu(big) / cpu(head)))
floor = by["agentfs version (start-up floor)"]
print("read tail 230 MB less start-up: %.2f ms (median), %.2f ms (cpu)" % ((big["median"] - floor["median"]) * 1000, (cpu(big) - cpu(floor)) * 1000))
EOF
