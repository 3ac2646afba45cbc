// Package static is a static embedding model distilled from Universal
// Sentence Encoder lite (package uselite) by the Model2Vec method: every
// SentencePiece piece and every word of a word list went through the
// teacher alone; the vectors were centred, reduced by PCA and weighted by
// SIF (a/(a+p), p the piece's or word's frequency), and a text's vector is
// the normalised sum of its words' vectors. No network runs: a text takes
// microseconds, so a catalog of 100k tools embeds in seconds.
//
// A text is split into lower-cased words (letters and digits; camelCase
// and snake_case split); a word of the list takes its own vector, any
// other is cut into the teacher's pieces. ./gen makes model.bin.
package static

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tooldex/tooldex/internal/semantic/uselite"
)

//go:embed model.bin
var modelBin []byte

// Model is the distilled model. It is safe for concurrent use.
type Model struct {
	dim    int
	tok    *uselite.Tokenizer
	words  map[string]int32 // word → row
	rows   []int8           // row*dim ... (row+1)*dim
	scales []float32        // row → the int8 scale
	// Rows 0 ... pieces-1 are the tokenizer's ids.
	pieces int
	pool   sync.Pool // *scratch
}

// scratch is one VectorTo's buffers.
type scratch struct {
	enc  *uselite.Encoder
	ids  []int32
	word []byte
}

var (
	once    sync.Once
	loaded  *Model
	loadErr error
)

// Load returns the embedded model, decoded once per process.
func Load() (*Model, error) {
	once.Do(func() { loaded, loadErr = Decode(modelBin) })
	return loaded, loadErr
}

// Dim is the vectors' length.
func (m *Model) Dim() int { return m.dim }

// Decode reads a model file written by Encode.
func Decode(b []byte) (*Model, error) {
	bad := errors.New("static: model file is truncated or corrupt")
	if len(b) < 20 || string(b[:8]) != "USESTAT1" {
		return nil, bad
	}
	dim := int(binary.LittleEndian.Uint32(b[8:]))
	pieces := int(binary.LittleEndian.Uint32(b[12:]))
	nwords := int(binary.LittleEndian.Uint32(b[16:]))
	b = b[20:]
	tok, err := uselite.LoadTokenizer()
	if err != nil {
		return nil, err
	}
	if pieces != tok.Size() || dim <= 0 || dim > 4096 {
		return nil, fmt.Errorf("static: model has %d pieces of %d dimensions; the tokenizer has %d", pieces, dim, tok.Size())
	}
	if nwords < 0 || nwords > len(b) { // a word takes a byte at least
		return nil, bad
	}
	m := &Model{dim: dim, tok: tok, pieces: pieces, words: make(map[string]int32, nwords)}
	for i := range nwords {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return nil, bad
		}
		l := int(b[0])
		m.words[string(b[1:1+l])] = int32(pieces + i)
		b = b[1+l:]
	}
	n := pieces + nwords
	if len(b) != n*dim+4*n {
		return nil, bad
	}
	m.rows = make([]int8, n*dim)
	for i := range m.rows {
		m.rows[i] = int8(b[i])
	}
	b = b[n*dim:]
	m.scales = make([]float32, n)
	for i := range m.scales {
		m.scales[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	m.pool.New = func() any { return &scratch{enc: tok.NewEncoder()} }
	// A word the tokenizer makes one piece of ("the": "▁the") maps to that
	// piece's row, so that the common words skip the segmentation: the
	// same vector, found with one map lookup.
	enc := tok.NewEncoder()
	var ids []int32
	for id := range pieces {
		w, ok := strings.CutPrefix(tok.Piece(id), "▁")
		if !ok || w == "" {
			continue
		}
		if _, dup := m.words[w]; dup {
			continue
		}
		same := false
		words(nil, w, func(b []byte) { same = string(b) == w })
		if !same {
			continue
		}
		if ids = enc.Encode(ids[:0], w); len(ids) == 1 {
			m.words[w] = ids[0]
		}
	}
	return m, nil
}

// Encode writes a model file: vecs holds one row per tokenizer id, then
// one per word, each dim long (quantised to int8 with a scale per row).
func Encode(dim int, pieces int, words []string, vecs [][]float32) ([]byte, error) {
	if len(vecs) != pieces+len(words) {
		return nil, fmt.Errorf("static: %d vectors for %d pieces and %d words", len(vecs), pieces, len(words))
	}
	b := []byte("USESTAT1")
	b = binary.LittleEndian.AppendUint32(b, uint32(dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(pieces))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(words)))
	for _, w := range words {
		if len(w) == 0 || len(w) > 255 {
			return nil, fmt.Errorf("static: word %q", w)
		}
		b = append(b, byte(len(w)))
		b = append(b, w...)
	}
	scales := make([]float32, len(vecs))
	for i, v := range vecs {
		if len(v) != dim {
			return nil, fmt.Errorf("static: vector %d has %d dimensions, want %d", i, len(v), dim)
		}
		var mx float64
		for _, x := range v {
			mx = math.Max(mx, math.Abs(float64(x)))
		}
		if mx > 0 {
			scales[i] = float32(mx / 127)
		}
		for _, x := range v {
			q := 0.0
			if mx > 0 {
				q = math.Round(float64(x) / mx * 127)
			}
			b = append(b, byte(int8(q)))
		}
	}
	for _, s := range scales {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(s))
	}
	return b, nil
}

// Vector returns the unit vector of text (zero when it has no words).
func (m *Model) Vector(text string) []float32 {
	v := make([]float32, m.dim)
	m.VectorTo(v, text)
	return v
}

// Embed embeds texts (semantic.Embedder).
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = m.Vector(t)
	}
	return out, nil
}

// VectorTo writes text's unit vector into dst (Dim long).
func (m *Model) VectorTo(dst []float32, text string) {
	dst = dst[:m.dim]
	clear(dst)
	m.each(text, func(row int32) { m.addRow(dst, int(row)) })
	var sum float64
	for _, x := range dst {
		sum += float64(x) * float64(x)
	}
	if sum > 0 {
		k := float32(1 / math.Sqrt(sum))
		for i := range dst {
			dst[i] *= k
		}
	}
}

// Rows appends to dst the rows whose sum is text's vector, in text order
// (a row once per occurrence): the model's units, as gen fits them.
func (m *Model) Rows(dst []int32, text string) []int32 {
	m.each(text, func(row int32) { dst = append(dst, row) })
	return dst
}

// each calls f with each of text's rows, in order.
func (m *Model) each(text string, f func(row int32)) {
	sc := m.pool.Get().(*scratch)
	defer m.pool.Put(sc)
	sc.word = words(sc.word, text, func(w []byte) {
		if row, ok := m.words[string(w)]; ok {
			f(row)
			return
		}
		sc.ids = sc.enc.Encode(sc.ids[:0], string(w))
		for _, id := range sc.ids {
			f(id)
		}
	})
}

func (m *Model) addRow(dst []float32, row int) {
	s := m.scales[row]
	r := m.rows[row*m.dim : (row+1)*m.dim]
	r = r[:len(dst)]
	for i, q := range r {
		dst[i] += s * float32(q)
	}
}

// maxWord bounds a word's length in bytes: a longer run of letters is cut.
const maxWord = 64

// Words calls f with each lower-cased word of text: runs of letters and
// digits, split where camelCase turns ("CronCreate" is "cron", "create";
// "HTTPServer" is "http", "server"), at most maxWord bytes each.
func Words(text string, f func(string)) {
	words(nil, text, func(w []byte) { f(string(w)) })
}

// words is Words with the word in a buffer (buf, returned for reuse),
// valid during the call only.
func words(buf []byte, text string, f func([]byte)) []byte {
	b := buf[:0]
	flush := func() {
		if len(b) > 0 {
			f(b)
			b = b[:0]
		}
	}
	var prev rune
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		var letter, upper bool
		if r < utf8.RuneSelf {
			upper = 'A' <= r && r <= 'Z'
			letter = upper || 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
		} else {
			letter = unicode.IsLetter(r) || unicode.IsDigit(r)
			upper = unicode.IsUpper(r)
		}
		if !letter {
			flush()
			prev = 0
			continue
		}
		if upper && prev != 0 {
			next, _ := utf8.DecodeRuneInString(text[i:])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				flush()
			}
		}
		if len(b) >= maxWord {
			flush()
		}
		if upper && r < utf8.RuneSelf {
			b = append(b, byte(r)+'a'-'A')
		} else if r < utf8.RuneSelf {
			b = append(b, byte(r))
		} else {
			b = utf8.AppendRune(b, unicode.ToLower(r))
		}
		prev = r
	}
	flush()
	return b
}
