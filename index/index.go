package index

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tooldex/tooldex/index/analysis"
)

// Scorer picks the text scorer of the hybrid (the spec calls it TF-IDF).
type Scorer int

// Scorers.
const (
	// ScorerBM25F is BM25F: per-field term frequencies, each normalised by
	// the field's length against the catalog's average, weighted by field
	// and summed, then saturated with k1. It is the default: it ranks
	// better than the spec's cosine on every dataset measured (see
	// docs/BENCHMARKS.md).
	ScorerBM25F Scorer = iota
	// ScorerCosine is the spec's TF-IDF: per field count/max(count) ×
	// weight, per term the largest field value, cosine similarity.
	ScorerCosine
)

// String returns "bm25f" or "cosine".
func (s Scorer) String() string {
	if s == ScorerCosine {
		return "cosine"
	}
	return "bm25f"
}

// ParseScorer parses "bm25f" or "cosine".
func ParseScorer(s string) (Scorer, error) {
	switch strings.ToLower(s) {
	case "bm25f", "bm25":
		return ScorerBM25F, nil
	case "cosine", "tfidf", "spec":
		return ScorerCosine, nil
	}
	return 0, fmt.Errorf("unknown scorer %q (want bm25f or cosine)", s)
}

// MaxDefaultShards caps the default shard count. Below parallelMin
// documents the shards are scored one after the other, and each costs a
// fixed 3–9 µs a query (its lists looked up, its slots combined), so an
// index of the default shard count holds one shard until it reaches
// parallelMin documents (docs/BENCHMARKS.md). Above it, more shards than
// cores only add that cost.
const MaxDefaultShards = 4

// Config tunes an Index. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// Shards is the number of shards. 0 means GOMAXPROCS, at most
	// MaxDefaultShards, for catalogs of parallelMin deferred documents
	// or more, where the shards are scored in parallel; a smaller
	// catalog is held in one shard, split when it grows to parallelMin
	// and merged again when it shrinks below half of that.
	Shards int
	// Scorer is the text scorer: BM25F (the default) or the spec's cosine.
	Scorer Scorer
	// KeywordWeight and TFIDFWeight weigh the keyword and text scorers in
	// the hybrid.
	KeywordWeight, TFIDFWeight float64
	// MinTFIDF drops text matches scoring below it.
	MinTFIDF float64
	// NameBoost is the text-score floor for a tool whose name the query
	// names; negative disables it.
	NameBoost float64
	// Field weights of the text scorer.
	NameWeight, HintWeight, DescWeight, ParamWeight float64
	// K1 and B are BM25F's saturation and length normalisation; B < 0
	// means no length normalisation.
	K1, B float64
	// K3 saturates repeated query terms (BM25's k3): a term written c
	// times in a query weighs c(K3+1)/(c+K3), 1 for c = 1, at most K3+1.
	// Negative counts repeats in full. Long task descriptions repeat
	// their topic words ("movie" three times), and counting every repeat
	// let those words drown the rest of the task (docs/BENCHMARKS.md).
	K3 float64
	// RequestDamping weighs down a query's request words, those people
	// use to ask rather than to name what they want ("help", "find",
	// "please"; see analysis.RequestShares): a text term of request share
	// g weighs (1 − g)^RequestDamping. 0 means the scorer's default (48
	// for BM25F, chosen by leave-one-dataset-out evaluation; none for the
	// spec's cosine), negative none.
	RequestDamping float64
	// RequestShares replaces the embedded request shares, by term, each
	// in [0, 1] (nil: analysis.RequestShares()).
	RequestShares map[string]float64
}

// DefaultConfig returns BM25F (k1 1.2, b 0.75, k3 1) with the spec's field
// weights (name 3.0, search hint 2.5, description 1.0), parameters 0.75
// (chosen by leave-one-dataset-out evaluation over every query shape,
// docs/BENCHMARKS.md), hybrid weights keyword DefaultKeywordWeight and
// text DefaultTextWeight, minimum text score 0.10 and no name boost (BM25F's name field already
// ranks a named tool first; the floor only reorders the tail, measured
// 4 NDCG points worse on bfcl). SpecConfig is the spec's.
func DefaultConfig() Config {
	return Config{
		Shards:        0, // GOMAXPROCS, at most MaxDefaultShards, from parallelMin documents
		Scorer:        ScorerBM25F,
		KeywordWeight: DefaultKeywordWeight, TFIDFWeight: DefaultTextWeight,
		MinTFIDF: 0.10, NameBoost: -1,
		NameWeight: 3.0, HintWeight: 2.5, DescWeight: 1.0, ParamWeight: 0.75,
		K1: 1.2, B: 0.75, K3: 1,
		RequestDamping: DefaultRequestDamping,
	}
}

// DefaultRequestDamping is BM25F's RequestDamping.
const DefaultRequestDamping = 48

// Default hybrid weights of the BM25F scorer, measured with the eval
// command (docs/BENCHMARKS.md).
const (
	DefaultKeywordWeight = 0.2
	DefaultTextWeight    = 0.8
)

// SpecConfig returns the spec's configuration: cosine TF-IDF with hybrid
// weights keyword 0.4, TF-IDF 0.6 and the 0.75 name boost.
func SpecConfig() Config {
	c := DefaultConfig()
	c.Scorer = ScorerCosine
	c.KeywordWeight, c.TFIDFWeight = 0.4, 0.6
	c.NameBoost = 0.75
	c.RequestDamping = -1
	return c
}

// ScorerConfig returns the defaults that go with a scorer: SpecConfig for
// the cosine, DefaultConfig otherwise.
func ScorerConfig(s Scorer) Config {
	if s == ScorerCosine {
		return SpecConfig()
	}
	return DefaultConfig()
}

// withDefaults fills zero fields from ScorerConfig(c.Scorer).
func (c Config) withDefaults() Config {
	d := ScorerConfig(c.Scorer)
	c.Shards = min(max(c.Shards, 0), math.MaxUint16) // doc.shard is a uint16
	if c.KeywordWeight == 0 && c.TFIDFWeight == 0 {
		c.KeywordWeight, c.TFIDFWeight = d.KeywordWeight, d.TFIDFWeight
	}
	for _, f := range []struct {
		p *float64
		v float64
	}{
		{&c.MinTFIDF, d.MinTFIDF}, {&c.NameBoost, d.NameBoost}, {&c.NameWeight, d.NameWeight},
		{&c.HintWeight, d.HintWeight}, {&c.DescWeight, d.DescWeight}, {&c.ParamWeight, d.ParamWeight},
		{&c.K1, d.K1}, {&c.B, d.B}, {&c.K3, d.K3}, {&c.RequestDamping, d.RequestDamping},
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

	// Documents are found by name in keys (nameIndex.byName), except
	// one with an empty name, which has no spelling.
	unnamed *doc
	// core holds the core documents, and coreParts them by name part,
	// which every search reads (coreMentions); a document's parts are
	// recomputed from its name when it leaves.
	core      map[*doc]struct{}
	coreParts map[string][]*doc
	keys      nameIndex // exact-name spellings → documents
	// servers holds the deferred documents named mcp__… (in any case)
	// by their server prefix, for mcp__ prefix queries (prefix.go).
	servers map[string][]*doc
	// boost maps stemmed name phrases to documents when the name boost
	// is on (Config.NameBoost > 0); otherwise it stays empty, since
	// deferred documents' phrases then never matter to a search.
	boost phrases
	// coreBoost holds the core documents' phrases alone.
	coreBoost phrases

	tf vocab // TF-IDF terms of deferred documents
	// flen sums the field lengths (in terms) of deferred documents, for
	// BM25F's average lengths; integers, so the sum never depends on
	// the order of updates.
	flen  [nFields]uint64
	kw    vocab // keyword words (name parts, hint and description words)
	parts parts // name parts, for partial (substring) matches
	// tfl and kwl hold the posting lists of the terms and words, by id
	// and shard, for the shards that have postings of them.
	tfl lists[tfPost]
	kwl lists[kwPost]

	shards    []*shard
	nDeferred int
	// splitTo, when above 1, is the number of shards the index is split
	// into once it holds splitFrom deferred documents (Config.Shards 0;
	// tests lower splitFrom); it holds one below half of that.
	splitTo, splitFrom int

	prep  sync.Pool // *prepared
	prune sync.Pool // *pruneScratch
	plans sync.Pool // *plan

	// exhaustive switches dynamic pruning off and pruneStats, when set,
	// counts pruned searches; searches run pruned from pruneFrom
	// deferred documents (pruneMin; tests lower it).
	exhaustive bool
	pruneStats *pruneStats
	pruneFrom  int
	// norms caches BM25F's length factors for the current epoch (what
	// searches keep of each posting list is the shards', postx.go).
	norms atomic.Pointer[lenNorm]

	// partCache caches partial name-part matches per query word; searches
	// share it under partMu while holding the read lock.
	partMu    sync.Mutex
	partEpoch uint64
	partCache map[string]*partEntry
}

// doc is one indexed tool. It is kept small: a catalog holds many, so
// what can be recomputed from the name (its name parts, exact-name keys
// and name phrases) is recomputed when the document leaves rather than
// kept, its field statistics live in its shard alone and its forward
// lists are encoded (fwd.go).
type doc struct {
	name string
	// fwd holds a deferred document's forward lists, encoded.
	fwd string
	// aliases is set for the few documents that have aliases (their
	// exact-name keys depend on them).
	aliases *[]string
	slot    int32
	shard   uint16
	core    bool
	mcp     bool
}

// prepared is a document analysed outside the lock, with what adding it
// needs and the document does not keep. Prepared values are reused
// (Index.prep) with their scratch.
type prepared struct {
	d                      *doc
	stat                   docStat
	keys, boostKeys, parts []string
	// terms are the TF-IDF term texts, sorted, and tfs their counts;
	// words are the keyword words, sorted, and fields their fields. Ids
	// are assigned under the lock, into dterms and dwords.
	terms  []string
	tfs    []tfs
	words  []string
	fields []uint8
	dterms []docTerm
	dwords []docWord

	// Scratch.
	text      analysis.QueryText
	wtext     []string
	counts    map[string]tfs
	masks     map[string]uint8
	buf, wbuf []byte
}

type docTerm struct {
	id uint32
	tf tfs
}

// Text fields, in the order of tfs.
const (
	fName = iota
	fHint
	fDesc
	fParams
	nFields
)

// tfs are a term's counts in each text field, saturated at 255.
type tfs [nFields]uint8

// docStat holds a document's field lengths in terms and the largest term
// count of each field. Lengths saturate at 65,535 terms (tools register
// descriptions of at most a few thousand), which keeps the statistics of
// a slot at 12 bytes.
type docStat struct {
	flen [nFields]uint16
	fmax [nFields]uint8
}

type docWord struct {
	id   uint32
	mask uint8
}

// Keyword field bits.
const (
	fieldName uint8 = 1 << iota
	fieldHint
	fieldDesc
	fieldMCP     // in a kwPost and in scratch: the document is an MCP tool
	fieldPartial // scratch only: a name part contains the term
)

// A shard's slots are allocated in order and never reused, so every
// posting list is sorted by slot. Removing a document tombstones its slot
// (docs[slot] nil, a dead bit) and leaves its postings in place; a list is
// compacted when more than half of it is dead, and the shard is renumbered
// when it has more dead slots than live ones (plus renumberSlack). Both
// are amortised over the removals that caused them, so an update costs
// work proportional to the document.
type shard struct {
	docs  []*doc
	dead  []uint64 // bit per slot
	nDead int
	// stat holds each slot's field lengths and largest counts, beside
	// the postings so that scoring never dereferences a document.
	stat []docStat
	// normEp and norm cache each slot's cosine vector length with the
	// index epoch it was computed in; searches fill them lazily, with
	// atomics, under the read lock. Only the cosine scorer has them.
	normEp []uint64
	norm   []uint64 // float64 bits
	// idx is the shard's position in Index.shards: its posting lists
	// are Index.tfl's and Index.kwl's of that shard.
	idx  uint16
	pool sync.Pool // *scratch
	// xs keeps the BM25F saturated sums of the term lists the exhaustive
	// search scored, by term id (postx.go).
	xs atomic.Pointer[xLists]
}

// isDead reports whether slot holds a removed document.
func (sh *shard) isDead(slot uint32) bool {
	return sh.dead[slot>>6]&(1<<(slot&63)) != 0
}

type tfPost struct {
	slot uint32
	tf   tfs
}

// kwPost is a keyword posting: its slot, the fields that have the word
// and whether the document is an MCP tool, packed into 4 bytes (a struct
// of them would be padded to 8), so that scoring a keyword posting never
// dereferences its document.
type kwPost uint32

// kwMaskBits are the bits of a word's fields (fieldName, fieldHint and
// fieldDesc); a kwPost's low kwPostBits add fieldMCP. A shard has so at
// most 1<<28 slots.
const (
	kwMaskBits = 3
	kwPostBits = 4
	maxSlots   = 1 << (32 - kwPostBits)
)

func newKwPost(slot uint32, mask uint8, mcp bool) kwPost {
	if mcp {
		mask |= fieldMCP
	}
	return kwPost(slot<<kwPostBits | uint32(mask&(1<<kwPostBits-1)))
}

// mask returns the fields of the posting.
func (p kwPost) mask() uint8 { return uint8(p) & (1<<kwMaskBits - 1) }

// low returns the fields and fieldMCP.
func (p kwPost) low() uint8 { return uint8(p) & (1<<kwPostBits - 1) }

// New returns an empty index.
func New(cfg Config) *Index {
	cfg = cfg.withDefaults()
	seed := maphash.MakeSeed()
	ix := &Index{
		cfg:       cfg,
		an:        analysis.New(),
		seed:      seed,
		epoch:     1,
		core:      make(map[*doc]struct{}),
		coreParts: make(map[string][]*doc),
		keys:      newNameIndex(seed),
		servers:   make(map[string][]*doc),
		boost:     newPhrases(),
		coreBoost: newPhrases(),
		tf:        newVocab(seed),
		kw:        newVocab(seed),
		parts:     parts{count: make(map[string]int32), grams: make(map[string][]string)},
		partCache: make(map[string]*partEntry),
		pruneFrom: pruneMin,
	}
	n := cfg.Shards
	if n == 0 {
		ix.splitTo, ix.splitFrom = min(runtime.GOMAXPROCS(0), MaxDefaultShards), parallelMin
		n = 1
	}
	ix.shards = newShards(n)
	// Each request word's weight, (1 − share)^λ, kept by term id.
	ix.tf.weights = requestWeights(cfg)
	return ix
}

// requestWeights returns the weight of each request word under cfg, nil
// when damping is off.
func requestWeights(cfg Config) map[string]float64 {
	if cfg.RequestDamping <= 0 {
		return nil
	}
	shares := cfg.RequestShares
	if shares == nil {
		shares = analysis.RequestShares()
	}
	w := make(map[string]float64, len(shares))
	for t, g := range shares {
		// A share outside [0, 1] (a caller's table) is clamped into
		// it, and NaN counts as none.
		if !(g > 0) {
			g = 0
		}
		w[t] = math.Pow(1-min(g, 1), cfg.RequestDamping)
	}
	return w
}

// newShards returns n empty shards.
func newShards(n int) []*shard {
	shards := make([]*shard, n)
	for i := range shards {
		shards[i] = &shard{idx: uint16(i)}
	}
	return shards
}

// Config returns the configuration in effect.
func (ix *Index) Config() Config { return ix.cfg }

// Analyzer returns the index's text analyzer.
func (ix *Index) Analyzer() *analysis.Analyzer { return ix.an }

// Len returns the number of documents, core and deferred.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.nDeferred + len(ix.core)
}

// byName returns the document named name, or nil.
func (ix *Index) byName(name string) *doc {
	if name == "" {
		return ix.unnamed
	}
	return ix.keys.byName(name)
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
	defer ix.release(p) // after the unlock
	ix.mu.Lock()
	defer ix.mu.Unlock()
	switch old := ix.byName(d.Name); {
	case old == nil:
		ix.add(p)
	case !old.core && !p.d.core:
		ix.replace(old, p)
	default:
		ix.remove(old)
		ix.add(p)
	}
	ix.fitShards()
	ix.epoch++
}

// Remove deletes the named document and reports whether it existed.
func (ix *Index) Remove(name string) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	d := ix.byName(name)
	if d == nil {
		return false
	}
	ix.remove(d)
	ix.fitShards()
	ix.epoch++
	return true
}

// prepare analyses a document outside the lock. The caller releases the
// result.
func (ix *Index) prepare(in Doc) *prepared {
	d := &doc{name: in.Name, core: in.Core, mcp: isMCP(in.Name)}
	if len(in.Aliases) > 0 {
		aliases := slices.Clone(in.Aliases)
		d.aliases = &aliases
	}
	p, _ := ix.prep.Get().(*prepared)
	if p == nil {
		p = &prepared{counts: make(map[string]tfs), masks: make(map[string]uint8)}
	}
	p.d, p.stat = d, docStat{}
	p.keys, p.parts = nameKeys(in.Name, in.Aliases), namePartsOf(in.Name)
	if d.core || ix.cfg.NameBoost > 0 {
		p.boostKeys = ix.boostKeys(in.Name)
	}
	if d.core {
		return p
	}

	// Text terms: per field, the count of each term and the field's
	// length; the scorer weighs them at search time.
	counts := p.counts
	field := func(f int, text string, w float64) {
		if text == "" || w <= 0 {
			return
		}
		ix.an.Analyze(&p.text, text, true, false)
		p.stat.flen[f] = uint16(min(len(p.text.Terms)-ix.joinedForms(p.text.Tokens), math.MaxUint16))
		for _, t := range p.text.Terms {
			c := counts[t]
			if c[f] < math.MaxUint8 {
				c[f]++
			}
			p.stat.fmax[f] = max(p.stat.fmax[f], c[f])
			counts[t] = c
		}
	}
	nameText := stripMCP(in.Name)
	for _, a := range in.Aliases {
		nameText += " " + stripMCP(a)
	}
	field(fName, nameText, ix.cfg.NameWeight)
	field(fHint, in.SearchHint, ix.cfg.HintWeight)
	field(fDesc, in.Description, ix.cfg.DescWeight)
	field(fParams, in.Params, ix.cfg.ParamWeight)
	p.terms = slices.AppendSeq(p.terms[:0], maps.Keys(counts))
	slices.Sort(p.terms)
	p.tfs = p.tfs[:0]
	for _, t := range p.terms {
		p.tfs = append(p.tfs, counts[t])
	}
	masks := p.masks
	for _, part := range p.parts {
		masks[part] |= fieldName
	}
	p.wtext = analysis.AppendWords(p.wtext[:0], in.SearchHint)
	for _, w := range p.wtext {
		masks[w] |= fieldHint
	}
	p.wtext = analysis.AppendWords(p.wtext[:0], in.Description)
	for _, w := range p.wtext {
		masks[w] |= fieldDesc
	}
	p.words = slices.AppendSeq(p.words[:0], maps.Keys(masks))
	slices.Sort(p.words)
	p.fields = p.fields[:0]
	for _, w := range p.words {
		p.fields = append(p.fields, masks[w])
	}
	return p
}

// joinedForms counts the joined forms TermsOf adds for multi-part words
// ("one-shot" gives oneshot beside one and shot). They are extra terms
// of the words they join, not words: a field's BM25F length counts its
// words, so a description rich in identifiers is not taken as longer
// than its prose.
func (ix *Index) joinedForms(toks []analysis.Token) int {
	n := 0
	for _, tok := range toks {
		if !tok.CJK && len(tok.Parts) > 1 && !ix.an.IsStopWord(tok.Joined()) {
			n++
		}
	}
	return n
}

// release returns p to the pool, letting go of what it refers to.
func (ix *Index) release(p *prepared) {
	clear(p.counts)
	clear(p.masks)
	p.text.Reset()
	clear(p.wtext)
	clear(p.terms)
	clear(p.words)
	p.d, p.keys, p.boostKeys, p.parts = nil, nil, nil, nil
	ix.prep.Put(p)
}

// namePartsOf returns the distinct identifier parts of a tool's name
// without the mcp__ prefix: its keyword name words.
func namePartsOf(name string) []string {
	return uniq(analysis.SplitIdentifier(stripMCP(name)))
}
