#!/usr/bin/env bash
# Mutation testing of the safety-critical code with gremlins: each mutant
# (a condition negated, a boundary moved, an operator changed) is one test
# run of its package; a mutant that no test kills ("lived") is a bug the
# suite cannot see.
#
# Usage: scripts/mutation.sh [--dry-run] [FILE|PACKAGE_DIR...]
#   default: the safety-critical files (confinement, locks, atomic write,
#   preconditions, edit planning, paging) listed below.
#
# gremlins mutates whole packages, but only the lines that `git diff` shows
# when given --diff. So the work tree is copied to a scratch repository
# whose first commit lacks the chosen files and whose second adds them:
# every line of those files, and no other, is new against the first commit.
# The tests are run with -short (through GOFLAGS), which shrinks the long
# stress loops.
#
# gremlins leaves out the mutants it finds outside its coverage blocks
# ("not covered"): those of a switch case's expression and of constants as
# well as those of lines no test runs. scripts/mutation-uncovered.py then
# runs each of them the same way, and runs again each that gremlins timed
# out (its timeout is 10 times its one coverage run, taken at the start,
# which a busy machine can overrun), with a timeout of 10 times a run of
# the package's tests just before.
#
# Prints, per file, the mutants killed, timed out (counted as killed: the
# tests hang or run away), lived, and accepted as equivalent
# (scripts/mutation-equivalent.txt).
# Exits 1 when a mutant lives that is not listed as equivalent, or when a
# listed equivalent mutant of a file that ran no longer lives. Results:
# mutation-DIR.json, one per package.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$PATH:$(go env GOPATH)/bin"
command -v gremlins >/dev/null || go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.5.0
export GOFLAGS="${GOFLAGS:-} -short"
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
  out="$root/mutation-${dir//\//-}.json"
  echo "mutation.sh: $dir: $(printf '%s\n' "${files[@]}" | grep -c "^$dir/[^/]*$") file(s)" >&2
  (cd "$scratch/$dir" &&
    gremlins unleash --silent "${dry[@]}" --diff HEAD~1 --workers "${MUTATION_WORKERS:-2}" \
      --timeout-coefficient "${MUTATION_TIMEOUT_COEFFICIENT:-10}" -o "$out" "$scratch/$dir")
  [ ${#dry[@]} -gt 0 ] || python3 "$root/scripts/mutation-uncovered.py" "$scratch" "$dir" "$out" "${files[@]}"
  outs+=("$dir=$out")
done

python3 - "$root/scripts/mutation-equivalent.txt" "${files[@]}" -- "${outs[@]}" <<'PY'
import json, sys

args = sys.argv[1:]
equiv_path = args[0]
sep = args.index("--")
chosen = set(args[1:sep])
equivalent = {}
for raw in open(equiv_path):
    line = raw.strip()
    if not line or line.startswith("#"):
        continue
    place, mtype, why = line.split(None, 2)
    equivalent[(place, mtype)] = why

mutations = dict.fromkeys(chosen, [])
for spec in args[sep + 1:]:
    d, path = spec.split("=", 1)
    for f in json.load(open(path))["files"]:
        name = f"{d}/{f['file_name']}"
        if name in chosen:
            # gremlins makes two mutants of each "-", ARITHMETIC_BASE and
            # INVERT_NEGATIVES, that are one change (to "+"): count it once.
            arith = {(m["line"], m["column"]) for m in f["mutations"] if m["type"] == "ARITHMETIC_BASE"}
            mutations[name] = [m for m in f["mutations"]
                               if m["type"] != "INVERT_NEGATIVES" or (m["line"], m["column"]) not in arith]

rows, lived, notcov, seen = [], [], [], set()
for name, ms in mutations.items():
    count = dict.fromkeys(["KILLED", "TIMED OUT", "LIVED", "equivalent", "NOT COVERED", "RUNNABLE", "NOT VIABLE"], 0)
    for m in sorted(ms, key=lambda m: (m["line"], m["column"], m["type"])):
        status = m["status"]
        key = (f"{name}:{m['line']}:{m['column']}", m["type"])
        if status == "LIVED" and key in equivalent:
            status = "equivalent"
            seen.add(key)
        if status in count:
            count[status] += 1
        if status == "LIVED":
            lived.append(f"{key[0]} {key[1]}")
        elif status == "NOT COVERED":
            notcov.append(f"{key[0]} {key[1]}")
    rows.append((name, count))

columns = {"KILLED": "killed", "TIMED OUT": "timeout", "LIVED": "lived", "equivalent": "equiv", "NOT COVERED": "notcov"}
if any(c["RUNNABLE"] for _, c in rows):
    columns["RUNNABLE"] = "runnable"
total = dict.fromkeys(columns, 0)
print(f"{'file':28}" + "".join(f"{h:>9}" for h in columns.values()))
for name, c in sorted(rows):
    for k in total:
        total[k] += c[k]
    print(f"{name:28}" + "".join(f"{c[k]:9}" for k in columns))
print(f"{'total':28}" + "".join(f"{total[k]:9}" for k in columns))
for key in sorted(seen):
    print(f"    equivalent: {key[0]} {key[1]}: {equivalent[key]}")
for m in lived:
    print(f"    lived: {m}")
for m in notcov:
    print(f"    not covered: {m}")
stale = [k for k in equivalent if k[0].rsplit(":", 2)[0] in chosen and k not in seen]
for key in sorted(stale):
    print(f"    stale equivalent entry (that mutant did not live): {key[0]} {key[1]}")
sys.exit(1 if lived or stale else 0)
PY
