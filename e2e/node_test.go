package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// dateRE matches the date of an RFC 3339 time in this century.
var dateRE = regexp.MustCompile(`\b20\d\d-\d\d-\d\dT`)

// TestNodeFrontend runs the Node.js example frontend (examples/node-frontend)
// against the real server: GetManifest, Prefetch, Search and Execute over
// @grpc/grpc-js with the repository's .proto files. scripts/test installs
// its node_modules; locally the test is skipped without node or them, in CI
// (CI set) it fails instead.
func TestNodeFrontend(t *testing.T) {
	const dir = "../examples/node-frontend"
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
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@grpc", "grpc-js")); err != nil {
		skip("%s/node_modules is not installed (run: cd examples/node-frontend && npm ci): %v", dir, err)
	}

	s := startServer(t)
	// The demo host registers its tools just after the server starts
	// serving: wait for them, so that every step sees the same catalog.
	c := s.conn(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: "select:time_now"})
		cancel()
		if err == nil && len(resp.GetResults()) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo host's time_now was not registered in 15s (last error: %v)\n%s", err, s.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "examples/node-frontend/frontend.js", s.addr)
	cmd.Dir = ".."
	cmd.Env = os.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node frontend.js %s: %v\nstdout:\n%s\nstderr:\n%s", s.addr, err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	t.Logf("frontend output:\n%s", out)

	step := func(label string) string {
		t.Helper()
		for line := range strings.SplitSeq(out, "\n") {
			if rest, ok := strings.CutPrefix(line, label+": "); ok {
				return rest
			}
		}
		t.Fatalf("no %q line in the output:\n%s", label, out)
		return ""
	}
	for _, label := range []string{"manifest", "prefetch"} {
		step(label) // present, implemented or not
	}
	if search := step("search"); !strings.Contains(search, "time_now=") {
		t.Errorf("search step lacks time_now: %s", search)
	}
	execLine := step("execute")
	if !strings.HasPrefix(execLine, "time_now ") {
		t.Errorf("execute step did not call time_now: %s", execLine)
	}
	if !dateRE.MatchString(execLine) || !(strings.Contains(execLine, "Tokyo") || strings.Contains(execLine, "+09:00")) {
		t.Errorf("execute step lacks the time in Tokyo: %s", execLine)
	}
}
