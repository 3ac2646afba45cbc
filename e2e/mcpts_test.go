package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// mcpTestdata is where scripts/test installs the npm MCP servers and the
// official TypeScript SDK.
const mcpTestdata = "../testdata/mcp"

// mcpProc is a command of the test, stopped with SIGINT at the end.
type mcpProc struct {
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{}
}

func startMCPProc(t *testing.T, bin string, args ...string) *mcpProc {
	t.Helper()
	p := &mcpProc{cmd: exec.Command(bin, args...), logs: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Stderr = p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Errorf("%s did not stop on SIGINT within 15s", filepath.Base(bin))
		}
		if t.Failed() {
			t.Logf("%s logs:\n%s", filepath.Base(bin), p.logs.String())
		}
	})
	return p
}

// waitLog waits for re in p's logs and returns its first group.
func (p *mcpProc) waitLog(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.logs.String()); m != nil {
			return m[1]
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited:\n%s", p.cmd.Path, p.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%s: no %v in 30s:\n%s", p.cmd.Path, re, p.logs.String())
	return ""
}

// tsServer is one MCP server of the test: how to start it, and the calls
// to compare.
type tsServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
	Calls   []tsCall          `json:"calls"`
	// Sampling and Elicitation are for the bridge's config.
	Sampling    bool `json:"sampling,omitempty"`
	Elicitation bool `json:"elicitation,omitempty"`
}

type tsCall struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Progress  bool           `json:"progress,omitempty"`
}

// tsReport is what compare-client.mjs prints.
type tsReport struct {
	FacadeTools []map[string]any `json:"facadeTools"`
	Servers     map[string]struct {
		DirectTools []map[string]any `json:"directTools"`
		Calls       []struct {
			Tool   string   `json:"tool"`
			Direct tsResult `json:"direct"`
			Facade tsResult `json:"facade"`
		} `json:"calls"`
	} `json:"servers"`
}

type tsResult struct {
	Result   map[string]any   `json:"result"`
	Error    string           `json:"error"`
	Progress []map[string]any `json:"progress"`
}

// TestTypeScriptClientThroughFacade drives the official TypeScript MCP
// client (@modelcontextprotocol/sdk) through the whole chain, MCP server →
// mcpbridge → tooldex → mcpserver (the façade, streamable HTTP,
// --pass-through) → client, for each npm server (server-everything,
// server-memory, server-filesystem) and a server of every content type,
// and compares what it gets with what the same client gets from the same
// server directly: every tool (inputSchema, outputSchema, title, icons,
// _meta, annotations), every call result (every content type with its
// annotations and _meta, structuredContent, isError) and every progress
// notification. The differences allowed are the protocol's: tool names
// (mcp__<server>__<tool>), annotation hints made explicit with MCP's
// defaults, and fields the Go SDK does not model (a tool's execution).
func TestTypeScriptClientThroughFacade(t *testing.T) {
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not on PATH: %v", err)
	}
	modules, _ := filepath.Abs(filepath.Join(mcpTestdata, "node_modules", "@modelcontextprotocol"))
	if _, err := os.Stat(filepath.Join(modules, "sdk")); err != nil {
		skip("testdata/mcp/node_modules is not installed (run: cd testdata/mcp && npm ci): %v", err)
	}
	scripts, _ := filepath.Abs(filepath.Join(mcpTestdata, "scripts"))
	js := func(pkg string) string { return filepath.Join(modules, pkg, "dist", "index.js") }

	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(filepath.Join(files, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "hello.txt"), []byte("hello, tooldex\nsecond line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	roots := []map[string]string{{"uri": "file://" + files, "name": "files"}}
	servers := map[string]*tsServer{
		"everything": {Command: node, Args: []string{js("server-everything"), "stdio"}, Sampling: true, Elicitation: true, Calls: []tsCall{
			{Tool: "echo", Arguments: map[string]any{"message": "hello through tooldex"}},
			{Tool: "get-annotated-message", Arguments: map[string]any{"messageType": "error", "includeImage": true}},
			{Tool: "get-annotated-message", Arguments: map[string]any{"messageType": "success"}},
			{Tool: "get-annotated-message", Arguments: map[string]any{"messageType": "debug"}},
			{Tool: "get-resource-links", Arguments: map[string]any{"count": 3}},
			{Tool: "get-resource-reference", Arguments: map[string]any{}},
			{Tool: "get-structured-content", Arguments: map[string]any{"location": "Chicago"}},
			{Tool: "get-tiny-image", Arguments: map[string]any{}},
			{Tool: "get-sum", Arguments: map[string]any{"a": 2, "b": 3.5}},
			{Tool: "get-roots-list", Arguments: map[string]any{}},
			{Tool: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}, Progress: true},
		}},
		"memory": {Command: node, Args: []string{js("server-memory")}, Calls: []tsCall{
			{Tool: "read_graph", Arguments: map[string]any{}},
			{Tool: "search_nodes", Arguments: map[string]any{"query": "nothing"}},
		}},
		"filesystem": {Command: node, Args: []string{js("server-filesystem"), files}, Calls: []tsCall{
			{Tool: "list_allowed_directories", Arguments: map[string]any{}},
			{Tool: "read_text_file", Arguments: map[string]any{"path": filepath.Join(files, "hello.txt")}},
			{Tool: "list_directory", Arguments: map[string]any{"path": files}},
			{Tool: "read_text_file", Arguments: map[string]any{"path": "/etc/passwd"}}, // outside: an error result
		}},
		"content": {Command: node, Args: []string{filepath.Join(scripts, "content-server.mjs")}, Calls: []tsCall{
			{Tool: "all_content", Arguments: map[string]any{"n": 1}, Progress: true},
		}},
	}

	// The bridge's config: the same servers, each memory server with a
	// file of its own.
	bridgeServers := map[string]any{}
	for name, s := range servers {
		env := map[string]string{}
		if name == "memory" {
			env["MEMORY_FILE_PATH"] = filepath.Join(dir, "memory-bridge.jsonl")
			s.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory-direct.jsonl"), "PATH": os.Getenv("PATH")}
		}
		bridgeServers[name] = map[string]any{"command": s.Command, "args": s.Args, "env": env, "sampling": s.Sampling, "elicitation": s.Elicitation}
	}
	cfg := filepath.Join(dir, "mcp.json")
	writeJSON(t, cfg, map[string]any{"mcpServers": bridgeServers, "roots": roots})

	bin := binaries(t)
	srv := launch(t, "--core-tools", "mcp__*")
	c := srv.conn(t)
	startMCPProc(t, filepath.Join(bin, "tooldex-mcpbridge"), "--addr", srv.addr, "--config", cfg)
	// Every tool must be registered before the façade starts: it lists the
	// core tools once. server-everything registers its capability-gated
	// tools after initialization.
	waitTools(t, c, "mcp__everything__get-roots-list", "mcp__everything__trigger-sampling-request",
		"mcp__everything__trigger-elicitation-request", "mcp__everything__trigger-url-elicitation",
		"mcp__everything__simulate-research-query", "mcp__everything__echo", "mcp__memory__read_graph",
		"mcp__filesystem__list_allowed_directories", "mcp__content__all_content")
	facade := startMCPProc(t, filepath.Join(bin, "tooldex-mcpserver"), "--addr", srv.addr, "--http", "127.0.0.1:0", "--pass-through")
	url := facade.waitLog(t, regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)\s`))

	plan := filepath.Join(dir, "plan.json")
	writeJSON(t, plan, map[string]any{"facade": url, "roots": roots, "servers": servers})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(scripts, "compare-client.mjs"), plan)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("compare-client.mjs: %v\n%s", err, stderr.String())
	}
	var rep tsReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("compare-client.mjs output: %v\n%s", err, stdout.String())
	}

	facadeTools := map[string]map[string]any{}
	for _, tl := range rep.FacadeTools {
		facadeTools[tl["name"].(string)] = tl
	}
	seen := map[string]bool{} // what the direct results held, to know the test saw it
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		got := rep.Servers[name]
		t.Run(name, func(t *testing.T) {
			if len(got.DirectTools) == 0 {
				t.Fatalf("no tools listed directly")
			}
			var viaNames []string
			for n := range facadeTools {
				if strings.HasPrefix(n, "mcp__"+name+"__") {
					viaNames = append(viaNames, n)
				}
			}
			var directNames []string
			for _, dt := range got.DirectTools {
				tname := "mcp__" + name + "__" + dt["name"].(string)
				directNames = append(directNames, tname)
				ft := facadeTools[tname]
				if ft == nil {
					t.Errorf("tool %s: not listed by the façade", tname)
					continue
				}
				for _, k := range []string{"outputSchema", "title", "icons", "_meta", "annotations"} {
					if _, ok := dt[k]; ok {
						seen["tool "+k] = true
					}
				}
				want := normalTool(dt, tname)
				if diff := cmp.Diff(want, normalTool(ft, tname)); diff != "" {
					t.Errorf("tool %s (-server +through tooldex):\n%s", tname, diff)
				}
			}
			slices.Sort(viaNames)
			slices.Sort(directNames)
			if !slices.Equal(viaNames, directNames) {
				t.Errorf("façade lists %v, the server %v", viaNames, directNames)
			}
			for _, call := range got.Calls {
				if call.Direct.Error != "" {
					t.Errorf("%s directly: %s", call.Tool, call.Direct.Error)
					continue
				}
				noteSeen(seen, call.Direct)
				want, gotRes := normalResult(call.Direct), normalResult(call.Facade)
				wantP, gotP := want["progress"].([]map[string]any), gotRes["progress"].([]map[string]any)
				delete(want, "progress")
				delete(gotRes, "progress")
				if diff := cmp.Diff(want, gotRes); diff != "" {
					t.Errorf("call %s (-server +through tooldex):\n%s", call.Tool, diff)
				}
				// The TypeScript client drops a progress notification it
				// handles after the result (seen with server-everything):
				// the direct side may then miss the last one. Through
				// tooldex nothing may be missing, and nothing added but
				// after what the direct client got.
				if len(wantP) < len(gotP) {
					t.Logf("call %s: the direct client got %d progress notifications, through tooldex %d", call.Tool, len(wantP), len(gotP))
					gotP = gotP[:len(wantP)]
				}
				// None on one side and none kept of the other are the
				// same: a nil list and an empty one.
				if diff := cmp.Diff(wantP, gotP, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("call %s progress (-server +through tooldex):\n%s", call.Tool, diff)
				}
			}
		})
	}
	// The comparison means something only if the servers sent all of it.
	for _, want := range []string{"content text", "content image", "content audio", "content resource_link", "content resource",
		"annotations", "content _meta", "structuredContent", "isError", "progress",
		"tool outputSchema", "tool title", "tool icons", "tool _meta", "tool annotations"} {
		if !seen[want] {
			t.Errorf("no server sent %s: the test does not check it", want)
		}
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitTools waits until every named tool is registered.
func waitTools(t *testing.T, c tooldexv1.DiscoveryServiceClient, names ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := c.ListTools(context.Background(), &tooldexv1.ListToolsRequest{NamePrefix: "mcp__"})
		var have []string
		if err == nil {
			for _, tl := range resp.GetTools() {
				have = append(have, tl.GetName())
			}
		}
		missing := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(have, n) })
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools %v not registered in 60s (have %v, err %v)", missing, have, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// normalTool is an MCP tool as the comparison sees it: named name, its
// annotation hints resolved with MCP's defaults (a read-only tool is never
// destructive), and without execution, which the Go SDK does not model.
func normalTool(tl map[string]any, name string) map[string]any {
	out := maps.Clone(tl)
	out["name"] = name
	delete(out, "execution")
	a, _ := tl["annotations"].(map[string]any)
	hint := func(k string, def bool) bool {
		if b, ok := a[k].(bool); ok {
			return b
		}
		return def
	}
	ro := hint("readOnlyHint", false)
	na := map[string]any{
		"readOnlyHint":    ro,
		"idempotentHint":  hint("idempotentHint", false),
		"destructiveHint": !ro && hint("destructiveHint", true),
		"openWorldHint":   hint("openWorldHint", true),
	}
	if title, ok := a["title"]; ok && title != "" {
		na["title"] = title
	}
	out["annotations"] = na
	return out
}

// normalResult is a call's outcome as the comparison sees it: the result
// without the serving implementation's own _meta (the façade names
// itself), and the progress notifications without their tokens, which
// each side's client chose.
// clockTime is a time of day in a server's text (server-everything's
// resources say when they were made, to the second): the direct and the
// through-tooldex calls may fall on either side of a second.
var clockTime = regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}( ?[AP]M)?\b`)

// maskClock returns v with every time of day in its strings replaced.
func maskClock(v any) any {
	switch v := v.(type) {
	case string:
		return clockTime.ReplaceAllString(v, "<time>")
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = maskClock(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = maskClock(e)
		}
		return out
	}
	return v
}

func normalResult(r tsResult) map[string]any {
	out := map[string]any{}
	if r.Error != "" {
		out["error"] = r.Error
	}
	res := maps.Clone(r.Result)
	if m, ok := res["_meta"].(map[string]any); ok {
		m = maps.Clone(m)
		delete(m, "io.modelcontextprotocol/serverInfo")
		if len(m) == 0 {
			delete(res, "_meta")
		} else {
			res["_meta"] = m
		}
	}
	if res["isError"] == false {
		delete(res, "isError")
	}
	out["result"] = maskClock(res)
	var progress []map[string]any
	for _, p := range r.Progress {
		p = maps.Clone(p)
		delete(p, "progressToken")
		progress = append(progress, p)
	}
	out["progress"] = progress
	return out
}

// noteSeen records what a direct result held.
func noteSeen(seen map[string]bool, r tsResult) {
	content, _ := r.Result["content"].([]any)
	for _, c := range content {
		b, _ := c.(map[string]any)
		seen[fmt.Sprint("content ", b["type"])] = true
		if _, ok := b["annotations"]; ok {
			seen["annotations"] = true
		}
		if _, ok := b["_meta"]; ok {
			seen["content _meta"] = true
		}
	}
	if _, ok := r.Result["structuredContent"]; ok {
		seen["structuredContent"] = true
	}
	if r.Result["isError"] == true {
		seen["isError"] = true
	}
	if len(r.Progress) > 0 {
		seen["progress"] = true
	}
}
