#!/usr/bin/env python3
"""Prints the table of scripts/mutation.sh from its gremlins results.

Usage: mutation-summary.py EQUIVALENT_LIST FILE... -- DIR=RESULT.json...

Per FILE: the mutants killed, timed out, lived, accepted as equivalent (the
list's FILE:LINE:COLUMN TYPE entries) and not covered. Exits 1 when a
mutant lives that the list does not accept, or when an entry of the list
for a FILE names no mutant of the run (stale: the code moved). An entry
whose mutant was killed is printed, not failed: a test that fails on a busy
machine kills a mutant it cannot tell, or the entry is wrong.
"""
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

rows, lived, notcov, seen, found = [], [], [], set(), set()
for name, ms in mutations.items():
    count = dict.fromkeys(["KILLED", "TIMED OUT", "LIVED", "equivalent", "NOT COVERED", "RUNNABLE", "NOT VIABLE"], 0)
    for m in sorted(ms, key=lambda m: (m["line"], m["column"], m["type"])):
        status = m["status"]
        key = (f"{name}:{m['line']}:{m['column']}", m["type"])
        found.add(key)
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
listed = [k for k in equivalent if k[0].rsplit(":", 2)[0] in chosen and k not in seen]
stale = [k for k in listed if k not in found]
for key in sorted(set(listed) - set(stale)):
    print(f"    killed although listed as equivalent (a flaky test, or a wrong entry): {key[0]} {key[1]}")
for key in sorted(stale):
    print(f"    stale equivalent entry (no such mutant): {key[0]} {key[1]}")
sys.exit(1 if lived or stale else 0)
