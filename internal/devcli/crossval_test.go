package devcli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/index/analysis"
	"github.com/tooldex/tooldex/internal/eval"
)

func TestSettingConfig(t *testing.T) {
	d := index.DefaultConfig()
	tests := []struct {
		s       eval.Setting
		check   func(c index.Config) bool
		wantErr string
	}{
		{s: nil, check: func(c index.Config) bool { return reflect.DeepEqual(c, d) }},
		{s: eval.Setting{{Name: "request", Value: -1}}, check: func(c index.Config) bool { return c.RequestDamping == -1 }},
		{s: eval.Setting{{Name: "keyword", Value: 0.3}}, check: func(c index.Config) bool { return c.KeywordWeight == 0.3 && c.TFIDFWeight == 0.7 }},
		{s: eval.Setting{{Name: "keyword", Value: 0.3}, {Name: "text", Value: 2}}, check: func(c index.Config) bool { return c.KeywordWeight == 0.3 && c.TFIDFWeight == 2 }},
		{s: eval.Setting{{Name: "k1", Value: 2}, {Name: "b", Value: -1}, {Name: "param", Value: 1}}, check: func(c index.Config) bool { return c.K1 == 2 && c.B == -1 && c.ParamWeight == 1 }},
		{s: eval.Setting{{Name: "nope", Value: 1}}, wantErr: "unknown grid parameter"},
		{s: eval.Setting{{Name: "k1", Value: -1}}, wantErr: "negative"},
		{s: eval.Setting{{Name: "keyword", Value: 0}, {Name: "text", Value: 0}}, wantErr: "both zero"},
	}
	for _, tt := range tests {
		c, err := settingConfig(tt.s)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("settingConfig(%v) error = %v, want %q", tt.s, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !tt.check(c) {
			t.Errorf("settingConfig(%v) = %+v, %v", tt.s, c, err)
		}
	}
}

func TestDefaultGridParses(t *testing.T) {
	g, err := eval.ParseGrid(defaultGrid)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Settings() {
		if _, err := settingConfig(s); err != nil {
			t.Fatalf("default grid: %v", err)
		}
	}
}

func TestDatasetDirs(t *testing.T) {
	if _, err := datasetDirs(t.TempDir()); err == nil {
		t.Error("empty folder: no error")
	}
}

// writeDataset writes tools and queries (JSON lines) into dir/name and
// returns that folder.
func writeDataset(t *testing.T, dir, name, tools, queries string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, data := range map[string]string{"tools.jsonl": tools, "queries.jsonl": queries} {
		if err := os.WriteFile(filepath.Join(d, f), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// helpFixture writes three datasets into dir, a, b and c, and returns
// their folders as --datasets takes them. In c, "help" is what the
// relevant tool is about; a and b's requests never say it.
func helpFixture(t *testing.T, dir string) string {
	t.Helper()
	tools := `{"name": "weather_now", "description": "Current weather of a city."}
{"name": "send_mail", "description": "Send an e-mail message."}
`
	a := writeDataset(t, dir, "a", tools, `{"id": 1, "query": "weather in paris", "relevant": ["weather_now"]}
{"id": 2, "query": "send an e-mail to bob", "relevant": ["send_mail"]}
`)
	b := writeDataset(t, dir, "b", tools, `{"id": 1, "query": "current weather of rome", "relevant": ["weather_now"]}
{"id": 2, "query": "mail a message", "relevant": ["send_mail"]}
`)
	c := writeDataset(t, dir, "c", `{"name": "support_agent", "description": "Get help with a support ticket."}
{"name": "ticket_status", "description": "Status of a ticket."}
`, `{"id": 1, "query": "help with my ticket", "relevant": ["support_agent"]}
{"id": 2, "query": "status of ticket 42", "relevant": ["ticket_status"]}
`)
	return a + "," + b + "," + c
}

// crossvalDefault runs eval --crossval with args and returns the default
// column's NDCG@10 on the dataset named row.
func crossvalDefault(t *testing.T, row string, args ...string) float64 {
	t.Helper()
	code, stdout, stderr := runDev(append([]string{"eval", "--crossval", "--vector-cache", ""}, args...)...)
	if code != 0 {
		t.Fatalf("eval --crossval %v: exit %d: %s", args, code, stderr)
	}
	for line := range strings.Lines(stdout) {
		f := strings.Fields(line)
		if len(f) == 5 && f[0] == row {
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatalf("default column of %q: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("eval --crossval %v: no row %q:\n%s", args, row, stdout)
	return 0
}

// TestCrossvalRequestWordsPerFold: a fold's ranking learns its request
// words from the other datasets only. In dataset c, "help" is what the
// relevant tool is about; the embedded table, made from requests that ask
// for help, weighs it down and ranks the other tool first, while a and b's
// requests never say "help", so c's fold keeps it.
func TestCrossvalRequestWordsPerFold(t *testing.T) {
	dir := t.TempDir()
	sets := helpFixture(t, dir)
	c := filepath.Join(dir, "c")
	// The fixture's premise: the embedded table ranks c's tool second.
	code, stdout, stderr := runDev("eval", "--semantic", "off", "--json", "--tools", filepath.Join(c, "tools.jsonl"), "--queries", filepath.Join(c, "queries.jsonl"))
	var got map[string]map[string]float64
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil {
		t.Fatalf("eval on c: exit %d: %s %s", code, stdout, stderr)
	}
	embedded := got["hybrid"]["NDCG@10"]
	if embedded <= 0 || embedded >= 100 {
		t.Fatalf("the embedded table ranks c's tool first or not at all (NDCG@10 %v): the fixture tests nothing", embedded)
	}
	for _, sem := range []string{"off", "static"} {
		if got := crossvalDefault(t, "c", "--semantic", sem, "--datasets", sets, "--grid", "request=48"); got != 100 {
			t.Errorf("--semantic %s: c's default NDCG@10 = %v, want 100 (its fold's table learned from a and b)", sem, got)
		}
	}
	// --request-words puts one table in every fold.
	table := filepath.Join(dir, "table.tsv")
	f, err := os.Create(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := eval.WriteRequestShares(f, analysis.RequestShares(), nil); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := crossvalDefault(t, "c", "--semantic", "off", "--datasets", sets, "--grid", "request=48", "--request-words", table); math.Abs(got-embedded) > 0.05 {
		t.Errorf("--request-words with the embedded table: c's default NDCG@10 = %v, want %v", got, embedded)
	}
	// --request-from names which datasets a fold learns from: from c
	// alone, a and b's folds learn "help", c's fold learns nothing.
	if got := crossvalDefault(t, "c", "--semantic", "off", "--datasets", sets, "--grid", "request=48", "--request-from", "c"); got != 100 {
		t.Errorf("--request-from c: c's default NDCG@10 = %v, want 100", got)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--request-from", "nope"}, `no dataset "nope"`},
		{[]string{"--semantic", "off", "--grid", "semantic=0.1"}, "needs dense retrieval"},
		{[]string{"--grid", "semantic=2"}, "needs dense retrieval and a share in (0, 1]"},
	} {
		args := append([]string{"eval", "--crossval", "--vector-cache", "", "--datasets", sets}, tt.args...)
		if code, _, stderr := runDev(args...); code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error with %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestEvalMatrix: --matrix gives each dataset's six cells, default minus
// plain BM25, its full-query cell what --crossval's columns give.
func TestEvalMatrix(t *testing.T) {
	sets := helpFixture(t, t.TempDir())
	code, stdout, stderr := runDev("eval", "--matrix", "--semantic", "off", "--vector-cache", "", "--datasets", sets)
	if code != 0 {
		t.Fatalf("eval --matrix: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "18 cells: mean") {
		t.Errorf("eval --matrix output lacks its summary:\n%s", stdout)
	}
	var full float64
	found := false
	for line := range strings.Lines(stdout) {
		if f := strings.Fields(line); len(f) == 8 && f[0] == "c" {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("c's full cell in %q: %v", line, err)
			}
			full, found = v, true
		}
	}
	if !found {
		t.Fatalf("eval --matrix: no row c with six cells and a mean:\n%s", stdout)
	}
	code, cv, stderr := runDev("eval", "--crossval", "--semantic", "off", "--vector-cache", "", "--datasets", sets, "--grid", "request=48")
	if code != 0 {
		t.Fatalf("eval --crossval: exit %d: %s", code, stderr)
	}
	for line := range strings.Lines(cv) {
		if f := strings.Fields(line); len(f) == 5 && f[0] == "c" {
			bm25, _ := strconv.ParseFloat(f[1], 64)
			def, _ := strconv.ParseFloat(f[2], 64)
			if math.Abs(full-(def-bm25)) > 0.06 {
				t.Errorf("c's full cell %v, want --crossval's default − BM25 = %v", full, def-bm25)
			}
		}
	}
	code, js, stderr := runDev("eval", "--matrix", "--json", "--semantic", "off", "--vector-cache", "", "--datasets", sets)
	var got map[string]map[string]float64
	if code != 0 || json.Unmarshal([]byte(js), &got) != nil {
		t.Fatalf("eval --matrix --json: exit %d: %s %s", code, js, stderr)
	}
	if len(got) != 3 || len(got["c"]) != 6 || math.Abs(got["c"]["full"]-full) > 0.006 {
		t.Errorf("eval --matrix --json = %v, want 3 datasets of 6 cells, c's full %v", got, full)
	}
	if code, _, stderr := runDev("eval", "--matrix", "--crossval", "--datasets", sets); code == 0 || !strings.Contains(stderr, "does not combine") {
		t.Errorf("--matrix --crossval: exit %d, %q; want refused", code, stderr)
	}
}
