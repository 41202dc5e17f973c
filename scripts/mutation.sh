#!/usr/bin/env bash
# Mutation testing of the safety-critical code with gremlins: each mutant
# (a condition negated, a boundary moved, an operator changed) is one test
# run of its package; a mutant that no test kills ("lived") is a bug the
# suite cannot see. Prints, per file, the mutants killed and lived, and the
# place of each one that lived.
#
# Usage: scripts/mutation.sh [PACKAGE...]   (default: ./localfs ./core)
# The whole run takes hours on two cores (every mutant runs a package's
# tests); name a package to run part of it. Results: mutation-PKG.json.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:$(go env GOPATH)/bin"
command -v gremlins >/dev/null || go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.5.0
[ $# -gt 0 ] || set -- ./localfs ./core
for pkg in "$@"; do
  out="mutation-$(basename "$pkg").json"
  gremlins unleash --silent --workers "$(nproc)" --timeout-coefficient 3 -o "$out" "$pkg"
  python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{'file':32} {'killed':>7} {'lived':>6}")
for f in sorted(d["files"], key=lambda f: f["file_name"]):
    ms = f["mutations"]
    killed = sum(m["status"] == "KILLED" for m in ms)
    lived = [m for m in ms if m["status"] == "LIVED"]
    if killed or lived:
        print(f"{f['file_name']:32} {killed:7} {len(lived):6}")
    for m in lived:
        print(f"    lived: {m['type']} at {f['file_name']}:{m['line']}:{m['column']}")
print(f"efficacy {d['test_efficacy']:.1f}%, mutant coverage {d['mutations_coverage']:.1f}%")
PY
done
