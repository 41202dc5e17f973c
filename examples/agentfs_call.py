"""Calling agentfs from Python: one process per call, or one batch for many."""
import json
import subprocess


def agentfs(tool, **args):
    """One call: its result, or an exception carrying the error object."""
    p = subprocess.run(["agentfs", tool, "--json", json.dumps(args)],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RuntimeError(json.loads(p.stderr)["error"])
    return json.loads(p.stdout)


# Page through a file: each result says where the next window starts, and
# its version makes the next window STALE if the file changed meanwhile.
args = {"path": "notes.txt", "limit": 2}
while True:
    page = agentfs("read", **args)
    print(page["content"], end="")
    if "nextOffset" not in page:
        break
    args.update(offset=page["nextOffset"], byteOffset=page["nextByteOffset"],
                expectedVersion=page["version"])

agentfs("edit", path="notes.txt", oldText="second", newText="2nd")

# Many calls in one process: JSON Lines in, one answer per line, in order.
batch = subprocess.Popen(["agentfs", "batch"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
for i, query in enumerate(["2nd", "missing"]):
    batch.stdin.write(json.dumps({"tool": "grep", "args": {"query": query, "path": "notes.txt"}, "id": i}) + "\n")
batch.stdin.close()
for line in batch.stdout:
    answer = json.loads(line)
    print(answer["id"], answer["result"]["count"])
batch.wait()
