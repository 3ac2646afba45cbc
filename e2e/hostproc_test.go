package e2e

// Tool hosts as separate processes: the test binary re-executes itself with
// TOOLDEX_E2E_HOST=1, and TestMain then runs a toolhost (the real SDK) with
// the tools below until it is killed, signalled, or its stdin closes (the
// test process went away).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolhost"
)

// Environment of a host process.
const (
	envHost    = "TOOLDEX_E2E_HOST" // "1": run as a host process
	envAddr    = "TOOLDEX_E2E_ADDR"
	envHostID  = "TOOLDEX_E2E_HOST_ID"
	envSlots   = "TOOLDEX_E2E_SLOTS"
	envWorkLog = "TOOLDEX_E2E_WORKLOG" // file the "work" tool appends request ids to
)

func TestMain(m *testing.M) {
	if os.Getenv(envHost) == "1" {
		os.Exit(hostProcessMain())
	}
	// The tests own their clients, servers and process waiters: none may
	// outlive the run.
	goleak.VerifyTestMain(m)
}

// Tools of the host processes; every process serves the same definitions,
// so processes are replicas of each other.
var (
	blockTool = mustTool("block_call", "Blocks for a minute (or until cancelled); for crash tests.",
		`{"type":"object","properties":{"rid":{"type":"string"}},"required":["rid"]}`)
	echoTool = mustTool("echo_text", "Echoes its text parameter back.",
		`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	workTool = mustTool("work", "Does one unit of non-idempotent work identified by a request id.",
		`{"type":"object","properties":{"rid":{"type":"string"}},"required":["rid"]}`)
)

// hostProcessMain is the host process. Its stdout carries events for the
// test, one per line: "ready", and "start TOOL CALL_ID" when a block_call
// starts.
func hostProcessMain() int {
	sigCtx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// The test process holds our stdin: when it goes away, so do we. (The
	// signal handler stays: a SIGTERM after that still drains.)
	ctx, cancel := context.WithCancel(sigCtx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	var outMu sync.Mutex
	event := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	slots, _ := strconv.Atoi(os.Getenv(envSlots))
	h := toolhost.New(toolhost.Config{
		Addr: os.Getenv(envAddr), HostID: os.Getenv(envHostID), Version: "e2e-proc", Slots: slots,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, DrainTimeout: 2 * time.Second,
	})
	var logMu sync.Mutex
	var workLog *os.File
	if name := os.Getenv(envWorkLog); name != "" {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "host process:", err)
			return 2
		}
		defer f.Close()
		workLog = f
	}
	handlers := map[*tooldexv1.Tool]toolhost.Handler{
		blockTool: func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			event("start %s %s", call.Tool, call.ID)
			select {
			case <-time.After(60 * time.Second):
				return toolhost.Text("blocked for a minute"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		echoTool: func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			s, _ := call.Params["text"].(string)
			return toolhost.Text(s), nil
		},
		workTool: func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			rid, _ := call.Params["rid"].(string)
			// Record first: a call that starts here and also runs elsewhere
			// shows up twice across the hosts' logs.
			if workLog != nil {
				logMu.Lock()
				_, err := workLog.WriteString(rid + "\n")
				logMu.Unlock()
				if err != nil {
					return nil, err
				}
			}
			select {
			case <-time.After(time.Duration(20+rand.IntN(31)) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return toolhost.Text(rid), nil
		},
	}
	for tool, fn := range handlers {
		if err := h.Handle(tool, fn); err != nil {
			fmt.Fprintln(os.Stderr, "host process:", err)
			return 2
		}
	}
	go func() {
		if h.WaitReady(ctx) == nil {
			event("ready")
		}
	}()
	if err := h.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "host process:", err)
		return 2
	}
	return 0
}

// hostProc is a running host process.
type hostProc struct {
	id     string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan string // stdout lines
	stderr *lockedBuffer
	exited chan struct{} // closed after Wait
	err    error         // of Wait, once exited is closed
	killed atomic.Bool
}

// startHostProc starts a host process for the server at addr. workLog, when
// not "", is the file its "work" tool appends request ids to. The process
// is stopped (SIGTERM, then SIGKILL) at the end of the test; a process
// that exits with an error it was not killed for fails the test.
func startHostProc(t *testing.T, addr, id string, slots int, workLog string) *hostProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envHost+"=1", envAddr+"="+addr, envHostID+"="+id,
		envSlots+"="+strconv.Itoa(slots), envWorkLog+"="+workLog)
	p := &hostProc{id: id, cmd: cmd, events: make(chan string, 256), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.events <- sc.Text():
			default: // nobody listens: drop
			}
		}
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stdin.Close() // the host process exits on its own when stdin closes
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			// Stopping it is intended here: its exit by signal is no failure.
			p.killed.Store(true)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-p.exited
				t.Errorf("host process %s did not stop on SIGTERM within 15s", id)
			}
		}
		if p.err != nil && !p.killed.Load() {
			t.Errorf("host process %s: %v\n%s", id, p.err, p.stderr)
		} else if t.Failed() {
			t.Logf("host process %s stderr:\n%s", id, p.stderr)
		}
	})
	return p
}

// waitEvent waits for a stdout line of p starting with prefix.
func (p *hostProc) waitEvent(t *testing.T, prefix string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line := <-p.events:
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-p.exited:
			t.Fatalf("host process %s exited (%v) before printing %q\n%s", p.id, p.err, prefix, p.stderr)
		case <-deadline:
			t.Fatalf("host process %s did not print %q within %v\n%s", p.id, prefix, timeout, p.stderr)
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *hostProc) kill(t *testing.T) {
	t.Helper()
	p.killed.Store(true)
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("kill host process %s: %v", p.id, err)
	}
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("host process %s still running 15s after SIGKILL", p.id)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestHostProcessCrashMidCall kills -9 a host process while it runs a call:
// the caller learns at once (UNAVAILABLE, long before its deadline), the
// host's tools leave search, and a restarted process brings them back.
func TestHostProcessCrashMidCall(t *testing.T) {
	s := launch(t, "--demo-host=false", "--heartbeat", "200ms")
	c := s.conn(t)
	p := startHostProc(t, s.addr, "crashy", 4, "")
	p.waitEvent(t, "ready", 20*time.Second)
	waitFor(t, 10*time.Second, "block_call in search", func() bool { return searchHas(t, c, "block_call", "") })

	const callDeadline = 30 * time.Second
	type outcome struct {
		err  error
		took time.Duration
		at   time.Time
	}
	res := make(chan outcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
		defer cancel()
		start := time.Now()
		_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "block_call", ParamsJson: `{"rid":"crash-1"}`})
		res <- outcome{err, time.Since(start), time.Now()}
	}()
	p.waitEvent(t, "start block_call", 20*time.Second)
	killedAt := time.Now()
	p.kill(t)

	var o outcome
	select {
	case o = <-res:
	case <-time.After(callDeadline):
		t.Fatalf("Execute still waiting %v after the host was killed", callDeadline)
	}
	if got := status.Code(o.err); got != codes.Unavailable {
		t.Fatalf("Execute on a killed host: code = %v (%v), want Unavailable", got, o.err)
	}
	if after := o.at.Sub(killedAt); after > 10*time.Second {
		t.Errorf("Execute failed %v after the kill (call took %v), want well before its %v deadline", after, o.took, callDeadline)
	}

	waitFor(t, 10*time.Second, "the killed host's tools to leave search", func() bool {
		return !searchHas(t, c, "block_call", "") && !searchHas(t, c, "echo_text", "")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "echo_text", ParamsJson: `{"text":"x"}`}); status.Code(err) != codes.NotFound {
		t.Errorf("Execute echo_text with no host: code = %v (%v), want NotFound (host tools leave the catalog)", status.Code(err), err)
	}

	// The same host comes back as a new process.
	p2 := startHostProc(t, s.addr, "crashy", 4, "")
	p2.waitEvent(t, "ready", 20*time.Second)
	waitFor(t, 10*time.Second, "the restarted host's tools in search", func() bool {
		return searchHas(t, c, "block_call", "") && searchHas(t, c, "echo_text", "")
	})
	resp, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "echo_text", ParamsJson: `{"text":"back again"}`})
	if err != nil {
		t.Fatalf("Execute after restart: %v", err)
	}
	if got := textOf(resp); got != "back again" || resp.GetHostId() != "crashy" {
		t.Errorf("Execute after restart = %q on host %q, want %q on crashy", got, resp.GetHostId(), "back again")
	}
}

// TestLoadWithHostProcessesKilled runs 1,000 concurrent calls of a
// non-idempotent tool on 4 host processes (16 slots each) and kills 2 of
// them mid-run.
//
// The outcomes allowed follow the registry's semantics (registry/doc.go):
//   - OK: the host answered.
//   - UNAVAILABLE: ErrHostGone. The call's Execute frame may have reached a
//     host that was then killed; it is not idempotent, so it is not retried
//     (its outcome is unknown). At most the killed hosts' slots (2 x 16)
//     calls can be in that state. (ErrNoHost, also UNAVAILABLE, cannot
//     happen: survivors serve the tool.)
//   - RESOURCE_EXHAUSTED: ErrOverloaded. Every slot stayed busy for the
//     registry's QueueWait (2s); also when a retry of a never-sent call finds
//     no slot. Either way the call never ran.
//
// Nothing else: callers' deadlines (45s) are far away.
func TestLoadWithHostProcessesKilled(t *testing.T) {
	const (
		calls     = 1000
		killAfter = 300
		slots     = 16
	)
	s := launch(t, "--demo-host=false", "--heartbeat", "200ms")
	c := s.conn(t)
	dir := t.TempDir()
	procs := make([]*hostProc, 4)
	logs := make(map[string]string) // host id to its work log
	for i := range procs {
		id := fmt.Sprintf("worker-%d", i)
		logs[id] = filepath.Join(dir, id+".log")
		procs[i] = startHostProc(t, s.addr, id, slots, logs[id])
	}
	for _, p := range procs {
		p.waitEvent(t, "ready", 30*time.Second)
	}
	waitFor(t, 10*time.Second, "4 hosts serving work", func() bool { return len(hostsServing(t, c, "work")) == 4 })

	type result struct {
		text, host string
		code       codes.Code
		err        error
		afterKill  bool
	}
	results := make([]result, calls)
	var returned [calls]atomic.Int32
	var completed atomic.Int32
	var killed atomic.Bool
	reached := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for i := range calls {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()
			rid := fmt.Sprintf("rid-%04d", i)
			resp, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "work", ParamsJson: `{"rid":"` + rid + `"}`})
			returned[i].Add(1)
			results[i] = result{text: textOf(resp), host: resp.GetHostId(), code: status.Code(err), err: err, afterKill: killed.Load()}
			if completed.Add(1) == killAfter {
				close(reached)
			}
		})
	}
	select {
	case <-reached:
	case <-time.After(40 * time.Second):
		t.Fatalf("only %d calls completed in 40s", completed.Load())
	}
	killed.Store(true)
	for _, p := range procs[:2] {
		p.killed.Store(true)
		_ = p.cmd.Process.Kill()
	}
	for _, p := range procs[:2] {
		p.kill(t) // waits for the exit
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(50 * time.Second):
		t.Fatalf("calls still running 50s after the start; %d of %d returned", completed.Load(), calls)
	}
	took := time.Since(start)

	survivors := []string{procs[2].id, procs[3].id}
	counts := map[codes.Code]int{}
	survivorOKAfterKill := 0
	ok := make(map[string]string) // rid to host
	notRun := make(map[string]bool)
	for i, r := range results {
		rid := fmt.Sprintf("rid-%04d", i)
		if n := returned[i].Load(); n != 1 {
			t.Errorf("call %s returned %d times, want 1", rid, n)
		}
		counts[r.code]++
		switch r.code {
		case codes.OK:
			if r.text != rid {
				t.Errorf("call %s answered %q, want its own request id", rid, r.text)
			}
			if _, known := logs[r.host]; !known {
				t.Errorf("call %s answered by host %q, not one of ours", rid, r.host)
			}
			ok[rid] = r.host
			if r.afterKill && slices.Contains(survivors, r.host) {
				survivorOKAfterKill++
			}
		case codes.Unavailable:
		case codes.ResourceExhausted:
			notRun[rid] = true
		default:
			t.Errorf("call %s: code %v (%v), want OK, Unavailable or ResourceExhausted", rid, r.code, r.err)
		}
	}
	t.Logf("%d calls in %v: %v; %d survivor successes after the kill", calls, took, counts, survivorOKAfterKill)
	if n := counts[codes.Unavailable]; n > 2*slots {
		t.Errorf("%d calls failed Unavailable, want at most %d (the killed hosts' slots)", n, 2*slots)
	}
	if counts[codes.OK] < killAfter/2 {
		t.Errorf("only %d calls succeeded, want most of them", counts[codes.OK])
	}
	if survivorOKAfterKill == 0 {
		t.Errorf("no call succeeded on the survivors %v after the kill", survivors)
	}

	// Execution records: no request id ran twice; every success ran exactly
	// once, on the host that answered; no overloaded call ran.
	ran := readWorkLogs(t, logs)
	for rid, hosts := range ran {
		if len(hosts) > 1 {
			t.Errorf("request %s executed %d times (hosts %v), want at most once", rid, len(hosts), hosts)
		}
	}
	for rid, host := range ok {
		if got := ran[rid]; len(got) != 1 || got[0] != host {
			t.Errorf("successful request %s answered by %s was executed on %v, want once on %s", rid, host, got, host)
		}
	}
	for rid := range notRun {
		if got := ran[rid]; len(got) != 0 {
			t.Errorf("request %s failed ResourceExhausted but was executed on %v", rid, got)
		}
	}

	// The survivors serve on.
	waitFor(t, 10*time.Second, "only the 2 survivors serving work", func() bool {
		got := hostsServing(t, c, "work")
		slices.Sort(got)
		return slices.Equal(got, survivors)
	})
	if !searchHas(t, c, "work", "") {
		t.Errorf("Search select:work after the kill lacks work")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 20 {
		rid := fmt.Sprintf("after-%02d", i)
		resp, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "work", ParamsJson: `{"rid":"` + rid + `"}`})
		if err != nil {
			t.Fatalf("Execute work after the kill: %v", err)
		}
		if textOf(resp) != rid || !slices.Contains(survivors, resp.GetHostId()) {
			t.Errorf("Execute work after the kill = %q on %q, want %q on one of %v", textOf(resp), resp.GetHostId(), rid, survivors)
		}
	}
}

// readWorkLogs returns, for each request id in the logs, the hosts whose
// log has it (once per line).
func readWorkLogs(t *testing.T, logs map[string]string) map[string][]string {
	t.Helper()
	ran := make(map[string][]string)
	for host, name := range logs {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("work log of %s: %v", host, err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line != "" {
				ran[line] = append(ran[line], host)
			}
		}
	}
	return ran
}
