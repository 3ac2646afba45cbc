package index

import (
	"hash/maphash"
	"maps"
	"runtime"
	"slices"
	"sync"

	"github.com/tooldex/tooldex/index/analysis"
)

// Config tunes an Index. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// Shards is the number of shards; 0 means GOMAXPROCS.
	Shards int
	// KeywordWeight and TFIDFWeight weigh the two scorers in the hybrid.
	KeywordWeight, TFIDFWeight float64
	// MinTFIDF drops TF-IDF matches below it.
	MinTFIDF float64
	// NameBoost is the TF-IDF floor for a tool whose name the query names;
	// negative disables it.
	NameBoost float64
	// Field weights for TF-IDF.
	NameWeight, HintWeight, DescWeight, ParamWeight float64
}

// DefaultConfig returns the spec's weights: keyword 0.4, TF-IDF 0.6, name
// 3.0, search hint 2.5, description 1.0, minimum TF-IDF 0.10, name boost
// 0.75. Parameters weigh 0.5, as measured with the eval command (see
// docs/BENCHMARKS.md).
func DefaultConfig() Config {
	return Config{
		Shards:        runtime.GOMAXPROCS(0),
		KeywordWeight: 0.4, TFIDFWeight: 0.6,
		MinTFIDF: 0.10, NameBoost: 0.75,
		NameWeight: 3.0, HintWeight: 2.5, DescWeight: 1.0, ParamWeight: 0.5,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Shards <= 0 {
		c.Shards = d.Shards
	}
	if c.KeywordWeight == 0 && c.TFIDFWeight == 0 {
		c.KeywordWeight, c.TFIDFWeight = d.KeywordWeight, d.TFIDFWeight
	}
	for _, f := range []struct {
		p *float64
		v float64
	}{
		{&c.MinTFIDF, d.MinTFIDF}, {&c.NameBoost, d.NameBoost}, {&c.NameWeight, d.NameWeight},
		{&c.HintWeight, d.HintWeight}, {&c.DescWeight, d.DescWeight}, {&c.ParamWeight, d.ParamWeight},
	} {
		if *f.p == 0 {
			*f.p = f.v
		}
	}
	return c
}

// Doc is what the index needs of a tool.
type Doc struct {
	Name        string
	Aliases     []string
	Description string
	SearchHint  string
	// Params is the text of the input schema's parameters (see ParamText).
	Params string
	// Core tools are found by select: and exact names but never ranked.
	Core bool
}

// Index is a sharded in-memory search index. Create it with New.
type Index struct {
	cfg Config
	an  *analysis.Analyzer
	// seed places documents on shards.
	seed maphash.Seed

	mu    sync.RWMutex
	epoch uint64 // bumped by every update; doc norms cached per epoch

	docs  map[string]*doc   // every document by name
	core  map[*doc]bool     // core documents
	keys  map[string][]*doc // exact-name spellings → documents
	boost map[string][]*doc // stemmed name phrases → documents
	// boostFirst counts the name phrases starting with each word; boostLen
	// is the longest phrase in words.
	boostFirst map[string]int32
	boostLen   int

	tf    vocab // TF-IDF terms of deferred documents
	kw    vocab // keyword words (name parts, hint and description words)
	parts parts // name parts, for partial (substring) matches

	shards    []*shard
	nDeferred int

	prep sync.Pool // *prepScratch

	// partCache caches partial name-part matches per query word; searches
	// share it under partMu while holding the read lock.
	partMu    sync.Mutex
	partEpoch uint64
	partCache map[string][]uint32
}

// doc is one indexed tool.
type doc struct {
	name  string
	core  bool
	mcp   bool
	shard int
	slot  int32

	terms     []docTerm // TF-IDF terms, sorted by term text
	kw        []docWord
	parts     []string
	keys      []string
	boostKeys []string

	// pending holds term and word texts between prepare and add.
	pending *pendingText
}

// prepScratch holds the maps prepare reuses between documents.
type prepScratch struct {
	terms   []string
	counts  map[string]int
	weights map[string]float32
	masks   map[string]uint8
}

type pendingText struct {
	terms, words []string
}

type docTerm struct {
	id  uint32
	pos uint32 // position in the shard's posting list
	w   float32
}

type docWord struct {
	id   uint32
	pos  uint32
	mask uint8
}

// Keyword field bits.
const (
	fieldName uint8 = 1 << iota
	fieldHint
	fieldDesc
	fieldPartial // scratch only: a name part contains the term
)

type shard struct {
	docs []*doc
	free []int32
	// normEp and norm cache each slot's TF-IDF vector length with the
	// index epoch it was computed in; searches fill them lazily, with
	// atomics, under the read lock.
	normEp []uint64
	norm   []uint64   // float64 bits
	tf     [][]tfPost // by term id
	kw     [][]kwPost // by word id
	pool   sync.Pool  // *scratch
}

type tfPost struct {
	slot uint32
	w    float32
}

type kwPost struct {
	slot uint32
	mask uint8
}

// New returns an empty index.
func New(cfg Config) *Index {
	cfg = cfg.withDefaults()
	ix := &Index{
		cfg:        cfg,
		an:         analysis.New(),
		seed:       maphash.MakeSeed(),
		epoch:      1,
		docs:       make(map[string]*doc),
		core:       make(map[*doc]bool),
		keys:       make(map[string][]*doc),
		boost:      make(map[string][]*doc),
		boostFirst: make(map[string]int32),
		tf:         newVocab(),
		kw:         newVocab(),
		parts:      parts{count: make(map[string]int32), grams: make(map[string][]string)},
		partCache:  make(map[string][]uint32),
	}
	ix.shards = make([]*shard, cfg.Shards)
	for i := range ix.shards {
		ix.shards[i] = &shard{}
	}
	return ix
}

// Config returns the configuration in effect.
func (ix *Index) Config() Config { return ix.cfg }

// Analyzer returns the index's text analyzer.
func (ix *Index) Analyzer() *analysis.Analyzer { return ix.an }

// Len returns the number of documents, core and deferred.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.docs)
}

// Deferred returns the number of deferred (searchable) documents.
func (ix *Index) Deferred() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.nDeferred
}

// Upsert adds d, replacing any document of the same name. Its cost is
// proportional to the size of d (and of the document it replaces).
func (ix *Index) Upsert(d Doc) {
	p := ix.prepare(d)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	switch old := ix.docs[d.Name]; {
	case old == nil:
		ix.add(p)
	case !old.core && !p.core:
		ix.replace(old, p)
	default:
		ix.remove(old)
		ix.add(p)
	}
	ix.epoch++
}

// Remove deletes the named document and reports whether it existed.
func (ix *Index) Remove(name string) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	d := ix.docs[name]
	if d == nil {
		return false
	}
	ix.remove(d)
	ix.epoch++
	return true
}

// prepare analyses a document outside the lock.
func (ix *Index) prepare(in Doc) *doc {
	d := &doc{name: in.Name, core: in.Core, mcp: isMCP(in.Name)}
	d.keys = nameKeys(in.Name, in.Aliases)
	bare := stripMCP(in.Name)
	d.parts = uniq(analysis.SplitIdentifier(bare))
	d.boostKeys = ix.boostKeys(in.Name)
	if d.core {
		return d
	}

	// TF-IDF: per field, count/max(count) × weight; per term the largest
	// field value wins.
	sc, _ := ix.prep.Get().(*prepScratch)
	if sc == nil {
		sc = &prepScratch{counts: make(map[string]int), weights: make(map[string]float32), masks: make(map[string]uint8)}
	}
	defer func() {
		clear(sc.counts)
		clear(sc.weights)
		clear(sc.masks)
		ix.prep.Put(sc)
	}()
	weights := sc.weights
	field := func(text string, w float64) {
		if text == "" || w <= 0 {
			return
		}
		sc.terms = ix.an.Terms(sc.terms[:0], text)
		terms := sc.terms
		counts := sc.counts
		clear(counts)
		most := 1
		for _, t := range terms {
			counts[t]++
			most = max(most, counts[t])
		}
		for t, c := range counts {
			v := float32(float64(c) / float64(most) * w)
			weights[t] = max(weights[t], v)
		}
	}
	nameText := bare
	for _, a := range in.Aliases {
		nameText += " " + stripMCP(a)
	}
	field(nameText, ix.cfg.NameWeight)
	field(in.SearchHint, ix.cfg.HintWeight)
	field(in.Description, ix.cfg.DescWeight)
	field(in.Params, ix.cfg.ParamWeight)
	d.terms = make([]docTerm, 0, len(weights))
	termText := slices.Sorted(maps.Keys(weights))
	for _, t := range termText {
		d.terms = append(d.terms, docTerm{w: weights[t]})
	}
	// Term ids are assigned under the lock; keep the texts until then.
	d.kw = nil
	masks := sc.masks
	for _, p := range d.parts {
		masks[p] |= fieldName
	}
	for _, w := range analysis.Words(in.SearchHint) {
		masks[w] |= fieldHint
	}
	for _, w := range analysis.Words(in.Description) {
		masks[w] |= fieldDesc
	}
	words := slices.Sorted(maps.Keys(masks))
	for _, w := range words {
		d.kw = append(d.kw, docWord{mask: masks[w]})
	}
	d.pending = &pendingText{terms: termText, words: words}
	return d
}
