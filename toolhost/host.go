package toolhost

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/backoff"
	"github.com/tooldex/tooldex/internal/dialtarget"
	"github.com/tooldex/tooldex/internal/toolname"
)

// Defaults for the zero values of Config.
const (
	DefaultSlots        = 16
	DefaultMinBackoff   = 100 * time.Millisecond
	DefaultMaxBackoff   = 10 * time.Second
	DefaultDrainTimeout = 10 * time.Second
)

const (
	// defaultHeartbeat is used when the HelloAck gives no interval.
	defaultHeartbeat = 10 * time.Second
	// minHeartbeat bounds a HelloAck's interval from below.
	minHeartbeat = 10 * time.Millisecond
	// closeWait is how long a draining host waits for the server to end
	// the stream after half-closing it.
	closeWait = 2 * time.Second
	// maxQueuedProgress is how many frames may wait to be sent before
	// progress reports are dropped.
	maxQueuedProgress = 256
)

// Config configures a Host. Only Addr and HostID are required.
type Config struct {
	// Addr is the tooldex server's address, as grpc.NewClient takes it, or
	// several replicas' host:port addresses separated by commas (the host
	// moves to the next that answers when its replica goes away).
	Addr string
	// HostID is the host's stable identity (e.g. "fs-worker-1").
	HostID string
	// Version is the host software's version, for operators.
	Version string
	// Slots is how many calls the host runs at once; 0 means DefaultSlots.
	Slots int
	// Auth is the host's credentials: TLS settings and a bearer token (see
	// auth.ClientConfig; auth.ClientConfigFromEnv reads them from TOOLDEX_*
	// variables). The zero value is plaintext without a token. Messages of
	// up to limit.MaxMessageBytes are sent and received, as the server does.
	Auth auth.ClientConfig
	// DialOptions are added to the client connection's options, after
	// those of Auth, which they override.
	DialOptions []grpc.DialOption
	// Logger receives the host's logs; nil means zap.NewNop().
	Logger *zap.Logger
	// MinBackoff and MaxBackoff bound the delay between reconnection
	// attempts; 0 means DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// DrainTimeout is how long a stopping host waits for in-flight calls
	// before cancelling them; 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration
}

// Host is a tool host: a set of tools with their handlers and, while Run
// runs, a session with a tooldex server. Its methods are safe for
// concurrent use.
type Host struct {
	cfg Config
	log *zap.Logger

	mu        sync.Mutex
	tools     map[string]*entry
	running   bool
	sess      *session      // the current session, from its hello on
	connected bool          // sess has received its HelloAck
	ready     chan struct{} // closed while connected
}

type entry struct {
	tool *tooldexv1.Tool
	fn   Handler
}

// New returns a Host with cfg, zero values replaced by their defaults.
func New(cfg Config) *Host {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Slots <= 0 {
		cfg.Slots = DefaultSlots
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = cfg.MinBackoff
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	return &Host{
		cfg:   cfg,
		log:   cfg.Logger.With(zap.String("host_id", cfg.HostID)),
		tools: make(map[string]*entry),
		ready: make(chan struct{}),
	}
}

// Handle registers fn as the handler of tool, replacing any tool of the
// same name. The tool is copied. Handle may be called before or during
// Run; a connected host sends the server a ToolsUpdate with the tool.
func (h *Host) Handle(tool *tooldexv1.Tool, fn Handler) error {
	if tool == nil {
		return errors.New("toolhost: Handle: nil tool")
	}
	if tool.GetName() == "" {
		return errors.New("toolhost: Handle: tool has no name")
	}
	if !toolname.Valid(tool.GetName()) {
		return fmt.Errorf("toolhost: Handle: tool name %q is not provider-legal (^[a-zA-Z0-9_-]{1,64}$)", tool.GetName())
	}
	if fn == nil {
		return fmt.Errorf("toolhost: Handle: tool %q has a nil handler", tool.GetName())
	}
	t := proto.CloneOf(tool)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tools[t.GetName()] = &entry{tool: t, fn: fn}
	if h.sess != nil {
		h.sess.out.push(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Tools{
			Tools: &tooldexv1.ToolsUpdate{Upsert: []*tooldexv1.Tool{t}},
		}}, 0)
	}
	return nil
}

// Remove stops serving the named tools. Names the host does not serve are
// ignored. A connected host sends the server a ToolsUpdate removing them.
func (h *Host) Remove(names ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var removed []string
	for _, name := range names {
		if _, ok := h.tools[name]; ok {
			delete(h.tools, name)
			removed = append(removed, name)
		}
	}
	if len(removed) > 0 && h.sess != nil {
		h.sess.out.push(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Tools{
			Tools: &tooldexv1.ToolsUpdate{Remove: removed},
		}}, 0)
	}
}

// WaitReady returns nil once the current connection has received its
// HelloAck, or ctx's error (wrapped) if ctx is done first.
func (h *Host) WaitReady(ctx context.Context) error {
	h.mu.Lock()
	ready := h.ready
	h.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("toolhost: waiting for the server's HelloAck: %w", ctx.Err())
	}
}

// Connected reports whether the host has a session the server has
// acknowledged.
func (h *Host) Connected() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.connected
}

// handler returns the handler of the named tool, or nil.
func (h *Host) handler(name string) Handler {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.tools[name]; ok {
		return e.fn
	}
	return nil
}

// attach makes s the current session and returns its hello, with every
// tool the host serves (by name). Taking the snapshot and attaching under
// one lock means a tool handled concurrently is in either the hello or a
// later ToolsUpdate of s.
func (h *Host) attach(s *session) *tooldexv1.HostHello {
	h.mu.Lock()
	defer h.mu.Unlock()
	tools := make([]*tooldexv1.Tool, 0, len(h.tools))
	for _, e := range h.tools {
		tools = append(tools, e.tool)
	}
	slices.SortFunc(tools, func(a, b *tooldexv1.Tool) int {
		switch {
		case a.GetName() < b.GetName():
			return -1
		case a.GetName() > b.GetName():
			return 1
		}
		return 0
	})
	h.sess = s
	return &tooldexv1.HostHello{
		HostId:             h.cfg.HostID,
		Version:            h.cfg.Version,
		MaxConcurrentCalls: int32(h.cfg.Slots),
		Tools:              tools,
	}
}

// markReady records that s received its HelloAck.
func (h *Host) markReady(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sess == s && !h.connected {
		h.connected = true
		close(h.ready)
	}
}

// detach ends s as the current session.
func (h *Host) detach(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sess != s {
		return
	}
	h.sess = nil
	if h.connected {
		h.connected = false
		h.ready = make(chan struct{})
	}
}

// Run serves the host's tools until ctx is done, reconnecting whenever the
// stream ends, and then drains (see the package documentation) and returns
// nil. It returns an error only when it cannot start: no HostID, Run
// already running, or a client connection that cannot be made.
func (h *Host) Run(ctx context.Context) error {
	if h.cfg.HostID == "" {
		return errors.New("toolhost: Config.HostID is required")
	}
	h.mu.Lock()
	if h.running {
		h.mu.Unlock()
		return errors.New("toolhost: Run is already running")
	}
	h.running = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.running = false
		h.mu.Unlock()
	}()

	opts, err := h.cfg.Auth.DialOptions()
	if err != nil {
		return fmt.Errorf("toolhost: credentials: %w", err)
	}
	target, extra := dialtarget.Of(h.cfg.Addr) // several replicas
	conn, err := grpc.NewClient(target, append(append(opts, extra...), h.cfg.DialOptions...)...)
	if err != nil {
		return fmt.Errorf("toolhost: connecting to %q: %w", h.cfg.Addr, err)
	}
	defer conn.Close()

	r := &runner{
		h:      h,
		client: tooldexv1.NewHostServiceClient(conn),
		slots:  make(chan struct{}, h.cfg.Slots),
	}
	// Handlers of broken sessions were cancelled but may still be running:
	// wait for them before closing the connection.
	defer r.calls.Wait()

	bo := backoff.Backoff{Min: h.cfg.MinBackoff, Max: h.cfg.MaxBackoff, Jitter: true}
	for {
		if ctx.Err() != nil {
			return nil
		}
		acked, err := r.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if acked {
			bo.Reset()
		}
		delay := bo.Next()
		h.log.Warn("connection to the tooldex server ended; reconnecting",
			zap.String("addr", h.cfg.Addr), zap.Error(err), zap.Duration("backoff", delay))
		if !backoff.Sleep(ctx, delay) {
			return nil
		}
	}
}

// runner is what one Run shares between its sessions.
type runner struct {
	h      *Host
	client tooldexv1.HostServiceClient
	slots  chan struct{} // a token per running call
	calls  sync.WaitGroup
}
