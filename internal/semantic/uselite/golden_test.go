package uselite

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestGolden checks the port against the vectors the original TensorFlow.js
// model computed for the same texts (testdata/golden.mjs makes the
// fixture): every cosine ≥ 0.99999.
func TestGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden []struct {
		Text string `json:"text"`
		Vec  string `json:"vec"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) < 200 {
		t.Fatalf("fixture has %d texts, want a few hundred", len(golden))
	}
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for _, g := range golden {
		b, err := base64.StdEncoding.DecodeString(g.Vec)
		if err != nil || len(b) != 4*Dim {
			t.Fatalf("%q: bad fixture vector", g.Text)
		}
		got := m.Vector(g.Text)
		var dot, nw, ng float64
		for i := range Dim {
			w := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
			dot += w * float64(got[i])
			nw += w * w
			ng += float64(got[i]) * float64(got[i])
		}
		cos := dot / math.Sqrt(nw*ng)
		worst = min(worst, cos)
		if !(cos >= 0.99999) {
			t.Errorf("%.60q: cosine %.7f with the original model, want ≥ 0.99999", g.Text, cos)
		}
	}
	t.Logf("%d texts, worst cosine %.7f", len(golden), worst)
}
