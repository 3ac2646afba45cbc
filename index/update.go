package index

import (
	"hash/maphash"
	"slices"
	"strings"

	"github.com/tooldex/tooldex/index/analysis"
)

// parts is the vocabulary of name parts of deferred documents, with a
// trigram index so that the parts containing a term are found without a
// scan.
type parts struct {
	count map[string]int32
	grams map[string][]string
	epoch uint64 // bumped when a part is added or removed
}

func (p *parts) ref(s string) {
	if p.count[s] > 0 {
		p.count[s]++
		return
	}
	s = strings.Clone(s) // s may be a slice of the name, which it would keep alive
	p.count[s] = 1
	p.epoch++
	for _, g := range trigrams(s) {
		p.grams[g] = append(p.grams[g], s)
	}
}

func (p *parts) unref(s string) {
	p.count[s]--
	if p.count[s] > 0 {
		return
	}
	delete(p.count, s)
	p.epoch++
	for _, g := range trigrams(s) {
		list := p.grams[g]
		for i, x := range list {
			if x == s {
				list[i] = list[len(list)-1]
				list = list[:len(list)-1]
				break
			}
		}
		if len(list) == 0 {
			delete(p.grams, g)
		} else {
			p.grams[g] = list
		}
	}
}

// containing returns the parts that contain term (len(term) >= 3) without
// being equal to it.
func (p *parts) containing(term string) []string {
	gs := trigrams(term)
	if len(gs) == 0 {
		return nil
	}
	best := p.grams[gs[0]]
	for _, g := range gs[1:] {
		if l := p.grams[g]; len(l) < len(best) {
			best = l
		}
	}
	var out []string
	for _, s := range best {
		if s != term && strings.Contains(s, term) {
			out = append(out, s)
		}
	}
	return out
}

// trigrams returns the distinct byte trigrams of s.
func trigrams(s string) []string {
	if len(s) < 3 {
		return nil
	}
	out := make([]string, 0, len(s)-2)
	for i := 0; i+3 <= len(s); i++ {
		g := s[i : i+3]
		dup := false
		for _, x := range out {
			if x == g {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, g)
		}
	}
	return out
}

// add inserts a prepared document. The caller holds the write lock.
func (ix *Index) add(p *prepared) {
	ix.addMeta(p)
	if !p.d.core {
		ix.place(p)
	}
}

// remove deletes a document. The caller holds the write lock.
func (ix *Index) remove(d *doc) {
	ix.removeMeta(d)
	if !d.core {
		ix.bury(d)
	}
}

// replace swaps deferred document old for p's of the same name: it takes
// a new slot at the end of its shard (so that posting lists stay sorted by
// slot) and old's slot is tombstoned.
func (ix *Index) replace(old *doc, p *prepared) {
	d := p.d
	if slices.Equal(old.aliasList(), d.aliasList()) {
		// Same name and aliases, so the same keys, phrases and parts:
		// swap the document in place in every list.
		if d.name == "" {
			ix.unnamed = d
		}
		for _, k := range p.keys {
			ix.keys.swap(k, old, d)
		}
		for _, k := range p.boostKeys {
			swapDoc(ix.boost.docs[k], old, d)
		}
		if k, ok := serverKey(d.name); ok {
			swapDoc(ix.servers[k], old, d)
		}
		d.shard = old.shard
	} else {
		ix.removeMeta(old)
		ix.addMeta(p)
	}
	// Add first, so that the terms both versions share keep their ids.
	ix.place(p)
	ix.bury(old)
}

// aliasList returns d's aliases.
func (d *doc) aliasList() []string {
	if d.aliases == nil {
		return nil
	}
	return *d.aliases
}

// renumberSlack is how many more dead slots than live ones a shard keeps
// before it is renumbered.
const renumberSlack = 64

// place gives p's deferred document the next slot of its shard and
// appends its postings.
func (ix *Index) place(p *prepared) {
	d := p.d
	sh := ix.shards[d.shard]
	if len(sh.docs) >= maxSlots {
		// Dead slots are renumbered away long before; a shard of
		// half a billion live tools would not fit in memory anyway.
		panic("index: shard full")
	}
	d.slot = int32(len(sh.docs))
	sh.docs = append(sh.docs, d)
	sh.stat = append(sh.stat, p.stat)
	if ix.cfg.Scorer == ScorerCosine {
		sh.normEp = append(sh.normEp, 0)
		sh.norm = append(sh.norm, 0)
	}
	if n := (len(sh.docs) + 63) / 64; len(sh.dead) < n {
		sh.dead = append(sh.dead, 0)
	}
	ix.countLen(&p.stat, true)
	p.dterms = p.dterms[:0]
	for i, t := range p.terms {
		p.dterms = append(p.dterms, docTerm{id: ix.addTerm(sh, d, t, p.tfs[i]), tf: p.tfs[i]})
	}
	p.dwords = p.dwords[:0]
	for i, w := range p.words {
		p.dwords = append(p.dwords, docWord{id: ix.addWord(sh, d, w, p.fields[i]), mask: p.fields[i]})
	}
	ix.setFwd(d, p)
}

// bury tombstones deferred document d: its statistics leave the totals at
// once, its postings stay until their lists are compacted.
func (ix *Index) bury(d *doc) {
	sh := ix.shards[d.shard]
	slot := uint32(d.slot)
	ix.countLen(&sh.stat[slot], false)
	sh.docs[slot] = nil
	sh.dead[slot>>6] |= 1 << (slot & 63)
	sh.nDead++
	words, terms := ix.readers(d)
	for id, _, ok := terms.next(); ok; id, _, ok = terms.next() {
		ix.tf.unref(id)
		ix.tfl.bury(sh, id)
	}
	for id, _, ok := words.next(); ok; id, _, ok = words.next() {
		ix.kw.unref(id)
		ix.kwl.bury(sh, id)
	}
	if sh.nDead > len(sh.docs)-sh.nDead+renumberSlack {
		ix.renumber(sh)
	}
}

// compact drops the postings of dead slots from list. A list left mostly
// empty gets a new, smaller array.
func compact[P posting[P]](sh *shard, list []P) []P {
	k := 0
	for _, p := range list {
		if !sh.isDead(p.docSlot()) {
			list[k] = p
			k++
		}
	}
	switch {
	case k == 0:
		return nil
	case k < cap(list)/4:
		return slices.Clone(list[:k])
	}
	return list[:k]
}

// renumber gives the live documents of the shard consecutive slots, in
// their order, and drops every dead posting.
func (ix *Index) renumber(sh *shard) {
	remap := make([]uint32, len(sh.docs))
	n := 0
	for s, d := range sh.docs {
		if d == nil {
			continue
		}
		remap[s] = uint32(n)
		sh.docs[n] = d
		sh.stat[n] = sh.stat[s]
		d.slot = int32(n)
		n++
	}
	ix.tfl.renumber(sh, remap)
	ix.kwl.renumber(sh, remap)
	clear(sh.docs[n:])
	sh.docs = slices.Clip(sh.docs[:n])
	sh.stat = slices.Clip(sh.stat[:n])
	// Cached cosine lengths are recomputed on demand.
	if sh.norm != nil {
		sh.normEp = make([]uint64, n)
		sh.norm = make([]uint64, n)
	}
	sh.dead = make([]uint64, (n+63)/64)
	sh.nDead = 0
}

// countLen adds a document's field lengths to the totals, or takes them
// away.
func (ix *Index) countLen(st *docStat, add bool) {
	for f, n := range st.flen {
		if add {
			ix.flen[f] += uint64(n)
		} else {
			ix.flen[f] -= uint64(n)
		}
	}
}

// addMeta registers a document's names, name phrases and name parts, and
// picks its shard.
func (ix *Index) addMeta(p *prepared) {
	d := p.d
	if d.name == "" {
		ix.unnamed = d
	}
	for _, k := range p.keys {
		ix.keys.add(k, d)
	}
	for _, k := range p.boostKeys {
		if ix.cfg.NameBoost > 0 {
			ix.boost.add(k, d)
		}
		if d.core {
			ix.coreBoost.add(k, d)
		}
	}
	if d.core {
		ix.core[d] = struct{}{}
		for _, part := range p.parts {
			ix.coreParts[part] = append(ix.coreParts[part], d)
		}
		return
	}
	ix.nDeferred++
	ix.addServer(d)
	for _, part := range p.parts {
		ix.parts.ref(part)
	}
	d.shard = ix.shardOf(d.name)
}

// shardOf returns the shard of the deferred document named name.
func (ix *Index) shardOf(name string) uint16 {
	return uint16(maphash.String(ix.seed, name) % uint64(len(ix.shards)))
}

// fitShards splits an index of the default shard count into its shards
// once it holds splitFrom deferred documents, where they are scored in
// parallel, and merges it into one again below half of that, where more
// shards would only add their fixed cost to every search. The caller
// holds the write lock.
func (ix *Index) fitShards() {
	if ix.splitTo <= 1 {
		return
	}
	switch n := len(ix.shards); {
	case n == 1 && ix.nDeferred >= ix.splitFrom:
		ix.reshard(ix.splitTo)
	case n > 1 && ix.nDeferred < ix.splitFrom/2:
		ix.reshard(1)
	}
}

// slotPlace is a document's new shard and slot in a reshard; shard is
// -1 for a dead slot.
type slotPlace struct {
	shard int32
	slot  uint32
}

// reshard spreads the deferred documents over n new shards by their
// names' hash, as addMeta places new ones, and moves every live posting
// to its document's new shard and slot; dead slots and postings are
// dropped. Documents keep their order within a shard, so the lists stay
// sorted by slot. Nothing a search computes depends on the shard count,
// so rankings and scores are unchanged. The caller holds the write lock.
func (ix *Index) reshard(n int) {
	old := ix.shards
	ix.shards = newShards(n)
	places := make([][]slotPlace, len(old))
	for i, sh := range old {
		places[i] = make([]slotPlace, len(sh.docs))
		for s, d := range sh.docs {
			if d == nil {
				places[i][s] = slotPlace{shard: -1}
				continue
			}
			to := ix.shards[ix.shardOf(d.name)]
			d.shard, d.slot = to.idx, int32(len(to.docs))
			places[i][s] = slotPlace{shard: int32(to.idx), slot: uint32(d.slot)}
			to.docs = append(to.docs, d)
			to.stat = append(to.stat, sh.stat[s])
		}
	}
	for _, sh := range ix.shards {
		sh.dead = make([]uint64, (len(sh.docs)+63)/64)
		if ix.cfg.Scorer == ScorerCosine {
			sh.normEp, sh.norm = make([]uint64, len(sh.docs)), make([]uint64, len(sh.docs))
		}
	}
	ix.tfl = relist(ix.tfl, places)
	ix.kwl = relist(ix.kwl, places)
}

// relist returns ls with every live posting moved to the shard and slot
// places gives it (reshard).
func relist[P posting[P]](ls lists[P], places [][]slotPlace) lists[P] {
	out := make(lists[P], len(ls))
	for id, sls := range ls {
		for i := range sls {
			m := places[sls[i].shard]
			for _, p := range sls[i].list() {
				if to := m[p.docSlot()]; to.shard >= 0 {
					out.add(uint32(id), uint16(to.shard), p.withSlot(to.slot))
				}
			}
		}
	}
	return out
}

// removeMeta undoes addMeta, recomputing the keys, phrases and parts of d
// from its name.
func (ix *Index) removeMeta(d *doc) {
	if d.name == "" {
		ix.unnamed = nil
	}
	for _, k := range nameKeys(d.name, d.aliasList()) {
		ix.keys.remove(k, d)
	}
	if d.core || ix.cfg.NameBoost > 0 {
		for _, k := range ix.boostKeys(d.name) {
			if ix.cfg.NameBoost > 0 {
				ix.boost.remove(k, d)
			}
			if d.core {
				ix.coreBoost.remove(k, d)
			}
		}
	}
	if d.core {
		for _, part := range namePartsOf(d.name) {
			if l := without(ix.coreParts[part], d); len(l) > 0 {
				ix.coreParts[part] = l
			} else {
				delete(ix.coreParts, part)
			}
		}
		delete(ix.core, d)
		return
	}
	ix.nDeferred--
	ix.removeServer(d)
	for _, part := range namePartsOf(d.name) {
		ix.parts.unref(part)
	}
}

// addTerm appends d's posting for TF-IDF term t with counts tf and
// returns the term's id.
func (ix *Index) addTerm(sh *shard, d *doc, t string, tf tfs) uint32 {
	id := ix.tf.ref(t)
	ix.tfl.add(id, sh.idx, tfPost{slot: uint32(d.slot), tf: tf})
	return id
}

// addWord appends d's posting for keyword word w with fields mask and
// returns the word's id.
func (ix *Index) addWord(sh *shard, d *doc, w string, mask uint8) uint32 {
	id := ix.kw.ref(w)
	ix.kwl.add(id, sh.idx, newKwPost(uint32(d.slot), mask, d.mcp))
	return id
}

// appendPosting appends p to list. Posting lists are kept for the index's
// life and most stop growing once the catalog is loaded, so a full list
// grows by an eighth (to the size class that holds that) rather than by
// append's half to double: the room left unused is then under an eighth,
// not up to half, for a copy of about eight postings per posting
// appended, amortised.
func appendPosting[P any](list []P, p P) []P {
	if n := len(list); n == cap(list) {
		list = append(slices.Grow(list[:0:0], n+n/8+1), list...)
	}
	return append(list, p)
}

// phrases maps stemmed name phrases to the documents they name.
type phrases struct {
	docs map[string][]*doc
	// first counts the phrases starting with each word; maxLen is the
	// longest phrase in words.
	first  map[string]int32
	maxLen int
}

func newPhrases() phrases {
	return phrases{docs: make(map[string][]*doc), first: make(map[string]int32)}
}

func (ps *phrases) add(k string, d *doc) {
	ps.docs[k] = append(ps.docs[k], d)
	first, _, _ := strings.Cut(k, " ")
	ps.first[first]++
	ps.maxLen = max(ps.maxLen, strings.Count(k, " ")+1)
}

func (ps *phrases) remove(k string, d *doc) {
	ps.docs[k] = without(ps.docs[k], d)
	if len(ps.docs[k]) == 0 {
		delete(ps.docs, k)
	}
	first, _, _ := strings.Cut(k, " ")
	if ps.first[first]--; ps.first[first] == 0 {
		delete(ps.first, first)
	}
}

// insertByKeyOrder adds d to the documents of one exact-name spelling,
// deferred documents first, then by name, so that a lookup (select: takes
// the first) never depends on the order of updates.
func insertByKeyOrder(list []*doc, d *doc) []*doc {
	i, _ := slices.BinarySearchFunc(list, d, func(a, b *doc) int {
		if a.core != b.core {
			if a.core {
				return 1
			}
			return -1
		}
		return strings.Compare(a.name, b.name)
	})
	return slices.Insert(list, i, d)
}

// posting is a text or keyword posting: both lists are kept in slot order.
type posting[P any] interface {
	docSlot() uint32
	withSlot(slot uint32) P
}

func (p tfPost) docSlot() uint32             { return p.slot }
func (p kwPost) docSlot() uint32             { return uint32(p) >> kwPostBits }
func (p tfPost) withSlot(slot uint32) tfPost { p.slot = slot; return p }
func (p kwPost) withSlot(slot uint32) kwPost { return kwPost(slot<<kwPostBits | uint32(p.low())) }

// renumberList drops the dead postings of list and gives the others their
// new slots.
func renumberList[P posting[P]](sh *shard, list []P, remap []uint32) []P {
	k := 0
	for _, p := range list {
		if !sh.isDead(p.docSlot()) {
			list[k] = p.withSlot(remap[p.docSlot()])
			k++
		}
	}
	if k == 0 {
		return nil
	}
	return slices.Clip(list[:k])
}

// swapDoc replaces old by d in list.
func swapDoc(list []*doc, old, d *doc) {
	if i := slices.Index(list, old); i >= 0 {
		list[i] = d
	}
}

func without(list []*doc, d *doc) []*doc {
	for i, x := range list {
		if x == d {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

func isMCP(name string) bool { return strings.HasPrefix(name, "mcp__") }

// stripMCP drops the "mcp__" prefix: the server and tool parts remain.
func stripMCP(name string) string {
	if isMCP(name) {
		return name[len("mcp__"):]
	}
	return name
}

// mcpTool returns the tool part of mcp__server__tool, or "".
func mcpTool(name string) string {
	if !isMCP(name) {
		return ""
	}
	_, tool, ok := strings.Cut(stripMCP(name), "__")
	if !ok {
		return ""
	}
	return tool
}

// canonical joins the identifier parts of every word of s with single
// spaces: "find symbol", "find_symbol", "FindSymbol" and "findSymbol" all
// become "find symbol".
func canonical(s string) string {
	var all []string
	for _, f := range strings.Fields(s) {
		all = append(all, analysis.SplitIdentifier(f)...)
	}
	return strings.Join(all, " ")
}

// nameKeys are the spellings under which exact-name lookups find a tool:
// its lower-case name and aliases, their canonical forms, and for an MCP
// tool with a multi-part tool name the canonical tool part alone
// (mcp__serena__find_symbol is found by "find symbol").
func nameKeys(name string, aliases []string) []string {
	var keys []string
	add := func(k string) {
		if k == "" {
			return
		}
		for _, x := range keys {
			if x == k {
				return
			}
		}
		keys = append(keys, k)
	}
	for _, n := range append([]string{name}, aliases...) {
		add(strings.ToLower(n))
		add(canonical(n))
		if t := mcpTool(n); t != "" && len(analysis.SplitIdentifier(t)) >= 2 {
			add(canonical(t))
		}
	}
	return keys
}

// boostKeys are the stemmed word phrases that, found in a query, name the
// tool: its whole name without the mcp__ prefix, and for MCP tools the tool
// part, each only when it has two or more words. A one-word name (Config,
// search) is an ordinary word of many queries; flooring every tool so named
// at the boost drowned the ranking on large catalogs (see
// docs/BENCHMARKS.md).
func (ix *Index) boostKeys(name string) []string {
	var keys []string
	if p := analysis.SplitIdentifier(stripMCP(name)); len(p) >= 2 {
		keys = append(keys, ix.stemPhrase(p))
	}
	if t := mcpTool(name); t != "" {
		if p := analysis.SplitIdentifier(t); len(p) >= 2 {
			if k := ix.stemPhrase(p); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func (ix *Index) stemPhrase(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = ix.an.Stem(w)
	}
	return strings.Join(out, " ")
}

func uniq(s []string) []string {
	out := s[:0:0]
	for _, x := range s {
		dup := false
		for _, y := range out {
			if x == y {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out
}
