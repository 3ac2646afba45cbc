// Package bleve compares tooldex's in-process search (package index) with
// bleve v2 (scorch) on the same corpus and queries, in one run:
//
//	flock /tmp/tooldex-bench.lock go test -run '^$' -bench Compare -count=3 -timeout 60m .
//
// It is a separate module (bench/bleve/go.mod) so that bleve never enters
// the server's dependencies; the main module's go test ./... does not descend
// into it. See the "tooldex vs bleve" section of docs/BENCHMARKS.md.
package bleve
