#!/usr/bin/env python3
"""Runs the mutants that gremlins reports NOT COVERED or TIMED OUT, one by one.

gremlins runs a mutant only when its position lies in a block of the
coverage profile, and Go's profile has no block for the expression of a
switch case (the case body's block starts after the colon), nor for
constant declarations: such mutants are NOT COVERED even where the tests
run the line. This applies each one (the same token swap as gremlins) to
the package in the scratch copy, runs the package's tests, restores the
file, and records KILLED, LIVED, TIMED OUT or NOT VIABLE in the gremlins
JSON, marked "rerun". A mutant gremlins timed out is run again the same
way: its timeout comes from one run of the tests at its start, and a
machine busier later times out mutants that the tests would kill or let
live. Run by scripts/mutation.sh.

Usage: mutation-uncovered.py SCRATCH DIR RESULT.json FILE...
"""
import json
import os
import subprocess
import sys
import time

SWAP = {
    "ARITHMETIC_BASE": {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*"},
    "INVERT_NEGATIVES": {"-": "+"},
    "CONDITIONALS_BOUNDARY": {">=": ">", ">": ">=", "<=": "<", "<": "<="},
    "CONDITIONALS_NEGATION": {"==": "!=", "!=": "==", ">=": "<", ">": "<=", "<=": ">", "<": ">="},
    "INCREMENT_DECREMENT": {"++": "--", "--": "++"},
}


def run_tests(pkg_dir, timeout):
    cmd = ["go", "test", "-count=1", "-failfast", "."]
    try:
        p = subprocess.run(cmd, cwd=pkg_dir, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "TIMED OUT"
    if p.returncode == 0:
        return "LIVED"
    if "[build failed]" in p.stdout or "[setup failed]" in p.stdout:
        return "NOT VIABLE"
    return "KILLED"


def main():
    scratch, d, result = sys.argv[1], sys.argv[2], sys.argv[3]
    chosen = set(sys.argv[4:])
    pkg_dir = os.path.join(scratch, d)
    data = json.load(open(result))
    # INVERT_NEGATIVES of a "-" is the same change as its ARITHMETIC_BASE,
    # which mutation.sh counts alone: it is not run twice.
    todo = [(f, m) for f in data["files"] if f"{d}/{f['file_name']}" in chosen
            for m in f["mutations"] if m["status"] in ("NOT COVERED", "TIMED OUT")
            and m["type"] != "INVERT_NEGATIVES"]
    if not todo:
        return
    start = time.monotonic()
    if run_tests(pkg_dir, 600) != "LIVED":
        sys.exit(f"mutation-uncovered: the tests of {d} fail without a mutant")
    timeout = 10 * (time.monotonic() - start) + 10
    print(f"mutation.sh: {d}: {len(todo)} mutant(s) gremlins did not cover or timed out", file=sys.stderr)
    for f, m in todo:
        path = os.path.join(pkg_dir, f["file_name"])
        orig = open(path, "rb").read()
        lines = orig.split(b"\n")
        line, col = lines[m["line"] - 1], m["column"] - 1
        swap = SWAP[m["type"]]
        tok = next(t for t in sorted(swap, key=len, reverse=True)
                   if line[col:col + len(t)] == t.encode())
        lines[m["line"] - 1] = line[:col] + swap[tok].encode() + line[col + len(tok):]
        try:
            open(path, "wb").write(b"\n".join(lines))
            m["status"] = run_tests(pkg_dir, timeout)
        finally:
            open(path, "wb").write(orig)
        m["rerun"] = True
    json.dump(data, open(result, "w"))


main()
