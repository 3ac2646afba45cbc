//go:build ignore

// Testsummary reads `go test -json` events on stdin and prints what plain
// `go test` prints (a line per package, the output of failing tests and
// packages), then every skipped test with its reason, so that a run says
// what it did not test and why. It exits 1 when anything failed.
//
//	go test -json ./... | go run scripts/testsummary.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// event is one test2json event (go doc test2json).
type event struct {
	Action      string
	Package     string
	ImportPath  string // build-output events
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
}

func main() {
	out := make(map[string][]string) // package + "\x00" + test -> output lines
	var skips []string
	failed := false
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		var e event
		if err := json.Unmarshal(in.Bytes(), &e); err != nil {
			fmt.Println(in.Text()) // not an event: pass it through
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "build-output":
			fmt.Print(e.Output)
		case "build-fail":
			failed = true
		case "output":
			out[key] = append(out[key], e.Output)
		case "fail":
			failed = true
			if e.Test != "" {
				fmt.Print(strings.Join(out[key], ""))
			} else {
				fmt.Print(strings.Join(out[key], ""))
				if e.FailedBuild != "" {
					fmt.Printf("FAIL\t%s [build failed]\n", e.Package)
				}
			}
		case "skip":
			if e.Test != "" {
				skips = append(skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason(out[key])))
			}
		case "pass":
			if e.Test == "" {
				fmt.Printf("ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
		}
		if e.Action == "pass" || e.Action == "skip" {
			delete(out, key)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		failed = true
	}
	if len(skips) > 0 {
		fmt.Printf("\n%d test(s) skipped:\n", len(skips))
		for _, s := range skips {
			fmt.Println("  SKIP", s)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// reason is a skipped test's own output: its t.Skip message.
func reason(lines []string) string {
	var r []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		r = append(r, l)
	}
	if len(r) == 0 {
		return "(no reason given)"
	}
	return strings.Join(r, " / ")
}
