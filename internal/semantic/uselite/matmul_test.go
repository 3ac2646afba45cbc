package uselite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatmul checks every kernel this CPU runs (4×16 with AVX2; 8, 4, 2
// and 1 rows × 32 with AVX-512) and the portable version against the
// textbook product plus bias, for every row count up to 9 and more, odd
// depths.
func TestMatmul(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type shape struct{ n, in, out int }
	var shapes []shape
	for n := 1; n <= 9; n++ {
		for _, io := range [][2]int{{1, 32}, {3, 64}, {17, 96}, {64, 32}} {
			shapes = append(shapes, shape{n, io[0], io[1]})
		}
	}
	shapes = append(shapes, shape{1, 16, 16}, shape{3, 32, 48}, shape{17, 33, 64}, shape{33, 256, 768}, shape{114, 63, 64})
	for _, tc := range shapes {
		x := make([]float32, tc.n*tc.in)
		w := make([]float32, tc.in*tc.out)
		for i := range x {
			x[i] = rng.Float32()*2 - 1
		}
		for i := range w {
			w[i] = float32(rng.IntN(2049)-1024) / 1024 // fp16 values, as the model's
		}
		b := make([]float32, tc.out)
		for i := range b {
			b[i] = rng.Float32()*2 - 1
		}
		want := make([]float64, tc.n*tc.out)
		for r := range tc.n {
			for c := range tc.out {
				want[r*tc.out+c] = float64(b[c])
			}
			for k := range tc.in {
				for c := range tc.out {
					want[r*tc.out+c] += float64(x[r*tc.in+k]) * float64(w[k*tc.out+c])
				}
			}
		}
		p := pack(w, tc.in, tc.out, strip)
		cases := map[string]func([]float32){
			"portable": func(d []float32) { matmulGo(d, x, p, b, tc.n, tc.in, tc.out) },
		}
		// Each kernel this CPU runs: 16-column strips, and 32 with AVX-512.
		for _, width := range []int{16, 32} {
			if !halfWeights || width > halfStrip || tc.out%width != 0 {
				continue
			}
			mx := &matrix{in: tc.in, out: tc.out, b: b}
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
			got := make([]float32, tc.n*tc.out+1)
			for i := range got {
				got[i] = float32(math.NaN()) // every cell must be written
			}
			got[len(got)-1] = 7
			f(got[:len(want)])
			for i := range want {
				if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-4*float64(tc.in)) {
					t.Fatalf("%s %v: cell %d = %g, want %g", name, tc, i, got[i], want[i])
				}
			}
			if got[len(got)-1] != 7 {
				t.Fatalf("%s %v: wrote past the end", name, tc)
			}
		}
	}
}

// TestAttentionKernels checks dots and mix, with AVX2 where the CPU has it
// and forced to the portable version, against the textbook sums, for
// the model's head widths and widths the kernels leave to Go.
func TestAttentionKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	simd := []bool{false}
	if halfWeights {
		simd = append(simd, true)
	}
	defer func(old bool) { halfWeights = old }(halfWeights)
	for _, d := range []int{32, 64, 128, 48, 20} {
		for _, n := range []int{1, 2, 3, 5, 8, 9, 33} {
			ld := 3*d + 5 // rows of a wider matrix, as in qkv
			q := make([]float32, d)
			p := make([]float32, n)
			m := make([]float32, (n-1)*ld+d)
			for i := range q {
				q[i] = rng.Float32()*2 - 1
			}
			for i := range p {
				p[i] = rng.Float32()
			}
			for i := range m {
				m[i] = rng.Float32()*2 - 1
			}
			wantDots := make([]float64, n)
			wantMix := make([]float64, d)
			for u := range n {
				for i := range d {
					wantDots[u] += float64(q[i]) * float64(m[u*ld+i])
					wantMix[i] += float64(p[u]) * float64(m[u*ld+i])
				}
			}
			for _, on := range simd {
				halfWeights = on
				gotDots := make([]float32, n)
				gotMix := make([]float32, d)
				dots(gotDots, q, m, ld)
				mix(gotMix, p, m, ld)
				for u := range n {
					if diff := math.Abs(float64(gotDots[u]) - wantDots[u]); !(diff <= 1e-5*float64(d)) {
						t.Errorf("simd %v, d %d, n %d: dots[%d] = %g, want %g", on, d, n, u, gotDots[u], wantDots[u])
					}
				}
				for i := range d {
					if diff := math.Abs(float64(gotMix[i]) - wantMix[i]); !(diff <= 1e-5*float64(n)) {
						t.Errorf("simd %v, d %d, n %d: mix[%d] = %g, want %g", on, d, n, i, gotMix[i], wantMix[i])
					}
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

// TestLayerNorm checks layerNorm against the textbook formula in float64,
// for widths that do and do not fill its four lanes.
func TestLayerNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{1, 3, 4, 13, 256} {
		x := make([]float32, 3*d)
		g := make([]float32, d)
		b := make([]float32, d)
		for i := range x {
			x[i] = rng.Float32()*4 + 1
		}
		for i := range g {
			g[i], b[i] = rng.Float32()+0.5, rng.Float32()-0.5
		}
		got := make([]float32, len(x))
		layerNorm(got, x, g, b, d)
		for r := range 3 {
			var mean, v2 float64
			for _, v := range x[r*d : (r+1)*d] {
				mean += float64(v)
			}
			mean /= float64(d)
			for _, v := range x[r*d : (r+1)*d] {
				v2 += (float64(v) - mean) * (float64(v) - mean)
			}
			v2 /= float64(d)
			for i := range d {
				want := float64(g[i])*(float64(x[r*d+i])-mean)/math.Sqrt(v2+lnEps) + float64(b[i])
				if diff := math.Abs(float64(got[r*d+i]) - want); !(diff <= 1e-3) {
					t.Errorf("d %d, row %d: out[%d] = %g, want %g", d, r, i, got[r*d+i], want)
				}
			}
		}
	}
}
