// Package cli is tooldex, the command-line client of a tooldex server:
// cmd/tooldex (go install github.com/tooldex/tooldex/cmd/tooldex@latest)
// and cmd/client are its mains.
//
//	tooldex register FILE...      register tools (MCP tools/list, OpenAI or Anthropic tools arrays, tooldex JSON/JSONL; - for stdin)
//	tooldex search QUERY...       run a ToolSearch query (select:, discover:, mcp__ prefixes, +required, keywords)
//	tooldex discover TASK...      rank tools for a task, with schemas
//	tooldex list                  list registered tools
//	tooldex unregister NAME...    remove tools
//	tooldex exec TOOL --params JSON   run a tool on a connected host (--params @file)
//	tooldex hosts                 list connected tool hosts
//	tooldex repl                  interactive console: hint bar from Prefetch, /search, /discover, /exec
//	tooldex bench search [QUERY...]       Search latency percentiles and QPS against a server, next to health checks
//
// The CLI speaks only the wire API: the developer commands that run the
// server's packages in-process (eval, bench memory) are in internal/devcli
// (cmd/tooldex-dev).
//
// Every server command takes --addr (env TOOLDEX_ADDR, default
// localhost:50051), --json (protojson output for scripts) and --timeout,
// and the credential flags --token, --token-file (env TOOLDEX_TOKEN,
// TOOLDEX_TOKEN_FILE), --tls, --tls-ca, --tls-cert, --tls-key,
// --tls-server-name (env TOOLDEX_TLS, TOOLDEX_CA, TOOLDEX_CERT, TOOLDEX_KEY,
// TOOLDEX_TLS_SERVER_NAME) and --insecure-token (see package auth); these
// may also come before the command. Flags may follow arguments
// (tooldex search slack send --max 3); "--" ends them. Errors print one line
// and exit 1; -h prints the flags and exits 0.
package cli
