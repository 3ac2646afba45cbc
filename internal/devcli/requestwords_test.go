package devcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/index/analysis"
	"github.com/tooldex/tooldex/internal/benchcorpus"
)

// TestRequestWordsCommand: request-words writes a table that eval
// --request-words reads, and both refuse what they cannot use.
func TestRequestWordsCommand(t *testing.T) {
	dir := t.TempDir()
	for name, q := range map[string]string{
		"a": `{"id": 1, "query": "please help me find the weather", "relevant": ["weather_now"]}
{"id": 2, "query": "help me convert euros", "relevant": ["currency"]}
`,
		"b": `{"id": 1, "query": "can you help me find news", "relevant": ["news"]}
`,
	} {
		d := filepath.Join(dir, name)
		tools := `{"name": "weather_now", "description": "Current weather of a city."}
{"name": "currency", "description": "Convert between currencies."}
{"name": "news", "description": "Top news headlines."}
`
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "tools.jsonl"), []byte(tools), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "queries.jsonl"), []byte(q), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "rw.tsv")
	if code, _, stderr := runDev("request-words", "--datasets", dir, "-o", out); code != 0 {
		t.Fatalf("request-words: exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := analysis.ParseRequestShares(f)
	if err != nil {
		t.Fatal(err)
	}
	// help is in every query of both (capped); find in half of a's and
	// all of b's; weather only in a's.
	if got["help"] != 0.99 || got["find"] != 0.5 || got["weather"] != 0 {
		t.Errorf("request-words table %v, want help 0.99, find 0.5, no weather", got)
	}
	sample := []string{"eval", "--tools", filepath.Join(dir, "a", "tools.jsonl"), "--queries", filepath.Join(dir, "a", "queries.jsonl"), "--semantic", "off"}
	bad := filepath.Join(dir, "bad.tsv")
	if err := os.WriteFile(bad, []byte("help\t2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"request-words", "--datasets", dir, "--kappa", "-1"}, "--kappa"},
		{[]string{"request-words", "--datasets", filepath.Join(dir, "nowhere")}, "no tools.jsonl"},
		{append(sample, "--request-words", bad), "--request-words: line 1"},
		{append(sample, "--request-words", filepath.Join(dir, "missing.tsv")), "--request-words"},
	} {
		if code, _, stderr := runDev(tt.args...); code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want an error with %q", tt.args, code, stderr, tt.want)
		}
	}
	if code, _, stderr := runDev(append(sample, "--request-words", out, "--request-damping", "16")...); code != 0 {
		t.Errorf("eval --request-words: exit %d: %s", code, stderr)
	}
}

// TestRequestWordsEmbeddedIsGenerated: index/analysis/requestwords.tsv
// is what request-words makes from the four datasets it names (skipped
// without the datasets).
func TestRequestWordsEmbeddedIsGenerated(t *testing.T) {
	dir := benchcorpus.Dir(filepath.Join("..", "..", "..", "shared", "datasets"))
	var dirs []string
	for _, d := range []string{"livemcpbench", "metatool", "bfcl", "gorilla_apibench"} {
		p := filepath.Join(dir, d)
		if _, err := os.Stat(filepath.Join(p, "queries.jsonl")); err != nil {
			t.Skipf("no dataset %s (set %s): %v", d, benchcorpus.EnvDir, err)
		}
		dirs = append(dirs, p)
	}
	want, err := os.ReadFile("../../index/analysis/requestwords.tsv")
	if err != nil {
		t.Fatal(err)
	}
	code, got, stderr := runDev("request-words", "--datasets", strings.Join(dirs, ","))
	if code != 0 {
		t.Fatalf("request-words: exit %d: %s", code, stderr)
	}
	if got != string(want) {
		t.Errorf("request-words over %v differs from index/analysis/requestwords.tsv: regenerate it (docs/BENCHMARKS.md)", dirs)
	}
}
