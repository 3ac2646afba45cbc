package devcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

const usage = `usage: tooldex-dev COMMAND [flags]

Developer commands: they run the server's packages in this process (no server).
The client of a running server is tooldex (cmd/tooldex).

commands:
  eval            evaluate ranking in-process on a dataset (--crossval: leave-one-dataset-out over --datasets)
  bench memory    memory the service holds for --tools N dataset tools, in-process (no server)
  request-words   the request share of each term over --datasets (index/analysis/requestwords.tsv)

Run 'tooldex-dev COMMAND -h' for a command's flags.`

// env carries what commands need from the process.
type env struct {
	stdout io.Writer
}

// Main runs the command line (args without the program's name) and returns
// the exit status: 0 on success and for -h, 1 after printing an error on
// one line to stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdout)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "tooldex-dev:", err)
	return 1
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	e := env{stdout: stdout}
	if len(args) == 0 {
		return errors.New(usage)
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "eval":
		return cmdEval(e, args)
	case "request-words":
		return cmdRequestWords(e, args)
	case "bench":
		if len(args) == 0 || args[0] != "memory" {
			return errors.New("bench: usage: tooldex-dev bench memory [--tools N] [--datasets DIR] (the load generator against a server is tooldex bench search)")
		}
		return benchMemory(ctx, e, args[1:])
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

// newFlags returns a command's flag set, printing its help to stdout.
func newFlags(name string, e env) *flag.FlagSet {
	fs := flag.NewFlagSet("tooldex-dev "+name, flag.ContinueOnError)
	fs.SetOutput(e.stdout)
	return fs
}
