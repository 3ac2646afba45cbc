// Command mcpbridge serves the tools of MCP servers to a tooldex server:
// each server in an mcpServers config file (stdio commands or streamable
// HTTP URLs) becomes a tool host "mcp:<server>" whose tools are named
// mcp__<server>__<tool>.
//
//	mcpbridge --config mcp.json --addr localhost:50051
//
// --addr defaults to $TOOLDEX_ADDR, then localhost:50051. Credentials to
// the server: --token, --token-file, --tls, --tls-ca, --tls-cert, --tls-key,
// --tls-server-name (defaults from TOOLDEX_TOKEN, TOOLDEX_TOKEN_FILE,
// TOOLDEX_TLS, TOOLDEX_CA, TOOLDEX_CERT, TOOLDEX_KEY, TOOLDEX_TLS_SERVER_NAME;
// see package auth); the principal needs the host scope and host patterns
// covering mcp__<server>__*.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbridge:", err)
		os.Exit(1)
	}
}
