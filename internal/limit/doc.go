// Package limit holds the bounds that tooldex's parts must agree on and
// the machinery that enforces per-client ones: the largest gRPC message
// (the server, the host SDK, the MCP bridge and the façade all use
// MaxMessageBytes), the largest parameters a call may carry to a host,
// per-key rate and concurrency limits over a bounded set of keys, and a
// limiter for repeated log lines from one peer. docs/LIMITS.md lists
// every bound of the service with its default and flag.
package limit
