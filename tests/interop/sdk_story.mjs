// Interop: drive `cairn serve` with the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk from npm) and read `structuredContent` for a
// create and a query (spec/mcp.md "Structured results"). The SDK's client
// itself validates each structured result against the tool's outputSchema
// (it throws when one does not match). Exits non-zero on any mismatch.
//
// Usage: node tests/interop/sdk_story.mjs PATH-TO-CAIRN NODE-PROJECT-DIR
// where NODE-PROJECT-DIR holds node_modules/@modelcontextprotocol/sdk
// (.ci/run installs it under target/interop-node).

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";

const [bin, modules] = process.argv.slice(2);
if (!bin || !modules) {
  console.error("usage: node sdk_story.mjs PATH-TO-CAIRN NODE-PROJECT-DIR");
  process.exit(2);
}
const req = createRequire(join(resolve(modules), "package.json"));
const load = (p) => import(pathToFileURL(req.resolve(p)).href);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");

let failures = 0;
function check(label, got, want) {
  if (isDeepStrictEqual(got, want)) {
    console.log(`ok   ${label}`);
  } else {
    failures += 1;
    console.error(`MISMATCH ${label}\n  got:  ${JSON.stringify(got)}\n  want: ${JSON.stringify(want)}`);
  }
}
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

const project = mkdtempSync(join(tmpdir(), "cairn-ts-interop-"));
mkdirSync(join(project, ".git"));
const env = { ...process.env };
delete env.CAIRN_DB;
const transport = new StdioClientTransport({
  command: resolve(bin),
  args: ["serve"],
  cwd: project,
  env,
  stderr: "ignore",
});
const client = new Client({ name: "cairn-ts-interop", version: "0.0.0" });
try {
  await client.connect(transport);
  const d = new Date().toISOString().slice(0, 10);
  const kebab = `${d}-phase-2-wire-up-db`;

  const { tools } = await client.listTools();
  check("tool count", tools.length, 14);
  check(
    "every tool declares an object outputSchema",
    tools.filter((t) => t.outputSchema?.type !== "object").map((t) => t.name),
    [],
  );

  let r = await client.callTool({ name: "task_create", arguments: { name: "phase-2-wire-up-db" } });
  check("create text", text(r), `Created ${kebab}.`);
  check("create structuredContent", r.structuredContent, {
    slug: kebab,
    created: true,
    current: true,
    possibleDuplicates: [],
  });

  r = await client.callTool({ name: "task_create", arguments: { name: "phase 2 wire up db" } });
  check("second create text", text(r), `Created ${d}-phase-2-wire-up.`);
  check("second create possibleDuplicates", r.structuredContent?.possibleDuplicates, [
    { slug: kebab, name: "phase-2-wire-up-db", status: "active", score: 1 },
  ]);

  r = await client.callTool({
    name: "task_query",
    arguments: { query: "(-> (all) (:sort :slug :asc) (:ids))" },
  });
  check("query text", text(r), `2 tasks:\n- ${d}-phase-2-wire-up\n- ${kebab}`);
  check("query structuredContent", r.structuredContent, {
    shape: "ids",
    result: [`${d}-phase-2-wire-up`, kebab],
    truncated: null,
  });

  r = await client.callTool({ name: "task_query", arguments: { query: "(active)" } });
  check(
    "task set structuredContent slugs",
    (r.structuredContent?.result ?? []).map((t) => [t.slug, t.status, t["obs-count"]]).sort(),
    [
      [kebab, "active", 0],
      [`${d}-phase-2-wire-up`, "active", 0],
    ].sort(),
  );

  r = await client.callTool({ name: "task_get", arguments: { task_id: "nope" } });
  check("error is text only", [r.isError, text(r), r.structuredContent], [true, "No task nope.", undefined]);
} catch (e) {
  failures += 1;
  console.error(`FAILED ${e?.stack ?? e}`);
} finally {
  await client.close().catch(() => {});
  rmSync(project, { recursive: true, force: true });
}
if (failures > 0) {
  console.error(`typescript sdk story: ${failures} mismatches`);
  process.exit(1);
}
console.log("typescript sdk story: all checks match");
