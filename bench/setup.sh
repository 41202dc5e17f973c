# Sourced by the write and edit benchmarks: build agentfs into bench/out,
# make a scratch directory (removed on exit) with its own lock state, and
# enter it. Sets out (bench/out, from the repository), agentfs (the binary)
# and work (the scratch directory).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=bench/out
mkdir -p "$out"
. bench/build.sh && build_agentfs "$out/agentfs"
agentfs=$PWD/$out/agentfs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export AGENTFS_STATE_DIR=$work/state
mkdir -p "$work/w"
cd "$work/w"
