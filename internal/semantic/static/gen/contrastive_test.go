package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
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
		"a": {"a", "fast grep", "searches files quickly"}, "c": {"c", "fast grep", "other text"},
		"d": {"d", "cron tool", "runs jobs"}, "e": {"e", "cron daemon", "runs jobs"},
	}
	kept := map[string]bool{}
	for _, q := range got {
		if q != want[q.name] {
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
	for _, oneWay := range []bool{false, true} {
		tr := newTrainer(ctConfig{temp: 5, oneWay: oneWay}, v0, 2)
		tr.lossGrad(qs, ds)
		loss := func() float64 {
			saved := tr.grad
			tr.grad = newMat(units, dim)
			defer func() { tr.grad = saved }()
			return tr.lossGrad(qs, ds)
		}
		const h = 1e-6
		for u := reserved; u < units; u++ {
			for k := range dim {
				x := tr.v[u][k]
				tr.v[u][k] = x + h
				up := loss()
				tr.v[u][k] = x - h
				down := loss()
				tr.v[u][k] = x
				if want := (up - down) / (2 * h); math.Abs(tr.grad[u][k]-want) > 1e-6 {
					t.Errorf("one way %v: dLoss/dV[%d][%d] = %.8f, central difference %.8f", oneWay, u, k, tr.grad[u][k], want)
				}
			}
		}
	}
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
