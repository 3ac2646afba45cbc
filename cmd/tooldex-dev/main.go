// Command tooldex-dev is tooldex's developer command: eval (ranking
// metrics, and --crossval's leave-one-dataset-out evaluation) and bench
// memory, which run the server's packages in-process (tooldex-dev -h; the
// commands are in internal/devcli). The client of a running server is
// cmd/tooldex.
//
//	go run ./cmd/tooldex-dev eval --tools F --queries F
package main

import (
	"context"
	"os"

	"github.com/tooldex/tooldex/internal/devcli"
)

func main() {
	os.Exit(devcli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
