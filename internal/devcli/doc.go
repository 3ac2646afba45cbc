// Package devcli is tooldex-dev, the developer command of tooldex
// (cmd/tooldex-dev is its main): what runs the server's insides in-process
// rather than speaking the wire API, so that the user CLI (internal/cli)
// links none of them.
//
//	tooldex-dev eval --tools F --queries F   evaluate ranking in-process on a dataset (no server)
//	tooldex-dev eval --crossval --datasets D leave-one-dataset-out evaluation of a weight grid
//	tooldex-dev bench memory [--tools N]     resident memory and heap of the service for N replicated dataset tools (in-process)
//
// Errors print one line and exit 1; -h prints the flags and exits 0.
package devcli
