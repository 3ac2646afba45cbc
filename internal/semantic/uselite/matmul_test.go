package uselite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatmul checks the kernel and the portable version against the
// textbook product, for row counts that do and do not fill blocks of 4.
func TestMatmul(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, in, out int }{{1, 16, 16}, {3, 32, 48}, {4, 8, 32}, {9, 64, 32}, {5, 16, 64}, {33, 256, 768}} {
		x := make([]float32, tc.n*tc.in)
		w := make([]float32, tc.in*tc.out)
		for i := range x {
			x[i] = rng.Float32()*2 - 1
		}
		for i := range w {
			w[i] = float32(rng.IntN(2049)-1024) / 1024 // fp16 values, as the model's
		}
		want := make([]float64, tc.n*tc.out)
		for r := range tc.n {
			for k := range tc.in {
				for c := range tc.out {
					want[r*tc.out+c] += float64(x[r*tc.in+k]) * float64(w[k*tc.out+c])
				}
			}
		}
		p := pack(w, tc.in, tc.out, strip)
		cases := map[string]func([]float32){
			"portable": func(d []float32) { matmulGo(d, x, p, tc.n, tc.in, tc.out) },
		}
		// Each kernel this CPU runs: 16-column strips, and 32 with AVX-512.
		for _, width := range []int{16, 32} {
			if !halfWeights || width > halfStrip || tc.out%width != 0 {
				continue
			}
			mx := &matrix{in: tc.in, out: tc.out}
			for _, v := range pack(w, tc.in, tc.out, width) {
				mx.h = append(mx.h, floatToHalf(v))
			}
			cases[fmt.Sprintf("kernel%d", width)] = func(d []float32) {
				defer func(old int) { halfStrip = old }(halfStrip)
				halfStrip = width
				matmul(d, x, mx, tc.n, make([]float32, 4*tc.in+4*32))
			}
		}
		for name, f := range cases {
			got := make([]float32, tc.n*tc.out)
			for i := range got {
				got[i] = float32(math.NaN()) // every cell must be written
			}
			f(got)
			for i := range got {
				if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-4*float64(tc.in)) {
					t.Fatalf("%s %v: cell %d = %g, want %g", name, tc, i, got[i], want[i])
				}
			}
		}
	}
}

// TestHalf: every fp16 value survives halfToFloat then floatToHalf.
func TestHalf(t *testing.T) {
	for h := range 1 << 16 {
		if (h>>10)&0x1f == 0x1f {
			continue // infinities and NaNs: not in the model
		}
		if got := floatToHalf(halfToFloat(uint16(h))); got != uint16(h) {
			t.Fatalf("floatToHalf(halfToFloat(%#04x)) = %#04x", h, got)
		}
	}
}

// TestTokenizer pins segmentations: pieces, the merged unknown run, the
// 128-token cut is the model's (Encode returns every id).
func TestTokenizer(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	tok := m.Tokenizer()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"cron schedule", []string{"▁cr", "on", "▁schedule"}},
		{"", nil},
		{"a 🚀🚀 b", []string{"▁a", "▁", "\ufffd", "▁b"}},
	} {
		var got []string
		for _, id := range tok.Encode(nil, tc.text) {
			got = append(got, tok.Piece(int(id)))
		}
		if len(got) != len(tc.want) {
			t.Errorf("Encode(%q) = %q, want %q", tc.text, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("Encode(%q) = %q, want %q", tc.text, got, tc.want)
				break
			}
		}
	}
}
