package index

import (
	"hash/maphash"
	"slices"
	"strings"
)

// nameIndex maps the exact-name spellings of documents (nameKeys) to the
// documents, by a 64-bit hash of the spelling: the spellings themselves,
// two or three a tool and most of them built strings, cost more than the
// documents they lead to. Each spelling a lookup finds is checked against
// the document's own, recomputed from its name, so a collision never
// changes a result; it only costs the check.
type nameIndex struct {
	seed maphash.Seed
	// one holds the hashes of a single document, many those of several,
	// deferred documents first, then by name (insertByKeyOrder).
	one  map[uint64]*doc
	many map[uint64][]*doc
	// longest is the length of the longest spelling ever added: a text
	// with more ASCII letters and digits than that spells no name
	// (mayName).
	longest int
}

func newNameIndex(seed maphash.Seed) nameIndex {
	return nameIndex{seed: seed, one: make(map[uint64]*doc), many: make(map[uint64][]*doc)}
}

// len returns the number of distinct hashes.
func (n *nameIndex) len() int { return len(n.one) + len(n.many) }

func (n *nameIndex) add(k string, d *doc) {
	n.longest = max(n.longest, len(k))
	h := maphash.String(n.seed, k)
	if list, ok := n.many[h]; ok {
		n.many[h] = insertByKeyOrder(list, d)
		return
	}
	if x, ok := n.one[h]; ok {
		delete(n.one, h)
		n.many[h] = insertByKeyOrder([]*doc{x}, d)
		return
	}
	n.one[h] = d
}

func (n *nameIndex) remove(k string, d *doc) {
	h := maphash.String(n.seed, k)
	if n.one[h] == d {
		delete(n.one, h)
		return
	}
	switch list := without(n.many[h], d); len(list) {
	case 0:
		delete(n.many, h)
	case 1:
		delete(n.many, h)
		n.one[h] = list[0]
	default:
		n.many[h] = list
	}
}

// swap replaces old by d under spelling k.
func (n *nameIndex) swap(k string, old, d *doc) {
	h := maphash.String(n.seed, k)
	if n.one[h] == old {
		n.one[h] = d
		return
	}
	swapDoc(n.many[h], old, d)
}

// byName returns the document named name (not empty), or nil. Every
// document is under its lower-case name, one of its spellings, so the
// index serves this lookup too and no map by name is kept.
func (n *nameIndex) byName(name string) *doc {
	h := maphash.String(n.seed, strings.ToLower(name))
	if d := n.one[h]; d != nil {
		if d.name == name {
			return d
		}
		return nil
	}
	for _, d := range n.many[h] {
		if d.name == name {
			return d
		}
	}
	return nil
}

// mayName reports whether text may spell a name: its lower-case form and
// its canonical one (nameKeys) keep every ASCII letter and digit of it, so
// neither can equal a spelling with fewer.
func (n *nameIndex) mayName(text string) bool {
	c := 0
	for i := 0; i < len(text); i++ {
		if b := text[i]; b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' {
			c++
		}
	}
	return c <= n.longest
}

// lookup returns the documents having spelling k, in key order, or nil.
func (n *nameIndex) lookup(k string) []*doc {
	return n.lookupHash(maphash.String(n.seed, k), k)
}

// lookupBytes is lookup of string(k), without allocating when nothing
// has the hash.
func (n *nameIndex) lookupBytes(k []byte) []*doc {
	h := maphash.Bytes(n.seed, k)
	if n.one[h] == nil && n.many[h] == nil {
		return nil
	}
	return n.lookupHash(h, string(k))
}

func (n *nameIndex) lookupHash(h uint64, k string) []*doc {
	if d := n.one[h]; d != nil {
		if hasNameKey(d, k) {
			return []*doc{d}
		}
		return nil
	}
	var out []*doc
	for _, d := range n.many[h] {
		if hasNameKey(d, k) {
			out = append(out, d)
		}
	}
	return out
}

// hasNameKey reports whether k is one of d's exact-name spellings.
func hasNameKey(d *doc, k string) bool {
	return slices.Contains(nameKeys(d.name, d.aliasList()), k)
}
