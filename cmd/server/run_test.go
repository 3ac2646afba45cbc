package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/semantic"
	"github.com/tooldex/tooldex/service"
)

// TestMain checks that no test leaves a goroutine behind: run owns every
// goroutine it starts, on every return.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunEarlyErrorsStopEverything: a setup error after the server started
// serving (a demo host with a bad --files-dir, a pprof address in use)
// stops the gRPC server, the metrics server and the registry loop before
// run returns; goleak in TestMain sees any goroutine left.
func TestRunEarlyErrorsStopEverything(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"demo host", []string{"--metrics-addr", "127.0.0.1:0", "--files-dir", filepath.Join(t.TempDir(), "missing")}, "demo host"},
		{"pprof address in use", []string{"--metrics-addr", "127.0.0.1:0", "--pprof-addr", busy.Addr().String()}, "pprof listen"},
		{"metrics address in use", []string{"--metrics-addr", busy.Addr().String()}, "metrics listen"},
		{"web address in use", []string{"--metrics-addr", "127.0.0.1:0", "--web-addr", busy.Addr().String()}, "web listen"},
		{"web on a non-loopback address without credentials", []string{"--web-addr", "0.0.0.0:0"}, "refusing to serve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--addr", "127.0.0.1:0"}, tt.args...)
			err := run(context.Background(), args, func(string) string { return "" }, &syncWriter{b: &bytes.Buffer{}})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("run() = %v, want an error about %s", err, tt.wantErr)
			}
			if err := goleak.Find(); err != nil {
				t.Errorf("goroutines left after run() returned: %v", err)
			}
		})
	}
}

func TestParseFlagsEnvFallback(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(*config) string
		wantErr string
	}{
		{
			name: "defaults",
			check: func(c *config) string {
				return want(c.addr == "localhost:50051" && c.demoHost && !c.demoCatalog && c.scorer == index.ScorerBM25F && c.wKeyword == 0.2 && c.wTFIDF == 0.8, "defaults", c)
			},
		},
		{
			name: "env fallback",
			env:  map[string]string{"TOOLDEX_ADDR": "127.0.0.1:7000", "TOOLDEX_CATALOG": "a.json, b.jsonl", "TOOLDEX_SHARDS": "3"},
			check: func(c *config) string {
				return want(c.addr == "127.0.0.1:7000" && len(c.catalogs) == 2 && c.shards == 3, "env values", c)
			},
		},
		{
			name:  "flag wins over env",
			args:  []string{"--addr", "127.0.0.1:8000"},
			env:   map[string]string{"TOOLDEX_ADDR": "127.0.0.1:7000"},
			check: func(c *config) string { return want(c.addr == "127.0.0.1:8000", "flag value", c) },
		},
		{
			name: "spec variables",
			env: map[string]string{"TOOL_SEARCH_EXCLUDE": "mcp__x__*", "TOOL_SEARCH_INCLUDE_FORCE": "Read",
				"TOOL_SEARCH_WEIGHT_KEYWORD": "0.5", "TOOL_SEARCH_WEIGHT_TFIDF": "0.5"},
			check: func(c *config) string {
				return want(c.exclude == "mcp__x__*" && c.includeForce == "Read" && c.wKeyword == 0.5 && c.wTFIDF == 0.5, "spec env", c)
			},
		},
		{
			name:  "tooldex variable wins over the spec's",
			env:   map[string]string{"TOOL_SEARCH_EXCLUDE": "a", "TOOLDEX_EXCLUDE": "b"},
			check: func(c *config) string { return want(c.exclude == "b", "TOOLDEX_EXCLUDE", c) },
		},
		{
			name: "spec scorer takes the spec's weights",
			args: []string{"--scorer", "cosine"},
			check: func(c *config) string {
				return want(c.scorer == index.ScorerCosine && c.wKeyword == 0.4 && c.wTFIDF == 0.6, "cosine defaults", c)
			},
		},
		{
			name:  "one weight given keeps the other's default",
			env:   map[string]string{"TOOL_SEARCH_WEIGHT_KEYWORD": "0"},
			check: func(c *config) string { return want(c.wKeyword == 0 && c.wTFIDF == 0.8, "keyword 0, text default", c) },
		},
		{
			name:  "request damping",
			env:   map[string]string{"TOOLDEX_REQUEST_DAMPING": "-1"},
			check: func(c *config) string { return want(c.damping == -1, "request damping off", c) },
		},
		{name: "bad scorer", env: map[string]string{"TOOLDEX_SCORER": "dense"}, wantErr: "dense"},
		{name: "bad env value", env: map[string]string{"TOOLDEX_SHARDS": "many"}, wantErr: "TOOLDEX_SHARDS"},
		{name: "bad weights", args: []string{"--weight-keyword", "0", "--weight-tfidf", "0"}, wantErr: "weights"},
		{name: "stray argument", args: []string{"serve"}, wantErr: "unexpected arguments"},
		{name: "tenant cap not positive", args: []string{"--max-tenant-tools", "0"}, wantErr: "--max-tenant-tools"},
		{name: "negative name hold", args: []string{"--name-hold", "-1s"}, wantErr: "--name-hold"},
		{name: "catalog limits", args: []string{"--max-tenant-tools", "50", "--name-hold", "30s"}, check: func(c *config) string {
			if c.catalog.MaxTenantTools != 50 || c.catalog.Hold != 30*time.Second {
				return fmt.Sprintf("catalog %+v, want 50 tools and a 30s hold", c.catalog)
			}
			return ""
		}},
		{
			name: "embedder from env",
			env:  map[string]string{"TOOLDEX_EMBEDDER_URL": "http://127.0.0.1:11434/v1", "TOOLDEX_EMBEDDER_MODEL": "nomic-embed-text"},
			check: func(c *config) string {
				return want(c.embedderURL == "http://127.0.0.1:11434/v1" && c.embedderModel == "nomic-embed-text" && c.semanticRatio == semantic.DefaultRatio(semantic.ModeExternal) && c.semantic == semantic.ModeExternal, "embedder settings", c)
			},
		},
		{name: "embedded model by default", check: func(c *config) string {
			return want(c.semantic == semantic.DefaultMode && c.semanticRatio == semantic.DefaultRatio(semantic.DefaultMode), "the default mode and its ratio", c)
		}},
		{name: "ratio given", args: []string{"--semantic", "full", "--semantic-ratio", "0.5"}, check: func(c *config) string { return want(c.semanticRatio == 0.5, "ratio 0.5", c) }},
		{name: "semantic off", args: []string{"--semantic", "off"}, check: func(c *config) string { return want(c.semantic == semantic.ModeOff, "off", c) }},
		{name: "semantic full from env", env: map[string]string{"TOOLDEX_SEMANTIC": "full"}, check: func(c *config) string { return want(c.semantic == semantic.ModeFull, "full", c) }},
		{name: "bad semantic mode", args: []string{"--semantic", "dense"}, wantErr: "--semantic"},
		{name: "external without URL", args: []string{"--semantic", "external"}, wantErr: "--embedder-url"},
		{name: "URL with an embedded model", args: []string{"--semantic", "static", "--embedder-url", "http://h/v1", "--embedder-model", "m"}, wantErr: "--semantic=external"},
		{name: "embedder without model", args: []string{"--embedder-url", "http://h/v1"}, wantErr: "--embedder-model"},
		{name: "bad semantic ratio", args: []string{"--semantic-ratio", "1.5"}, wantErr: "--semantic-ratio"},
		{name: "bad semantic timeout", args: []string{"--semantic-timeout", "0s"}, wantErr: "--semantic-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			c, err := parseFlags(tt.args, getenv, &bytes.Buffer{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFlags(%v) error = %v, want one mentioning %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags(%v) = %v", tt.args, err)
			}
			if msg := tt.check(c); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func want(ok bool, what string, c *config) string {
	if ok {
		return ""
	}
	return fmt.Sprintf("unexpected %s: %+v", what, *c)
}

// TestRunStopsOnCancel starts the real server in-process on a free port and
// checks that cancelling its context shuts it down cleanly.
func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--shutdown-grace", "1s", "--data-dir="}, func(string) string { return "" }, &syncWriter{b: &logs})
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run() = %v, want nil after cancel", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return 15s after cancel")
	}
}

func TestRunRejectsBadCatalog(t *testing.T) {
	err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--catalog", "/nonexistent/tools.json"}, func(string) string { return "" }, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "tools.json") {
		t.Fatalf("run with a missing catalog = %v, want an error naming the file", err)
	}
}

// A catalog file larger than a batch is registered whole, in file order
// of batches; a bad line after some batches fails the load with the file
// and line named.
func TestLoadCatalogsInBatches(t *testing.T) {
	n := 2*catalogBatch + catalogBatch/2
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"name":"tool_%05d","description":"Tool number %d.","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}`+"\n", i, i)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Logger: zap.NewNop()})
	if err := loadCatalogs(context.Background(), svc, &config{catalogs: []string{good}}, zap.NewNop()); err != nil {
		t.Fatalf("loadCatalogs: %v", err)
	}
	resp, err := svc.ListTools(context.Background(), &tooldexv1.ListToolsRequest{PageSize: 10000}) // one page
	if err != nil {
		t.Fatal(err)
	}
	if got := len(resp.GetTools()); got != n {
		t.Fatalf("%d tools registered, want %d", got, n)
	}
	for i, tool := range resp.GetTools() {
		if want := fmt.Sprintf("tool_%05d", i); tool.GetName() != want || tool.GetSource().GetId() != good {
			t.Fatalf("tool %d: %q from %q, want %q from the file", i, tool.GetName(), tool.GetSource().GetId(), want)
		}
	}

	bad := filepath.Join(dir, "bad.jsonl")
	lines := strings.SplitAfter(b.String(), "\n")
	lines[catalogBatch+5] = "{\"name\":\n"
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	err = loadCatalogs(context.Background(), service.New(service.Config{Logger: zap.NewNop()}), &config{catalogs: []string{bad}}, zap.NewNop())
	if want := fmt.Sprintf("bad.jsonl: line %d", catalogBatch+6); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("loading a bad line: %v, want an error naming %q", err, want)
	}
}
