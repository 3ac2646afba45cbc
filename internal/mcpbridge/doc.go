// Package mcpbridge serves the tools of MCP servers to a tooldex server.
//
// A Bridge reads the usual mcpServers configuration (see Config): stdio
// servers are started as subprocesses (mcp.CommandTransport), URL servers
// are reached over streamable HTTP. For each server it runs one
// toolhost.Host, HostID "mcp:<server>", and serves every tool the server
// lists (all pages) as mcp__<server>__<tool>, with the MCP description and
// input schema unchanged, the MCP annotations mapped to ToolAnnotations and
// source {ORIGIN_MCP, <server>}. An Execute of such a tool becomes a
// tools/call of the original tool; its content, isError and
// structuredContent become the call's result.
//
// # Names
//
// Server and tool names are made provider-legal (^[a-zA-Z0-9_-]{1,64}$):
// other characters become '_' and names too long are cut and end in a hash
// of the original (see ServerName and ToolName). The bridge keeps a map from
// each tooldex name back to the MCP tool name for tools/call. Two tools (or
// servers) that end up with the same name are a collision: the first in
// name order, preferring one whose name needed no change, is kept; the
// other is logged and skipped.
//
// # Changes and failures
//
// On notifications/tools/list_changed the bridge lists the tools again and
// applies the difference with Host.Handle and Host.Remove. When a session
// ends (a stdio server crashed, say) its tools are removed, so they leave
// search, and the server is restarted (or reconnected) with exponential
// backoff and jitter; the new session's tools are listed again. When Run's
// context is done every MCP session is closed (stdio servers get their
// stdin closed, then SIGTERM, then SIGKILL) and the hosts drain and stop.
//
// # Credentials
//
// Options.Auth (an auth.ClientConfig) is every host's credentials to the
// tooldex server: on a server with authentication, a token (or client
// certificate) whose principal has the host scope and host patterns that
// cover mcp__<server>__*, and TLS settings.
package mcpbridge
