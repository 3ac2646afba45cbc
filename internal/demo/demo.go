// Package demo embeds the demo tool catalog that `go run ./cmd/server`
// loads when no --catalog is given, so the service has something to search
// straight away.
//
// The catalog is a JSON array in tooldex's own tool format (see package
// toolfile): the Claude Code built-in tools, core and deferred, plus a
// selection of tools from popular MCP servers (Slack, GitHub, Postgres,
// Notion, filesystem, Serena, memory, Linear, Sentry, Playwright, time),
// named mcp__<server>__<tool>. Descriptions and schemas are short
// illustrations, not the tools' real definitions. The catalog carries no
// "core" flags: the server decides which tools are core by name.
package demo

import _ "embed"

// Catalog is the content of catalog.json.
//
//go:embed catalog.json
var Catalog []byte

// Name is the file name used in messages and as the catalog source id.
const Name = "demo/catalog.json"
