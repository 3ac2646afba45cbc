// Command client is the tooldex command-line client under its older path:
// the same program as cmd/tooldex (internal/cli), kept so that
// "go run ./cmd/client ..." keeps working. Install cmd/tooldex, which is
// named tooldex.
package main

import (
	"context"
	"os"

	"github.com/tooldex/tooldex/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}
