// The contrastive fit (-fit-mode contrastive): the distilled rows trained
// for retrieval on (one-line summary, long description) pairs of Debian
// packages (see the command's doc).

package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/eval"
	"github.com/tooldex/tooldex/internal/semantic"
	"github.com/tooldex/tooldex/internal/semantic/static"
)

// pair is one package of a Translation-en file: its name, its one-line
// summary (the Description-en line) and its long description (the
// continuation lines, joined by spaces, " ." lines left out); or one
// (query, relevant tool) pair of a tool-retrieval dataset, whose summary
// is the query and doc the tool's text as the run time embeds it, with
// keys naming the query and the tool (pairs sharing either are not each
// other's negatives).
type pair struct {
	name, summary, long string
	doc                 string    // a dataset pair's document, as it is embedded
	qKey, dKey          string    // a dataset pair's query and tool
	hard                []hardDoc // a dataset pair's query's best lexical candidates that are not relevant
}

// hardDoc is a hard negative: a tool's key and its text.
type hardDoc struct{ key, doc string }

// pairs reads the packages of a Translation-en file that have a long
// description, in the order of their names' FNV-1a hashes (ties by name),
// keeping the first of those that share a summary or a long description
// (each batch's other pairs are its negatives: a copy would be a false
// one).
func pairs(path string) ([]pair, error) {
	var all []pair
	var cur pair
	var long []string
	in := false
	flush := func() {
		if in && len(long) > 0 && cur.summary != "" {
			cur.long = strings.Join(long, " ")
			all = append(all, cur)
		}
		long, in = long[:0], false
	}
	err := eachLine(path, func(line string) {
		if in && strings.HasPrefix(line, " ") {
			if t := strings.TrimSpace(line); t != "." && t != "" {
				long = append(long, t)
			}
			return
		}
		flush()
		if name, ok := strings.CutPrefix(line, "Package:"); ok {
			cur = pair{name: strings.TrimSpace(name)}
		} else if d, ok := strings.CutPrefix(line, "Description-en:"); ok {
			cur.summary, in = strings.TrimSpace(d), true
		}
	})
	flush()
	if err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool {
		hi, hj := fnvHash(all[i].name), fnvHash(all[j].name)
		if hi != hj {
			return hi < hj
		}
		return all[i].name < all[j].name
	})
	seen := map[string]bool{}
	out := all[:0]
	for _, p := range all {
		if seen["s\x00"+p.summary] || seen["l\x00"+p.long] {
			continue
		}
		seen["s\x00"+p.summary], seen["l\x00"+p.long] = true, true
		out = append(out, p)
	}
	return out, nil
}

// datasetPairs reads the (query, relevant tool) pairs of the datasets in
// dirs (each a folder with tools.jsonl and queries.jsonl, as eval reads
// them), a tool's text being what the run time embeds for it, in the
// order of the queries' FNV-1a hashes (so that -ct-held holds out whole
// queries), ties kept in file order.
//
// With hard > 0 each pair carries the tools among its query's hard best
// by the lexical ranking (index.ModeHybrid, the default configuration)
// that are not relevant to it: the candidates dense scores reorder.
func datasetPairs(dirs []string, hard int) ([]pair, error) {
	var all []pair
	for _, dir := range dirs {
		ds, err := eval.Load(filepath.Join(dir, "tools.jsonl"), filepath.Join(dir, "queries.jsonl"))
		if err != nil {
			return nil, err
		}
		set := filepath.Base(filepath.Clean(dir))
		text := make(map[string]string, len(ds.Tools))
		for _, t := range ds.Tools {
			text[t.Name] = semantic.ToolText(t.Name, "", t.Description, index.ParamText(t.InputSchema))
		}
		var ix *index.Index
		if hard > 0 {
			ix = index.New(index.DefaultConfig())
			for _, t := range ds.Tools {
				ix.Upsert(index.Doc{Name: t.Name, Description: t.Description, Params: index.ParamText(t.InputSchema)})
			}
		}
		for _, q := range ds.Queries {
			var negs []hardDoc
			if ix != nil {
				qt := q.Text
				if len(qt) > index.MaxQueryBytes {
					qt = qt[:index.MaxQueryBytes]
				}
				res := ix.Run(index.Query{Kind: index.KindKeyword, Text: qt}, index.Options{Max: hard + len(q.Relevant), Mode: index.ModeHybrid})
				for _, h := range res.Hits {
					if len(negs) < hard && !slices.Contains(q.Relevant, h.Name) {
						negs = append(negs, hardDoc{set + "\x00" + h.Name, text[h.Name]})
					}
				}
			}
			for _, r := range q.Relevant {
				if d, ok := text[r]; ok && q.Text != "" {
					all = append(all, pair{name: r, summary: q.Text, doc: d, qKey: set + "\x00" + q.ID, dKey: set + "\x00" + r, hard: negs})
				}
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return fnvHash(all[i].qKey) < fnvHash(all[j].qKey) })
	return all, nil
}

// fnvHash is s's FNV-1a hash.
func fnvHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// texts returns a pair's query and document as the run time sees them:
// the document is semantic.ToolText of the long description (cut at
// MaxToolText bytes), with the package name in front when names is
// "doc"; the query is the summary, after the name's words when names is
// "query".
func (p pair) texts(names string) (query, doc string) {
	if p.doc != "" {
		return p.summary, p.doc
	}
	query, doc = p.summary, semantic.ToolText("", "", p.long, "")
	switch names {
	case "query":
		query = p.name + " " + p.summary
	case "doc":
		doc = semantic.ToolText(p.name, "", p.long, "")
	}
	return query, doc
}

// bag is a text's units and how often each occurs (the model sums its
// rows, once per occurrence, and normalises).
type bag []entry

// bagOf returns text's units as m embeds it at run time (Model.Rows).
func bagOf(m *static.Model, ids []int32, text string) (bag, []int32) {
	ids = m.Rows(ids[:0], text)
	cnt := map[int32]float64{}
	for _, id := range ids {
		if id >= reserved {
			cnt[id]++
		}
	}
	return bag(sortedRows(cnt, 1)), ids
}

// without returns the entries of q whose row d lacks (both sorted by row).
func without(q, d bag) bag {
	var out bag
	j := 0
	for _, e := range q {
		for j < len(d) && d[j].row < e.row {
			j++
		}
		if j == len(d) || d[j].row != e.row {
			out = append(out, e)
		}
	}
	return out
}

// ctConfig is the contrastive fit's settings.
type ctConfig struct {
	temp, lr, lambda float64
	batch, epochs    int
	held             float64
	names            string
	oneWay, disjoint bool
	weights          bool // one weight per row, the distilled directions kept
	seed             uint64
	datasets         []string // tool-retrieval datasets whose pairs are trained on, instead of -fit-corpus
	hard             int      // with datasets, hard negatives per pair from the lexical ranking
}

// trainer holds the rows being trained and Adam's state.
type trainer struct {
	ctConfig
	dim      int
	v, v0    [][]float64 // the rows; the distilled ones
	m1, m2   [][]float64 // Adam's moments
	grad     [][]float64 // this batch's gradient, on the touched rows
	touched  []int32
	mark     []bool
	step     int
	pull, lr float64   // λ/r̄², the step in the rows' units
	w        []float64 // with weights, each row's weight
	workers  int
}

func newTrainer(c ctConfig, v0 [][]float64, workers int) *trainer {
	U, D := len(v0), len(v0[0])
	t := &trainer{ctConfig: c, dim: D, v0: v0, v: newMat(U, D), m1: newMat(U, D), m2: newMat(U, D), grad: newMat(U, D), mark: make([]bool, U), workers: workers}
	var sq float64
	var used int
	for u, r := range v0 {
		copy(t.v[u], r)
		if n := norm(r); n > 0 {
			sq += n * n
			used++
		}
	}
	if c.weights {
		t.w = make([]float64, U)
		for u := range t.w {
			t.w[u] = 1
		}
	}
	r2 := sq / float64(max(used, 1))
	t.pull = c.lambda / r2
	t.lr = c.lr * math.Sqrt(r2/float64(D))
	return t
}

// embed writes into out the unit vector of each bag under the current rows
// and returns the norms before normalising (0: no known unit).
func (t *trainer) embed(out [][]float64, bags []bag) []float64 {
	norms := make([]float64, len(bags))
	parallel(t.workers, len(bags), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := out[i]
			clear(o)
			for _, e := range bags[i] {
				for k, x := range t.v[e.row] {
					o[k] += e.a * x
				}
			}
			if n := norm(o); n > 0 {
				norms[i] = n
				for k := range o {
					o[k] /= n
				}
			}
		}
	})
	return norms
}

// lossGrad returns the in-batch InfoNCE loss of the pairs (qs[i], ds[i])
// (each query's softmax over the cosines × temperature to every document
// of the batch, and each document's over the queries unless oneWay) and
// adds its gradient with respect to the rows into t.grad, recording the
// rows it touches. keys, when not nil, names each pair's query and
// document: a pair sharing either with the target is left out of its
// softmax (it is no negative).
func (t *trainer) lossGrad(qs, ds []bag, keys [][2]string) float64 {
	B, D := len(qs), t.dim
	q, d := newMat(B, D), newMat(B, D)
	nq, nd := t.embed(q, qs), t.embed(d, ds)
	// G = dLoss/dLogits.
	G := newMat(B, B)
	parallel(t.workers, B, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := range B {
				var s float64
				for k, x := range q[i] {
					s += x * d[j][k]
				}
				G[i][j] = t.temp * s
				if keys != nil && j != i && (keys[i][0] == keys[j][0] || keys[i][1] == keys[j][1]) {
					G[i][j] = math.Inf(-1)
				}
			}
		}
	})
	rowW, colW := 1/float64(B), 0.0
	if !t.oneWay {
		rowW, colW = 0.5/float64(B), 0.5/float64(B)
	}
	var loss float64
	P := newMat(B, B)
	for i := range B {
		loss += rowW * softmax(P[i], G[i], i)
	}
	if colW > 0 {
		col, pc := make([]float64, B), make([]float64, B)
		for j := range B {
			for i := range B {
				col[i] = G[i][j]
			}
			loss += colW * softmax(pc, col, j)
			for i := range B {
				P[i][j] = rowW*P[i][j] + colW*pc[i]
			}
		}
	} else {
		for i := range B {
			for j := range B {
				P[i][j] *= rowW
			}
		}
	}
	for i := range B {
		P[i][i] -= rowW + colW
	}
	// dLoss/dq_i = τ Σ_j G_ij d_j, dLoss/dd_j = τ Σ_i G_ij q_i; then
	// through the normalisation: (g − q(q·g)) / ‖s‖.
	gq, gd := newMat(B, D), newMat(B, D)
	parallel(t.workers, B, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := range B {
				a, b := t.temp*P[i][j], t.temp*P[j][i]
				for k := range D {
					gq[i][k] += a * d[j][k]
					gd[i][k] += b * q[j][k]
				}
			}
			tangent(gq[i], q[i], nq[i])
			tangent(gd[i], d[i], nd[i])
		}
	})
	t.scatter(qs, gq)
	t.scatter(ds, gd)
	return loss
}

// lossGradPool returns the InfoNCE loss of queries qs against a pool of
// documents, query i's positive being pool[target[i]] and the pool's
// others its negatives except where skip(i, j) (another of its relevant
// tools), and adds its gradient into t.grad as lossGrad does (the
// queries' softmax only).
func (t *trainer) lossGradPool(qs, pool []bag, target []int, skip func(i, j int) bool) float64 {
	B, P, D := len(qs), len(pool), t.dim
	q, d := newMat(B, D), newMat(P, D)
	nq, nd := t.embed(q, qs), t.embed(d, pool)
	G := newMat(B, P)
	parallel(t.workers, B, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := range P {
				if j != target[i] && skip(i, j) {
					G[i][j] = math.Inf(-1)
					continue
				}
				var s float64
				for k, x := range q[i] {
					s += x * d[j][k]
				}
				G[i][j] = t.temp * s
			}
		}
	})
	var loss float64
	W := newMat(B, P) // dLoss/dLogits
	for i := range B {
		loss += softmax(W[i], G[i], target[i]) / float64(B)
		for j := range W[i] {
			W[i][j] /= float64(B)
		}
		W[i][target[i]] -= 1 / float64(B)
	}
	gq, gd := newMat(B, D), newMat(P, D)
	parallel(t.workers, B, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := range P {
				if a := t.temp * W[i][j]; a != 0 {
					for k := range D {
						gq[i][k] += a * d[j][k]
					}
				}
			}
			tangent(gq[i], q[i], nq[i])
		}
	})
	parallel(t.workers, P, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			for i := range B {
				if a := t.temp * W[i][j]; a != 0 {
					for k := range D {
						gd[j][k] += a * q[i][k]
					}
				}
			}
			tangent(gd[j], d[j], nd[j])
		}
	})
	t.scatter(qs, gq)
	t.scatter(pool, gd)
	return loss
}

// softmax writes softmax(x) into p and returns −log p[target].
func softmax(p, x []float64, target int) float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	var z float64
	for i, v := range x {
		p[i] = math.Exp(v - mx)
		z += p[i]
	}
	for i := range p {
		p[i] /= z
	}
	return -(x[target] - mx - math.Log(z))
}

// tangent turns g, the gradient with respect to the unit vector u = s/n,
// into the gradient with respect to s (zero when n is 0).
func tangent(g, u []float64, n float64) {
	if n == 0 {
		clear(g)
		return
	}
	var dot float64
	for k, x := range g {
		dot += x * u[k]
	}
	for k := range g {
		g[k] = (g[k] - dot*u[k]) / n
	}
}

// scatter adds each bag's gradient to its rows (a row once per occurrence).
func (t *trainer) scatter(bags []bag, g [][]float64) {
	for i, b := range bags {
		for _, e := range b {
			if !t.mark[e.row] {
				t.mark[e.row] = true
				t.touched = append(t.touched, e.row)
			}
			r := t.grad[e.row]
			for k, x := range g[i] {
				r[k] += e.a * x
			}
		}
	}
}

// update adds the pull toward the distilled rows, λ/r̄²·‖V − V0‖² over the
// touched rows, and takes one Adam step on them (with weights, on their
// weights w, the pull λ(w − 1)²); it returns the pull's part of the loss.
func (t *trainer) update() float64 {
	const b1, b2, eps = 0.9, 0.999, 1e-12
	t.step++
	c1, c2 := 1-math.Pow(b1, float64(t.step)), 1-math.Pow(b2, float64(t.step))
	var pull float64
	sort.Slice(t.touched, func(i, j int) bool { return t.touched[i] < t.touched[j] })
	for _, u := range t.touched {
		g, v, v0, m1, m2 := t.grad[u], t.v[u], t.v0[u], t.m1[u], t.m2[u]
		if t.weights {
			// The row is w·V0: dLoss/dw = g·V0, and the pull is λ(w − 1)².
			w := &t.w[u]
			var gw float64
			for k, x := range g {
				gw += x * v0[k]
			}
			diff := *w - 1
			pull += t.lambda * diff * diff
			gw += 2 * t.lambda * diff
			m1[0] = b1*m1[0] + (1-b1)*gw
			m2[0] = b2*m2[0] + (1-b2)*gw*gw
			*w -= t.ctConfig.lr * (m1[0] / c1) / (math.Sqrt(m2[0]/c2) + eps)
			for k, x := range v0 {
				v[k] = *w * x
			}
			clear(g)
			t.mark[u] = false
			continue
		}
		for k := range g {
			diff := v[k] - v0[k]
			pull += t.pull * diff * diff
			gk := g[k] + 2*t.pull*diff
			m1[k] = b1*m1[k] + (1-b1)*gk
			m2[k] = b2*m2[k] + (1-b2)*gk*gk
			v[k] -= t.lr * (m1[k] / c1) / (math.Sqrt(m2[k]/c2) + eps)
		}
		clear(g)
		t.mark[u] = false
	}
	t.touched = t.touched[:0]
	return pull
}

// recallAt1 is the share of queries whose own document is the nearest of
// all documents (q[i] with d[i]; ties count as misses).
func recallAt1(q, d [][]float64) float64 {
	hit := 0
	for i, qi := range q {
		best, arg := math.Inf(-1), -1
		for j, dj := range d {
			var s float64
			for k, x := range qi {
				s += x * dj[k]
			}
			if s > best {
				best, arg = s, j
			} else if s == best {
				arg = -1
			}
		}
		if arg == i {
			hit++
		}
	}
	return float64(hit) / float64(max(len(q), 1))
}

// modelVectors returns m's run-time vectors of texts.
func modelVectors(m *static.Model, texts []string) [][]float64 {
	out := make([][]float64, len(texts))
	v := make([]float32, m.Dim())
	for i, s := range texts {
		m.VectorTo(v, s)
		out[i] = make([]float64, len(v))
		for k, x := range v {
			out[i][k] = float64(x)
		}
	}
	return out
}

// decodeRows returns the model that rows make at run time (quantised).
func decodeRows(dim, pieces int, words []string, rows [][]float64) (*static.Model, error) {
	f32 := make([][]float32, len(rows))
	for i, r := range rows {
		f32[i] = make([]float32, dim)
		for k, x := range r {
			f32[i][k] = float32(x)
		}
	}
	b, err := static.Encode(dim, pieces, words, f32)
	if err != nil {
		return nil, err
	}
	return static.Decode(b)
}

// fitContrastive trains the rows on the pairs of c.fitCorpus (see the
// command's doc) and returns them.
func fitContrastive(c config, pieces int, words []string, rows [][]float64) ([][]float64, error) {
	cc := c.ct
	if cc.names != "" && cc.names != "query" && cc.names != "doc" {
		return nil, errors.New("-ct-names: want query, doc or nothing")
	}
	if cc.batch < 2 || cc.temp <= 0 || cc.held <= 0 || cc.held >= 1 {
		return nil, errors.New("-ct-batch must be 2 or more, -ct-temp positive, -ct-held in (0, 1)")
	}
	if cc.hard < 0 || cc.hard > 0 && len(cc.datasets) == 0 {
		return nil, errors.New("-ct-hard: want 0, or a positive count with -ct-datasets")
	}
	var ps []pair
	var err error
	if len(cc.datasets) > 0 {
		ps, err = datasetPairs(cc.datasets, cc.hard)
	} else {
		ps, err = pairs(c.fitCorpus)
	}
	if err != nil {
		return nil, err
	}
	m, err := decodeRows(len(rows[0]), pieces, words, rows)
	if err != nil {
		return nil, err
	}
	var qs, ds []bag
	var qText, dText []string
	var keys [][2]string
	var hards [][]hardBag
	var ids []int32
	var relevant map[[2]string]bool // with hard negatives, the (query, tool) keys of every pair
	if cc.hard > 0 {
		relevant = make(map[[2]string]bool, len(ps))
		for _, p := range ps {
			relevant[[2]string{p.qKey, p.dKey}] = true
		}
	}
	hardBags := map[string]bag{}
	for _, p := range ps {
		qt, dt := p.texts(cc.names)
		var qb, db bag
		qb, ids = bagOf(m, ids, qt)
		db, ids = bagOf(m, ids, dt)
		if len(qb) == 0 || len(db) == 0 {
			continue
		}
		qs, ds = append(qs, qb), append(ds, db)
		qText, dText = append(qText, qt), append(dText, dt)
		if len(cc.datasets) > 0 { // a Debian pair's query and document are distinct
			keys = append(keys, [2]string{p.qKey, p.dKey})
		}
		var hb []hardBag
		for _, h := range p.hard {
			b, ok := hardBags[h.key]
			if !ok {
				b, ids = bagOf(m, ids, h.doc)
				hardBags[h.key] = b
			}
			if len(b) > 0 {
				hb = append(hb, hardBag{h.key, b})
			}
		}
		hards = append(hards, hb)
	}
	nHeld := int(math.Round(cc.held * float64(len(qs))))
	train := len(qs) - nHeld
	if c.fit > 0 {
		train = min(train, c.fit)
	}
	if train < cc.batch {
		return nil, fmt.Errorf("%d training pairs, fewer than a batch", train)
	}
	hq, hd := qs[:nHeld], ds[:nHeld]
	tq, td := qs[nHeld:nHeld+train], ds[nHeld:nHeld+train]
	var tk [][2]string
	if keys != nil {
		tk = keys[nHeld : nHeld+train]
	}
	th := hards[nHeld : nHeld+train]
	if cc.disjoint {
		// The queries keep only the units their document lacks: what the
		// lexical ranking cannot match. Pairs left with none are dropped.
		var kq, kd []bag
		var kk [][2]string
		var kh [][]hardBag
		for i, q := range tq {
			if q = without(q, td[i]); len(q) > 0 {
				kq, kd, kh = append(kq, q), append(kd, td[i]), append(kh, th[i])
				if tk != nil {
					kk = append(kk, tk[i])
				}
			}
		}
		tq, td, tk, th, train = kq, kd, kk, kh, len(kq)
		if train < cc.batch {
			return nil, fmt.Errorf("%d training pairs, fewer than a batch", train)
		}
	}
	log.Printf("contrastive: %d distinct (query, document) pairs, %d with known units; %d held out, %d trained on", len(ps), len(qs), nHeld, train)
	held := func(mm *static.Model) float64 {
		return recallAt1(modelVectors(mm, qText[:nHeld]), modelVectors(mm, dText[:nHeld]))
	}
	log.Printf("contrastive: held-out recall@1 before %.4f", held(m))
	t := newTrainer(cc, rows, c.workers)
	rng := rand.New(rand.NewPCG(cc.seed, 0x636f6e7472617374))
	order := make([]int, train)
	for i := range order {
		order[i] = i
	}
	start := time.Now()
	for ep := 1; ep <= cc.epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var loss, pull float64
		batches := 0
		for lo := 0; lo+cc.batch <= train; lo += cc.batch { // the last partial batch is left out
			batch := order[lo : lo+cc.batch]
			if cc.hard > 0 {
				loss += t.poolStep(batch, tq, td, tk, th, relevant)
			} else {
				bq, bd := make([]bag, len(batch)), make([]bag, len(batch))
				var bk [][2]string
				if tk != nil {
					bk = make([][2]string, len(batch))
				}
				for i, o := range batch {
					bq[i], bd[i] = tq[o], td[o]
					if tk != nil {
						bk[i] = tk[o]
					}
				}
				loss += t.lossGrad(bq, bd, bk)
			}
			pull += t.update()
			batches++
		}
		hv, dv := newMat(nHeld, t.dim), newMat(nHeld, t.dim)
		t.embed(hv, hq)
		t.embed(dv, hd)
		log.Printf("contrastive: epoch %d: loss %.4f, pull %.4f, held-out recall@1 %.4f (unquantised), drift %.3f (%v)",
			ep, loss/float64(batches), pull/float64(batches), recallAt1(hv, dv), drift(t.v, t.v0), time.Since(start).Round(time.Second))
	}
	after, err := decodeRows(t.dim, pieces, words, t.v)
	if err != nil {
		return nil, err
	}
	log.Printf("contrastive: held-out recall@1 after %.4f (%v)", held(after), time.Since(start).Round(time.Second))
	return t.v, nil
}

// hardBag is a hard negative's key and units.
type hardBag struct {
	key string
	b   bag
}

// poolStep adds the gradient of one batch of pairs (indices into tq, td,
// keys, hards) against the pool of their documents and their hard
// negatives, and returns its loss.
func (t *trainer) poolStep(batch []int, tq, td []bag, keys [][2]string, hards [][]hardBag, relevant map[[2]string]bool) float64 {
	qs := make([]bag, len(batch))
	var pool []bag
	var poolKeys []string
	target := make([]int, len(batch))
	for i, o := range batch {
		qs[i] = tq[o]
		target[i] = len(pool)
		pool, poolKeys = append(pool, td[o]), append(poolKeys, keys[o][1])
		for _, h := range hards[o] {
			pool, poolKeys = append(pool, h.b), append(poolKeys, h.key)
		}
	}
	skip := func(i, j int) bool { return relevant[[2]string{keys[batch[i]][0], poolKeys[j]}] }
	return t.lossGradPool(qs, pool, target, skip)
}

// drift is ‖V − V0‖ / ‖V0‖ over all rows.
func drift(v, v0 [][]float64) float64 {
	var num, den float64
	for u := range v {
		for k, x := range v[u] {
			num += (x - v0[u][k]) * (x - v0[u][k])
			den += v0[u][k] * v0[u][k]
		}
	}
	return math.Sqrt(num / math.Max(den, 1e-300))
}
