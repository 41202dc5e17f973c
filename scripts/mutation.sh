#!/usr/bin/env bash
# Mutation testing of the safety-critical code with gremlins: each mutant
# (a condition negated, a boundary moved, an operator changed) is one test
# run of its package; a mutant that no test kills ("lived") is a bug the
# suite cannot see.
#
# Usage: scripts/mutation.sh [--dry-run] [FILE|PACKAGE_DIR...]
#   default: the safety-critical files (confinement, locks, atomic write,
#   preconditions, edit planning, paging) listed below. --dry-run lists the
#   mutants without running them. MUTATION_WORKERS (default 2) is how many
#   mutants run at once.
#
# gremlins mutates whole packages, but only the lines that `git diff` shows
# when given --diff. So the work tree is copied to a scratch repository
# whose first commit lacks the chosen files and whose second adds them:
# every line of those files, and no other, is new against the first commit.
# The tests are run with -short (through GOFLAGS), which shrinks the long
# stress loops, and without go vet, which CI runs once and which would
# otherwise run again for each mutant.
#
# gremlins leaves out the mutants it finds outside its coverage blocks
# ("not covered"): those of a switch case's expression and of constants as
# well as those of lines no test runs. scripts/mutation-uncovered.py then
# runs each of them the same way, and runs again each that gremlins timed
# out (its timeout is 10 times its one coverage run, taken at the start,
# which a busy machine can overrun), with a timeout of 10 times a run of
# the package's tests just before.
#
# Prints (scripts/mutation-summary.py), per file, the mutants killed, timed
# out (counted as killed: the tests hang or run away), lived, and accepted
# as equivalent (scripts/mutation-equivalent.txt). Exits 1 when a mutant
# lives that is not listed as equivalent, or when a listed equivalent
# mutant of a file that ran no longer lives. Results: mutation-DIR.json,
# one per package. On a busy machine a timing test can fail under any
# mutant and count it as killed (an equivalent one too, which the summary
# then points out): take the table of record on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$PATH:$(go env GOPATH)/bin"
command -v gremlins >/dev/null || go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.5.0
export GOFLAGS="${GOFLAGS:-} -short -vet=off"
dry=()
if [ "${1:-}" = --dry-run ]; then
  dry=(--dry-run)
  shift
fi

[ $# -gt 0 ] || set -- \
  core/precondition.go core/commit.go localfs/write.go localfs/durable.go \
  localfs/lock.go localfs/localfs.go localfs/dirstack.go core/edit_plan.go \
  core/walkpage.go localfs/removetree.go localfs/tempfiles.go \
  localfs/mounts_linux.go core/read.go

files=()
for arg in "$@"; do
  arg=${arg#./}
  arg=${arg%/}
  if [ -d "$arg" ]; then
    for f in "$arg"/*.go; do
      case $f in *_test.go) ;; *) files+=("$f") ;; esac
    done
  elif [ -f "$arg" ]; then
    files+=("$arg")
  else
    echo "mutation.sh: no such file or package directory: $arg" >&2
    exit 2
  fi
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Each mutant compiles its package and every test binary above it anew,
# and the build cache keeps them all: a full run left 69 GB in the user's
# cache. A private cache, deleted with the scratch copy, costs one build of
# the dependencies (about 20 s on 2 cores).
export GOCACHE="$scratch/gocache"
git ls-files -z --cached --others --exclude-standard |
  (cd "$root" && xargs -0 cp --parents -t "$scratch")
git -C "$scratch" init -q
git -C "$scratch" config user.email mutation@localhost
git -C "$scratch" config user.name mutation
# gremlins runs `git diff` in the package directory and matches the file
# names relative to it.
git -C "$scratch" config diff.relative true
git -C "$scratch" add -A
git -C "$scratch" rm -q --cached -- "${files[@]}"
git -C "$scratch" commit -q -m without
git -C "$scratch" add -- "${files[@]}"
git -C "$scratch" commit -q -m with

outs=()
for dir in $(printf '%s\n' "${files[@]}" | xargs -n1 dirname | sort -u); do
  out="$scratch/mutation-${dir//\//-}.json"
  echo "mutation.sh: $dir: $(printf '%s\n' "${files[@]}" | grep -c "^$dir/[^/]*$") file(s)" >&2
  (cd "$scratch/$dir" &&
    gremlins unleash --silent "${dry[@]}" --diff HEAD~1 --workers "${MUTATION_WORKERS:-2}" \
      --timeout-coefficient "${MUTATION_TIMEOUT_COEFFICIENT:-10}" -o "$out" "$scratch/$dir")
  [ ${#dry[@]} -gt 0 ] || python3 "$root/scripts/mutation-uncovered.py" "$scratch" "$dir" "$out" "${files[@]}"
  outs+=("$dir=$out")
done

# Copied out before the summary, which exits 1 on a survivor; read from the
# scratch copy, so that runs side by side do not read each other's.
cp "$scratch"/mutation-*.json "$root"/
python3 "$root/scripts/mutation-summary.py" "$root/scripts/mutation-equivalent.txt" "${files[@]}" -- "${outs[@]}"
