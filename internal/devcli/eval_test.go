package devcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/tooldex/tooldex/internal/eval"
)

// TestMain checks that the commands leave no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// runDev runs the command line as main does.
func runDev(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{nil, 1, "", "usage: tooldex-dev"},
		{[]string{"-h"}, 0, "bench memory", ""},
		{[]string{"eval", "-h"}, 0, "-crossval", ""},
		{[]string{"bench", "memory", "-h"}, 0, "-write-catalog", ""},
		{[]string{"bench", "search"}, 1, "", "tooldex bench search"},
		{[]string{"eval"}, 1, "", "--tools and --queries are required"},
		{[]string{"search", "x"}, 1, "", `unknown command "search"`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runDev(tt.args...)
		if code != tt.wantCode || !strings.Contains(stdout, tt.wantStdout) || !strings.Contains(stderr, tt.wantStderr) {
			t.Errorf("tooldex-dev %q: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				tt.args, code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
		}
	}
}

// TestEvalSampleDataset: the repository's own sample dataset (testdata/sample,
// no ../shared needed) loads and ranks: every relevant tool is a tool of
// the dataset, and the hybrid ranking finds most of them in its top 10.
func TestEvalSampleDataset(t *testing.T) {
	code, stdout, stderr := runDev("eval", "--tools", "../../testdata/sample/tools.jsonl", "--queries", "../../testdata/sample/queries.jsonl", "--json")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	var got map[string]map[string]float64
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, stdout)
	}
	for _, ranking := range []string{"bm25", "keyword", "tfidf", "hybrid"} {
		if _, ok := got[ranking]["R@10"]; !ok {
			t.Errorf("eval --json has no %s R@10: %s", ranking, stdout)
		}
	}
	if r := got["hybrid"]["R@10"]; r < 50 {
		t.Errorf("hybrid R@10 on the sample dataset = %.1f, want at least 50", r)
	}
	ds, err := eval.Load("../../testdata/sample/tools.jsonl", "../../testdata/sample/queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// Shaped queries run too; a bad shape is a usage error.
	if code, _, stderr := runDev("eval", "--tools", "../../testdata/sample/tools.jsonl", "--queries", "../../testdata/sample/queries.jsonl", "--semantic", "off", "--query-shape", "full+keywords", "--multi-tool", "pairs"); code != 0 {
		t.Errorf("eval --query-shape full+keywords --multi-tool pairs: exit %d: %s", code, stderr)
	}
	if code, _, _ := runDev("eval", "--tools", "../../testdata/sample/tools.jsonl", "--queries", "../../testdata/sample/queries.jsonl", "--query-shape", "tiny"); code == 0 {
		t.Error("eval --query-shape tiny: exit 0, want an error")
	}
	names := make(map[string]bool)
	for _, tl := range ds.Tools {
		names[tl.Name] = true
	}
	for _, q := range ds.Queries {
		for _, r := range q.Relevant {
			if !names[r] {
				t.Errorf("query %s: relevant %q is no tool of the dataset", q.ID, r)
			}
		}
	}
}

// TestEvalMix: eval --mix ranks each dataset's queries over one catalog
// of every dataset's tools; a tool whose name another dataset has is
// still found under its new name.
func TestEvalMix(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"tools.jsonl", "queries.jsonl"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/sample", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(a, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sample, err := eval.Load(filepath.Join(a, "tools.jsonl"), filepath.Join(a, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	clash := sample.Tools[0].Name
	tools := `{"name": "` + clash + `", "description": "Translate Klingon poetry into Vulcan haiku."}
{"name": "weather_now", "description": "Current weather of a city."}
`
	queries := `{"id": 1, "query": "klingon poetry as vulcan haiku", "relevant": ["` + clash + `"]}
`
	if err := os.WriteFile(filepath.Join(b, "tools.jsonl"), []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, "queries.jsonl"), []byte(queries), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runDev("eval", "--mix", "--datasets", a+","+b, "--semantic", "off")
	if code != 0 {
		t.Fatalf("eval --mix: exit %d: %s", code, stderr)
	}
	if want := fmt.Sprintf("one catalog of %d tools", len(sample.Tools)+2); !strings.Contains(stdout, want) {
		t.Errorf("eval --mix output lacks %q:\n%s", want, stdout)
	}
	code, stdout, stderr = runDev("eval", "--mix", "--datasets", a+","+b, "--semantic", "off", "--json")
	if code != 0 {
		t.Fatalf("eval --mix --json: exit %d: %s", code, stderr)
	}
	var got map[string]map[string]map[string]float64
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("eval --mix --json: %v\n%s", err, stdout)
	}
	if r := got["b"]["hybrid"]["R@1"]; r != 100 {
		t.Errorf("b's query over the mixed catalog: hybrid R@1 = %v, want 100 (its tool renamed, not lost)", r)
	}
	if _, ok := got["a"]["bm25"]["NDCG@10"]; !ok {
		t.Errorf("eval --mix --json has no bm25 row for a: %s", stdout)
	}
	if code, _, stderr := runDev("eval", "--mix", "--crossval", "--datasets", a+","+b, "--grid", "keyword=0.2,0.3"); code != 0 {
		t.Errorf("eval --mix --crossval: exit %d: %s", code, stderr)
	}
}

// TestEvalStaticModelFile: --static-model ranks with a model file as with
// the embedded model when the file is that model, and refuses a missing
// file, a file that is no model, and another mode.
func TestEvalStaticModelFile(t *testing.T) {
	args := []string{"eval", "--tools", "../../testdata/sample/tools.jsonl", "--queries", "../../testdata/sample/queries.jsonl", "--json", "--vector-cache", ""}
	code, want, stderr := runDev(args...)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	code, got, stderr := runDev(append(args, "--static-model", "../semantic/static/model.bin")...)
	if code != 0 || got != want {
		t.Errorf("eval --static-model with the embedded model's file: exit %d (%s)\n%s\nwant\n%s", code, stderr, got, want)
	}
	garbage := filepath.Join(t.TempDir(), "model.bin")
	if err := os.WriteFile(garbage, []byte("USESTAT1 not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--static-model", filepath.Join(t.TempDir(), "missing.bin")}, "--static-model"},
		{[]string{"--static-model", garbage}, "static: model has"},
		{[]string{"--static-model", "../semantic/static/model.bin", "--semantic", "full"}, "--static-model needs --semantic=static"},
	} {
		if code, _, stderr := runDev(append(args, tt.extra...)...); code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("eval %q: exit %d, stderr %q; want an error with %q", tt.extra, code, stderr, tt.want)
		}
	}
}

// TestEvalLosses: --losses lists the queries the default ranking orders
// below plain BM25, largest drop first, in JSON and in text.
func TestEvalLosses(t *testing.T) {
	args := []string{"eval", "--tools", "../../testdata/sample/tools.jsonl", "--queries", "../../testdata/sample/queries.jsonl",
		"--semantic", "off", "--query-shape", "short", "--multi-tool", "pairs", "--losses", "5"}
	code, stdout, stderr := runDev(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("eval --losses --json: exit %d: %s", code, stderr)
	}
	var got struct {
		Losses []eval.Loss `json:"losses"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("eval --losses --json: %v\n%s", err, stdout)
	}
	if len(got.Losses) == 0 || len(got.Losses) > 5 {
		t.Fatalf("eval --losses 5 listed %d queries, want 1 to 5 (the sample's short pairs have losses): %s", len(got.Losses), stdout)
	}
	for i, l := range got.Losses {
		if l.Query.ID == "" || len(l.Query.Relevant) == 0 || l.NDCG >= l.BaseNDCG || len(l.Base) == 0 {
			t.Errorf("loss %d = %+v: want a query with relevant tools, NDCG below the baseline's and bm25's results", i, l)
		}
		if i > 0 && l.NDCG-l.BaseNDCG < got.Losses[i-1].NDCG-got.Losses[i-1].BaseNDCG {
			t.Errorf("loss %d drops %.1f, more than loss %d's %.1f: want the largest drops first", i, l.NDCG-l.BaseNDCG, i-1, got.Losses[i-1].NDCG-got.Losses[i-1].BaseNDCG)
		}
	}
	code, stdout, stderr = runDev(args...)
	if want := fmt.Sprintf("%d queries ranked furthest below bm25 by hybrid", len(got.Losses)); code != 0 || !strings.Contains(stdout, want) || !strings.Contains(stdout, got.Losses[0].Query.ID) {
		t.Errorf("eval --losses: exit %d, stdout %q, stderr %q; want %q and %s", code, stdout, stderr, want, got.Losses[0].Query.ID)
	}
	for _, extra := range [][]string{{"--losses", "-1"}, {"--mix", "--datasets", "../../testdata/sample"}} {
		if code, _, stderr := runDev(append(args, extra...)...); code == 0 || !strings.Contains(stderr, "--losses") {
			t.Errorf("eval --losses 5 %q: exit %d, stderr %q; want a usage error naming --losses", extra, code, stderr)
		}
	}
}
