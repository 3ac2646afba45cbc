// Command mcpserver serves tooldex as an MCP server: ToolSearch and
// ExecuteTool (and, with --pass-through, the core tools) backed by a tooldex
// server's DiscoveryService.
//
//	mcpserver --addr localhost:50051                  # MCP over stdio
//	mcpserver --addr localhost:50051 --http 127.0.0.1:8080   # streamable HTTP
//
// Over stdio, stdout is the MCP stream: logs go to stderr only.
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
