// Command mcpbridge serves the tools of MCP servers to a tooldex server:
// each server in an mcpServers config file (stdio commands or streamable
// HTTP URLs) becomes a tool host "mcp:<server>" whose tools are named
// mcp__<server>__<tool>.
//
//	mcpbridge --config mcp.json --addr localhost:50051
//
// --addr defaults to $TOOLDEX_ADDR, then localhost:50051.
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
