// Calling agentfs from Node: one process per call, or one batch for many.
import { execFileSync, spawn } from "node:child_process";
import { createInterface } from "node:readline";

// One call: its result, or an exception carrying the error object.
function agentfs(tool, args) {
  try {
    const out = execFileSync("agentfs", [tool, "--json", JSON.stringify(args)],
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return JSON.parse(out);
  } catch (e) {
    throw new Error(JSON.parse(e.stderr).error.code);
  }
}

// Page through a file: each result says where the next window starts, and
// its version makes the next window STALE if the file changed meanwhile.
let args = { path: "notes.txt", limit: 2 };
for (;;) {
  const page = agentfs("read", args);
  process.stdout.write(page.content);
  if (page.nextOffset === undefined) break;
  args = { ...args, offset: page.nextOffset, byteOffset: page.nextByteOffset,
    expectedVersion: page.version };
}

agentfs("edit", { path: "notes.txt", oldText: "second", newText: "2nd" });

// Many calls in one process: JSON Lines in, one answer per line, in order.
const batch = spawn("agentfs", ["batch"], { stdio: ["pipe", "pipe", "inherit"] });
["2nd", "missing"].forEach((query, id) =>
  batch.stdin.write(JSON.stringify({ tool: "grep", args: { query, path: "notes.txt" }, id }) + "\n"));
batch.stdin.end();
for await (const line of createInterface({ input: batch.stdout })) {
  const answer = JSON.parse(line);
  console.log(answer.id, answer.result.count);
}
