package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/schema"
)

// replBackend is what the REPL calls on a tooldex server.
// tooldexv1.DiscoveryServiceClient implements it; tests use a fake.
type replBackend interface {
	Prefetch(ctx context.Context, in *tooldexv1.PrefetchRequest, opts ...grpc.CallOption) (*tooldexv1.PrefetchResponse, error)
	Search(ctx context.Context, in *tooldexv1.SearchRequest, opts ...grpc.CallOption) (*tooldexv1.SearchResponse, error)
	Discover(ctx context.Context, in *tooldexv1.DiscoverRequest, opts ...grpc.CallOption) (*tooldexv1.DiscoverResponse, error)
	Execute(ctx context.Context, in *tooldexv1.ExecuteRequest, opts ...grpc.CallOption) (*tooldexv1.ExecuteResponse, error)
}

const replHelp = `commands:
  /search QUERY       run a ToolSearch query and print the results table
  /discover TASK      rank tools for a task, with schemas
  /exec TOOL [JSON]   run a tool on a connected host (JSON object, default {})
  /hints on|off       show or hide the tool hint bar
  /help               this text
  /quit               leave (also Ctrl-C, Ctrl-D)
anything else is a message: it goes to the transcript with the tools you added.
hint bar: Tab / Shift-Tab select, Enter adds the selected tool to the message, Esc hides the bar.`

// unavailableLine is printed once when the server has no Prefetch.
const unavailableLine = "hints unavailable: server has no Prefetch"

const (
	maxHints      = 3    // hints in the bar
	maxContext    = 3    // earlier messages sent to Prefetch as context
	maxTranscript = 1000 // lines the model keeps (the terminal keeps them all)
)

// replConfig is what a REPL model is built from.
type replConfig struct {
	backend   replBackend
	settings  settings
	sessionID string
	caller    string
	addr      string
	timeout   time.Duration // per RPC
	notices   []string      // printed first, e.g. a settings error
}

// addedTool is a hint the user added to the next message's context.
type addedTool struct {
	name    string
	summary string // parameters: name (type, required), ...
}

func (a addedTool) String() string {
	if a.summary == "" {
		return a.name + " (no params)"
	}
	return a.name + " (params " + a.summary + ")"
}

// Messages the model receives from its commands.
type (
	// bannerMsg prints the banner if no window size came first.
	bannerMsg struct{}
	// debounceMsg fires debounce after an input change; seq says which.
	debounceMsg struct{ seq int }
	// prefetchMsg is Prefetch's answer for the input version seq.
	prefetchMsg struct {
		seq     int
		results []*tooldexv1.SearchResult
		err     error
	}
	// printMsg is text a command wants in the transcript.
	printMsg struct {
		text  string
		table bool // cut long lines instead of wrapping them
	}
)

// replModel is the REPL's bubbletea model.
type replModel struct {
	cfg   replConfig
	ctx   context.Context
	input textinput.Model
	width int

	hintsOn     bool
	unavailable bool   // the server answered UNIMPLEMENTED to Prefetch
	lastHintErr string // last Prefetch error printed, to print each once
	seq         int    // input version: bumped on every change
	hints       []*tooldexv1.SearchResult
	selected    int // highlighted hint, -1 for none
	dismissed   bool

	added   []addedTool // context of the next message
	loaded  []string    // every tool added this run: not recommended again
	history []string    // the last submitted messages, oldest first

	started    bool     // the banner is printed
	transcript []string // the last lines printed, oldest first
	pending    []string // printed by the current Update
	quitting   bool
}

func newREPLModel(ctx context.Context, cfg replConfig) *replModel {
	in := textinput.New()
	in.Prompt = "> "
	in.Placeholder = "type a task, or /help"
	in.Cursor.SetMode(cursor.CursorStatic)
	in.Focus()
	return &replModel{cfg: cfg, ctx: ctx, input: in, hintsOn: cfg.settings.Hints, selected: -1}
}

// Init prints the banner once the terminal's width is known, or after a
// moment when no size comes (output is not a terminal).
func (m *replModel) Init() tea.Cmd {
	return tea.Tick(200*time.Millisecond, func(time.Time) tea.Msg { return bannerMsg{} })
}

func (m *replModel) banner() {
	if m.started {
		return
	}
	m.started = true
	m.print(fmt.Sprintf("tooldex repl on %s (session %s): /help lists commands", m.cfg.addr, m.cfg.sessionID))
	m.print(m.cfg.notices...)
}

// print queues text for the transcript, wrapped to the terminal's width;
// Update prints it before its other commands run.
func (m *replModel) print(text ...string) {
	for _, t := range text {
		m.printText(t, false)
	}
}

// printText queues text for the transcript, its lines wrapped (or, for
// tables, cut) to the width. Lines longer than the terminal would wrap
// behind the renderer's back and leave stale rows of the view on screen.
func (m *replModel) printText(text string, cutLines bool) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		switch {
		case m.width <= 0 || ansi.StringWidth(line) <= m.width:
			m.pending = append(m.pending, line)
		case cutLines:
			m.pending = append(m.pending, cutWidth(line, m.width))
		default:
			m.pending = append(m.pending, strings.Split(ansi.Wrap(line, m.width, ""), "\n")...)
		}
	}
}

func (m *replModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if len(m.pending) == 0 {
		return m, cmd
	}
	m.transcript = append(m.transcript, m.pending...)
	if n := len(m.transcript) - maxTranscript; n > 0 {
		m.transcript = slices.Delete(m.transcript, 0, n)
	}
	p := tea.Println(strings.Join(m.pending, "\n"))
	m.pending = nil
	if cmd == nil {
		return m, p
	}
	// In order: what a command prints comes before what it then runs.
	return m, tea.Sequence(p, cmd)
}

func (m *replModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
		m.input.Width = max(msg.Width-len(m.input.Prompt)-1, 10)
		m.banner()
		return nil
	case bannerMsg:
		m.banner()
		return nil
	case debounceMsg:
		if msg.seq != m.seq {
			return nil // typed again since
		}
		return m.prefetch(strings.TrimSpace(m.input.Value()), false)
	case prefetchMsg:
		m.gotHints(msg)
		return nil
	case printMsg:
		m.printText(msg.text, msg.table)
		return nil
	case tea.KeyMsg:
		return m.key(msg)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

func (m *replModel) key(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyCtrlC, tea.KeyCtrlD:
		m.quitting = true
		return tea.Quit
	case tea.KeyTab, tea.KeyShiftTab:
		if n := len(m.visibleHints()); n > 0 {
			if msg.Type == tea.KeyTab {
				m.selected = (m.selected + 1) % n
			} else {
				m.selected = (m.selected - 1 + n) % n
			}
		}
		return nil
	case tea.KeyEsc:
		m.dismissed, m.selected = true, -1
		return nil
	case tea.KeyEnter:
		if hs := m.visibleHints(); m.selected >= 0 && m.selected < len(hs) {
			m.addHint(hs[m.selected])
			return nil
		}
		return m.submit()
	}
	before := m.input.Value()
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if m.input.Value() != before {
		return tea.Batch(cmd, m.changed())
	}
	return cmd
}

// changed reacts to an input change: the bar comes back, the highlight
// goes, and Prefetch runs once the user pauses.
func (m *replModel) changed() tea.Cmd {
	m.seq++
	m.dismissed, m.selected = false, -1
	text := strings.TrimSpace(m.input.Value())
	if text == "" || strings.HasPrefix(text, "/") {
		m.hints = nil
		return nil
	}
	if !m.hintsActive() {
		return nil
	}
	seq := m.seq
	return tea.Tick(time.Duration(m.cfg.settings.DebounceMS)*time.Millisecond, func(time.Time) tea.Msg { return debounceMsg{seq} })
}

func (m *replModel) hintsActive() bool { return m.hintsOn && !m.unavailable }

// prefetch asks the server for hints for text, tagged with the current
// input version. Only a submitted message counts against the session:
// previews while typing use no session id, so the server remembers nothing
// of them and the hints do not run out before the user presses Enter.
func (m *replModel) prefetch(text string, submitted bool) tea.Cmd {
	if text == "" || !m.hintsActive() {
		return nil
	}
	session := ""
	if submitted {
		session = m.cfg.sessionID
	}
	req := &tooldexv1.PrefetchRequest{
		SessionId: session,
		Message:   text,
		Limit:     maxHints,
		MinScore:  m.cfg.settings.MinScore,
		Loaded:    slices.Clone(m.loaded),
		Caller:    m.cfg.caller,
	}
	for _, h := range slices.Backward(m.history) {
		req.Context = append(req.Context, h)
	}
	seq, b, ctx, timeout := m.seq, m.cfg.backend, m.ctx, m.cfg.timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		resp, err := b.Prefetch(ctx, req)
		return prefetchMsg{seq: seq, results: resp.GetResults(), err: err}
	}
}

func (m *replModel) gotHints(msg prefetchMsg) {
	if msg.err != nil {
		if msg.seq == m.seq {
			m.hints, m.selected = nil, -1
		}
		if status.Code(msg.err) == codes.Unimplemented {
			if !m.unavailable {
				m.unavailable = true
				m.print(unavailableLine)
			}
			return
		}
		if e := rpcError("hints", msg.err).Error(); e != m.lastHintErr {
			m.lastHintErr = e
			m.print(e)
		}
		return
	}
	m.lastHintErr = ""
	if msg.seq != m.seq {
		return // for an input that has changed since
	}
	m.hints, m.selected = nil, -1
	for _, r := range msg.results {
		if len(m.hints) == maxHints || r.GetScore() < m.cfg.settings.MinScore {
			break
		}
		if r.GetTool().GetName() != "" && !slices.Contains(m.loaded, r.GetTool().GetName()) {
			m.hints = append(m.hints, r)
		}
	}
}

// visibleHints are the hints the bar shows: none when it is hidden.
func (m *replModel) visibleHints() []*tooldexv1.SearchResult {
	if !m.hintsActive() || m.dismissed || len(m.hints) == 0 || m.hints[0].GetScore() < m.cfg.settings.MinScore {
		return nil
	}
	return m.hints
}

// addHint adds a hint's tool to the next message's context.
func (m *replModel) addHint(r *tooldexv1.SearchResult) {
	a := addedTool{name: r.GetTool().GetName(), summary: paramSummary(r.GetTool())}
	m.added = append(m.added, a)
	if !slices.Contains(m.loaded, a.name) {
		m.loaded = append(m.loaded, a.name)
	}
	m.print("added: " + a.String())
	m.hints = slices.DeleteFunc(m.hints, func(h *tooldexv1.SearchResult) bool { return h == r })
	m.selected = -1
}

// submit handles Enter with no highlighted hint: a command, or a message.
func (m *replModel) submit() tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return nil
	}
	m.input.Reset()
	m.seq++
	m.hints, m.selected, m.dismissed = nil, -1, false
	if strings.HasPrefix(text, "/") {
		m.print("> " + text)
		return m.command(text)
	}
	m.print("you: " + text)
	if len(m.added) > 0 {
		tools := make([]string, len(m.added))
		for i, a := range m.added {
			tools[i] = a.String()
		}
		m.print("  with tools: " + strings.Join(tools, "; "))
	}
	cmd := m.prefetch(text, true)
	m.history = append(m.history, text)
	if n := len(m.history) - maxContext; n > 0 {
		m.history = slices.Delete(m.history, 0, n)
	}
	m.added = nil
	return cmd
}

func (m *replModel) command(line string) tea.Cmd {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/help", "/?":
		m.print(replHelp)
	case "/quit", "/exit", "/q":
		m.quitting = true
		return tea.Quit
	case "/hints":
		switch arg {
		case "on":
			m.hintsOn = true
		case "off":
			m.hintsOn = false
		case "":
		default:
			m.print("usage: /hints on|off")
			return nil
		}
		state := "off"
		if m.hintsOn {
			state = "on"
		}
		if m.hintsOn && m.unavailable {
			state += " (" + unavailableLine + ")"
		}
		m.print("hints " + state)
	case "/search":
		if arg == "" {
			m.print("usage: /search QUERY")
			return nil
		}
		req := &tooldexv1.SearchRequest{Query: arg, Caller: m.cfg.caller}
		return m.rpc(true, func(ctx context.Context, b replBackend) (string, error) {
			resp, err := b.Search(ctx, req)
			if err != nil {
				return "", rpcError("search", err)
			}
			return searchText(resp), nil
		})
	case "/discover":
		if arg == "" {
			m.print("usage: /discover TASK")
			return nil
		}
		req := &tooldexv1.DiscoverRequest{Query: arg, Caller: m.cfg.caller}
		return m.rpc(false, func(ctx context.Context, b replBackend) (string, error) {
			resp, err := b.Discover(ctx, req)
			if err != nil {
				return "", rpcError("discover", err)
			}
			if resp.GetText() == "" {
				return "no tools found", nil
			}
			return resp.GetText(), nil
		})
	case "/exec":
		tool, params, _ := strings.Cut(arg, " ")
		params = strings.TrimSpace(params)
		if params == "" {
			params = "{}"
		}
		if tool == "" {
			m.print("usage: /exec TOOL [JSON]")
			return nil
		}
		if !json.Valid([]byte(params)) {
			m.print("exec: parameters are not valid JSON")
			return nil
		}
		req := &tooldexv1.ExecuteRequest{ToolName: tool, ParamsJson: params, SessionId: m.cfg.sessionID, Caller: m.cfg.caller}
		return m.rpc(false, func(ctx context.Context, b replBackend) (string, error) {
			resp, err := b.Execute(ctx, req)
			if err != nil {
				return "", rpcError("exec", err)
			}
			return executeText(resp), nil
		})
	default:
		m.print(fmt.Sprintf("unknown command %s: /help lists commands", name))
	}
	return nil
}

// rpc runs call asynchronously and prints its text (a table when table
// is set) or its error.
func (m *replModel) rpc(table bool, call func(context.Context, replBackend) (string, error)) tea.Cmd {
	b, ctx, timeout := m.cfg.backend, m.ctx, m.cfg.timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		text, err := call(ctx, b)
		if err != nil {
			return printMsg{text: err.Error()}
		}
		return printMsg{text: text, table: table}
	}
}

var (
	hintStyle     = lipgloss.NewStyle().Faint(true)
	selectedStyle = lipgloss.NewStyle().Reverse(true)
)

func (m *replModel) View() string {
	if m.quitting {
		return ""
	}
	width := m.width
	if width <= 0 {
		width = 80
	}
	var b strings.Builder
	for _, line := range m.hintLines(width) {
		b.WriteString(line + "\n")
	}
	b.WriteString(m.input.View() + "\n")
	status := "/help commands · Ctrl-C quits"
	if !m.hintsOn {
		status = "hints off · " + status
	}
	if len(m.added) > 0 {
		names := make([]string, len(m.added))
		for i, a := range m.added {
			names[i] = a.name
		}
		status = "context: " + strings.Join(names, ", ") + " · " + status
	}
	b.WriteString(hintStyle.Render(cutWidth(status, width)))
	return b.String()
}

// hintLines renders the hint bar: a header, then one line per hint with
// its name, score and description, cut to width.
func (m *replModel) hintLines(width int) []string {
	hs := m.visibleHints()
	if len(hs) == 0 {
		return nil
	}
	nameW := 0
	for _, h := range hs {
		nameW = max(nameW, ansi.StringWidth(h.GetTool().GetName()))
	}
	lines := []string{hintStyle.Render(cutWidth("tools · Tab select · Enter add · Esc hide", width))}
	for i, h := range hs {
		marker := "  "
		if i == m.selected {
			marker = "› "
		}
		name := h.GetTool().GetName()
		head := fmt.Sprintf("%s%s%s  %.2f  ", marker, name, strings.Repeat(" ", nameW-ansi.StringWidth(name)), h.GetScore())
		line := cutWidth(head+cutWidth(firstLine(h.GetTool().GetDescription()), width-ansi.StringWidth(head)), width)
		if i == m.selected {
			line = selectedStyle.Render(line)
		}
		lines = append(lines, line)
	}
	return lines
}

// firstLine returns the first line of s, trimmed.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// cutWidth cuts a line to width terminal cells, with an ellipsis.
func cutWidth(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// paramSummary lists a tool's parameters as "name (type, required)",
// required ones first, as Search's text does.
func paramSummary(t *tooldexv1.Tool) string { return schema.ParamSummary(t.GetInputSchema()) }

// searchText renders a Search response as 'tooldex search' prints it.
func searchText(resp *tooldexv1.SearchResponse) string {
	var b bytes.Buffer
	printResults(&b, resp.GetResults())
	if al := resp.GetAlreadyLoaded(); len(al) > 0 {
		fmt.Fprintf(&b, "already loaded (core): %s\n", strings.Join(al, ", "))
	}
	if nf := resp.GetNotFound(); len(nf) > 0 {
		fmt.Fprintf(&b, "not found: %s\n", strings.Join(nf, ", "))
	}
	fmt.Fprintf(&b, "%d result(s), %d deferred tools searched", len(resp.GetResults()), resp.GetTotalDeferredTools())
	return b.String()
}

// executeText renders an Execute response as 'tooldex exec' prints it.
func executeText(resp *tooldexv1.ExecuteResponse) string {
	if a := resp.GetApprovalRequired(); a != nil {
		return fmt.Sprintf("approval required for %s (%s): %s", a.GetToolName(), a.GetRule(), a.GetParamsSummary())
	}
	var b strings.Builder
	for _, block := range resp.GetContent() {
		switch k := block.GetKind().(type) {
		case *tooldexv1.Content_Text:
			fmt.Fprintln(&b, k.Text)
		case *tooldexv1.Content_Json:
			j, _ := json.MarshalIndent(k.Json.AsInterface(), "", "  ")
			fmt.Fprintln(&b, string(j))
		case *tooldexv1.Content_Image:
			fmt.Fprintf(&b, "[image %s, %d bytes]\n", k.Image.GetMimeType(), len(k.Image.GetData()))
		case *tooldexv1.Content_Resource:
			fmt.Fprintf(&b, "[resource %s]\n%s\n", k.Resource.GetUri(), k.Resource.GetText())
		}
	}
	if resp.GetIsError() {
		fmt.Fprintf(&b, "%s reported an error\n", resp.GetToolName())
	}
	if b.Len() == 0 {
		return "(no content)"
	}
	return b.String()
}

// replSettings loads the settings file and applies --no-hints. A bad file
// gives the defaults and a one-line notice for the transcript.
func replSettings(path string, noHints bool) (settings, []string) {
	s, err := loadSettings(path)
	var notices []string
	if err != nil {
		notices = append(notices, strings.ReplaceAll(err.Error(), "\n", " ")+"; using defaults")
	}
	if noHints {
		s.Hints = false
	}
	return s, notices
}

func newSessionID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "repl-" + hex.EncodeToString(b)
}

// cmdREPL runs the interactive console: tooldex repl (or chat).
func cmdREPL(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("repl", e, &c)
	noHints := fs.Bool("no-hints", false, "do not show the tool hint bar")
	settingsPath := fs.String("settings", defaultSettingsPath(), "settings file (JSON: hints, min_score, debounce_ms)")
	caller := fs.String("caller", e.getenv("TOOLDEX_CALLER"), "caller identity for permission rules (env TOOLDEX_CALLER)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("repl: unexpected arguments %q", fs.Args())
	}
	if c.json {
		return errors.New("repl: --json is not supported")
	}
	st, notices := replSettings(*settingsPath, *noHints)
	// dial's deadline covers one command; the REPL sets --timeout per call.
	client, _, done, err := dial(ctx, &c)
	if err != nil {
		return err
	}
	defer done()
	m := newREPLModel(ctx, replConfig{
		backend:   client,
		settings:  st,
		sessionID: newSessionID(),
		caller:    *caller,
		addr:      c.addr,
		timeout:   c.timeout,
		notices:   notices,
	})
	_, err = tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(e.stdin), tea.WithOutput(e.stdout)).Run()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("repl: %w", err)
	}
	return nil
}
