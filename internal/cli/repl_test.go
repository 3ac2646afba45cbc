package cli

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// fakeBackend answers the REPL's calls from canned results.
type fakeBackend struct {
	mu         sync.Mutex
	prefetch   func(*tooldexv1.PrefetchRequest) (*tooldexv1.PrefetchResponse, error)
	prefetches []*tooldexv1.PrefetchRequest
	searches   []string
}

func (f *fakeBackend) Prefetch(_ context.Context, in *tooldexv1.PrefetchRequest, _ ...grpc.CallOption) (*tooldexv1.PrefetchResponse, error) {
	f.mu.Lock()
	f.prefetches = append(f.prefetches, in)
	fn := f.prefetch
	f.mu.Unlock()
	return fn(in)
}

func (f *fakeBackend) Search(_ context.Context, in *tooldexv1.SearchRequest, _ ...grpc.CallOption) (*tooldexv1.SearchResponse, error) {
	f.mu.Lock()
	f.searches = append(f.searches, in.GetQuery())
	f.mu.Unlock()
	return &tooldexv1.SearchResponse{Results: []*tooldexv1.SearchResult{
		result("time_now", "Current time in an IANA time zone.", 0.91, nil),
	}, TotalDeferredTools: 4}, nil
}

func (f *fakeBackend) Discover(_ context.Context, in *tooldexv1.DiscoverRequest, _ ...grpc.CallOption) (*tooldexv1.DiscoverResponse, error) {
	return &tooldexv1.DiscoverResponse{Text: "1. time_now for " + in.GetQuery() + "\n"}, nil
}

func (f *fakeBackend) Execute(_ context.Context, in *tooldexv1.ExecuteRequest, _ ...grpc.CallOption) (*tooldexv1.ExecuteResponse, error) {
	if in.GetToolName() != "time_now" {
		return nil, status.Error(codes.NotFound, "no tool "+in.GetToolName())
	}
	return &tooldexv1.ExecuteResponse{ToolName: "time_now", Content: []*tooldexv1.Content{
		{Kind: &tooldexv1.Content_Text{Text: "12:00 in " + in.GetParamsJson()}},
	}}, nil
}

func (f *fakeBackend) prefetchCalls() []*tooldexv1.PrefetchRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*tooldexv1.PrefetchRequest(nil), f.prefetches...)
}

func result(name, desc string, score float64, schema map[string]any) *tooldexv1.SearchResult {
	t := &tooldexv1.Tool{Name: name, Description: desc}
	if schema != nil {
		s, err := structpb.NewStruct(schema)
		if err != nil {
			panic(err)
		}
		t.InputSchema = s
	}
	return &tooldexv1.SearchResult{Tool: t, Score: score}
}

// timeTools is what the fake recommends for messages about time.
func timeTools() []*tooldexv1.SearchResult {
	return []*tooldexv1.SearchResult{
		result("time_now", "Current time in an IANA time zone.", 0.82, map[string]any{
			"type":       "object",
			"properties": map[string]any{"zone": map[string]any{"type": "string"}},
		}),
		result("calculate", "Evaluate an arithmetic expression.", 0.31, map[string]any{
			"type":       "object",
			"properties": map[string]any{"expression": map[string]any{"type": "string"}, "precision": map[string]any{"type": "integer"}},
			"required":   []any{"expression"},
		}),
		result("text_stats", "Count words and lines.", 0.17, nil),
	}
}

func staticHints(rs []*tooldexv1.SearchResult) func(*tooldexv1.PrefetchRequest) (*tooldexv1.PrefetchResponse, error) {
	return func(*tooldexv1.PrefetchRequest) (*tooldexv1.PrefetchResponse, error) {
		return &tooldexv1.PrefetchResponse{Results: rs}, nil
	}
}

// frame is the model's view right after it handled msg.
type frame struct {
	msg  tea.Msg
	view string
}

// probe wraps the model and reports every frame from the event loop, so
// tests see the model's state without racing it.
type probe struct {
	m      *replModel
	frames chan frame
}

func (p probe) Init() tea.Cmd { return p.m.Init() }
func (p probe) View() string  { return p.m.View() }
func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.m.Update(msg)
	select {
	case p.frames <- frame{msg, p.m.View()}:
	default:
	}
	return p, cmd
}

type replTest struct {
	t      *testing.T
	tm     *teatest.TestModel
	fake   *fakeBackend
	frames chan frame
}

func newREPLTest(t *testing.T, fake *fakeBackend, st settings, width int) *replTest {
	t.Helper()
	if st.DebounceMS == 0 {
		st.DebounceMS = 40
	}
	m := newREPLModel(context.Background(), replConfig{backend: fake, settings: st, sessionID: "test-session", addr: "fake", timeout: 5 * time.Second})
	p := probe{m: m, frames: make(chan frame, 10000)}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(width, 24))
	rt := &replTest{t: t, tm: tm, fake: fake, frames: p.frames}
	t.Cleanup(func() { tm.Quit() })
	return rt
}

// waitOutput waits until the program's output (since the last wait) has
// all of want.
func (rt *replTest) waitOutput(want ...string) {
	rt.t.Helper()
	teatest.WaitFor(rt.t, rt.tm.Output(), func(b []byte) bool {
		out := string(b)
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// waitFrame waits for a frame ok accepts and returns its view.
func (rt *replTest) waitFrame(what string, ok func(frame) bool) string {
	rt.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case f := <-rt.frames:
			if ok(f) {
				return f.view
			}
		case <-deadline:
			rt.t.Fatalf("no frame with %s in 5s", what)
		}
	}
}

func isPrefetch(f frame) bool { _, ok := f.msg.(prefetchMsg); return ok }

func isKey(k tea.KeyType) func(frame) bool {
	return func(f frame) bool { km, ok := f.msg.(tea.KeyMsg); return ok && km.Type == k }
}

func (rt *replTest) key(k tea.KeyType) { rt.tm.Send(tea.KeyMsg{Type: k}) }

// final quits and returns the model with its transcript.
func (rt *replTest) final() *replModel {
	rt.t.Helper()
	rt.key(tea.KeyCtrlC)
	return rt.tm.FinalModel(rt.t, teatest.WithFinalTimeout(5*time.Second)).(probe).m
}

func TestREPLHintBarAfterDebounce(t *testing.T) {
	fake := &fakeBackend{prefetch: staticHints(timeTools())}
	rt := newREPLTest(t, fake, defaultSettings(), 100)
	rt.tm.Type("what time is it")
	rt.waitOutput("time_now", "0.82", "Current time in an IANA time zone.", "calculate", "0.31", "text_stats")
	calls := fake.prefetchCalls()
	if len(calls) == 0 || len(calls) >= len("what time is it") {
		t.Fatalf("Prefetch called %d times for 15 keystrokes, want debounced", len(calls))
	}
	last := calls[len(calls)-1]
	// Previews while typing use no session: the server must not count them
	// as recommended, or the hints would run out before Enter.
	if last.GetMessage() != "what time is it" || last.GetSessionId() != "" || last.GetLimit() != 3 || last.GetMinScore() != 0.15 {
		t.Errorf("Prefetch request = %v, want the message with no session id", last)
	}
	view := rt.waitFrame("a prefetch answer", isPrefetch)
	lines := strings.Split(view, "\n")
	if !strings.Contains(lines[1], "time_now") || !strings.HasPrefix(lines[len(lines)-2], "> what time is it") {
		t.Errorf("hint bar is not above the input:\n%s", view)
	}
	rt.final()
}

func TestREPLLowScoresHideBar(t *testing.T) {
	fake := &fakeBackend{prefetch: func(r *tooldexv1.PrefetchRequest) (*tooldexv1.PrefetchResponse, error) {
		if strings.Contains(r.GetMessage(), "weather") {
			return &tooldexv1.PrefetchResponse{Results: []*tooldexv1.SearchResult{
				result("low_tool", "Barely related.", 0.14, nil), result("lower_tool", "Unrelated.", 0.05, nil),
			}}, nil
		}
		return &tooldexv1.PrefetchResponse{Results: timeTools()}, nil
	}}
	rt := newREPLTest(t, fake, defaultSettings(), 100)
	rt.tm.Type("what time")
	rt.waitOutput("time_now")
	rt.tm.Type(" and weather")
	view := rt.waitFrame("the weather answer", func(f frame) bool {
		pm, ok := f.msg.(prefetchMsg)
		return ok && len(pm.results) > 0 && pm.results[0].GetTool().GetName() == "low_tool"
	})
	for _, hidden := range []string{"low_tool", "time_now", "Tab select"} {
		if strings.Contains(view, hidden) {
			t.Errorf("view after low scores shows %q:\n%s", hidden, view)
		}
	}
	m := rt.final()
	if out := strings.Join(m.transcript, "\n"); strings.Contains(out, "low_tool") {
		t.Errorf("transcript mentions low_tool:\n%s", out)
	}
}

func TestREPLTabEnterAddsHint(t *testing.T) {
	fake := &fakeBackend{prefetch: staticHints(timeTools())}
	rt := newREPLTest(t, fake, defaultSettings(), 100)
	rt.tm.Type("what time is it")
	rt.waitOutput("text_stats")
	rt.key(tea.KeyTab)
	rt.key(tea.KeyTab)
	view := rt.waitFrame("the second Tab", func(f frame) bool { return isKey(tea.KeyTab)(f) && strings.Contains(f.view, "› calculate") })
	if strings.Contains(view, "› time_now") || !strings.Contains(view, "\n  time_now") {
		t.Errorf("not just the second hint highlighted:\n%s", view)
	}
	rt.key(tea.KeyEnter)
	rt.waitOutput("added: calculate (params expression (string, required), precision (integer))")
	// The input is kept; plain Enter submits it with the added tool.
	view = rt.waitFrame("Enter", isKey(tea.KeyEnter))
	if !strings.Contains(view, "> what time is it") || !strings.Contains(view, "context: calculate") {
		t.Errorf("view after adding a hint:\n%s", view)
	}
	rt.key(tea.KeyEnter)
	rt.waitOutput("you: what time is it", "with tools: calculate (params expression (string, required), precision (integer))")
	rt.waitFrame("the prefetch for the submitted message", isPrefetch)
	calls := fake.prefetchCalls()
	if last := calls[len(calls)-1]; last.GetMessage() != "what time is it" || len(last.GetLoaded()) != 1 || last.GetLoaded()[0] != "calculate" || last.GetSessionId() != "test-session" {
		t.Errorf("Prefetch on submit = %v, want the message with calculate loaded, in the REPL's session", last)
	}
	// Later messages carry the earlier ones as context.
	rt.tm.Type("and in Paris")
	rt.waitFrame("the prefetch for the next message", isPrefetch)
	calls = fake.prefetchCalls()
	if last := calls[len(calls)-1]; last.GetMessage() != "and in Paris" || strings.Join(last.GetContext(), "|") != "what time is it" {
		t.Errorf("Prefetch for the next message = %v, want the first as context", last)
	}
	m := rt.final()
	if len(m.added) != 0 || len(m.history) != 1 || m.input.Value() != "and in Paris" {
		t.Errorf("after submit: added = %v, history = %v", m.added, m.history)
	}
}

func TestREPLEscDismissesUntilInputChanges(t *testing.T) {
	fake := &fakeBackend{prefetch: staticHints(timeTools())}
	rt := newREPLTest(t, fake, defaultSettings(), 100)
	rt.tm.Type("what time is it")
	rt.waitOutput("time_now")
	rt.key(tea.KeyTab)
	rt.key(tea.KeyEsc)
	view := rt.waitFrame("Esc", isKey(tea.KeyEsc))
	if strings.Contains(view, "time_now") {
		t.Errorf("bar still shown after Esc:\n%s", view)
	}
	// The next input change brings the bar back.
	rt.tm.Type("?")
	view = rt.waitFrame("the next answer", isPrefetch)
	if !strings.Contains(view, "time_now") {
		t.Errorf("bar not back after the input changed:\n%s", view)
	}
	// Enter after Esc submits the message: nothing is highlighted any more.
	rt.key(tea.KeyTab)
	rt.key(tea.KeyEsc)
	rt.key(tea.KeyEnter)
	rt.waitOutput("you: what time is it?")
	if m := rt.final(); strings.Contains(strings.Join(m.transcript, "\n"), "added:") {
		t.Errorf("Enter after Esc added a tool:\n%s", strings.Join(m.transcript, "\n"))
	}
}

func TestREPLHintsOff(t *testing.T) {
	fake := &fakeBackend{prefetch: staticHints(timeTools())}
	rt := newREPLTest(t, fake, defaultSettings(), 100)
	rt.tm.Type("/hints off")
	rt.key(tea.KeyEnter)
	rt.waitOutput("hints off")
	rt.tm.Type("what time is it")
	rt.key(tea.KeyEnter)
	rt.waitOutput("you: what time is it")
	time.Sleep(200 * time.Millisecond) // several debounces
	if n := len(fake.prefetchCalls()); n != 0 {
		t.Errorf("Prefetch called %d times with hints off", n)
	}
	rt.tm.Type("/hints on")
	rt.key(tea.KeyEnter)
	rt.waitOutput("hints on")
	rt.tm.Type("what time")
	rt.waitOutput("time_now")
	rt.final()
}

func TestREPLNoHintsSetting(t *testing.T) {
	fake := &fakeBackend{prefetch: staticHints(timeTools())}
	st := defaultSettings()
	st.Hints = false
	rt := newREPLTest(t, fake, st, 100)
	rt.tm.Type("what time is it")
	rt.key(tea.KeyEnter)
	rt.waitOutput("you: what time is it")
	time.Sleep(200 * time.Millisecond)
	if n := len(fake.prefetchCalls()); n != 0 {
		t.Errorf("Prefetch called %d times with hints off in settings", n)
	}
	rt.final()
}

func TestREPLSearchDiscoverExec(t *testing.T) {
	fake := &fakeBackend{prefetch: staticHints(nil)}
	rt := newREPLTest(t, fake, defaultSettings(), 120)
	rt.tm.Type("/search x")
	rt.key(tea.KeyEnter)
	rt.waitOutput("> /search x", "NAME", "SCORE", "time_now", "0.910", "1 result(s), 4 deferred tools searched")
	if len(fake.searches) != 1 || fake.searches[0] != "x" {
		t.Errorf("Search queries = %v, want [x]", fake.searches)
	}
	rt.tm.Type("/discover tell the time")
	rt.key(tea.KeyEnter)
	rt.waitOutput("1. time_now for tell the time")
	rt.tm.Type(`/exec time_now {"zone": "UTC"}`)
	rt.key(tea.KeyEnter)
	rt.waitOutput(`12:00 in {"zone": "UTC"}`)
	rt.tm.Type(`/exec nope`)
	rt.key(tea.KeyEnter)
	rt.waitOutput("exec: NotFound: no tool nope")
	rt.tm.Type(`/exec time_now {bad`)
	rt.key(tea.KeyEnter)
	rt.waitOutput("exec: parameters are not valid JSON")
	rt.tm.Type("/frobnicate")
	rt.key(tea.KeyEnter)
	rt.waitOutput("unknown command /frobnicate")
	rt.tm.Type("/help")
	rt.key(tea.KeyEnter)
	rt.waitOutput("/exec TOOL [JSON]")
	rt.tm.Type("/quit")
	rt.key(tea.KeyEnter)
	rt.tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if n := len(fake.prefetchCalls()); n != 0 {
		t.Errorf("commands ran Prefetch %d times", n)
	}
}

func TestREPLCutsLongDescriptions(t *testing.T) {
	long := "Fetch a page " + strings.Repeat("and do many more things ", 20) + "TAILMARK"
	fake := &fakeBackend{prefetch: staticHints([]*tooldexv1.SearchResult{
		result("web_fetch", long, 0.66, nil),
		result("x", "line one\nline two", 0.5, nil),
	})}
	rt := newREPLTest(t, fake, defaultSettings(), 100)
	rt.tm.Send(tea.WindowSizeMsg{Width: 50, Height: 20})
	rt.tm.Type("fetch a page")
	view := rt.waitFrame("hints", func(f frame) bool { return isPrefetch(f) && strings.Contains(f.view, "web_fetch") })
	var hint string
	for _, line := range strings.Split(view, "\n") {
		if w := ansi.StringWidth(line); w > 50 {
			t.Errorf("line is %d cells wide, terminal 50: %q", w, line)
		}
		if strings.Contains(line, "web_fetch") {
			hint = line
		}
	}
	if !strings.Contains(hint, "0.66") || !strings.HasSuffix(hint, "…") || strings.Contains(view, "TAILMARK") {
		t.Errorf("hint line not cut to the width with an ellipsis: %q", hint)
	}
	if strings.Contains(view, "line two") {
		t.Errorf("multi-line description not cut to its first line:\n%s", view)
	}
	rt.waitOutput("web_fetch", "…")
	// Printed text is wrapped, tables cut, to the width.
	rt.key(tea.KeyCtrlU)
	rt.tm.Type("/discover " + strings.Repeat("word ", 30))
	rt.key(tea.KeyEnter)
	rt.tm.Type("/search " + strings.Repeat("q", 60))
	rt.key(tea.KeyEnter)
	rt.waitOutput("1 result(s)")
	m := rt.final()
	printed := m.transcript
	for i, line := range m.transcript {
		if strings.HasPrefix(line, "> /discover") {
			printed = m.transcript[i:] // after the resize
			break
		}
	}
	if len(printed) < 5 {
		t.Fatalf("transcript too short:\n%s", strings.Join(m.transcript, "\n"))
	}
	for _, line := range printed {
		if w := ansi.StringWidth(line); w > 50 {
			t.Errorf("transcript line is %d cells wide, terminal 50: %q", w, line)
		}
	}
}

func TestREPLPrefetchUnimplemented(t *testing.T) {
	fake := &fakeBackend{prefetch: func(*tooldexv1.PrefetchRequest) (*tooldexv1.PrefetchResponse, error) {
		return nil, status.Error(codes.Unimplemented, "method Prefetch not implemented")
	}}
	rt := newREPLTest(t, fake, defaultSettings(), 100)
	rt.tm.Type("what time is it")
	rt.waitOutput(unavailableLine)
	rt.tm.Type(" in Tokyo")
	rt.key(tea.KeyEnter)
	rt.waitOutput("you: what time is it in Tokyo")
	time.Sleep(200 * time.Millisecond)
	if n := len(fake.prefetchCalls()); n != 1 {
		t.Errorf("Prefetch called %d times, want 1: no retries once the server said UNIMPLEMENTED", n)
	}
	m := rt.final()
	if n := strings.Count(strings.Join(m.transcript, "\n"), unavailableLine); n != 1 {
		t.Errorf("%q printed %d times, want once", unavailableLine, n)
	}
}

func TestREPLPrefetchErrorPrintedOnce(t *testing.T) {
	fake := &fakeBackend{prefetch: func(*tooldexv1.PrefetchRequest) (*tooldexv1.PrefetchResponse, error) {
		return nil, status.Error(codes.Unavailable, "connection refused")
	}}
	rt := newREPLTest(t, fake, defaultSettings(), 100)
	rt.tm.Type("what")
	rt.waitOutput("hints: Unavailable: connection refused")
	rt.tm.Type(" time")
	rt.waitFrame("a second answer", func(f frame) bool { return isPrefetch(f) && len(fake.prefetchCalls()) >= 2 })
	m := rt.final()
	if n := strings.Count(strings.Join(m.transcript, "\n"), "connection refused"); n != 1 {
		t.Errorf("the same Prefetch error printed %d times, want once", n)
	}
}

func TestREPLCtrlDQuits(t *testing.T) {
	rt := newREPLTest(t, &fakeBackend{prefetch: staticHints(nil)}, defaultSettings(), 80)
	rt.waitOutput("/help lists commands")
	rt.key(tea.KeyCtrlD)
	m := rt.tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(probe).m
	if !m.quitting {
		t.Error("Ctrl-D did not quit")
	}
}

func TestParamSummary(t *testing.T) {
	s, _ := structpb.NewStruct(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"b":    map[string]any{"type": []any{"string", "null"}},
			"a":    map[string]any{"enum": []any{"x", "y"}},
			"zone": map[string]any{"type": "string"},
			"n":    map[string]any{},
		},
		"required": []any{"zone"},
	})
	got := paramSummary(&tooldexv1.Tool{Name: "t", InputSchema: s})
	want := "zone (string, required), a (enum), b (string|null), n (any)"
	if got != want {
		t.Errorf("paramSummary = %q, want %q", got, want)
	}
	if got := (addedTool{name: "t"}).String(); got != "t (no params)" {
		t.Errorf("no-params summary = %q", got)
	}
}

func TestCutWidth(t *testing.T) {
	for _, tt := range []struct {
		s     string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"longer than ten", 10, "longer th…"},
		{"  keeps leading space", 30, "  keeps leading space"},
		{"日本語のテキスト", 7, "日本語…"},
		{"anything", 0, ""},
	} {
		if got := cutWidth(tt.s, tt.width); got != tt.want {
			t.Errorf("cutWidth(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
	}
	if got := firstLine("  first \nsecond"); got != "first" {
		t.Errorf("firstLine = %q, want first", got)
	}
}

func TestREPLCommandFlags(t *testing.T) {
	var out bytes.Buffer
	e := env{getenv: func(string) string { return "" }, stdin: strings.NewReader(""), stdout: &out}
	if err := run(context.Background(), []string{"repl", "extra"}, e.getenv, e.stdin, e.stdout); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("repl extra = %v, want an error", err)
	}
	if err := run(context.Background(), []string{"chat", "--json"}, e.getenv, e.stdin, e.stdout); err == nil || !strings.Contains(err.Error(), "--json") {
		t.Errorf("chat --json = %v, want an error", err)
	}
	if err := run(context.Background(), []string{"help"}, e.getenv, e.stdin, e.stdout); err != nil || !strings.Contains(out.String(), "repl") {
		t.Errorf("usage lacks repl: %v\n%s", err, out.String())
	}
}
