// An MCP server (the official TypeScript SDK's low-level Server, stdio)
// whose one tool has every tool field and returns one block of every MCP
// content type, annotated and with _meta, and structured content; it
// reports progress when the request has a progressToken. The e2e test
// TestTypeScriptClientThroughFacade compares what a client gets from it
// directly and through tooldex.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const icon = { src: "https://example.com/icon.png", mimeType: "image/png", sizes: ["48x48", "96x96"], theme: "dark" };
const annotations = { audience: ["user"], priority: 0.25, lastModified: "2025-01-12T15:00:58Z" };
const meta = { "example.com/trace": { id: "abc", n: 3 } };

const tool = {
  name: "all_content",
  title: "All content",
  description: "Returns one block of every MCP content type.",
  inputSchema: { type: "object", properties: { n: { type: "integer", minimum: 0 } } },
  outputSchema: { type: "object", properties: { count: { type: "integer" }, items: { type: "array" } }, required: ["count"] },
  icons: [icon],
  annotations: { title: "All!", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  _meta: { "ui/resourceUri": "ui://content/all" },
};

const server = new Server({ name: "content", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [tool] }));
server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const token = req.params._meta?.progressToken;
  if (token !== undefined) {
    for (let i = 1; i <= 3; i++) {
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i, total: 3, message: `step ${i}` } });
    }
  }
  return {
    content: [
      { type: "text", text: "for the user only", annotations, _meta: meta },
      { type: "text", text: "for the model", annotations: { audience: ["assistant"], priority: 1 } },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png", annotations },
      { type: "audio", data: "UklGRgABV0FWRQ==", mimeType: "audio/wav", _meta: meta },
      { type: "resource_link", uri: "file:///data/report.csv", name: "report.csv", title: "Report", description: "the monthly report",
        mimeType: "text/csv", size: 4096, icons: [icon], annotations, _meta: meta },
      { type: "resource", resource: { uri: "file:///notes.md", mimeType: "text/markdown", text: "# Notes", _meta: meta }, annotations },
      { type: "resource", resource: { uri: "file:///blob.bin", mimeType: "application/octet-stream", blob: "AAEC/v8=" } },
    ],
    structuredContent: { count: 7, items: ["a", { b: true }] },
  };
});
await server.connect(new StdioServerTransport());
