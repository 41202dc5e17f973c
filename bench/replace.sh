#!/usr/bin/env bash
# Benchmark of a replace over Go's source tree: every "errors.New(" becomes
# "errors.Newx(", by agentfs replace (one transaction: every changed file
# staged, synced, renamed, its directory synced) against what a user would
# run instead, rg -l | xargs sed -i (no fsync, no atomicity across files),
# the same followed by sync -f (durable, still not atomic), and rg
# --replace, which only prints. The tree is restored before each
# run, outside the measured time.
#
# Usage: bench/replace.sh [RUNS]   (needs hyperfine, rg and sed; run from the repository)
set -eu

runs=${1:-5}
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/agentfs-bench-replace.XXXXXX)
trap 'rm -rf "$work"' EXIT
. bench/build.sh && build_agentfs "$work/agentfs"
cp -a "$(go env GOROOT)/src" "$work/pristine"
restore="rm -rf $work/src && cp -a $work/pristine $work/src"
eval "$restore"
echo "files with a match: $(cd "$work/src" && rg -l -F 'errors.New(' | wc -l), matches: $(cd "$work/src" && rg -o -F 'errors.New(' | wc -l)"

cd "$work"
hyperfine --runs "$runs" --prepare "$restore" \
  -n "agentfs replace" "$work/agentfs --root $work/src replace 'errors.New(' 'errors.Newx('" \
  -n "rg -l | xargs sed -i" "cd $work/src && rg -l -F 'errors.New(' | xargs sed -i 's/errors\.New(/errors.Newx(/g'" \
  -n "rg -l | xargs sed -i; sync -f" "cd $work/src && rg -l -F 'errors.New(' | xargs sed -i 's/errors\.New(/errors.Newx(/g' && sync -f ." \
  -n "rg --replace (prints only)" "cd $work/src && rg -F 'errors.New(' --replace 'errors.Newx(' > /dev/null"
