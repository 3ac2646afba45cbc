package uselite

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// reserved is how many ids at the start of the vocabulary are not pieces
// (unknown, <s>, </s> and three extra tokens); id 0 is the unknown piece.
const reserved = 6

// Tokenizer is the model's SentencePiece unigram tokenizer, as the
// TensorFlow.js package implements it: NFKC, "▁" for each space and one in
// front, then the Viterbi segmentation over the pieces' scores; a
// character no piece starts with is the unknown piece (id 0, score 0) and
// runs of unknown pieces are merged into one.
type Tokenizer struct {
	pieces []string  // id → piece
	scores []float64 // id → log probability (0 for the null scores)
	// The trie over the pieces (ids reserved and up): node 0 is the root.
	child map[uint64]int32 // node<<32 | rune → node
	id    []int32          // node → piece id ending there, or -1
}

// parseVocab reads vocab.txt: "piece\tscore" lines in id order.
func parseVocab(b []byte) (*Tokenizer, error) {
	t := &Tokenizer{child: make(map[uint64]int32, 1<<15), id: []int32{-1}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		piece, score, ok := strings.Cut(sc.Text(), "\t")
		f, err := strconv.ParseFloat(score, 64)
		if !ok || err != nil || piece == "" {
			return nil, fmt.Errorf("uselite: vocab line %d: %q", len(t.pieces)+1, sc.Text())
		}
		t.pieces = append(t.pieces, piece)
		t.scores = append(t.scores, f)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i := reserved; i < len(t.pieces); i++ {
		node := int32(0)
		for _, r := range t.pieces[i] {
			k := uint64(node)<<32 | uint64(uint32(r))
			next, ok := t.child[k]
			if !ok {
				next = int32(len(t.id))
				t.id = append(t.id, -1)
				t.child[k] = next
			}
			node = next
		}
		t.id[node] = int32(i) // a repeated piece: the last one wins, as in JavaScript
	}
	return t, nil
}

// Size is the number of ids.
func (t *Tokenizer) Size() int { return len(t.pieces) }

// Piece returns the text of an id.
func (t *Tokenizer) Piece(id int) string { return t.pieces[id] }

// Score returns the log probability of an id.
func (t *Tokenizer) Score(id int) float64 { return t.scores[id] }

// Encode appends the ids of text to dst (all of them: the model reads the
// first MaxTokens).
func (t *Tokenizer) Encode(dst []int32, text string) []int32 {
	var s tokState
	return s.encode(t, dst, text)
}

// Encoder is Encode with buffers kept from one call to the next; it is
// not safe for concurrent use.
type Encoder struct {
	t *Tokenizer
	s tokState
}

// NewEncoder returns an Encoder of t.
func (t *Tokenizer) NewEncoder() *Encoder { return &Encoder{t: t} }

// Encode is Tokenizer.Encode.
func (e *Encoder) Encode(dst []int32, text string) []int32 { return e.s.encode(e.t, dst, text) }

// grow returns b with length n, reusing its array when it can, zeroed.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// isASCII reports whether s is ASCII (and so NFKC already).
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// tokState holds the buffers of one segmentation.
type tokState struct {
	runes []rune
	best  []float64
	words []int32
}

func (s *tokState) encode(t *Tokenizer, dst []int32, text string) []int32 {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	if !isASCII(text) {
		text = norm.NFKC.String(text)
	}
	if text == "" {
		return dst
	}
	s.runes = append(s.runes[:0], '▁')
	for _, r := range text {
		if r == ' ' {
			r = '▁'
		}
		s.runes = append(s.runes, r)
	}
	n := len(s.runes)
	s.best = grow(s.best, n+1)
	s.words = grow(s.words, n+1)
	// JavaScript visits the end positions in order and, for each, the start
	// positions in order; every start i offers its pieces to ends i+len.
	// Visiting starts in order and, for each, its pieces by length
	// offers each end its candidates in the same order, because best[i] is
	// final once every end ≤ i has been offered: all starts < i are done.
	// A candidate wins when the end has no best yet (0, as JavaScript
	// reads it) or scores at least as well.
	for i := 0; i < n; i++ {
		node, found := int32(0), false
		for j := i; j < n; j++ {
			next, ok := t.child[uint64(node)<<32|uint64(uint32(s.runes[j]))]
			if !ok {
				break
			}
			node = next
			if id := t.id[node]; id >= 0 {
				found = true
				s.offer(i, j+1, id, t.scores[id])
			}
		}
		if !found {
			s.offer(i, i+1, 0, 0)
		}
	}
	// Back from the end; each step goes back the piece's length (the
	// unknown piece's text is one character long).
	start := len(dst)
	for end := n; end > 0; {
		id := s.words[end]
		dst = append(dst, id)
		l := int32(1)
		if id != 0 {
			l = int32(utf8.RuneCountInString(t.pieces[id]))
		}
		end -= int(l)
	}
	// Reverse, merging runs of unknown pieces.
	out := dst[start:]
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	w := start
	for i := start; i < len(dst); i++ {
		if dst[i] == 0 && i > start && dst[i-1] == 0 {
			continue
		}
		dst[w] = dst[i]
		w++
	}
	return dst[:w]
}

func (s *tokState) offer(from, to int, id int32, score float64) {
	sc := score + s.best[from]
	if s.best[to] == 0 || sc >= s.best[to] {
		s.best[to] = sc
		s.words[to] = id
	}
}
