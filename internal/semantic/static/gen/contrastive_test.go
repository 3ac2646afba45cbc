package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/semantic"
)

// TestPairs: a package's summary and long description, " ." lines left
// out; packages without a long description are dropped, and of those
// sharing a summary or a long description only one is kept.
func TestPairs(t *testing.T) {
	corpus := "Package: a\nDescription-md5: 01\nDescription-en: fast grep\n searches files\n .\n quickly\n\n" +
		"Package: b\nDescription-md5: 02\nDescription-en: image tool\n\n" +
		"Package: c\nDescription-md5: 03\nDescription-en: fast grep\n other text\n\n" +
		"Package: d\nDescription-md5: 04\nDescription-en: cron tool\n runs jobs\n\n" +
		"Package: e\nDescription-md5: 05\nDescription-en: cron daemon\n runs jobs\n"
	p := filepath.Join(t.TempDir(), "Translation-en")
	if err := os.WriteFile(p, []byte(corpus), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := pairs(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]pair{
		"a": {name: "a", summary: "fast grep", long: "searches files quickly"}, "c": {name: "c", summary: "fast grep", long: "other text"},
		"d": {name: "d", summary: "cron tool", long: "runs jobs"}, "e": {name: "e", summary: "cron daemon", long: "runs jobs"},
	}
	kept := map[string]bool{}
	for _, q := range got {
		if !reflect.DeepEqual(q, want[q.name]) {
			t.Errorf("pair %s = %q, want %q", q.name, q, want[q.name])
		}
		kept[q.name] = true
	}
	if len(got) != 2 || kept["a"] == kept["c"] || kept["d"] == kept["e"] {
		t.Errorf("pairs = %q, want one of a and c, one of d and e", got)
	}
}

// TestLossGrad: the hand-derived gradient of the in-batch InfoNCE loss
// matches central differences, symmetric and one way.
func TestLossGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const units, dim = 10, 4
	v0 := newMat(units, dim)
	for u := reserved; u < units; u++ {
		for k := range v0[u] {
			v0[u][k] = rng.NormFloat64()
		}
	}
	qs := []bag{{{6, 1}, {7, 2}}, {{8, 1}}, {{6, 1}, {9, 1}}}
	ds := []bag{{{7, 1}, {9, 1}}, {{8, 1}, {6, 1}}, {{9, 3}}}
	// Pairs 0 and 2 share their query: with keys, neither is the other's
	// negative.
	shared := [][2]string{{"q0", "d0"}, {"q1", "d1"}, {"q0", "d2"}}
	for _, c := range []struct {
		oneWay bool
		keys   [][2]string
	}{{false, nil}, {true, nil}, {false, shared}, {true, shared}} {
		oneWay := c.oneWay
		tr := newTrainer(ctConfig{temp: 5, oneWay: oneWay}, v0, 2)
		checkGrad(t, fmt.Sprintf("one way %v, keys %v", oneWay, c.keys != nil), tr, func() float64 { return tr.lossGrad(qs, ds, c.keys) })
	}
}

// checkGrad runs loss once to fill tr.grad, then compares each entry of
// the rows' gradient with a central difference of loss.
func checkGrad(t *testing.T, what string, tr *trainer, loss func() float64) {
	t.Helper()
	loss()
	units, dim := len(tr.v), tr.dim
	diff := func() float64 {
		saved := tr.grad
		tr.grad = newMat(units, dim)
		defer func() { tr.grad = saved }()
		return loss()
	}
	const h = 1e-6
	for u := reserved; u < units; u++ {
		for k := range dim {
			x := tr.v[u][k]
			tr.v[u][k] = x + h
			up := diff()
			tr.v[u][k] = x - h
			down := diff()
			tr.v[u][k] = x
			if want := (up - down) / (2 * h); math.Abs(tr.grad[u][k]-want) > 1e-6 {
				t.Errorf("%s: dLoss/dV[%d][%d] = %.8f, central difference %.8f", what, u, k, tr.grad[u][k], want)
			}
		}
	}
}

// TestLossGradPool: the pool loss's gradient matches central differences,
// with a skipped negative.
func TestLossGradPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const units, dim = 10, 4
	v0 := newMat(units, dim)
	for u := reserved; u < units; u++ {
		for k := range v0[u] {
			v0[u][k] = rng.NormFloat64()
		}
	}
	qs := []bag{{{6, 1}, {7, 2}}, {{8, 1}}}
	pool := []bag{{{7, 1}, {9, 1}}, {{8, 1}, {6, 1}}, {{9, 3}}, {{6, 1}, {8, 2}}}
	target := []int{0, 2}
	skip := func(i, j int) bool { return i == 0 && j == 3 }
	tr := newTrainer(ctConfig{temp: 5}, v0, 2)
	checkGrad(t, "pool", tr, func() float64 { return tr.lossGradPool(qs, pool, target, skip) })
}

// TestUpdatePull: with no contrastive gradient the pull moves a row back
// toward its distilled value, and only the touched rows move.
func TestUpdatePull(t *testing.T) {
	v0 := [][]float64{{1, 0}, {0, 1}}
	tr := newTrainer(ctConfig{lr: 0.1, lambda: 1}, v0, 1)
	tr.v[0][0], tr.v[1][1] = 2, 3
	tr.mark[0], tr.touched = true, []int32{0}
	tr.update()
	if got := tr.v[0][0]; got >= 2 || got <= 1 {
		t.Errorf("touched row: %v, want between 1 and 2", got)
	}
	if got := tr.v[1][1]; got != 3 {
		t.Errorf("untouched row: %v, want 3", got)
	}
}

// TestRecallAt1: a query counts when its own document is strictly the
// nearest.
func TestRecallAt1(t *testing.T) {
	q := [][]float64{{1, 0}, {0, 1}, {1, 0}}
	d := [][]float64{{1, 0}, {1, 0}, {0, 1}}
	// Query 0 ties documents 0 and 1 (a miss), query 1 finds 2 (miss),
	// query 2 ties 0 and 1 (miss): then with d[1] turned, query 0 hits.
	if got := recallAt1(q, d); got != 0 {
		t.Errorf("recallAt1 = %v, want 0", got)
	}
	d[1] = []float64{0, 1}
	if got := recallAt1(q, d); math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("recallAt1 = %v, want 1/3", got)
	}
}

// TestWithout: the query's units that its document lacks.
func TestWithout(t *testing.T) {
	q := bag{{1, 1}, {3, 2}, {5, 1}, {9, 1}}
	d := bag{{2, 1}, {3, 1}, {9, 4}}
	got := without(q, d)
	if want := (bag{{1, 1}, {5, 1}}); !slices.Equal(got, want) {
		t.Errorf("without = %v, want %v", got, want)
	}
}

// TestUpdateWeights: with weights, a step keeps a row parallel to its
// distilled row and moves its weight against the gradient.
func TestUpdateWeights(t *testing.T) {
	v0 := [][]float64{{3, 4}}
	tr := newTrainer(ctConfig{lr: 0.1, lambda: 0, weights: true}, v0, 1)
	tr.grad[0] = []float64{1, 1} // g·V0 = 7 > 0: the weight goes down
	tr.mark[0], tr.touched = true, []int32{0}
	tr.update()
	w := tr.w[0]
	if w >= 1 || math.Abs(tr.v[0][0]-3*w) > 1e-12 || math.Abs(tr.v[0][1]-4*w) > 1e-12 {
		t.Errorf("weight %v, row %v: want a weight below 1 times (3, 4)", w, tr.v[0])
	}
}

// TestLossGradKeys: a pair sharing its query or its document with another
// is not that one's negative, so moving it does not change the loss as a
// negative would; without keys it does.
func TestLossGradKeys(t *testing.T) {
	v0 := [][]float64{{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {1, 0}, {0, 1}, {1, 1}}
	qs := []bag{{{6, 1}}, {{7, 1}}}
	ds := []bag{{{6, 1}}, {{8, 1}}}
	keys := [][2]string{{"q", "a"}, {"q", "b"}} // one query, two relevant tools
	lossWith := func(k [][2]string, d1 bag) float64 {
		tr := newTrainer(ctConfig{temp: 5, oneWay: true}, v0, 1)
		return tr.lossGrad(qs, []bag{ds[0], d1}, k)
	}
	// Row 0's loss with its only negative masked is 0 whatever d1 is;
	// row 1's (target d1) is −log 1 = 0 too.
	if got := lossWith(keys, ds[1]); math.Abs(got) > 1e-12 {
		t.Errorf("masked loss = %v, want 0", got)
	}
	if a, b := lossWith(nil, ds[1]), lossWith(nil, bag{{6, 1}}); a == b || a <= 0 {
		t.Errorf("unmasked losses %v and %v: want positive and moved by the negative", a, b)
	}
}

// TestDatasetPairs: one pair per (query, relevant tool present), the
// tool's text as the run time embeds it, keyed by query and tool.
func TestDatasetPairs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "set")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := `{"name": "cron/create", "description": "Schedule a job", "input_schema": {"type": "object", "properties": {"when": {"type": "string", "description": "cron expression"}}}}
{"name": "cron_delete", "description": "Delete a job", "input_schema": null}
`
	queries := `{"id": "1", "query": "run my backup nightly", "relevant": ["cron/create", "missing"]}
{"id": "2", "query": "stop it", "relevant": ["cron_delete", "cron/create"]}
`
	for name, body := range map[string]string{"tools.jsonl": tools, "queries.jsonl": queries} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := datasetPairs([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	params := index.ParamText(map[string]any{"type": "object", "properties": map[string]any{"when": map[string]any{"type": "string", "description": "cron expression"}}})
	want := map[[2]string]pair{
		{"1", "cron_create"}: {name: "cron_create", summary: "run my backup nightly", doc: semantic.ToolText("cron_create", "", "Schedule a job", params)},
		{"2", "cron_delete"}: {name: "cron_delete", summary: "stop it", doc: semantic.ToolText("cron_delete", "", "Delete a job", "")},
		{"2", "cron_create"}: {name: "cron_create", summary: "stop it", doc: semantic.ToolText("cron_create", "", "Schedule a job", params)},
	}
	if len(got) != len(want) {
		t.Fatalf("%d pairs, want %d: %q", len(got), len(want), got)
	}
	for _, p := range got {
		id, _ := strings.CutPrefix(p.qKey, "set\x00")
		w, ok := want[[2]string{id, p.name}]
		w.qKey, w.dKey = "set\x00"+id, "set\x00"+p.name
		if !ok || !reflect.DeepEqual(p, w) {
			t.Errorf("pair %q, want %q", p, w)
		}
	}
}

// TestHardNeedsDatasets: hard negatives come from a dataset's lexical
// ranking, so -ct-hard without -ct-datasets (or below 0) is refused
// before any pair is read.
func TestHardNeedsDatasets(t *testing.T) {
	for _, cc := range []ctConfig{{hard: 3}, {hard: -1, datasets: []string{"x"}}} {
		cc.batch, cc.temp, cc.held = 2, 1, 0.1
		if _, err := fitContrastive(config{ct: cc}, 0, nil, nil); err == nil || !strings.Contains(err.Error(), "-ct-hard") {
			t.Errorf("hard %d, datasets %q: error %v, want one naming -ct-hard", cc.hard, cc.datasets, err)
		}
	}
}
