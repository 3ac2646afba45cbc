package uselite

// matmul sets dst (n×out) to x (n×in) · w (in×out), four rows at a time so
// that each row of w is read once per four rows of x.
func matmul(dst, x, w []float32, n, in, out int) {
	clear(dst)
	r := 0
	for ; r+4 <= n; r += 4 {
		d0 := dst[r*out : (r+1)*out]
		d1 := dst[(r+1)*out : (r+2)*out]
		d2 := dst[(r+2)*out : (r+3)*out]
		d3 := dst[(r+3)*out : (r+4)*out]
		for k := range in {
			a0, a1, a2, a3 := x[r*in+k], x[(r+1)*in+k], x[(r+2)*in+k], x[(r+3)*in+k]
			row := w[k*out : (k+1)*out]
			row = row[:len(d0)]
			d1, d2, d3 := d1[:len(d0)], d2[:len(d0)], d3[:len(d0)]
			for j, v := range row {
				d0[j] += a0 * v
				d1[j] += a1 * v
				d2[j] += a2 * v
				d3[j] += a3 * v
			}
		}
	}
	for ; r < n; r++ {
		d := dst[r*out : (r+1)*out]
		for k := range in {
			a := x[r*in+k]
			row := w[k*out : (k+1)*out]
			row = row[:len(d)]
			for j, v := range row {
				d[j] += a * v
			}
		}
	}
}
