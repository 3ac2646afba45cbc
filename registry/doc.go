// Package registry tracks the tool hosts connected to tooldex and routes
// tool calls to them. It knows nothing of gRPC: the service turns each host
// stream into a Session and moves Frames between the two, and payloads
// (call parameters, host results) are opaque values the service fills.
//
// # What it owns
//
// A Registry owns the live host sessions, which tools each one serves, the
// slots (concurrent calls) each one has, and every call in flight. A
// Session is one host stream: Attach opens it with no tools, AddTools and
// RemoveTools change what it serves, Touch records that the host is alive,
// Complete hands in a result, and Detach ends it. Run is the reaper: a
// session that sends nothing for Config.DeadAfter is declared dead.
//
// # Routing and slots
//
// A session serves tools in one tenant (HostInfo.Tenant) and a call names
// its tenant (Call.Tenant): calls go only to sessions of their tenant, and
// two tenants may serve the same name. Call routes to the least-loaded
// live, non-draining session that serves the tool and has a free slot: load is in-flight calls over slots, ties go
// to the earlier-attached session (session ids sort in attach order). A
// session never has more calls in flight than its slots; a call whose
// caller went away keeps its slot until the host answers, CancelGrace
// passes, or the session ends. When no session serves the tool Call fails
// at once with ErrNoHost; when all are full it waits up to QueueWait (or
// until ctx is done) for a slot and then fails with ErrOverloaded. Waiting
// calls are not served in arrival order.
//
// # Hosts that stop answering
//
// A host can keep its stream and heartbeats yet answer no call. When a call
// reaches its deadline (the caller's, or Call.Deadline) at least
// Config.StallAfter after it was sent, and the host answered no call since,
// the session is stalled: routing skips it while a session that is not
// stalled serves the tool, and otherwise gives it one call at a time, so
// callers fail fast with ErrOverloaded instead of waiting for their
// deadlines. Any answer (Complete of a call the session has, late ones
// included) makes it routable again.
//
// # The wire
//
// Call puts a FrameExecute with a fresh CallID on the chosen session's
// Outbound queue. The service's single sender goroutine per session takes
// frames from it in order, sends them, and calls Delivered after an
// Execute frame was sent. When a caller's ctx ends, Call returns ctx.Err()
// (wrapped) at once and a FrameCancel follows the Execute frame (right away
// when it was delivered, else when it is). A result that arrives after
// that frees the slot and is dropped: Complete reports ErrUnknownCall, as
// for any id the session does not have.
//
// # Hosts that go away
//
// When a session ends (Detach, or declared dead by Run) every call in
// flight on it is settled at once, never left to its deadline. A call
// whose Execute frame was still queued (the sender had not taken it, so the
// host cannot have seen it) is retried on another session, as is any call
// marked Idempotent, up to MaxAttempts attempts in all; each attempt has
// its own CallID and Attempt number. Any other call fails with ErrHostGone:
// the host may or may not have run it. Errors wrap ErrHostGone exactly when
// the outcome is unknown; a retry that finds no slot fails with ErrNoHost,
// ErrOverloaded or the ctx error instead. Complete on an ended session
// fails with ErrSessionClosed (which also matches ErrUnknownCall).
//
// A session declared dead keeps the tools it served until the service
// calls Detach, which returns the names no live session serves any more
// exactly once, whether the session ended by Detach or by the reaper.
// Drain tells every session (and any attached later) to take no new calls:
// calls in flight finish, and a tool served only by draining sessions
// fails with ErrNoHost.
//
// # Concurrency
//
// Every method of Registry and Session is safe for concurrent use. One
// mutex guards all state; no method blocks while holding it, and Frames
// are queued without blocking (a session whose queue is full takes no new
// calls; a Cancel or Drain frame that does not fit is dropped). The
// package starts no goroutines: Run runs on its caller's goroutine until
// ctx is done, and Call waits on the caller's own. Every call is answered
// exactly once. Outbound is never closed: the sender stops when Done is
// closed, and frames still queued then are discarded.
package registry
