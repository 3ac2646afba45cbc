package registry

import (
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// FrameKind says what a Frame asks of a host.
type FrameKind int

// Frame kinds. The zero FrameKind is not one.
const (
	// FrameExecute: run a tool (CallID, Tool, Params, Deadline, Attempt,
	// Caller).
	FrameExecute FrameKind = iota + 1
	// FrameCancel: stop a call (CallID, Reason).
	FrameCancel
	// FrameDrain: finish in-flight calls within Grace, expect no more.
	FrameDrain
)

// String returns "execute", "cancel" or "drain".
func (k FrameKind) String() string {
	switch k {
	case FrameExecute:
		return "execute"
	case FrameCancel:
		return "cancel"
	case FrameDrain:
		return "drain"
	}
	return "FrameKind(" + fmt.Sprint(int(k)) + ")"
}

// Frame is one message for a host, taken from Session.Outbound.
type Frame struct {
	Kind FrameKind
	// CallID identifies one attempt of a call (Execute, Cancel).
	CallID string
	// Tool is the tool to run (Execute).
	Tool string
	// Params is Call.Params (Execute).
	Params any
	// Deadline is when the caller stops waiting; zero: none (Execute).
	Deadline time.Time
	// Attempt is 1 for the first attempt, more for retries (Execute).
	Attempt int
	// Caller is Call.Caller (Execute).
	Caller string
	// Reason says why a call is cancelled (Cancel).
	Reason string
	// Grace is how long in-flight calls may still take (Drain).
	Grace time.Duration
	// WantProgress says the caller takes progress reports (Execute).
	WantProgress bool
}

// Session is one host's connection. Create it with Registry.Attach; every
// method is safe for concurrent use.
type Session struct {
	r           *Registry
	seq         uint64 // attach order
	id          string
	hostID      string
	version     string
	tenant      string
	principal   string
	slots       int
	connectedAt time.Time
	out         chan Frame
	execRoom    int // an Execute frame is queued only while len(out) < execRoom
	done        chan struct{}
	lastSeen    atomic.Int64 // time.Duration since r.epoch of the last Touch

	// Guarded by r.mu.
	tools     map[string]struct{} // served; kept after the end until Detach
	calls     map[string]*pending // holding a slot
	abandoned int                 // calls with pending.abandoned
	nextCall  uint64
	completed int64
	draining  bool
	queueFull bool // a call skipped s for a full queue: Delivered wakes waiters
	// stalled: a call reached its deadline with no answer from the host
	// since it was dispatched. Routing skips the session while another
	// serves the tool, and gives it one call at a time otherwise, until
	// the host answers any call (Complete).
	stalled    bool
	lastAnswer time.Time // of the last Complete of a known call
	ended      bool      // detached or dead; done is closed
	detached   bool      // Detach reported the orphans
}

// ID returns the session's id, unique in the registry; ids sort in attach
// order.
func (s *Session) ID() string { return s.id }

// HostID returns the id the host gave.
func (s *Session) HostID() string { return s.hostID }

// Tenant returns the tenant whose calls the session serves.
func (s *Session) Tenant() string { return s.tenant }

// Slots returns how many calls the session runs at once.
func (s *Session) Slots() int { return s.slots }

// ToolCount returns how many tools the session serves.
func (s *Session) ToolCount() int {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return len(s.tools)
}

// Outbound is the session's bounded frame queue, in send order. One sender
// goroutine drains it until Done is closed; it is never closed itself.
func (s *Session) Outbound() <-chan Frame { return s.out }

// Done is closed when the session is detached or declared dead.
func (s *Session) Done() <-chan struct{} { return s.done }

// Touch records that the host sent something (any frame, heartbeats
// included).
func (s *Session) Touch() {
	s.lastSeen.Store(int64(s.r.cfg.Now().Sub(s.r.epoch)))
}

// AddTools makes the session serve names (again: adding is idempotent).
// On a session declared dead the names are only remembered, for Detach to
// report; after Detach it does nothing.
func (s *Session) AddTools(names ...string) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.detached {
		return
	}
	for _, name := range names {
		if _, ok := s.tools[name]; ok {
			continue
		}
		s.tools[name] = struct{}{}
		if !s.ended {
			r.indexLocked(toolKey{s.tenant, name}, s)
		}
	}
	if !s.ended && !s.draining {
		r.notifyToolsLocked(s.tenant, names)
	}
}

// RemoveTools stops the session serving names (calls in flight go on) and
// returns, sorted, those of them it served that no live session serves any
// more.
func (s *Session) RemoveTools(names ...string) (orphaned []string) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.detached {
		return nil
	}
	for _, name := range names {
		if _, ok := s.tools[name]; !ok {
			continue
		}
		delete(s.tools, name)
		if !s.ended {
			r.unindexLocked(toolKey{s.tenant, name}, s)
		}
		if len(r.byTool[toolKey{s.tenant, name}]) == 0 {
			orphaned = append(orphaned, name)
		}
	}
	// Calls waiting for these tools may have lost their last host.
	r.notifyToolsLocked(s.tenant, names)
	slices.Sort(orphaned)
	return orphaned
}

// Delivered records that the Execute frame of callID was sent to the host.
// The sender calls it after each successful send of an Execute frame.
func (s *Session) Delivered(callID string) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.queueFull {
		s.queueFull = false
		r.notifyLocked(s)
	}
	p := s.calls[callID]
	if s.ended || p == nil {
		return
	}
	p.delivered = true
	if p.cancelOnDeliver {
		p.cancelOnDeliver = false
		p.graceUntil = r.cfg.Now().Add(r.cfg.CancelGrace)
		s.enqueueLocked(Frame{Kind: FrameCancel, CallID: p.id, Reason: p.reason})
		r.notifyLocked(s) // waiters reconsider when the slot frees
	}
}

// Undeliverable settles callID, whose Execute frame the sender could not
// send (err says why, e.g. it is larger than the host can receive): the
// host never saw it, so its caller gets err at once, the slot is freed and
// the session goes on serving other calls.
func (s *Session) Undeliverable(callID string, err error) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	p := s.calls[callID]
	if s.ended || p == nil {
		return
	}
	delete(s.calls, callID)
	if p.abandoned {
		s.abandoned--
	} else {
		p.done <- outcome{err: err}
	}
	r.notifyLocked(s)
}

// Complete hands in the host's result for callID, which goes to the
// waiting caller. It fails with ErrUnknownCall for an id the session does
// not have: never sent, already answered, or abandoned by its caller (the
// result is then dropped, and the call's slot freed); with
// ErrSessionClosed (matching ErrUnknownCall too) once the session ended.
func (s *Session) Complete(callID string, payload any) error {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.ended {
		return fmt.Errorf("registry: session %s: result for call %s: %w: %w", s.id, callID, ErrSessionClosed, ErrUnknownCall)
	}
	p := s.calls[callID]
	if p == nil {
		return fmt.Errorf("registry: session %s: result for call %s: %w", s.id, callID, ErrUnknownCall)
	}
	delete(s.calls, callID)
	s.lastAnswer = r.cfg.Now()
	if s.stalled {
		s.stalled = false
		r.log.Info("stalled host answered: routed again", zap.String("host", s.hostID), zap.String("session", s.id))
	}
	r.notifyLocked(s)
	if p.abandoned {
		s.abandoned--
		return fmt.Errorf("registry: session %s: late result for call %s (%s), dropped: %w", s.id, callID, p.reason, ErrUnknownCall)
	}
	s.completed++
	p.done <- outcome{payload: payload}
	return nil
}

// Detach ends the session: the stream is gone. Its calls are settled (see
// the package doc) and Done is closed. It returns, sorted, the tools the
// session served that no live session serves any more, once: later calls
// return nil. After the reaper declared the session dead, Detach still
// reports them (once).
func (s *Session) Detach() (orphaned []string) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLocked(s, "detached")
	if s.detached {
		return nil
	}
	s.detached = true
	for name := range s.tools {
		if len(r.byTool[toolKey{s.tenant, name}]) == 0 {
			orphaned = append(orphaned, name)
		}
	}
	s.tools = nil
	slices.Sort(orphaned)
	return orphaned
}

// lessLoaded reports whether s is less loaded than o (in-flight calls over
// slots), or as loaded and attached earlier.
func (s *Session) lessLoaded(o *Session) bool {
	a, b := len(s.calls)*o.slots, len(o.calls)*s.slots
	if a != b {
		return a < b
	}
	return s.seq < o.seq
}

// dispatchLocked reserves a slot on s for c and queues its Execute frame;
// the caller checked that s has a free slot and queue room.
func (s *Session) dispatchLocked(c Call, attempt int, deadline time.Time) *pending {
	s.nextCall++
	var buf [64]byte
	id := strconv.AppendUint(append(append(buf[:0], s.id...), '-'), s.nextCall, 10)
	p := &pending{id: string(id), progress: c.Progress, done: make(chan outcome, 1), dispatched: s.r.cfg.Now()}
	s.calls[p.id] = p
	s.out <- Frame{Kind: FrameExecute, CallID: p.id, Tool: c.Tool, Params: c.Params, Deadline: deadline, Attempt: attempt, Caller: c.Caller, WantProgress: c.Progress != nil}
	return p
}

// abandonLocked gives up p, whose caller is gone: a Cancel frame follows
// its Execute frame and its slot stays reserved for CancelGrace after the
// Cancel is queued, or until the host answers.
func (s *Session) abandonLocked(p *pending, reason string) {
	r := s.r
	p.abandoned = true
	p.reason = reason
	s.abandoned++
	// The grace also runs while the frame waits to be sent, so a sender
	// that never reports delivery cannot hold the slot for ever.
	p.graceUntil = r.cfg.Now().Add(r.cfg.CancelGrace)
	if p.delivered {
		s.enqueueLocked(Frame{Kind: FrameCancel, CallID: p.id, Reason: reason})
	} else {
		p.cancelOnDeliver = true
	}
	r.notifyLocked(s) // waiters learn of the grace deadline
	r.log.Debug("call abandoned", zap.String("session", s.id), zap.String("call", p.id), zap.String("reason", reason), zap.Bool("delivered", p.delivered))
}

// stallLocked records that p reached its deadline unanswered: when the
// host answered nothing since p was dispatched, the session is stalled.
func (s *Session) stallLocked(p *pending) {
	if s.stalled || s.lastAnswer.After(p.dispatched) || s.r.cfg.Now().Sub(p.dispatched) < s.r.cfg.StallAfter {
		return
	}
	s.stalled = true
	s.r.log.Warn("host stalled: a call reached its deadline with no answer since it was sent; routing skips it until it answers",
		zap.String("host", s.hostID), zap.String("session", s.id), zap.String("call", p.id))
}

// routable reports whether s may take a call now: a free slot and queue
// room, and, when stalled, no other unabandoned call in flight (one call
// probes whether the host came back).
func (s *Session) routable() bool {
	if len(s.calls) >= s.slots {
		return false
	}
	if s.stalled && len(s.calls)-s.abandoned > 0 {
		return false
	}
	if len(s.out) >= s.execRoom {
		s.queueFull = true
		return false
	}
	return true
}

// enqueueLocked queues f without blocking; a frame that does not fit is
// dropped (best effort: Cancel and Drain only).
func (s *Session) enqueueLocked(f Frame) {
	select {
	case s.out <- f:
	default:
		s.r.log.Warn("outbound queue full, frame dropped", zap.String("session", s.id), zap.Stringer("kind", f.Kind), zap.String("call", f.CallID))
	}
}
