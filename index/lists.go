package index

import (
	"slices"
	"unsafe"
)

// lists holds the posting lists of a vocabulary (TF-IDF terms or keyword
// words), by id: for each id, one list per shard that has postings of it,
// ordered by shard. A shard holds nothing for an id it has no postings
// of, so memory follows the postings rather than the vocabulary times the
// shards: most terms of a large catalog (the joined form of a tool's
// name, say) belong to a single tool, so to a single shard.
//
// Searches look a list up once per query term and shard (get); an id that
// every shard has is found at its shard's position directly, others by a
// binary search over at most the shard count.
type lists[P posting[P]] [][]shardList[P]

// shardList is one shard's postings of an id, sorted by slot, with how
// many of them are dead. The postings are kept as a pointer to their
// array with 32-bit length and capacity (a shard has at most maxSlots
// slots), so that a shard list takes 24 bytes rather than 32.
type shardList[P any] struct {
	ptr   *P
	n, c  uint32
	dead  int32
	shard uint16
}

// list returns the postings.
func (l *shardList[P]) list() []P {
	return unsafe.Slice(l.ptr, l.c)[:l.n]
}

// setList sets the postings.
func (l *shardList[P]) setList(list []P) {
	l.ptr, l.n, l.c = unsafe.SliceData(list), uint32(len(list)), uint32(cap(list))
}

// find returns the position of shard's list in ls, or where it would go.
func find[P any](ls []shardList[P], shard uint16) (int, bool) {
	if int(shard) < len(ls) && ls[shard].shard == shard {
		return int(shard), true
	}
	return slices.BinarySearchFunc(ls, shard, func(l shardList[P], s uint16) int { return int(l.shard) - int(s) })
}

// get returns shard's postings of id, nil if it has none.
func (ls lists[P]) get(id uint32, shard uint16) []P {
	if int(id) >= len(ls) {
		return nil
	}
	if i, ok := find(ls[id], shard); ok {
		return ls[id][i].list()
	}
	return nil
}

// add appends p to shard's postings of id.
func (ls *lists[P]) add(id uint32, shard uint16, p P) {
	for int(id) >= len(*ls) {
		*ls = append(*ls, nil)
	}
	l := (*ls)[id]
	i, ok := find(l, shard)
	if !ok {
		l = slices.Insert(l, i, shardList[P]{shard: shard})
		(*ls)[id] = l
	}
	l[i].setList(appendPosting(l[i].list(), p))
}

// bury counts one more dead posting in shard's list of id, compacting the
// list once more than half of it is dead and dropping it once empty.
func (ls lists[P]) bury(sh *shard, id uint32) {
	l := ls[id]
	i, ok := find(l, sh.idx)
	if !ok {
		panic("index: burying a posting of a missing list")
	}
	e := &l[i]
	if e.dead++; 2*int(e.dead) <= int(e.n) {
		return
	}
	e.setList(compact(sh, e.list()))
	e.dead = 0
	if e.n == 0 {
		ls.drop(id, i)
	}
}

// drop removes the i-th shard list of id, which is empty.
func (ls lists[P]) drop(id uint32, i int) {
	l := slices.Delete(ls[id], i, i+1)
	switch {
	case len(l) == 0:
		l = nil
	case len(l) < cap(l)/4:
		l = slices.Clone(l)
	}
	ls[id] = l
}

// renumber drops the dead postings of sh and gives the others their new
// slots (shard.renumber).
func (ls lists[P]) renumber(sh *shard, remap []uint32) {
	for id := range ls {
		i, ok := find(ls[id], sh.idx)
		if !ok {
			continue
		}
		e := &ls[id][i]
		e.setList(renumberList(sh, e.list(), remap))
		e.dead = 0
		if e.n == 0 {
			ls.drop(uint32(id), i)
		}
	}
}
