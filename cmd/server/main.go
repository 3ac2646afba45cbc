// Command tooldex-server runs the tooldex gRPC service: tool registration,
// search and discovery over an in-memory index.
//
// Every flag can also be set through the environment as TOOLDEX_<FLAG>
// (upper case, dashes as underscores, e.g. TOOLDEX_ADDR); a flag given on
// the command line wins. The spec's variables TOOL_SEARCH_EXCLUDE,
// TOOL_SEARCH_INCLUDE_FORCE, TOOL_SEARCH_WEIGHT_KEYWORD and
// TOOL_SEARCH_WEIGHT_TFIDF are read too.
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
		fmt.Fprintln(os.Stderr, "tooldex-server:", err)
		os.Exit(1)
	}
}
