// The -fit option: fitting the distilled rows, Tokenlearn-style, to the
// teacher's vectors of package descriptions (see the command's doc).

package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"io"
	"log"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tooldex/tooldex/internal/semantic/uselite"
)

// descriptions returns the corpus's package descriptions: each
// "Description:" (or "Description-en:") line with its continuation lines (those that begin with a
// space; " ." separates paragraphs; none with summaries), joined by
// spaces, deduplicated, in
// the order of their FNV-1a hashes (ties by text), so that a prefix is a
// sample that does not depend on the corpus's order.
func descriptions(path string, summaries bool) ([]string, error) {
	seen := map[string]bool{}
	var cur []string
	in := false
	flush := func() {
		if len(cur) > 0 {
			seen[strings.Join(cur, " ")] = true
		}
		cur, in = cur[:0], false
	}
	err := eachLine(path, func(line string) {
		if in && strings.HasPrefix(line, " ") {
			if summaries {
				return
			}
			if t := strings.TrimSpace(line); t != "." && t != "" {
				cur = append(cur, t)
			}
			return
		}
		flush()
		d, ok := strings.CutPrefix(line, "Description:")
		if !ok {
			d, ok = strings.CutPrefix(line, "Description-en:")
		}
		if ok {
			if t := strings.TrimSpace(d); t != "" {
				cur, in = append(cur, t), true
			}
		}
	})
	flush()
	if err != nil {
		return nil, err
	}
	type hashed struct {
		h uint64
		s string
	}
	hs := make([]hashed, 0, len(seen))
	for s := range seen {
		h := fnv.New64a()
		h.Write([]byte(s))
		hs = append(hs, hashed{h.Sum64(), s})
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].h != hs[j].h {
			return hs[i].h < hs[j].h
		}
		return hs[i].s < hs[j].s
	})
	out := make([]string, len(hs))
	for i, x := range hs {
		out[i] = x.s
	}
	return out, nil
}

// capTokens returns the longest prefix of s, cut at a space, that the
// tokenizer makes at most uselite.MaxTokens ids of (s itself when it fits).
func capTokens(tok *uselite.Tokenizer, s string) string {
	if len(tok.Encode(nil, s)) <= uselite.MaxTokens {
		return s
	}
	var cuts []int
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' {
			cuts = append(cuts, i)
		}
	}
	// The largest cut whose prefix fits (a prefix's count grows with it).
	k := sort.Search(len(cuts), func(i int) bool {
		return len(tok.Encode(nil, s[:cuts[i]])) > uselite.MaxTokens
	})
	if k == 0 {
		return ""
	}
	return s[:cuts[k-1]]
}

// fitRows fits the rows to the teacher's vectors of -fit descriptions
// (see the command's doc) and returns them.
func fitRows(c config, tc *teacherCache, tok *uselite.Tokenizer, pieces int, words []string, rows [][]float64, project func([]float64) []float64) ([][]float64, error) {
	all, err := descriptions(c.fitCorpus, c.fitSummaries)
	if err != nil {
		return nil, err
	}
	if len(all) < c.fit+c.fitHeld {
		return nil, errors.New("the corpus has fewer descriptions than -fit + -fit-held")
	}
	texts := make([]item, c.fit+c.fitHeld)
	for i := range texts {
		texts[i] = item{text: capTokens(tok, all[i])}
	}
	log.Printf("fit: %d distinct descriptions; %d to fit, %d held out", len(all), c.fit, c.fitHeld)
	start := time.Now()
	T, err := tc.vectors(texts)
	if err != nil {
		return nil, err
	}
	log.Printf("teacher: %d descriptions in %v", len(texts), time.Since(start).Round(time.Second))
	// The distilled model's rows, as the run time finds them.
	dim := len(rows[0])
	m, err := decodeRows(dim, pieces, words, rows)
	if err != nil {
		return nil, err
	}
	sys := &normal{dim: dim, units: len(rows)}
	targets := make([][]float64, len(texts))
	for s := range texts {
		targets[s] = project(T[s])
	}
	if c.fitCentre {
		mean := make([]float64, dim)
		for _, y := range targets[:c.fit] {
			for k, x := range y {
				mean[k] += x / float64(c.fit)
			}
		}
		for _, y := range targets {
			for k := range y {
				y[k] -= mean[k]
			}
		}
	}
	var ids []int32
	for s := range texts {
		unit(targets[s])
		ids = m.Rows(ids[:0], texts[s].text)
		cnt := map[int32]float64{}
		for _, id := range ids {
			cnt[id]++
		}
		sum := make([]float64, dim)
		for id, n := range cnt {
			for k, x := range rows[id] {
				sum[k] += n * x
			}
		}
		n0 := norm(sum)
		if s >= c.fit {
			sys.held = append(sys.held, textRows{rows: sortedRows(cnt, 1), y: targets[s]})
			continue
		}
		if n0 == 0 {
			continue // no known unit: nothing to fit
		}
		sys.texts = append(sys.texts, textRows{rows: sortedRows(cnt, 1/n0), y: targets[s]})
	}
	log.Printf("fit: before, mean cosine %.4f on the fitted texts, %.4f held out", meanCos(sys.texts, rows), meanCos(sys.held, rows))
	var fitted [][]float64
	switch c.fitMode {
	case "rows":
		fitted = sys.solve(rows, c.fitLambda, c.fitIters, c.workers)
	case "weights":
		fitted = sys.solveWeights(rows, c.fitLambda, c.fitIters, c.workers)
	default:
		return nil, errors.New("-fit-mode: want rows or weights")
	}
	log.Printf("fit: after, mean cosine %.4f on the fitted texts, %.4f held out (%v)", meanCos(sys.texts, fitted), meanCos(sys.held, fitted), time.Since(start).Round(time.Second))
	return fitted, nil
}

// entry is one unit of a text and its coefficient.
type entry struct {
	row int32
	a   float64
}

// textRows is one text of the fit: its units and its target.
type textRows struct {
	rows []entry
	y    []float64
}

// sortedRows returns the units of cnt in row order, each count times k.
func sortedRows(cnt map[int32]float64, k float64) []entry {
	out := make([]entry, 0, len(cnt))
	for id, n := range cnt {
		out = append(out, entry{id, n * k})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].row < out[j].row })
	return out
}

func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

func unit(x []float64) []float64 {
	if n := norm(x); n > 0 {
		for i := range x {
			x[i] /= n
		}
	}
	return x
}

// meanCos is the mean cosine between the texts' model vectors (the sum of
// their rows) and their targets.
func meanCos(texts []textRows, rows [][]float64) float64 {
	if len(texts) == 0 {
		return 0
	}
	var total float64
	sum := make([]float64, len(rows[0]))
	for _, t := range texts {
		clear(sum)
		for _, e := range t.rows {
			for k, x := range rows[e.row] {
				sum[k] += e.a * x
			}
		}
		var dot float64
		for k, x := range sum {
			dot += x * t.y[k]
		}
		if n := norm(sum); n > 0 {
			total += dot / n
		}
	}
	return total / float64(len(texts))
}

// normal is the fit's least-squares problem: A (texts × units, the
// coefficients of texts) and the targets Y.
type normal struct {
	dim, units int
	texts      []textRows
	held       []textRows
}

// use is one text of a unit and the unit's coefficient in it.
type use struct {
	text int32
	a    float64
}

// transpose returns, for each unit, its texts.
func (p *normal) transpose() [][]use {
	byUnit := make([][]use, p.units)
	for s, t := range p.texts {
		for _, e := range t.rows {
			byUnit[e.row] = append(byUnit[e.row], use{int32(s), e.a})
		}
	}
	return byUnit
}

// ridgeOf returns λ times the mean of diag's non-zero values.
func ridgeOf(lambda float64, diag []float64) float64 {
	var sum float64
	var used int
	for _, x := range diag {
		if x > 0 {
			sum += x
			used++
		}
	}
	mean := sum / float64(max(used, 1))
	log.Printf("fit: %d of %d units used; ridge %.4g (λ %g × mean diagonal %.4g)", used, len(diag), lambda*mean, lambda, mean)
	return lambda * mean
}

// parallel runs f over [0, n) in workers contiguous chunks.
func parallel(workers, n int, f func(lo, hi int)) {
	var wg sync.WaitGroup
	w := max(workers, 1)
	for i := range w {
		lo, hi := n*i/w, n*(i+1)/w
		wg.Add(1)
		go func() { defer wg.Done(); f(lo, hi) }()
	}
	wg.Wait()
}

func newMat(rows, cols int) [][]float64 {
	m := make([][]float64, rows)
	for i := range m {
		m[i] = make([]float64, cols)
	}
	return m
}

// solve returns the V minimising ‖AV − Y‖² + λd̄‖V − V0‖², by
// preconditioned conjugate gradients on (AᵀA + λd̄I)V = AᵀY + λd̄V0, each
// of the dim columns its own system (same matrix), all stepped together.
func (p *normal) solve(v0 [][]float64, lambda float64, iters, workers int) [][]float64 {
	U, D, S := p.units, p.dim, len(p.texts)
	byUnit := p.transpose()
	diag := make([]float64, U)
	for u, us := range byUnit {
		for _, x := range us {
			diag[u] += x.a * x.a
		}
	}
	ridge := ridgeOf(lambda, diag)
	ax := newMat(S, D)
	// apply sets out = (AᵀA + ridge·I) x.
	apply := func(out, x [][]float64) {
		parallel(workers, S, func(lo, hi int) {
			for s := lo; s < hi; s++ {
				r := ax[s]
				clear(r)
				for _, e := range p.texts[s].rows {
					for k, v := range x[e.row] {
						r[k] += e.a * v
					}
				}
			}
		})
		parallel(workers, U, func(lo, hi int) {
			for u := lo; u < hi; u++ {
				o := out[u]
				for k, v := range x[u] {
					o[k] = ridge * v
				}
				for _, us := range byUnit[u] {
					for k, v := range ax[us.text] {
						o[k] += us.a * v
					}
				}
			}
		})
	}
	b := newMat(U, D)
	parallel(workers, U, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			for k, v := range v0[u] {
				b[u][k] = ridge * v
			}
			for _, us := range byUnit[u] {
				for k, y := range p.texts[us.text].y {
					b[u][k] += us.a * y
				}
			}
		}
	})
	x := newMat(U, D)
	for u := range x {
		copy(x[u], v0[u])
	}
	pre := make([]float64, U)
	for u := range pre {
		pre[u] = 1 / (diag[u] + ridge)
	}
	pcg(apply, b, x, pre, iters)
	return x
}

// solveWeights keeps the directions of the rows V0 and fits one weight
// per unit, w minimising Σ_s ‖Σ_u a_su w_u V0_u − y_s‖² + λd̄‖w − 1‖²
// (a re-derived SIF weighting), and returns the reweighted rows.
func (p *normal) solveWeights(v0 [][]float64, lambda float64, iters, workers int) [][]float64 {
	U, D, S := p.units, p.dim, len(p.texts)
	byUnit := p.transpose()
	sq := make([]float64, U)
	for u, v := range v0 {
		for _, x := range v {
			sq[u] += x * x
		}
	}
	diag := make([]float64, U)
	for u, us := range byUnit {
		for _, x := range us {
			diag[u] += x.a * x.a * sq[u]
		}
	}
	ridge := ridgeOf(lambda, diag)
	dot := func(a, b []float64) float64 {
		var s float64
		for k, x := range a {
			s += x * b[k]
		}
		return s
	}
	ax := newMat(S, D)
	apply := func(out, w [][]float64) {
		parallel(workers, S, func(lo, hi int) {
			for s := lo; s < hi; s++ {
				r := ax[s]
				clear(r)
				for _, e := range p.texts[s].rows {
					c := e.a * w[e.row][0]
					for k, v := range v0[e.row] {
						r[k] += c * v
					}
				}
			}
		})
		parallel(workers, U, func(lo, hi int) {
			for u := lo; u < hi; u++ {
				o := ridge * w[u][0]
				for _, us := range byUnit[u] {
					o += us.a * dot(v0[u], ax[us.text])
				}
				out[u][0] = o
			}
		})
	}
	b := newMat(U, 1)
	parallel(workers, U, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			o := ridge
			for _, us := range byUnit[u] {
				o += us.a * dot(v0[u], p.texts[us.text].y)
			}
			b[u][0] = o
		}
	})
	w := newMat(U, 1)
	pre := make([]float64, U)
	for u := range w {
		w[u][0] = 1
		pre[u] = 1 / (diag[u] + ridge)
	}
	pcg(apply, b, w, pre, iters)
	out := newMat(U, D)
	for u := range out {
		for k, x := range v0[u] {
			out[u][k] = w[u][0] * x
		}
	}
	return out
}

// pcg solves apply(x) = b for each column of x (its start on entry), by
// conjugate gradients with the diagonal preconditioner pre, at most iters
// steps or until every column's residual is 1e-6 of its b.
func pcg(apply func(out, x [][]float64), b, x [][]float64, pre []float64, iters int) {
	U, D := len(b), len(b[0])
	r, z, pp, q := newMat(U, D), newMat(U, D), newMat(U, D), newMat(U, D)
	apply(q, x)
	for u := range r {
		for k := range r[u] {
			r[u][k] = b[u][k] - q[u][k]
			z[u][k] = pre[u] * r[u][k]
			pp[u][k] = z[u][k]
		}
	}
	colDot := func(a, b [][]float64) []float64 {
		out := make([]float64, D)
		for u := range a {
			for k, v := range a[u] {
				out[k] += v * b[u][k]
			}
		}
		return out
	}
	rz := colDot(r, z)
	bb := colDot(b, b)
	for it := 1; it <= iters; it++ {
		apply(q, pp)
		pq := colDot(pp, q)
		alpha := make([]float64, D)
		for k := range alpha {
			if pq[k] > 0 {
				alpha[k] = rz[k] / pq[k]
			}
		}
		for u := range x {
			for k := range x[u] {
				x[u][k] += alpha[k] * pp[u][k]
				r[u][k] -= alpha[k] * q[u][k]
				z[u][k] = pre[u] * r[u][k]
			}
		}
		rz2 := colDot(r, z)
		rr := colDot(r, r)
		var worst float64
		for k := range rr {
			worst = math.Max(worst, math.Sqrt(rr[k]/math.Max(bb[k], 1e-300)))
		}
		if it%10 == 0 || worst < 1e-6 {
			log.Printf("fit: iteration %d, worst relative residual %.2e", it, worst)
		}
		if worst < 1e-6 {
			return
		}
		for u := range pp {
			for k := range pp[u] {
				beta := 0.0
				if rz[k] > 0 {
					beta = rz2[k] / rz[k]
				}
				pp[u][k] = z[u][k] + beta*pp[u][k]
			}
		}
		rz = rz2
	}
}

// item is one input of the teacher: token ids or a text.
type item struct {
	ids  []int32
	text string
}

func (it item) key() [16]byte {
	h := sha256.New()
	if it.ids != nil {
		h.Write([]byte("ids\x00"))
		for _, id := range it.ids {
			h.Write(binary.LittleEndian.AppendUint32(nil, uint32(id)))
		}
	} else {
		h.Write([]byte("text\x00"))
		h.Write([]byte(it.text))
	}
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}

// teacherCache runs the teacher, reading and writing its vectors in a
// file of records (a 16-byte key, then uselite.Dim float32s).
type teacherCache struct {
	m       *uselite.Model
	path    string
	known   map[[16]byte][]float32
	workers int
}

func openCache(path string, m *uselite.Model, workers int) (*teacherCache, error) {
	tc := &teacherCache{m: m, path: path, known: map[[16]byte][]float32{}, workers: max(workers, 1)}
	if path == "" {
		return tc, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return tc, nil
	}
	if err != nil {
		return nil, err
	}
	const rec = 16 + 4*uselite.Dim
	for ; len(b) >= rec; b = b[rec:] {
		var k [16]byte
		copy(k[:], b)
		v := make([]float32, uselite.Dim)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[16+4*j:]))
		}
		tc.known[k] = v
	}
	log.Printf("cache %s: %d vectors", path, len(tc.known))
	return tc, nil
}

// vectors returns the teacher's vectors of items, computing those the
// cache lacks (and appending them to its file).
func (tc *teacherCache) vectors(items []item) ([][]float64, error) {
	out := make([][]float64, len(items))
	var todo []int
	for i, it := range items {
		if v, ok := tc.known[it.key()]; ok {
			out[i] = widen(v)
		} else {
			todo = append(todo, i)
		}
	}
	if len(todo) > 0 {
		log.Printf("teacher: %d of %d not cached", len(todo), len(items))
	}
	start := time.Now()
	computed := make([][]float32, len(todo))
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range tc.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				j := next
				next++
				if j < len(todo) && j%2000 == 0 {
					log.Printf("teacher: %d/%d (%v)", j, len(todo), time.Since(start).Round(time.Second))
				}
				mu.Unlock()
				if j >= len(todo) {
					return
				}
				v := make([]float32, uselite.Dim)
				if it := items[todo[j]]; it.ids != nil {
					tc.m.VectorIDs(v, it.ids)
				} else {
					tc.m.VectorTo(v, it.text)
				}
				computed[j] = v
			}
		}()
	}
	wg.Wait()
	var w io.Writer
	var f *os.File
	if tc.path != "" && len(todo) > 0 {
		var err error
		if f, err = os.OpenFile(tc.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			return nil, err
		}
		w = bufio.NewWriter(f)
	}
	for j, i := range todo {
		tc.known[items[i].key()] = computed[j]
		out[i] = widen(computed[j])
		if w != nil {
			k := items[i].key()
			rec := append([]byte(nil), k[:]...)
			for _, x := range computed[j] {
				rec = binary.LittleEndian.AppendUint32(rec, math.Float32bits(x))
			}
			w.Write(rec) //nolint:errcheck // the Flush below reports it
		}
	}
	if w != nil {
		if err := w.(*bufio.Writer).Flush(); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// jacobi returns the eigenvalues and eigenvectors (columns of vecs) of the
// symmetric matrix a (overwritten), by cyclic Jacobi rotations.
func jacobi(a [][]float64) (vals []float64, vecs [][]float64) {
	n := len(a)
	vecs = make([][]float64, n)
	for i := range vecs {
		vecs[i] = make([]float64, n)
		vecs[i][i] = 1
	}
	for sweep := 0; sweep < 50; sweep++ {
		var off float64
		for p := range n {
			for q := p + 1; q < n; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off < 1e-22 {
			break
		}
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				if math.Abs(a[p][q]) < 1e-300 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				cs := 1 / math.Sqrt(t*t+1)
				sn := t * cs
				for k := range n {
					akp, akq := a[k][p], a[k][q]
					a[k][p] = cs*akp - sn*akq
					a[k][q] = sn*akp + cs*akq
				}
				for k := range n {
					apk, aqk := a[p][k], a[q][k]
					a[p][k] = cs*apk - sn*aqk
					a[q][k] = sn*apk + cs*aqk
				}
				for k := range n {
					vkp, vkq := vecs[k][p], vecs[k][q]
					vecs[k][p] = cs*vkp - sn*vkq
					vecs[k][q] = sn*vkp + cs*vkq
				}
			}
		}
	}
	vals = make([]float64, n)
	for i := range n {
		vals[i] = a[i][i]
	}
	return vals, vecs
}
