package uselite

// strip is the width of the column strips a matrix is packed in: W's
// columns s·strip ... (s+1)·strip are stored contiguously, row after row,
// so that the kernel reads them in order (every matrix of the model has a
// multiple of 16 columns).
const strip = 16

// pack lays w (in×out, row-major) out in strips of width columns.
func pack(w []float32, in, out, width int) []float32 {
	p := make([]float32, len(w))
	for s := 0; s < out/width; s++ {
		base := s * in * width
		for k := range in {
			copy(p[base+k*width:base+(k+1)*width], w[k*out+s*width:k*out+(s+1)*width])
		}
	}
	return p
}

// zeros is the bias of a matrix without one (the widest is ffnDim).
var zeros [ffnDim]float32

// matmulGo sets dst (n×out) to x (n×in) · w + b (b nil: 0), w packed in
// strips: the portable version of the kernel, four rows of x per pass over
// a strip.
func matmulGo(dst, x, p, b []float32, n, in, out int) {
	if b == nil {
		b = zeros[:out]
	}
	for s := 0; s < out/strip; s++ {
		ws := p[s*in*strip : (s+1)*in*strip]
		for r := 0; r < n; r += 4 {
			rows := min(4, n-r)
			var acc [4][strip]float32
			for i := range rows {
				copy(acc[i][:], b[s*strip:(s+1)*strip])
			}
			for k := range in {
				w := (*[strip]float32)(ws[k*strip : (k+1)*strip])
				for i := range rows {
					a := x[(r+i)*in+k]
					for c := range strip {
						acc[i][c] += a * w[c]
					}
				}
			}
			for i := range rows {
				copy(dst[(r+i)*out+s*strip:(r+i)*out+(s+1)*strip], acc[i][:])
			}
		}
	}
}

// dotsGo sets dst[u] to q · k[u·ldk:], for u < len(dst): the scores of
// one query row against the key rows.
func dotsGo(dst, q, k []float32, ldk int) {
	for u := range dst {
		dst[u] = dot4(q, k[u*ldk:u*ldk+len(q)])
	}
}

// mixGo sets o to Σ_u p[u]·v[u·ldv:], for u < len(p): the attention
// output of one row from the value rows.
func mixGo(o, p, v []float32, ldv int) {
	clear(o)
	for u, pu := range p {
		vu := v[u*ldv : u*ldv+len(o)]
		for i := range o {
			o[i] += pu * vu[i]
		}
	}
}

// dot4 is the dot product of a and b (len(a) a multiple of 4), with four
// running sums.
func dot4(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	for i := 0; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	return (s0 + s1) + (s2 + s3)
}
