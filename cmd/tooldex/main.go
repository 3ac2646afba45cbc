// Command tooldex is the command-line client of a tooldex server: register,
// search, discover, list, unregister, exec, hosts, repl, bench search and
// soak (tooldex -h; the commands are in internal/cli). Install it with
//
//	go install github.com/tooldex/tooldex/cmd/tooldex@latest
package main

import (
	"context"
	"os"

	"github.com/tooldex/tooldex/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}
