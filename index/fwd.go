package index

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// Forward lists.
//
// A deferred document's forward lists, its keyword words and its TF-IDF
// terms, serve its removal (each posting list it is in counts one more
// dead posting), the pruned search's finish (a candidate's keyword fields
// are read from its own word list) and the cosine scorer's norm. They are
// kept for the document's life, so they are encoded in one string of
// exact size: varints of the gaps between sorted ids take about two bytes
// an entry where a struct took eight.
//
// The layout is uvarint(length of the words), the words, the terms. A
// word is uvarint(gap<<kwMaskBits | fields), its gap the difference from
// the previous word's id (the first's from 0), words by ascending id. With
// BM25F a term is uvarint(gap), terms by ascending id. The cosine's norm
// sums its terms in the order of their texts, so that its rounding does
// not depend on the ids the vocabulary happened to assign: there a term is
// uvarint(id) and its four field counts, terms by text.

// encodeFwd encodes words (sorted by id) and terms (sorted by id, or by
// text with counts when withTF) into buf, returned with its length reset
// first, and returns the encoding as a string of exact size. wbuf is
// scratch for the words.
func encodeFwd(buf, wbuf []byte, words []docWord, terms []docTerm, withTF bool) (string, []byte, []byte) {
	wbuf = wbuf[:0]
	prev := uint64(0)
	for _, w := range words {
		wbuf = binary.AppendUvarint(wbuf, (uint64(w.id)-prev)<<kwMaskBits|uint64(w.mask))
		prev = uint64(w.id)
	}
	buf = binary.AppendUvarint(buf[:0], uint64(len(wbuf)))
	buf = append(buf, wbuf...)
	prev = 0
	for _, t := range terms {
		if withTF {
			buf = binary.AppendUvarint(buf, uint64(t.id))
			buf = append(buf, t.tf[:]...)
			continue
		}
		buf = binary.AppendUvarint(buf, uint64(t.id)-prev)
		prev = uint64(t.id)
	}
	return string(buf), buf, wbuf
}

// uvarint decodes the varint at s[i:], returning it and the index after
// it. The encoding is the index's own, so it is well formed.
func uvarint(s string, i int) (uint64, int) {
	b := s[i]
	if b < 0x80 {
		return uint64(b), i + 1
	}
	x := uint64(b & 0x7f)
	for shift := uint(7); ; shift += 7 {
		i++
		b = s[i]
		if b < 0x80 {
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
	}
}

// fwdSplit returns the words and the terms of forward lists f.
func fwdSplit(f string) (words, terms string) {
	n, i := uvarint(f, 0)
	return f[i : i+int(n)], f[i+int(n):]
}

// wordReader reads the words of a forward list in ascending id order.
type wordReader struct {
	s    string
	i    int
	prev uint64
}

// next returns the next word's id and fields, or ok false at the end.
func (r *wordReader) next() (id uint32, mask uint8, ok bool) {
	if r.i >= len(r.s) {
		return 0, 0, false
	}
	var v uint64
	v, r.i = uvarint(r.s, r.i)
	r.prev += v >> kwMaskBits
	return uint32(r.prev), uint8(v) & (1<<kwMaskBits - 1), true
}

// termReader reads the terms of a forward list: by ascending id, or by
// text with their counts when withTF.
type termReader struct {
	s      string
	i      int
	prev   uint64
	withTF bool
}

// next returns the next term's id and, when the list has them, its
// counts, or ok false at the end.
func (r *termReader) next() (id uint32, tf tfs, ok bool) {
	if r.i >= len(r.s) {
		return 0, tf, false
	}
	var v uint64
	v, r.i = uvarint(r.s, r.i)
	if r.withTF {
		copy(tf[:], r.s[r.i:r.i+nFields])
		r.i += nFields
		return uint32(v), tf, true
	}
	r.prev += v
	return uint32(r.prev), tf, true
}

// readers returns readers of d's words and terms.
func (ix *Index) readers(d *doc) (wordReader, termReader) {
	w, t := fwdSplit(d.fwd)
	return wordReader{s: w}, termReader{s: t, withTF: ix.cfg.Scorer == ScorerCosine}
}

// setFwd encodes d's forward lists from the ids place assigned, sorting
// them first: words by id, terms by id unless the cosine keeps them in
// text order.
func (ix *Index) setFwd(d *doc, p *prepared) {
	slices.SortFunc(p.dwords, func(a, b docWord) int { return cmp.Compare(a.id, b.id) })
	withTF := ix.cfg.Scorer == ScorerCosine
	if !withTF {
		slices.SortFunc(p.dterms, func(a, b docTerm) int { return cmp.Compare(a.id, b.id) })
	}
	d.fwd, p.buf, p.wbuf = encodeFwd(p.buf, p.wbuf, p.dwords, p.dterms, withTF)
}
