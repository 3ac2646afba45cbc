package registry

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Errors returned by Call and Complete, wrapped with details; test with
// errors.Is.
var (
	// ErrNoHost: no live, non-draining session serves the tool.
	ErrNoHost = errors.New("no live host serves the tool")
	// ErrOverloaded: every session serving the tool stayed full for
	// QueueWait.
	ErrOverloaded = errors.New("every host serving the tool is busy")
	// ErrHostGone: the session running the call ended and the call could
	// not be retried; the host may or may not have run it.
	ErrHostGone = errors.New("host gone")
	// ErrUnknownCall: a result for a call id the session does not have
	// (never sent, already answered, or its caller gave up).
	ErrUnknownCall = errors.New("unknown call")
	// ErrSessionClosed: the session was detached or declared dead.
	ErrSessionClosed = errors.New("session closed")
)

// Defaults for the zero fields of a Config.
const (
	DefaultHeartbeatInterval = 5 * time.Second
	DefaultQueueWait         = 2 * time.Second
	DefaultCancelGrace       = 10 * time.Second
	DefaultSlots             = 16
	DefaultMaxAttempts       = 3
	DefaultStallAfter        = time.Second
	DefaultMaxSlots          = 1024
)

// maxQueue caps a session's Outbound buffer whatever its slots.
const maxQueue = 512

// Config configures a Registry. The zero value is usable: every zero field
// takes its default.
type Config struct {
	// HeartbeatInterval is told to hosts (HeartbeatInterval method); 0
	// means 5s.
	HeartbeatInterval time.Duration
	// DeadAfter: a session silent (no Touch) this long is declared dead; 0
	// means 3*HeartbeatInterval.
	DeadAfter time.Duration
	// QueueWait is how long Call waits for a free slot when every session
	// serving the tool is full; 0 means 2s, negative means not at all.
	QueueWait time.Duration
	// CancelGrace is how long the slot of a call whose caller went away
	// stays reserved waiting for the host's answer; 0 means 10s.
	CancelGrace time.Duration
	// DefaultSlots is a session's slots when its host says 0; 0 means 16.
	DefaultSlots int
	// MaxAttempts caps the attempts of a call, counting the first; 0 means
	// 3.
	MaxAttempts int
	// StallAfter: a call unanswered at its deadline, after at least this
	// long, with no answer from its host since it was sent, marks the host
	// stalled (see HostStatus.Stalled); a shorter deadline never does, so
	// a caller's tiny deadline cannot stall a healthy host. 0 means 1s.
	StallAfter time.Duration
	// MaxSlots caps the slots a host may ask for; 0 means 1024.
	MaxSlots int
	// Logger receives structured logs; nil means none.
	Logger *zap.Logger
	// Now tells the time of Touch, ConnectedAt and CancelGrace; nil means
	// time.Now. Timers (QueueWait, the reaper's ticker) use the runtime
	// clock.
	Now func() time.Time
}

// withDefaults returns c with every zero field filled in.
func (c Config) withDefaults() Config {
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.DeadAfter <= 0 {
		c.DeadAfter = 3 * c.HeartbeatInterval
	}
	if c.QueueWait == 0 {
		c.QueueWait = DefaultQueueWait
	}
	if c.CancelGrace <= 0 {
		c.CancelGrace = DefaultCancelGrace
	}
	if c.DefaultSlots <= 0 {
		c.DefaultSlots = DefaultSlots
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.StallAfter <= 0 {
		c.StallAfter = DefaultStallAfter
	}
	if c.MaxSlots <= 0 {
		c.MaxSlots = DefaultMaxSlots
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// toolKey names a tool: tenants route apart, and two of them may serve the
// same name.
type toolKey struct{ tenant, name string }

// HostInfo is what a host says about itself when its session opens.
type HostInfo struct {
	HostID  string
	Version string
	// Tenant is the tenant whose calls the session serves; Principal who
	// the host authenticated as (for Hosts).
	Tenant, Principal string
	// Slots is how many calls the host runs at once; 0 (or less) means
	// Config.DefaultSlots, and more than Config.MaxSlots means MaxSlots.
	Slots int
}

// Call is one tool call to route.
type Call struct {
	// Tenant and Tool name the tool: the call goes to a session of Tenant
	// serving Tool.
	Tenant string
	Tool   string
	// Params is passed to the host unchanged (Frame.Params).
	Params any
	// Caller is the caller's identity, passed to the host.
	Caller string
	// Idempotent calls are retried on another session when theirs ends,
	// even if the host may have run them.
	Idempotent bool
	// Deadline, when not zero, bounds the call like a ctx deadline; the
	// earlier of the two is sent to the host.
	Deadline time.Time
	// Progress, when set, receives the host's progress reports of the call
	// (Session.Progress); it runs on the host's receiving goroutine and must
	// not block.
	Progress func(payload any)
}

// Result is a host's answer to a call.
type Result struct {
	// Payload is what the host handed to Complete.
	Payload any
	// CallID, HostID and SessionID identify the attempt that answered.
	CallID    string
	HostID    string
	SessionID string
	// Attempts counts the attempts made, this one included.
	Attempts int
}

// HostStatus describes one live session (Hosts).
type HostStatus struct {
	HostID    string
	SessionID string
	Version   string
	Tenant    string
	Principal string
	// Tools the session serves, sorted.
	Tools []string
	Slots int
	// InFlight counts the calls holding a slot, abandoned ones waiting
	// for the host's answer included.
	InFlight int
	// Completed counts the results handed to callers.
	Completed   int64
	ConnectedAt time.Time
	// LastSeen is the time of the last Touch (or of Attach).
	LastSeen time.Time
	// Draining sessions take no new calls.
	Draining bool
	// Stalled sessions let a call reach its deadline unanswered and have
	// answered nothing since: routing skips them while another session
	// serves the tool.
	Stalled bool
}

// Registry routes calls to host sessions. Create it with New.
type Registry struct {
	cfg    Config
	log    *zap.Logger
	epoch  time.Time // Session.lastSeen counts from here
	prefix string    // of session ids: random, so ids differ across restarts

	// timers are Call's deadline timers, reused: a timer is stopped before
	// it is put back, so none holds a stale expiry (Go 1.23 timers).
	timers sync.Pool

	mu       sync.Mutex
	seq      uint64                            // sessions attached so far
	live     map[*Session]struct{}             // sessions not ended
	byTool   map[toolKey]map[*Session]struct{} // live sessions by tool served
	waitCh   map[toolKey]chan struct{}         // closed when a tool's slots may have changed
	draining bool
	grace    time.Duration // of Drain, for sessions attached later
}

// New returns an empty Registry. It starts no goroutines; run Run for the
// reaper.
func New(cfg Config) *Registry {
	cfg = cfg.withDefaults()
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return &Registry{
		cfg:    cfg,
		log:    cfg.Logger,
		epoch:  cfg.Now(),
		prefix: hex.EncodeToString(b[:]),
		live:   make(map[*Session]struct{}),
		byTool: make(map[toolKey]map[*Session]struct{}),
		waitCh: make(map[toolKey]chan struct{}),
	}
}

// Config returns the configuration in force, defaults filled in.
func (r *Registry) Config() Config { return r.cfg }

// HeartbeatInterval is how often hosts must send something.
func (r *Registry) HeartbeatInterval() time.Duration { return r.cfg.HeartbeatInterval }

// Run is the reaper: until ctx is done it declares dead every session with
// no Touch for DeadAfter (closing its Done and settling its calls), and
// frees the slots of abandoned calls whose CancelGrace passed. It returns
// nil when ctx is done. Run it once.
func (r *Registry) Run(ctx context.Context) error {
	tick := min(r.cfg.HeartbeatInterval, r.cfg.DeadAfter) / 2
	if tick <= 0 {
		tick = time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			r.reap()
		}
	}
}

// reap runs one round of the reaper.
func (r *Registry) reap() {
	now := r.cfg.Now()
	since := now.Sub(r.epoch)
	r.mu.Lock()
	defer r.mu.Unlock()
	var dead []*Session
	for s := range r.live {
		if silent := since - time.Duration(s.lastSeen.Load()); silent >= r.cfg.DeadAfter {
			dead = append(dead, s)
			continue
		}
		if s.abandoned > 0 {
			r.sweepLocked(s, now)
		}
	}
	for _, s := range dead {
		r.endLocked(s, "declared dead: no frame for "+r.cfg.DeadAfter.String())
	}
}

// Attach opens a live session for a host, serving no tools yet. After
// Drain the session is draining from the start and its first frame is a
// FrameDrain.
func (r *Registry) Attach(info HostInfo) *Session {
	slots := info.Slots
	if slots <= 0 {
		slots = r.cfg.DefaultSlots
	}
	slots = min(slots, r.cfg.MaxSlots)
	q := min(slots, maxQueue)
	now := r.cfg.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	s := &Session{
		r:           r,
		seq:         r.seq,
		id:          r.prefix + "-" + fmt.Sprintf("%06d", r.seq),
		hostID:      info.HostID,
		version:     info.Version,
		tenant:      info.Tenant,
		principal:   info.Principal,
		slots:       slots,
		connectedAt: now,
		out:         make(chan Frame, 2*q+4),
		execRoom:    q + 2,
		done:        make(chan struct{}),
		tools:       make(map[string]struct{}),
		calls:       make(map[string]*pending),
	}
	s.lastSeen.Store(int64(now.Sub(r.epoch)))
	r.live[s] = struct{}{}
	if r.draining {
		s.draining = true
		s.out <- Frame{Kind: FrameDrain, Grace: r.grace}
	}
	r.log.Debug("session attached", zap.String("host", s.hostID), zap.String("session", s.id), zap.Int("slots", slots))
	return s
}

// Serving reports whether some live session (draining or not) of tenant
// serves tool.
func (r *Registry) Serving(tenant, tool string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byTool[toolKey{tenant, tool}]) > 0
}

// Hosts returns the live sessions, sorted by HostID then SessionID.
func (r *Registry) Hosts() []HostStatus {
	now := r.cfg.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]HostStatus, 0, len(r.live))
	for s := range r.live {
		if s.abandoned > 0 {
			r.sweepLocked(s, now)
		}
		tools := make([]string, 0, len(s.tools))
		for name := range s.tools {
			tools = append(tools, name)
		}
		slices.Sort(tools)
		out = append(out, HostStatus{
			HostID:      s.hostID,
			SessionID:   s.id,
			Version:     s.version,
			Tenant:      s.tenant,
			Principal:   s.principal,
			Tools:       tools,
			Slots:       s.slots,
			InFlight:    len(s.calls),
			Completed:   s.completed,
			ConnectedAt: s.connectedAt,
			LastSeen:    r.epoch.Add(time.Duration(s.lastSeen.Load())),
			Draining:    s.draining,
			Stalled:     s.stalled,
		})
	}
	slices.SortFunc(out, func(a, b HostStatus) int {
		return cmp.Or(cmp.Compare(a.HostID, b.HostID), cmp.Compare(a.SessionID, b.SessionID))
	})
	return out
}

// Drain stops routing new calls to every live session, and to any attached
// later, and queues a FrameDrain with grace on each (once per session).
// Calls in flight finish as usual.
func (r *Registry) Drain(grace time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.draining, r.grace = true, grace
	n := 0
	for s := range r.live {
		if s.draining {
			continue
		}
		s.draining = true
		s.enqueueLocked(Frame{Kind: FrameDrain, Grace: grace})
		n++
	}
	for tool, ch := range r.waitCh {
		close(ch)
		delete(r.waitCh, tool)
	}
	r.log.Info("draining host sessions", zap.Int("sessions", n), zap.Duration("grace", grace))
}

// Call runs c on a host and returns its result: see the package doc for
// routing, waiting, cancellation and retries. Errors wrap ErrNoHost,
// ErrOverloaded, ErrHostGone or ctx's error.
func (r *Registry) Call(ctx context.Context, c Call) (Result, error) {
	cc := callCtx{ctx: ctx}
	cc.deadline, _ = ctx.Deadline()
	// A deadline no earlier than ctx's changes nothing; an earlier one gets
	// a timer, not a derived context (which costs a timer and more).
	if !c.Deadline.IsZero() && (cc.deadline.IsZero() || c.Deadline.Before(cc.deadline)) {
		cc.deadline = c.Deadline
		t, _ := r.timers.Get().(*time.Timer)
		if t == nil {
			t = time.NewTimer(time.Until(c.Deadline))
		} else {
			t.Reset(time.Until(c.Deadline))
		}
		defer func() {
			t.Stop()
			r.timers.Put(t)
		}()
		cc.expired = t.C
	}
	var lost error // why the previous attempt failed
	for attempt := 1; ; attempt++ {
		s, p, err := r.acquire(&cc, c, attempt)
		if err != nil {
			if lost != nil {
				// The retry found no slot; the outcome is known (never
				// sent) or harmless (idempotent), so this is not
				// ErrHostGone.
				return Result{}, fmt.Errorf("%v; retrying: %w", lost, err)
			}
			return Result{}, err
		}
		o, err := r.await(&cc, s, p, c.Tool)
		if err != nil {
			return Result{}, err
		}
		if o.err != nil {
			return Result{}, fmt.Errorf("registry: call %s to %q: not sent to host %s: %w", p.id, c.Tool, s.hostID, o.err)
		}
		if !o.gone {
			return Result{Payload: o.payload, CallID: p.id, HostID: s.hostID, SessionID: s.id, Attempts: attempt}, nil
		}
		lost = fmt.Errorf("registry: call %s to %q (attempt %d): host %s session %s %s", p.id, c.Tool, attempt, s.hostID, s.id, o.why)
		switch {
		case o.sent && !c.Idempotent:
			return Result{}, fmt.Errorf("%v; outcome unknown: %w", lost, ErrHostGone)
		case attempt >= r.cfg.MaxAttempts:
			return Result{}, fmt.Errorf("%v; no attempts left (max %d): %w", lost, r.cfg.MaxAttempts, ErrHostGone)
		}
		r.log.Info("retrying call on another host", zap.String("tool", c.Tool), zap.String("call", p.id),
			zap.String("host", s.hostID), zap.Int("attempt", attempt), zap.Bool("sent", o.sent))
	}
}

// callCtx is what bounds a call: its caller's ctx, and the call's own
// deadline when that is earlier than ctx's.
type callCtx struct {
	ctx      context.Context
	deadline time.Time        // the earlier of ctx's and Call.Deadline; zero: none
	expired  <-chan time.Time // fires at deadline when Call.Deadline set it; else nil
}

// err is ctx.Err(), or context.DeadlineExceeded once the call's own
// deadline passed.
func (cc *callCtx) err() error {
	if err := cc.ctx.Err(); err != nil {
		return err
	}
	if cc.expired != nil && !time.Now().Before(cc.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// acquire reserves a slot for c on the best session, waiting up to
// QueueWait for one, and queues the Execute frame.
func (r *Registry) acquire(cc *callCtx, c Call, attempt int) (*Session, *pending, error) {
	var queue, grace *time.Timer
	defer func() {
		if queue != nil {
			queue.Stop()
		}
		if grace != nil {
			grace.Stop()
		}
	}()
	r.mu.Lock()
	for {
		if err := cc.err(); err != nil {
			r.mu.Unlock()
			return nil, nil, fmt.Errorf("registry: call to %q: %w", c.Tool, err)
		}
		now := r.cfg.Now()
		s, serving, expiry := r.pickLocked(toolKey{c.Tenant, c.Tool}, now)
		if s != nil {
			p := s.dispatchLocked(c, attempt, cc.deadline)
			r.mu.Unlock()
			return s, p, nil
		}
		if serving == 0 {
			r.mu.Unlock()
			return nil, nil, fmt.Errorf("registry: tool %q: %w", c.Tool, ErrNoHost)
		}
		if r.cfg.QueueWait < 0 {
			r.mu.Unlock()
			return nil, nil, fmt.Errorf("registry: tool %q: %d hosts full: %w", c.Tool, serving, ErrOverloaded)
		}
		if queue == nil {
			queue = time.NewTimer(r.cfg.QueueWait)
		}
		changed := r.waitCh[toolKey{c.Tenant, c.Tool}]
		if changed == nil {
			changed = make(chan struct{})
			r.waitCh[toolKey{c.Tenant, c.Tool}] = changed
		}
		r.mu.Unlock()

		var graceC <-chan time.Time
		if !expiry.IsZero() {
			d := max(expiry.Sub(now), 0)
			if grace == nil {
				grace = time.NewTimer(d)
			} else {
				grace.Reset(d)
			}
			graceC = grace.C
		}
		select {
		case <-changed:
		case <-graceC:
		case <-queue.C:
			return nil, nil, fmt.Errorf("registry: tool %q: %d hosts full for %v: %w", c.Tool, serving, r.cfg.QueueWait, ErrOverloaded)
		case <-cc.ctx.Done():
			return nil, nil, fmt.Errorf("registry: call to %q: waiting for a slot: %w", c.Tool, cc.ctx.Err())
		case <-cc.expired:
			return nil, nil, fmt.Errorf("registry: call to %q: waiting for a slot: %w", c.Tool, context.DeadlineExceeded)
		}
		r.mu.Lock()
	}
}

// pickLocked returns the least-loaded routable session serving tool that
// has a free slot (nil if none), how many routable sessions serve the tool,
// and the earliest time an abandoned call's reserved slot among them
// expires (zero if none). A stalled session is picked only when no
// session that is not stalled serves the tool.
func (r *Registry) pickLocked(tool toolKey, now time.Time) (best *Session, serving int, expiry time.Time) {
	var probe *Session // the best stalled session
	healthy := 0
	for s := range r.byTool[tool] {
		if s.draining {
			continue
		}
		serving++
		if !s.stalled {
			healthy++
		}
		if s.abandoned > 0 {
			if next := r.sweepLocked(s, now); !next.IsZero() && (expiry.IsZero() || next.Before(expiry)) {
				expiry = next
			}
		}
		if !s.routable() {
			continue
		}
		switch {
		case s.stalled:
			if probe == nil || s.lessLoaded(probe) {
				probe = s
			}
		case best == nil || s.lessLoaded(best):
			best = s
		}
	}
	if best == nil && healthy == 0 {
		best = probe
	}
	return best, serving, expiry
}

// await waits for p's outcome or for ctx. When ctx wins, the call is
// abandoned: a Cancel frame follows and its slot stays reserved.
func (r *Registry) await(cc *callCtx, s *Session, p *pending, tool string) (outcome, error) {
	var cause error
	select {
	case o := <-p.done:
		return o, nil
	case <-cc.ctx.Done():
		cause = cc.ctx.Err()
	case <-cc.expired:
		cause = context.DeadlineExceeded
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case o := <-p.done: // settled at the same time: take it
		return o, nil
	default:
	}
	reason := "caller canceled"
	// A caller whose own deadline cancels its RPC is seen as canceled,
	// often before the server's copy of the deadline fires.
	if errors.Is(cause, context.DeadlineExceeded) || !cc.deadline.IsZero() && !time.Now().Before(cc.deadline) {
		reason = "deadline exceeded"
		s.stallLocked(p)
	}
	s.abandonLocked(p, reason)
	return outcome{}, fmt.Errorf("registry: call %s to %q on host %s: %w", p.id, tool, s.hostID, cause)
}

// sweepLocked frees the slots of s's abandoned calls whose grace passed
// and returns the earliest grace still running (zero if none).
func (r *Registry) sweepLocked(s *Session, now time.Time) (next time.Time) {
	freed := false
	for id, p := range s.calls {
		if !p.abandoned {
			continue
		}
		if !now.Before(p.graceUntil) {
			delete(s.calls, id)
			s.abandoned--
			freed = true
			r.log.Debug("slot of abandoned call freed after grace", zap.String("session", s.id), zap.String("call", id))
			continue
		}
		if next.IsZero() || p.graceUntil.Before(next) {
			next = p.graceUntil
		}
	}
	if freed {
		r.notifyLocked(s)
	}
	return next
}

// notifyLocked wakes the calls waiting for a slot on a tool s serves.
func (r *Registry) notifyLocked(s *Session) {
	if len(r.waitCh) == 0 {
		return
	}
	for tool, ch := range r.waitCh {
		if _, ok := s.tools[tool.name]; ok && tool.tenant == s.tenant {
			close(ch)
			delete(r.waitCh, tool)
		}
	}
}

// notifyToolsLocked wakes the calls waiting for a slot on names of tenant.
func (r *Registry) notifyToolsLocked(tenant string, names []string) {
	if len(r.waitCh) == 0 {
		return
	}
	for _, name := range names {
		if ch := r.waitCh[toolKey{tenant, name}]; ch != nil {
			close(ch)
			delete(r.waitCh, toolKey{tenant, name})
		}
	}
}

// endLocked ends s (detached or dead): closes Done, stops routing to it,
// discards its queued frames and settles its calls. Its tools stay in
// s.tools for Detach to report.
func (r *Registry) endLocked(s *Session, why string) {
	if s.ended {
		return
	}
	s.ended = true
	close(s.done)
	delete(r.live, s)
	for name := range s.tools {
		r.unindexLocked(toolKey{s.tenant, name}, s)
	}
	// Frames still queued can never reach the host: the calls they carry
	// were surely not run.
	queued := make(map[string]bool)
drain:
	for {
		select {
		case f := <-s.out:
			if f.Kind == FrameExecute {
				queued[f.CallID] = true
			}
		default:
			break drain
		}
	}
	for id, p := range s.calls {
		delete(s.calls, id)
		if !p.abandoned {
			p.done <- outcome{gone: true, sent: p.delivered || !queued[id], why: why}
		}
	}
	s.abandoned = 0
	r.notifyLocked(s)
	if why == "detached" {
		r.log.Info("session detached", zap.String("host", s.hostID), zap.String("session", s.id))
	} else {
		r.log.Warn("session ended", zap.String("host", s.hostID), zap.String("session", s.id), zap.String("why", why))
	}
}

func (r *Registry) indexLocked(name toolKey, s *Session) {
	m := r.byTool[name]
	if m == nil {
		m = make(map[*Session]struct{})
		r.byTool[name] = m
	}
	m[s] = struct{}{}
}

func (r *Registry) unindexLocked(name toolKey, s *Session) {
	m := r.byTool[name]
	delete(m, s)
	if len(m) == 0 {
		delete(r.byTool, name)
	}
}

// pending is a call in flight on a session. It is in Session.calls until
// settled: answered by Complete, settled by the session's end, or (when
// abandoned) dropped after its grace.
type pending struct {
	id              string
	delivered       bool      // Delivered was called
	abandoned       bool      // the caller is gone; the slot waits for the host
	cancelOnDeliver bool      // abandoned before delivery: send Cancel when delivered
	reason          string    // of the Cancel frame
	graceUntil      time.Time // abandoned: the slot is freed at this time
	progress        func(any) // Call.Progress
	dispatched      time.Time // when the Execute frame was queued
	done            chan outcome
}

// outcome settles a pending call; it is sent exactly once, under the lock,
// by whoever removes the call from Session.calls, on a channel with room
// for it.
type outcome struct {
	payload any
	gone    bool   // the session ended
	sent    bool   // gone: the Execute frame may have reached the host
	why     string // gone: how the session ended
	err     error  // the call could not be sent (Undeliverable)
}

// Outcome names the outcome of a Call's error, as logs, metrics and the
// replicas' forwarding protocol spell it: no_host, overloaded, host_gone,
// deadline, canceled, or error for anything else.
func Outcome(err error) string {
	switch {
	case errors.Is(err, ErrNoHost):
		return "no_host"
	case errors.Is(err, ErrOverloaded):
		return "overloaded"
	case errors.Is(err, ErrHostGone):
		return "host_gone"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}
