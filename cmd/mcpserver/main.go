// Command mcpserver serves tooldex as an MCP server: ToolSearch and
// ExecuteTool (and, with --pass-through, the core tools) backed by a tooldex
// server's DiscoveryService.
//
//	mcpserver --addr localhost:50051                  # MCP over stdio
//	mcpserver --addr localhost:50051 --http 127.0.0.1:8080   # streamable HTTP
//
// Over stdio, stdout is the MCP stream: logs go to stderr only.
//
// Credentials to the tooldex server: --token, --token-file, --tls, --tls-ca,
// --tls-cert, --tls-key, --tls-server-name (env TOOLDEX_TOKEN, TOOLDEX_CA, ...;
// see package auth). The --http listener is an OAuth resource server (see
// package mcpfacade): --auth-tokens, --oidc-issuer or --jwks-url with
// --oidc-audience validate the users' bearer tokens, which are forwarded to
// tooldex; --http-tls-cert and --http-tls-key serve HTTPS; --resource-url is
// its public URL; --allowed-origins lists browser origins allowed besides
// loopback ones. Without a credential source it serves only a loopback
// address, unless --insecure-anonymous. Every flag is also read from
// TOOLDEX_<FLAG>.
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
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		os.Exit(1)
	}
}
