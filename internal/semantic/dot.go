package semantic

// dotsGo is dots in plain Go.
func dotsGo(q []int16, vecs []int8, dim int, out []int32) {
	q = q[:dim]
	for i := range out {
		v := vecs[i*dim : (i+1)*dim]
		var sum int32
		for j, x := range q {
			sum += int32(x) * int32(v[j])
		}
		out[i] = sum
	}
}
