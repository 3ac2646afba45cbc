package index

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"testing"
)

// TestVocab checks the vocabulary's table against a map under random
// references and releases, through many growths and back-shifting
// deletions.
func TestVocab(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	v := newVocab(maphash.MakeSeed())
	want := map[string]int32{} // document frequency by string
	ids := map[string]uint32{}
	for step := range 200_000 {
		s := fmt.Sprintf("w%d", r.IntN(3000))
		if r.IntN(3) > 0 || want[s] == 0 {
			id := v.ref(s)
			if old, ok := ids[s]; ok && old != id {
				t.Fatalf("step %d: ref(%q) = %d, was %d", step, s, id, old)
			}
			ids[s] = id
			want[s]++
		} else {
			v.unref(ids[s])
			if want[s]--; want[s] == 0 {
				delete(want, s)
				delete(ids, s)
			}
		}
		if step%5000 != 0 {
			continue
		}
		if got := v.Len(); got != len(want) {
			t.Fatalf("step %d: Len() = %d, want %d", step, got, len(want))
		}
		for k := range 3000 {
			s := fmt.Sprintf("w%d", k)
			id, ok := v.lookup(s)
			if ok != (want[s] > 0) {
				t.Fatalf("step %d: lookup(%q) found %v, want %v", step, s, ok, want[s] > 0)
			}
			if ok && (id != ids[s] || v.df[id] != want[s] || v.strs[id] != s) {
				t.Fatalf("step %d: %q: id %d df %d str %q, want id %d df %d", step, s, id, v.df[id], v.strs[id], ids[s], want[s])
			}
		}
	}
	for s, id := range ids {
		for range want[s] {
			v.unref(id)
		}
	}
	if v.Len() != 0 {
		t.Fatalf("Len() = %d after releasing everything", v.Len())
	}
	for i, e := range v.slots {
		if e != 0 {
			t.Fatalf("slot %d still holds id %d", i, e-1)
		}
	}
}
