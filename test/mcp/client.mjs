// End-to-end test of agentfs mcp with the official TypeScript SDK's client,
// which validates each structuredContent against the tool's outputSchema.
//
//   node client.mjs AGENTFS ROOT
//
// ROOT holds a.txt ("alpha\nbeta\n"). The client lists the tools, calls
// read, edit and grep, writes and reads an image and a PDF, and error cases; it prints what it saw as one JSON
// object and exits 1 on the first check that fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [agentfs, root] = process.argv.slice(2);
const client = new Client({ name: "agentfs-e2e", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: agentfs, args: ["mcp", "--root", root], stderr: "inherit" }));

function check(ok, what, got) {
  if (!ok) {
    console.error(`FAIL: ${what}: ${JSON.stringify(got)}`);
    process.exit(1);
  }
}
// The text content is the result's JSON, the same as structuredContent.
function sameAsText(res) {
  return res.content.length === 1 && res.content[0].type === "text" &&
    JSON.stringify(JSON.parse(res.content[0].text)) === JSON.stringify(res.structuredContent);
}
function errorCode(res) {
  return res.isError && res.structuredContent === undefined ? JSON.parse(res.content[0].text).error.code : null;
}

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
check(names.includes("agentfs_read") && names.includes("agentfs_apply_patch"), "tools/list", names);
check(tools.every((t) => t.outputSchema && t.annotations), "every tool has an outputSchema and annotations", tools);

const read = await client.callTool({ name: "agentfs_read", arguments: { path: "a.txt" } });
check(!read.isError && read.structuredContent.content === "alpha\nbeta\n" && sameAsText(read), "read", read);

const edit = await client.callTool({
  name: "agentfs_edit",
  arguments: { path: "a.txt", oldText: "beta", newText: "gamma", expectedVersion: read.structuredContent.version },
});
check(!edit.isError && edit.structuredContent.editsApplied === 1 && sameAsText(edit), "edit", edit);

const grep = await client.callTool({ name: "agentfs_grep", arguments: { query: "gamma" } });
check(!grep.isError && grep.structuredContent.count === 1 && grep.structuredContent.files[0].path === "a.txt", "grep", grep);

// An image comes as one, after the result without its data; the client
// checks it against the protocol's image content.
const dot = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const wrote = await client.callTool({ name: "agentfs_write", arguments: { path: "dot.png", contentBase64: dot } });
check(!wrote.isError, "write of an image", wrote);
const image = await client.callTool({ name: "agentfs_read", arguments: { path: "dot.png" } });
check(!image.isError && image.content.length === 2 && image.content[0].type === "text" &&
  JSON.parse(image.content[0].text).data === undefined && image.content[1].type === "image" &&
  image.content[1].mimeType === "image/png" && image.content[1].data === dot && image.structuredContent.data === dot,
  "read of an image", image);

// A PDF comes as an embedded resource, a document, after the result
// without its data; the client checks it against the protocol's resource.
const pdf = Buffer.from("%PDF-1.4\n%%EOF\n").toString("base64");
const wrotePDF = await client.callTool({ name: "agentfs_write", arguments: { path: "doc.pdf", contentBase64: pdf } });
check(!wrotePDF.isError, "write of a PDF", wrotePDF);
const doc = await client.callTool({ name: "agentfs_read", arguments: { path: "doc.pdf" } });
check(!doc.isError && doc.content.length === 2 && doc.content[0].type === "text" &&
  JSON.parse(doc.content[0].text).data === undefined && doc.content[1].type === "resource" &&
  doc.content[1].resource.mimeType === "application/pdf" && doc.content[1].resource.blob === pdf &&
  doc.content[1].resource.uri === "agentfs:doc.pdf" && doc.structuredContent.data === pdf,
  "read of a PDF", doc);

// Errors are results with isError and the stable code, not protocol errors.
const missing = await client.callTool({ name: "agentfs_read", arguments: { path: "missing.txt" } });
check(errorCode(missing) === "NOT_FOUND", "read of a missing file", missing);
const stale = await client.callTool({
  name: "agentfs_edit",
  arguments: { path: "a.txt", oldText: "alpha", newText: "omega", expectedVersion: read.structuredContent.version },
});
check(errorCode(stale) === "STALE", "edit with an old version", stale);

await client.close();
console.log(JSON.stringify({
  tools: names,
  read: read.structuredContent,
  edit: edit.structuredContent,
  grep: grep.structuredContent,
  image: image.content.map((c) => c.type),
  pdf: doc.content.map((c) => c.type),
  errors: [errorCode(missing), errorCode(stale)],
}));
