package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDescriptions: a description is its first line and its continuation
// lines; duplicates go; other fields and " ." lines are skipped.
func TestDescriptions(t *testing.T) {
	corpus := "Package: a\nDescription: fast grep\n searches files\n .\n quickly\nHomepage: x\n" +
		"Package: b\nDescription: fast grep\n searches files\n .\n quickly\n" +
		"Package: c\nDescription-md5: 0123\nDescription: image tool\nMaintainer: m\n" +
		"Package: d\nDescription-en: image tool\n"
	p := filepath.Join(t.TempDir(), "packages.txt")
	if err := os.WriteFile(p, []byte(corpus), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		summaries bool
		want      []string
	}{
		{false, []string{"fast grep searches files quickly", "image tool"}},
		{true, []string{"fast grep", "image tool"}},
	} {
		got, err := descriptions(p, tt.summaries)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("descriptions(summaries %v) = %q, want %q", tt.summaries, got, tt.want)
		}
	}
}

// TestSolve: the conjugate gradients reach the ridge solution, worked out
// by hand for two units.
func TestSolve(t *testing.T) {
	// Text 0 is unit 0 alone (target 1), text 1 is units 0 and 1 (target 3).
	p := &normal{dim: 1, units: 2, texts: []textRows{
		{rows: []entry{{0, 1}}, y: []float64{1}},
		{rows: []entry{{0, 1}, {1, 1}}, y: []float64{3}},
	}}
	v0 := [][]float64{{0}, {0}}
	// Mean diagonal (2 + 1) / 2 = 1.5, λ = 2/3: ridge 1. Normal equations
	// [[3, 1], [1, 2]] x = [4, 3]: x = (1, 1).
	got := p.solve(v0, 2.0/3, 50, 2)
	for u, want := range []float64{1, 1} {
		if math.Abs(got[u][0]-want) > 1e-9 {
			t.Errorf("unit %d = %v, want %v", u, got[u][0], want)
		}
	}
}

// TestSolveWeights: one weight per unit, directions kept; the ridge pulls
// the weight toward 1.
func TestSolveWeights(t *testing.T) {
	p := &normal{dim: 2, units: 1, texts: []textRows{{rows: []entry{{0, 1}}, y: []float64{2, 1}}}}
	// Minimise ‖w·(1, 0) − (2, 1)‖² + (w − 1)² (ridge 1 × mean diagonal 1): w = 1.5.
	got := p.solveWeights([][]float64{{1, 0}}, 1, 50, 1)
	if want := []float64{1.5, 0}; math.Abs(got[0][0]-want[0]) > 1e-9 || got[0][1] != 0 {
		t.Errorf("row = %v, want %v", got[0], want)
	}
}
