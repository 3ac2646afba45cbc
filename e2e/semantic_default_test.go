package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEmbeddedSemanticByDefault: the server as it starts with no flag
// fuses the embedded static model's dense retrieval, so a query that
// shares no word with a tool finds it (once its vector exists: it is
// computed in the background); with --semantic=off the same query finds
// nothing, and an unrelated tool never answers.
func TestEmbeddedSemanticByDefault(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"resize_image","description":"Scale an image to a new width and height.","parameters":{"type":"object","properties":{"width":{"type":"integer"}}}}},
{"type":"function","function":{"name":"send_email","description":"Send an email message to a recipient.","parameters":{"type":"object","properties":{"to":{"type":"string"}}}}}]`
	query := []string{"search", "make", "the", "picture", "bigger"}
	for _, tc := range []struct {
		name  string
		args  []string
		found bool
	}{
		{"default", []string{"--demo-host=false"}, true},
		{"off", []string{"--demo-host=false", "--semantic=off"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, tc.args...)
			if out, err := s.client(t, strings.NewReader(tools), "register", "-"); err != nil {
				t.Fatalf("register: %v\n%s", err, out)
			}
			var out string
			for deadline := time.Now().Add(20 * time.Second); ; {
				var err error
				if out, err = s.client(t, nil, query...); err != nil {
					t.Fatalf("search: %v\n%s", err, out)
				}
				if strings.Contains(out, "resize_image") || !tc.found || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if tc.found && !strings.Contains(out, "resize_image") {
				t.Errorf("%v: the paraphrase does not find resize_image:\n%s", tc.args, out)
			}
			if !tc.found && !strings.Contains(out, "0 result(s)") {
				t.Errorf("%v: want no result without dense retrieval:\n%s", tc.args, out)
			}
			if strings.Contains(out, "send_email") {
				t.Errorf("%v: an unrelated tool answers:\n%s", tc.args, out)
			}
		})
	}
}

// TestVectorFileAcrossRestart: a server restarted on its data directory
// reads its tools' dense vectors from the vector file instead of embedding
// them again (tooldex_semantic_file_tools_total).
func TestVectorFileAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--demo-host=false", "--demo-catalog", "--data-dir", dir, "--metrics-addr", "127.0.0.1:0"}
	metric := func(s *tserver, name string) float64 {
		entry, _ := s.logEntry("metrics")
		addr, _ := entry["addr"].(string)
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatalf("GET /metrics: %v", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		v, _ := metricValue(string(body), name, nil)
		return v
	}
	caughtUp := func(s *tserver) func() bool {
		return func() bool {
			n := metric(s, "tooldex_index_deferred_tools")
			return n > 0 && metric(s, "tooldex_semantic_embedded_tools") == n && metric(s, "tooldex_semantic_pending_tools") == 0
		}
	}
	s := launch(t, args...)
	waitFor(t, 60*time.Second, "every tool embedded", caughtUp(s))
	tools := metric(s, "tooldex_index_deferred_tools")
	if got := metric(s, "tooldex_semantic_file_tools_total"); got != 0 {
		t.Errorf("first start: %v tools from the file, want 0", got)
	}
	stopServer(t, s)
	if matches, _ := filepath.Glob(filepath.Join(dir, "vectors", "static-*.vec")); len(matches) != 1 {
		t.Fatalf("vector files in the data directory: %v, want one", matches)
	}

	s = launch(t, args...)
	waitFor(t, 60*time.Second, "every tool's vector after the restart", caughtUp(s))
	// The first batch (32 tools) is embedded to check the file's
	// dimensions; the rest come from the file.
	if got := metric(s, "tooldex_semantic_file_tools_total"); got < tools-32 {
		t.Errorf("after the restart %v of %v tools from the file, want at least %v", got, tools, tools-32)
	}
	if e, ok := s.logEntry("vector file read"); !ok || e["vectors"] != tools {
		t.Errorf("log line %q = %v, want %v vectors", "vector file read", e, tools)
	}
}
