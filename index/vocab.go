package index

import (
	"hash/maphash"
	"strings"
)

// vocab maps strings to dense ids with a document frequency each. Ids of
// strings whose frequency drops to zero are reused.
//
// The strings are found through an open-addressing table of ids (linear
// probing, deletion by shifting back, so no tombstones) rather than a map
// by string: a table slot takes 4 bytes where a map entry takes about 30,
// and a large catalog has about one term per tool that no other tool has
// (the joined form of its name).
type vocab struct {
	seed  maphash.Seed
	slots []uint32 // id+1 of the string hashed there, 0 when empty
	strs  []string // by id; "" for a free id
	df    []int32
	free  []uint32
	n     int // strings held

	// weights, when set, gives some strings a weight other than 1, kept
	// by id in w (the request words of the text terms, so that a query
	// reads a term's weight with its id, not by hashing it again).
	weights map[string]float64
	w       []float64
}

func newVocab(seed maphash.Seed) vocab { return vocab{seed: seed} }

// Len returns the number of strings held.
func (v *vocab) Len() int { return v.n }

// find returns the slot holding s, or the empty slot where it would go.
func (v *vocab) find(s string) (int, bool) {
	if len(v.slots) == 0 {
		return -1, false
	}
	mask := len(v.slots) - 1
	i := v.home(s, mask)
	for {
		e := v.slots[i]
		if e == 0 {
			return i, false
		}
		if v.strs[e-1] == s {
			return i, true
		}
		i = (i + 1) & mask
	}
}

// home returns the slot where s's probe starts in a table of mask+1 slots.
func (v *vocab) home(s string, mask int) int { return int(maphash.String(v.seed, s)) & mask }

// ref returns the id of s, creating it, and counts one more document.
func (v *vocab) ref(s string) uint32 {
	i, ok := v.find(s)
	if ok {
		id := v.slots[i] - 1
		v.df[id]++
		return id
	}
	if 4*(v.n+1) > 3*len(v.slots) {
		v.grow()
		i, _ = v.find(s)
	}
	var id uint32
	if n := len(v.free); n > 0 {
		id = v.free[n-1]
		v.free = v.free[:n-1]
	} else {
		id = uint32(len(v.df))
		v.df = append(v.df, 0)
		v.strs = append(v.strs, "")
		if v.weights != nil {
			v.w = append(v.w, 0)
		}
	}
	if v.weights != nil {
		w, ok := v.weights[s]
		if !ok {
			w = 1
		}
		v.w[id] = w
	}
	// A copy: s may be a slice of the document's text, which it would
	// keep alive as long as the vocabulary has it.
	v.strs[id] = strings.Clone(s)
	v.slots[i] = id + 1
	v.n++
	v.df[id]++
	return id
}

// grow doubles the table (16 slots at first) and places every string
// again.
func (v *vocab) grow() {
	old := v.slots
	v.slots = make([]uint32, max(16, 2*len(old)))
	mask := len(v.slots) - 1
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := v.home(v.strs[e-1], mask)
		for v.slots[i] != 0 {
			i = (i + 1) & mask
		}
		v.slots[i] = e
	}
}

// unref counts one document less for id and frees it at zero.
func (v *vocab) unref(id uint32) {
	v.df[id]--
	if v.df[id] > 0 {
		return
	}
	i, ok := v.find(v.strs[id])
	if !ok {
		panic("index: vocabulary string missing from its table")
	}
	// Shift back the entries after i that probed past it, so that
	// every entry stays reachable from its home slot.
	mask := len(v.slots) - 1
	j := i
	for {
		j = (j + 1) & mask
		e := v.slots[j]
		if e == 0 {
			break
		}
		home := v.home(v.strs[e-1], mask)
		// e may move to i when i lies cyclically in [home, j).
		if (j-home)&mask >= (j-i)&mask {
			v.slots[i] = e
			i = j
		}
	}
	v.slots[i] = 0
	v.strs[id] = ""
	v.free = append(v.free, id)
	v.n--
}

// lookup returns the id of s if some document has it.
func (v *vocab) lookup(s string) (uint32, bool) {
	i, ok := v.find(s)
	if !ok {
		return 0, false
	}
	return v.slots[i] - 1, true
}

// weight returns the weight of id (1 without weights).
func (v *vocab) weight(id uint32) float64 {
	if v.weights == nil {
		return 1
	}
	return v.w[id]
}
