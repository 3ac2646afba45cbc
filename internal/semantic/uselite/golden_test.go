package uselite

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"testing"
)

type goldenVec struct {
	text string
	vec  []float32
}

// readGolden reads testdata/golden.json: texts and the vectors the original
// TensorFlow.js model computed for them (testdata/golden.mjs makes it).
func readGolden(t *testing.T) []goldenVec {
	t.Helper()
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixture []struct {
		Text string `json:"text"`
		Vec  string `json:"vec"`
	}
	if err := json.Unmarshal(raw, &fixture); err != nil {
		t.Fatal(err)
	}
	out := make([]goldenVec, len(fixture))
	for i, g := range fixture {
		b, err := base64.StdEncoding.DecodeString(g.Vec)
		if err != nil || len(b) != 4*Dim {
			t.Fatalf("%q: bad fixture vector", g.Text)
		}
		v := make([]float32, Dim)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		}
		out[i] = goldenVec{g.Text, v}
	}
	return out
}

// checkGolden embeds each text with m and reports every cosine with the
// original model below 0.99999; it returns the worst.
func checkGolden(t *testing.T, m *Model, golden []goldenVec) float64 {
	t.Helper()
	worst := 1.0
	for _, g := range golden {
		got := m.Vector(g.text)
		var dot, nw, ng float64
		for i, w := range g.vec {
			dot += float64(w) * float64(got[i])
			nw += float64(w) * float64(w)
			ng += float64(got[i]) * float64(got[i])
		}
		cos := dot / math.Sqrt(nw*ng)
		worst = min(worst, cos)
		if !(cos >= 0.99999) {
			t.Errorf("%.60q: cosine %.7f with the original model, want ≥ 0.99999", g.text, cos)
		}
	}
	return worst
}

// TestGolden checks the port against the vectors the original TensorFlow.js
// model computed for the same texts: every cosine ≥ 0.99999.
func TestGolden(t *testing.T) {
	golden := readGolden(t)
	if len(golden) < 200 {
		t.Fatalf("fixture has %d texts, want a few hundred", len(golden))
	}
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d texts, worst cosine %.7f", len(golden), checkGolden(t, m, golden))
}

// TestGoldenPaths forces each code path the model can take (portable Go,
// AVX2 kernels, AVX-512 kernels: those this CPU runs) and checks a sample
// of the golden texts through each.
func TestGoldenPaths(t *testing.T) {
	golden := readGolden(t)
	defer func(h bool, s int) { halfWeights, halfStrip = h, s }(halfWeights, halfStrip)
	type path struct {
		name  string
		half  bool
		strip int
	}
	paths := []path{{"portable", false, 16}}
	if halfWeights {
		paths = append(paths, path{"avx2", true, 16})
		if halfStrip == 32 {
			paths = append(paths, path{"avx512", true, 32})
		}
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			halfWeights, halfStrip = p.half, p.strip
			m, err := decode(modelBin)
			if err != nil {
				t.Fatal(err)
			}
			// Every 29th text: short and long ones, the portable path is slow.
			var sample []goldenVec
			for i := 0; i < len(golden); i += 29 {
				sample = append(sample, golden[i])
			}
			t.Logf("%d texts, worst cosine %.7f", len(sample), checkGolden(t, m, sample))
		})
	}
}
