#!/usr/bin/env bash
# find under a 60,000-rule .gitignore: agentfs find against rg --files and
# fdfind, with hyperfine (wall time) and GNU time (peak memory).
#
#   bench/ignore_large.sh [RUNS] [MIX] [RULES]
#
# RUNS defaults to 5 (a command whose first run takes over 5 s is run once),
# RULES to 60000. MIX is the share of the rule forms:
#   globs (default)  literal names 38%, *.ext 18%, dir/ 8%, anchored /a/b 18%,
#                    a/b 6%, prefix* and *suffix names 4%, true globs 4%
#                    (classes, ?, **, several stars), negations 4%;
#   few              the same with prefix/suffix and true globs at 0.25% each
#                    (150 rules each), the rest in the literal forms.
# IGNORE_TREE=DIR makes the tree in DIR and keeps it (or reuses it).
#
# The tree is a copy of the Go source tree made a git repository (rg and fd
# honour .gitignore only inside one), with the generated .gitignore at its
# top. A few hundred rules name what the tree holds, so that the walk prunes
# and re-includes; the rest name nothing, as most rules of a large
# generated ignore file do. The file is kept under 1 MiB, the part of an
# ignore file agentfs reads. agentfs find walks the whole tree without
# printing (an offset past the end); rg --files and fdfind print every path.
# rg and fd leave out hidden files, which agentfs lists: the counts printed
# differ by those.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
mix=${2:-globs}
rules=${3:-60000}
for tool in rg fdfind hyperfine /usr/bin/time python3 git; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y ripgrep fd-find hyperfine time git" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/agentfs
. bench/build.sh && build_agentfs "$bin"
tree=${IGNORE_TREE:-$tmp/src}
if [[ ! -e $tree ]]; then
  cp -r "$(go env GOROOT)/src" "$tree"
  git -C "$tree" init -q
fi
python3 - "$tree" "$rules" "$mix" <<'PY'
import os, random, sys
tree, n, mix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rnd = random.Random(1)
# What the tree holds, for the rules that name it: file names, extensions
# of at most 3 files, and leaf directories whose name is unique, so that
# those rules prune little of the tree.
from collections import Counter
files, leaves, names, exts, dirnames = [], [], set(), Counter(), Counter()
for d, ds, fs in os.walk(tree):
    ds[:] = sorted(x for x in ds if x != ".git")
    rel = os.path.relpath(d, tree)
    dirnames.update(ds)
    if not ds and rel != ".":
        leaves.append(rel)
    for x in sorted(fs):
        if x == ".gitignore" and rel == ".":
            continue
        files.append(x if rel == "." else rel + "/" + x)
        names.add(x)
        if "." in x:
            exts[x.rsplit(".", 1)[1]] += 1
names = sorted(names)
exts = sorted(e for e, k in exts.items() if k <= 3)
leaves = sorted(d for d in leaves if dirnames[os.path.basename(d)] == 1)
def word(k=None):
    return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(k or rnd.randint(4, 9)))
def real(p):
    return rnd.random() < p
globs = {"globs": 0.04, "few": 0.0025}[mix]
# Cumulative shares: the literal forms share what the globs leave.
lit = (0.96 - 2 * globs) / 0.88
bounds = [0.38 * lit, 0.56 * lit, 0.64 * lit, 0.82 * lit, 0.88 * lit]
bounds += [bounds[-1] + globs, bounds[-1] + 2 * globs]
out = []
for i in range(n):
    r = rnd.random()
    if r < bounds[0]:    # a literal name
        out.append(rnd.choice(names) if real(0.004) else word() + "." + rnd.choice(["txt", "o", "tmp", "x"]))
    elif r < bounds[1]:  # *.ext
        out.append("*." + (rnd.choice(exts) if real(0.002) else word(5)))
    elif r < bounds[2]:  # dir/
        out.append((os.path.basename(rnd.choice(leaves)) if real(0.003) else word()) + "/")
    elif r < bounds[3]:  # anchored /a/b
        out.append("/" + (rnd.choice(files + leaves) if real(0.01) else word(3) + "/" + word()))
    elif r < bounds[4]:  # a/b: anchored by its slash
        out.append(word(3) + "/" + word() + rnd.choice(["", "/"]))
    elif r < bounds[5]:  # prefix* and *suffix names
        out.append(rnd.choice([word(5) + "*", "*" + word(5), "*_" + word(4) + ".go"]))
    elif r < bounds[6]:  # true globs
        out.append(rnd.choice([
            "*" + word(3) + "*." + word(2), word(3) + "[0-9]*", "?" + word(4) + "*",
            "**/" + word() + "/*.o", word(3) + "/**/*." + word(3), "[!a-m]" + word(4) + "?",
        ]))
    else:                # negations, some of names the rules above ignore
        out.append("!" + (rnd.choice(names) if real(0.05) else word() + ".txt"))
data = "\n".join(out) + "\n"
assert len(data) < 1 << 20, f"{len(data)} bytes: over the 1 MiB agentfs reads"
open(os.path.join(tree, ".gitignore"), "w").write(data)
PY
cd "$tree"
echo "tree: copy of $(go env GOROOT)/src ($(find . -type f -not -path './.git/*' | wc -l) files)"
echo ".gitignore: $(wc -l <.gitignore) rules ($mix), $(wc -c <.gitignore) bytes," \
  "$(grep -c '[][*?]' .gitignore) with a glob character"
# Files found, paging through agentfs find.
found=0 off=0
while [[ -n $off ]]; do
  read -r n off < <("$bin" find '**' --type file --limit 1000 --offset "$off" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(len(r["results"]), r.get("nextOffset", ""))')
  found=$((found + n))
done
echo "files found: agentfs $found (hidden ones included), rg --files $(rg --files | wc -l), fdfind $(fdfind -t f | wc -l)"
echo "$(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
cmds=("$bin find '**' --limit 1000 --offset 1000000" "rg --files" "fdfind")
i=0
for c in "${cmds[@]}"; do
  # The first run gives the peak resident set size (GNU time, KiB) and
  # whether the command is too slow to repeat.
  read -r secs kib < <( { eval "/usr/bin/time -f '%e %M' $c" >/dev/null; } 2>&1 | tail -1)
  r=$runs
  if python3 -c "import sys; sys.exit(0 if $secs > 5 else 1)"; then
    r=1
  fi
  hyperfine -N -w $((r > 1 ? 1 : 0)) -r "$r" --export-json "$tmp/$i.json" "$c" >/dev/null
  echo "$kib" >"$tmp/$i.mem"
  i=$((i + 1))
done
python3 - "$tmp" "$i" <<'PY'
import json, sys
tmp, n = sys.argv[1], int(sys.argv[2])
print("| command | runs | median ms | min ms | max ms | CPU ms (user+sys) | peak MiB |")
print("|:--|--:|--:|--:|--:|--:|--:|")
for i in range(n):
    r = json.load(open(f"{tmp}/{i}.json"))["results"][0]
    m = int(open(f"{tmp}/{i}.mem").read()) / 1024
    cmd = r["command"].replace(tmp + "/", "")
    print(f"| `{cmd}` | {len(r['times'])} | {r['median']*1000:.0f} | {r['min']*1000:.0f} | {r['max']*1000:.0f} | {(r['user']+r['system'])*1000:.0f} | {m:.1f} |")
PY
