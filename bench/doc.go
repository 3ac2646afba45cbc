// Package bench holds end-to-end benchmarks that compare tooldex's Execute
// path (validation, permission check, registry routing, host stream) with
// baselines measured in the same run: a plain gRPC unary call and a
// minimal hand-written relay to the same kind of tool host.
//
// Run them with
//
//	go test -run '^$' -bench Execute -count=5 ./bench/
package bench
