// Drives the official TypeScript MCP client against MCP servers twice:
// directly (stdio, as configured) and through tooldex's façade
// (streamable HTTP), and prints what each side got as one JSON document
// on stdout, for the Go test TestTypeScriptClientThroughFacade to compare.
//
// usage: node compare-client.mjs <plan.json>
// plan: {"facade": "http://127.0.0.1:port/mcp",
//        "roots": [{"uri": "file:///...", "name": "..."}],
//        "servers": {"<name>": {"command": "node", "args": [...],
//                    "calls": [{"tool": "<tool>", "arguments": {...}, "progress": true}]}}}
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));

// A client with the capabilities the bridge declares for these servers
// (sampling, elicitation, roots), so both sides see the same tools.
async function connect(transport) {
  const client = new Client({ name: "tooldex-e2e", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: plan.roots }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => { throw new Error("no sampling in this test"); });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
  await client.connect(transport);
  return client;
}

async function listAll(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

async function run(client, name, call) {
  const progress = [];
  const options = { timeout: 30000 };
  if (call.progress) {
    options.onprogress = (p) => progress.push(p);
  }
  try {
    const result = await client.callTool({ name, arguments: call.arguments ?? {} }, undefined, options);
    return { result, progress };
  } catch (e) {
    return { error: String(e?.message ?? e), progress };
  }
}

const out = { servers: {} };
const facade = await connect(new StreamableHTTPClientTransport(new URL(plan.facade)));
out.facadeTools = await listAll(facade);
for (const [name, sc] of Object.entries(plan.servers)) {
  const direct = await connect(new StdioClientTransport({ command: sc.command, args: sc.args, stderr: "ignore" }));
  const got = { directTools: await listAll(direct), calls: [] };
  for (const call of sc.calls ?? []) {
    got.calls.push({
      tool: call.tool,
      direct: await run(direct, call.tool, call),
      facade: await run(facade, `mcp__${name}__${call.tool}`, call),
    });
  }
  await direct.close();
  out.servers[name] = got;
}
await facade.close();
process.stdout.write(JSON.stringify(out));
