// Package toolhost is an SDK for writing tooldex tool hosts: worker
// processes that serve tools over tooldex.v1.HostService.Connect.
//
// A host is a few lines:
//
//	h := toolhost.New(toolhost.Config{Addr: "localhost:50051", HostID: "fs-worker-1"})
//	if err := h.Handle(tool, func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
//		return toolhost.Text("hello " + call.Caller), nil
//	}); err != nil {
//		return err
//	}
//	return h.Run(ctx)
//
// Run connects, says hello with every tool registered so far, and then runs
// the ExecuteCalls the server sends, each in its own goroutine with a
// context that carries the call's deadline and is cancelled by a CancelCall
// or by the end of the stream. It sends a heartbeat whenever the host has
// sent nothing else for the interval the server's HelloAck asks for. When
// the stream fails, Run reconnects with exponential backoff and jitter
// (Config.MinBackoff up to Config.MaxBackoff) and says hello again with all
// current tools. Tools may be added (Handle) and removed (Remove) while Run
// runs; a connected host tells the server with a ToolsUpdate.
//
// # Credentials
//
// A server with authentication wants a token with the host scope, whose
// host patterns cover the tools the host serves, or a client certificate
// for mutual TLS: set Config.Auth (an auth.ClientConfig: Token or
// TokenFile, CAFile, CertFile and KeyFile, ServerName, TLS), for example
// from the environment:
//
//	h := toolhost.New(toolhost.Config{Addr: addr, HostID: "fs-worker-1",
//		Auth: auth.ClientConfigFromEnv(os.Getenv)}) // TOOLDEX_TOKEN, TOOLDEX_CA, ...
//
// Without TLS a token is sent only to a loopback address.
//
// # Handlers
//
// A Handler returns a Result (see Text, JSON and Errorf) or an error. A
// plain error becomes an is_error result carrying the error's text, so the
// model sees it; an error made by Refuse (possibly wrapped) refuses the call
// and its caller gets PERMISSION_DENIED; a panic is recovered, logged with
// its stack and becomes an is_error result, and the host keeps running.
// Handlers must honour their context: Run waits for every handler it started
// before it returns.
//
// # Concurrency
//
// The host tells the server it runs at most Config.Slots calls at once and
// never runs more, even if the server sends more: extra calls are queued
// (in arrival order) until a slot frees. The slots are shared by all
// connections of one Run, so a handler still finishing after its stream
// broke keeps its slot. A queued call that is cancelled, or whose deadline
// passes, before it starts is answered with an is_error result without
// running. Every ExecuteCall taken is answered with exactly one CallResult,
// as long as its stream lasts.
//
// # Shutdown
//
// When Run's context is done the host drains: it takes no new calls (calls
// that arrive are left unanswered, so the server fails them with
// UNAVAILABLE when the stream ends, and may retry them elsewhere), waits for
// the calls it has taken, queued ones included, for up to
// Config.DrainTimeout, then cancels the ones still running and waits for
// them to return. It then sends the last results, half-closes the stream,
// waits briefly for the server to end it, and returns nil. A Drain frame
// from the server likewise stops the host taking calls; the calls it has
// taken run on until the server ends the stream, after which the host
// reconnects with backoff.
//
// On the wire, one goroutine per connection sends and one receives, as
// grpc-go requires; everything else hands frames to the sender through a
// queue.
package toolhost
