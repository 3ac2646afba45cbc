// Package bench holds end-to-end benchmarks that compare tooldex's Execute
// path (validation, permission check, registry routing, host stream) with
// baselines measured in the same run: a plain gRPC unary call and a
// minimal hand-written relay to the same kind of tool host.
//
// Run them with
//
//	go test -run '^$' -bench Execute -count=5 ./bench/
//
// BenchmarkExecuteInterleaved runs the three setups at once in alternating
// short slices, so that a shared machine's drift falls on all of them
// alike; its tooldex / relay ratios are the figures docs/BENCHMARKS.md
// quotes.
package bench
