package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapio"
	"google.golang.org/protobuf/proto"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/backoff"
	"github.com/tooldex/tooldex/toolhost"
)

// Defaults for the zero values of Options.
const (
	DefaultMinRestart = 500 * time.Millisecond
	DefaultMaxRestart = 30 * time.Second
	// stableAfter is how long a session must last for the restart backoff
	// to start again from its minimum.
	stableAfter = 30 * time.Second
	// terminateAfter is how long closing a stdio server waits after closing
	// its stdin before it sends SIGTERM.
	terminateAfter = 2 * time.Second
)

// Options configure a Bridge. Only Addr is required.
type Options struct {
	// Addr is the tooldex server's address.
	Addr string
	// Auth is the hosts' credentials to the tooldex server (a token with the
	// host scope and patterns covering mcp__<server>__*, TLS settings).
	Auth auth.ClientConfig
	// Logger receives the bridge's logs (and stdio servers' stderr); nil
	// means zap.NewNop().
	Logger *zap.Logger
	// Slots is each host's max concurrent calls; 0 means toolhost's default.
	Slots int
	// MinRestart and MaxRestart bound the delay before reconnecting to (or
	// restarting) an MCP server whose session ended or failed to start.
	MinRestart, MaxRestart time.Duration
	// HostMinBackoff and HostMaxBackoff are passed to the tool hosts as
	// their reconnection backoff to the tooldex server.
	HostMinBackoff, HostMaxBackoff time.Duration
	// Sampling and Elicitation declare those client capabilities to every
	// server (ServerConfig.Sampling and Elicitation do it for one); see
	// ServerConfig for what the bridge answers such requests with.
	Sampling, Elicitation bool
	// NewTransport, when set, makes the transport of each connection to a
	// server instead of the default (mcp.CommandTransport or
	// mcp.StreamableClientTransport). For tests.
	NewTransport func(server string, sc ServerConfig) (mcp.Transport, error)
}

// Bridge serves the tools of MCP servers to tooldex: one tool host per
// server, HostID "mcp:<server>", each MCP tool as mcp__<server>__<tool>.
type Bridge struct {
	cfg     *Config
	opts    Options
	log     *zap.Logger
	servers []*server
}

// New returns a Bridge for cfg's servers. Servers whose sanitized names
// collide are reported and skipped.
func New(cfg *Config, opts Options) (*Bridge, error) {
	if opts.Addr == "" {
		return nil, errors.New("mcpbridge: Options.Addr is required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.MinRestart <= 0 {
		opts.MinRestart = DefaultMinRestart
	}
	if opts.MaxRestart <= 0 {
		opts.MaxRestart = DefaultMaxRestart
	}
	opts.MaxRestart = max(opts.MaxRestart, opts.MinRestart)
	b := &Bridge{cfg: cfg, opts: opts, log: opts.Logger}
	taken := make(map[string]string)
	for _, name := range cfg.names() {
		sc := cfg.Servers[name]
		if sc.Disabled {
			continue
		}
		sn := ServerName(name)
		if prev, ok := taken[sn]; ok {
			b.log.Error("MCP server name collides with another after sanitizing; skipping it",
				zap.String("server", name), zap.String("other", prev), zap.String("sanitized", sn))
			continue
		}
		taken[sn] = name
		log := b.log.With(zap.String("mcp_server", name))
		s := &server{
			b:        b,
			name:     name,
			sname:    sn,
			sc:       sc,
			log:      log,
			tools:    make(map[string]*tooldexv1.Tool),
			progress: make(map[string]*toolhost.Call),
			host: toolhost.New(toolhost.Config{
				Addr:       opts.Addr,
				Auth:       opts.Auth,
				HostID:     "mcp:" + name,
				Slots:      opts.Slots,
				Logger:     log,
				MinBackoff: opts.HostMinBackoff,
				MaxBackoff: opts.HostMaxBackoff,
			}),
		}
		b.servers = append(b.servers, s)
	}
	return b, nil
}

// Run connects to every MCP server and serves its tools until ctx is done,
// then closes every MCP session (stopping stdio servers) and stops the
// hosts. It returns nil after a clean shutdown.
func (b *Bridge) Run(ctx context.Context) error {
	if len(b.servers) == 0 {
		return errors.New("mcpbridge: no MCP servers to bridge")
	}
	var wg sync.WaitGroup
	errs := make([]error, len(b.servers))
	for i, s := range b.servers {
		wg.Go(func() {
			if err := s.host.Run(ctx); err != nil {
				errs[i] = fmt.Errorf("host %q: %w", "mcp:"+s.name, err)
			}
		})
		wg.Go(func() { s.run(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Host returns the tool host of the named server (its configured name), or
// nil.
func (b *Bridge) Host(name string) *toolhost.Host {
	if s := b.server(name); s != nil {
		return s.host
	}
	return nil
}

// Process returns the running process of the named stdio server, or nil.
func (b *Bridge) Process(name string) *os.Process {
	if s := b.server(name); s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.proc
	}
	return nil
}

// Tools returns the tooldex names of the named server's tools currently
// served, sorted.
func (b *Bridge) Tools(name string) []string {
	s := b.server(name)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.tools))
}

func (b *Bridge) server(name string) *server {
	for _, s := range b.servers {
		if s.name == name {
			return s
		}
	}
	return nil
}

// server is one MCP server and its tool host.
type server struct {
	b     *Bridge
	name  string // as configured
	sname string // sanitized
	sc    ServerConfig
	log   *zap.Logger
	host  *toolhost.Host

	syncMu sync.Mutex // serializes syncs

	mu       sync.Mutex
	sess     *mcp.ClientSession // current session, nil while down
	proc     *os.Process
	tools    map[string]*tooldexv1.Tool // served tools by tooldex name
	original map[string]string          // tooldex name → MCP tool name
	progress map[string]*toolhost.Call  // progressToken sent upstream → the call it reports on
}

// run keeps a session with the server until ctx is done, restarting it
// with exponential backoff when it ends or cannot start.
func (s *server) run(ctx context.Context) {
	bo := backoff.Backoff{Min: s.b.opts.MinRestart, Max: s.b.opts.MaxRestart, Jitter: true}
	for {
		start := time.Now()
		err := s.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) >= stableAfter {
			bo.Reset()
		}
		delay := bo.Next()
		s.log.Warn("MCP server session ended; restarting", zap.Error(err), zap.Duration("backoff", delay))
		if !backoff.Sleep(ctx, delay) {
			return
		}
	}
}

// session runs one session: connect, list and serve the tools, follow
// list_changed, until the session ends or ctx is done. Its tools are
// removed from the host when it returns.
func (s *server) session(ctx context.Context) error {
	t, cmd, err := s.transport()
	if err != nil {
		return err
	}
	_, isHTTP := t.(*mcp.StreamableClientTransport)
	if !isHTTP {
		t = progressTransport{Transport: t, dispatch: s.dispatchProgress}
	}
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "tooldex-mcpbridge", Version: "v1"}, s.clientOptions(changed, !isHTTP))
	roots := s.b.cfg.Roots
	if s.sc.Roots != nil {
		roots = s.sc.Roots
	}
	for _, r := range roots {
		client.AddRoots(&mcp.Root{URI: r.URI, Name: r.Name})
	}
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		return fmt.Errorf("connecting: %w", err)
	}
	ended := make(chan struct{})
	go func() {
		_ = cs.Wait()
		close(ended)
	}()
	s.mu.Lock()
	s.sess = cs
	if cmd != nil {
		s.proc = cmd.Process
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.sess = nil
		s.proc = nil
		s.mu.Unlock()
		s.removeAll()
		if err := cs.Close(); err != nil && ctx.Err() == nil {
			s.log.Debug("closing MCP session", zap.Error(err))
		}
		<-ended
	}()
	s.log.Info("connected to MCP server")
	if err := s.sync(ctx, cs); err != nil {
		return fmt.Errorf("listing tools: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ended:
			return errors.New("session ended")
		case <-changed:
			if err := s.sync(ctx, cs); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				select {
				case <-ended:
					return errors.New("session ended")
				default:
				}
				s.log.Warn("re-listing tools after list_changed failed", zap.Error(err))
			}
		}
	}
}

// transport makes the transport of a new connection, and the command it
// runs for a stdio server.
func (s *server) transport() (mcp.Transport, *exec.Cmd, error) {
	if f := s.b.opts.NewTransport; f != nil {
		t, err := f(s.name, s.sc)
		return t, nil, err
	}
	if s.sc.Stdio() {
		cmd := exec.Command(s.sc.Command, s.sc.Args...)
		cmd.Env = os.Environ()
		for _, k := range slices.Sorted(maps.Keys(s.sc.Env)) {
			cmd.Env = append(cmd.Env, k+"="+s.sc.Env[k])
		}
		cmd.Dir = s.sc.Cwd
		cmd.Stderr = &zapio.Writer{Log: s.log.With(zap.String("stream", "stderr")), Level: zap.InfoLevel}
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateAfter}, cmd, nil
	}
	hc := http.DefaultClient
	if len(s.sc.Headers) > 0 {
		hc = &http.Client{Transport: &headerTransport{headers: s.sc.Headers, base: http.DefaultTransport}}
	}
	return &mcp.StreamableClientTransport{Endpoint: s.sc.URL, HTTPClient: hc}, nil, nil
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// sync lists the server's tools (every page) and applies the difference to
// the host: new and changed tools are handled, vanished ones removed.
func (s *server) sync(ctx context.Context, cs *mcp.ClientSession) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	var listed []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		listed = append(listed, t)
	}
	byName := make(map[string]*mcp.Tool, len(listed))
	names := make([]string, 0, len(listed))
	for _, t := range listed {
		if _, dup := byName[t.Name]; dup {
			s.log.Warn("MCP server lists a tool twice; keeping the first", zap.String("tool", t.Name))
			continue
		}
		byName[t.Name] = t
		names = append(names, t.Name)
	}
	slices.Sort(names)
	m := mapTools(s.sname, names)
	for orig, kept := range m.collisions {
		s.log.Error("MCP tool name collides with another after sanitizing; skipping it",
			zap.String("tool", orig), zap.String("other", kept), zap.String("name", ToolName(s.sname, orig)))
	}
	want := make(map[string]*tooldexv1.Tool, len(m.toOriginal))
	for name, orig := range m.toOriginal {
		t, err := convertTool(s.name, name, byName[orig])
		if err != nil {
			s.log.Error("skipping MCP tool", zap.String("tool", orig), zap.Error(err))
			continue
		}
		want[name] = t
	}

	s.mu.Lock()
	have := s.tools
	s.original = m.toOriginal
	s.mu.Unlock()

	var removed []string
	for name := range have {
		if _, ok := want[name]; !ok {
			removed = append(removed, name)
		}
	}
	slices.Sort(removed)
	if len(removed) > 0 {
		s.host.Remove(removed...)
	}
	served := make(map[string]*tooldexv1.Tool, len(want))
	var added, updated int
	for _, name := range slices.Sorted(maps.Keys(want)) {
		t := want[name]
		old, ok := have[name]
		if ok && proto.Equal(old, t) {
			served[name] = old
			continue
		}
		if err := s.host.Handle(t, s.handler(name)); err != nil {
			s.log.Error("cannot serve MCP tool", zap.String("tool", m.toOriginal[name]), zap.Error(err))
			continue
		}
		served[name] = t
		if ok {
			updated++
		} else {
			added++
		}
	}
	s.mu.Lock()
	s.tools = served
	s.mu.Unlock()
	s.log.Info("MCP tools synced", zap.Int("tools", len(served)), zap.Int("added", added),
		zap.Int("updated", updated), zap.Int("removed", len(removed)))
	return nil
}

// removeAll stops serving every tool of the server.
func (s *server) removeAll() {
	s.mu.Lock()
	names := slices.Sorted(maps.Keys(s.tools))
	s.tools = make(map[string]*tooldexv1.Tool)
	s.mu.Unlock()
	if len(names) > 0 {
		s.host.Remove(names...)
		s.log.Info("MCP server down; its tools were removed", zap.Int("tools", len(names)))
	}
}

// handler calls the MCP tool served as name on the current session.
func (s *server) handler(name string) toolhost.Handler {
	return func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
		s.mu.Lock()
		cs, orig := s.sess, s.original[name]
		s.mu.Unlock()
		if cs == nil || orig == "" {
			return toolhost.Errorf("MCP server %q is not connected", s.name), nil
		}
		var args any = call.Params
		if call.ParamsJSON != "" {
			args = json.RawMessage(call.ParamsJSON) // keeps 64-bit integers exact
		} else if call.Params == nil {
			args = map[string]any{}
		}
		params := &mcp.CallToolParams{Name: orig, Arguments: args}
		if call.WantProgress {
			// The call id is unique on the host: it is the token.
			params.SetProgressToken(call.ID)
			s.mu.Lock()
			s.progress[call.ID] = call
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				delete(s.progress, call.ID)
				s.mu.Unlock()
			}()
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: tools/call %q: %w", s.name, orig, err)
		}
		return convertResult(res)
	}
}
