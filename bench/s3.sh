#!/usr/bin/env bash
# The tools on an s3:// root against a local folder holding the same tree:
# the first page of ls (directories of 100 and 1,000 objects) and of find
# (trees of 100 and 1,000), a read window at the start and at the end of a
# 64 MiB object, a grep of trees of 100 and 1,000 objects, and an edit round
# trip (read, then edit), and mv of a directory of 100 objects; with the
# 10,000-object trees (AGENTFS_BENCH_10K=1, set here, which go test leaves
# unset) the first page of ls of 10,000 and of find in a tree of 10,000, and
# a grep of it. Each row gives the time per operation and, on the store,
# the requests and the body bytes it fetched (req/op, B-fetched/op). It
# runs s3fs's BenchmarkTools, through core, without a process start.
#
# Usage: bench/s3.sh [RUNS]   (versitygw on PATH or in ~/go/bin; run from the repository)
#
# versitygw is started on a free loopback port unless AGENTFS_TEST_S3_ENDPOINT
# names a server (its keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).
set -euo pipefail
runs=${1:-10}
cd "$(dirname "$0")/.."
export PATH="$PATH:$(go env GOPATH)/bin"
if [ -z "${AGENTFS_TEST_S3_ENDPOINT:-}" ]; then
  command -v versitygw >/dev/null || { echo "versitygw: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0" >&2; exit 1; }
  dir=$(mktemp -d)
  for port in $(seq 17200 17300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
  done
  ROOT_ACCESS_KEY=k ROOT_SECRET_KEY=s versitygw --port "127.0.0.1:$port" posix "$dir" >"$dir.log" 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null; rm -rf "$dir" "$dir.log"' EXIT
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
  export AGENTFS_TEST_S3_ENDPOINT="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=k AWS_SECRET_ACCESS_KEY=s
fi
AGENTFS_BENCH_10K=1 go test ./s3fs -run '^$' -bench Tools -benchtime "${runs}x" -timeout 60m | grep '^Benchmark'
