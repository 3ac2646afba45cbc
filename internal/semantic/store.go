package semantic

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tooldex/tooldex/internal/backoff"
)

// Embedder turns texts into vectors, one per text, in order; Client is the
// one tooldex ships.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// StoreConfig configures a Store.
type StoreConfig struct {
	Embedder Embedder
	// Log defaults to a no-op logger.
	Log *zap.Logger
	// Batch is the number of tool texts per embedding request (default 32).
	Batch int
	// RetryMin and RetryMax bound the wait after a failed batch: it starts
	// at RetryMin and doubles up to RetryMax (defaults 1 s and 1 min).
	RetryMin, RetryMax time.Duration
	// QueryCache is how many query vectors are kept (default 1,024).
	QueryCache int
	// MinSimilarity is the lowest cosine similarity at which a tool the
	// lexical ranking did not find joins a fused ranking (Rank); 0 lets
	// any nearest tool in (see MinSimilarity for the embedded models).
	MinSimilarity float64
	// File, when set, is the path of a vector file (vecfile.go) that
	// keeps the tool vectors across restarts: a tool whose text it holds
	// is not embedded again. Its name must change when the embedder's
	// vectors do (CacheName, ExternalCacheName); the first batch after a
	// start is always embedded, so a file of other dimensions is found
	// out and replaced. A file that cannot be read or written is logged
	// and the store goes on without it.
	File string
	// CompactAfter is how long the store must go without a Put before
	// it rewrites its vector file with the live tools only (default 30 s):
	// until then a restarted store keeps every record it read, for tools
	// not registered again yet.
	CompactAfter time.Duration
}

// Hit is a tool and its cosine similarity to a query.
type Hit struct {
	Name  string
	Score float64
}

// Stats describes a Store.
type Stats struct {
	Embedded    int    // tools with a vector
	Pending     int    // tools waiting for one (new or changed text)
	Dimensions  int    // 0 before the first vector
	Failures    uint64 // failed batches (retried)
	Skipped     uint64 // tools whose text the embedder refused
	FromFile    uint64 // tools whose vector was read from StoreConfig.File
	FileRecords int    // records in the vector file, live or not
}

// Store keeps one vector per tool. Put and Delete are cheap: Run embeds
// what they queue, in the background. Vectors are unit length, quantised to
// int8 (dimension bytes per tool).
type Store struct {
	emb    Embedder
	log    *zap.Logger
	batch  int
	retry  [2]time.Duration
	seed   maphash.Seed
	wake   chan struct{}
	qcache *queryCache
	minSim float64

	mu       sync.RWMutex
	dim      int
	vecs     []int8   // slot*dim ... (slot+1)*dim
	names    []string // slot → name; "" for a free slot
	hashes   []uint64 // slot → hash of the text its vector embeds
	slots    map[string]int
	free     []int
	pending  map[string]string // name → text to embed
	failures uint64
	skipped  uint64
	keys     []textKey // slot → key of the text its vector embeds, with a file
	fromFile uint64    // tools whose vector came from the file

	lastPut atomic.Int64 // unix nanoseconds of the last Put

	// The vector file, written by Run's goroutine only (under mu).
	compactAfter time.Duration
	file         string
	vf           *vecFile
	loaded       map[textKey][]int8 // the file's vectors until the store caught up
	fdim         int                // their dimensions
	fend         int64              // the end of the file's last whole record
	frecs        int                // its records
}

// NewStore returns an empty store; call Run to start embedding.
func NewStore(cfg StoreConfig) *Store {
	s := &Store{
		emb:          cfg.Embedder,
		log:          cfg.Log,
		batch:        cfg.Batch,
		retry:        [2]time.Duration{cfg.RetryMin, cfg.RetryMax},
		seed:         maphash.MakeSeed(),
		wake:         make(chan struct{}, 1),
		minSim:       cfg.MinSimilarity,
		file:         cfg.File,
		compactAfter: cfg.CompactAfter,
		slots:        make(map[string]int),
		pending:      make(map[string]string),
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.batch <= 0 {
		s.batch = 32
	}
	if s.retry[0] <= 0 {
		s.retry[0] = time.Second
	}
	if s.retry[1] < s.retry[0] {
		s.retry[1] = max(time.Minute, s.retry[0])
	}
	if s.compactAfter <= 0 {
		s.compactAfter = defaultCompactAfter
	}
	n := cfg.QueryCache
	if n <= 0 {
		n = 1024
	}
	s.qcache = newQueryCache(n)
	return s
}

// Put queues a tool's text for embedding, unless its vector already embeds
// that text. The old vector, if any, answers queries until the new one
// arrives.
func (s *Store) Put(name, text string) {
	s.lastPut.Store(time.Now().UnixNano())
	h := maphash.String(s.seed, text)
	s.mu.Lock()
	if slot, ok := s.slots[name]; ok && s.hashes[slot] == h {
		delete(s.pending, name)
		s.mu.Unlock()
		return
	}
	s.pending[name] = text
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Delete forgets a tool.
func (s *Store) Delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, name)
	if slot, ok := s.slots[name]; ok {
		delete(s.slots, name)
		s.names[slot] = ""
		s.free = append(s.free, slot)
	}
}

// Stats reports the store's size and progress.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{Embedded: len(s.slots), Pending: len(s.pending), Dimensions: s.dim, Failures: s.failures, Skipped: s.skipped, FromFile: s.fromFile}
	if s.vf != nil {
		st.FileRecords = s.vf.records
	}
	return st
}

// Run embeds queued tools until ctx is done, then returns ctx's error. A
// failed batch is retried after a growing wait; tools that change while
// their batch is in flight are embedded again. A batch the server refuses
// (a 4xx: see StatusError.Refused) is split in halves until the tool it
// refuses is alone, and that tool is skipped (logged; it stays lexical
// only) so that one bad text cannot hold up the others.
func (s *Store) Run(ctx context.Context) error {
	bo := backoff.Backoff{Min: s.retry[0], Max: s.retry[1]}
	s.loadFile()
	defer s.closeFile()
	for {
		names, texts := s.next(s.batch)
		if len(names) == 0 {
			compactNow, wait := s.compactDue(time.Now())
			if compactNow {
				s.compact()
				continue
			}
			// With a compaction to come, wake up when it is due.
			var due <-chan time.Time
			var t *time.Timer
			if wait > 0 {
				t = time.NewTimer(wait)
				due = t.C
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-s.wake:
			case <-due:
			}
			if t != nil {
				t.Stop()
			}
			continue
		}
		if names, texts = s.takeFromFile(names, texts); len(names) == 0 {
			continue
		}
		err := s.embed(ctx, names, texts)
		s.flushFile()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.mu.Lock()
			s.failures++
			s.mu.Unlock()
			wait := bo.Next()
			s.log.Warn("embedding tools failed; retrying", zap.Int("tools", len(names)), zap.Duration("wait", wait), zap.Error(err))
			if !backoff.Sleep(ctx, wait) {
				return ctx.Err()
			}
			continue
		}
		bo.Reset()
	}
}

// embed embeds and stores a batch. When the server refuses it, the halves
// are embedded in turn, down to the refused tool, which is skipped; any
// other error is returned (the tools not stored stay pending).
func (s *Store) embed(ctx context.Context, names, texts []string) error {
	vecs, err := s.emb.Embed(ctx, texts)
	if err == nil {
		return s.store(names, texts, vecs)
	}
	if se := (*StatusError)(nil); !errors.As(err, &se) || !se.Refused() {
		return err
	}
	if len(names) == 1 {
		s.skip(names[0], texts[0], err)
		return nil
	}
	h := len(names) / 2
	if err := s.embed(ctx, names[:h], texts[:h]); err != nil {
		return err
	}
	return s.embed(ctx, names[h:], texts[h:])
}

// skip drops a tool the embedder refuses, unless its text changed since.
func (s *Store) skip(name, text string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[name] != text {
		return
	}
	delete(s.pending, name)
	s.skipped++
	s.log.Error("the embedder refuses this tool's text; it is ranked without dense retrieval", zap.String("tool", name), zap.Error(err))
}

// next takes up to n queued tools, in map order: a batch that fails for
// every tool is retried whole anyway, and one the server refuses is split
// (see Run), so no order is needed to keep a bad tool from holding up the
// rest; sorting every pending name per batch would cost O(P log P) each
// time, quadratic over a large catalog.
func (s *Store) next(n int) ([]string, []string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.pending) == 0 {
		return nil, nil
	}
	names := make([]string, 0, min(n, len(s.pending)))
	texts := make([]string, 0, cap(names))
	for name, text := range s.pending {
		if len(names) == n {
			break
		}
		names, texts = append(names, name), append(texts, text)
	}
	return names, texts
}

var errDimensions = errors.New("embedding dimensions changed")

// store keeps the vectors of a finished batch for the tools whose text did
// not change meanwhile.
func (s *Store) store(names, texts []string, vecs [][]float32) error {
	if len(vecs) != len(names) {
		return fmt.Errorf("%w: %d embeddings for %d texts", ErrEmbedder, len(vecs), len(names))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dim == 0 && len(vecs) > 0 {
		s.dim = len(vecs[0])
	}
	for _, v := range vecs {
		if len(v) != s.dim {
			return fmt.Errorf("%w: %w: got %d, have %d", ErrEmbedder, errDimensions, len(v), s.dim)
		}
	}
	if s.file != "" && s.vf == nil && s.dim > 0 {
		s.openFile()
	}
	for i, name := range names {
		if cur, ok := s.pending[name]; !ok || cur != texts[i] {
			continue // deleted or changed while in flight
		}
		v := s.place(name, texts[i])
		quantize(v, vecs[i])
		if s.vf != nil {
			k := keyOf(texts[i])
			s.keys[s.slots[name]] = k
			if err := s.vf.add(k, v); err != nil {
				s.fileFailed("writing", err)
			}
		}
	}
	return nil
}

// place takes name off the queue and returns the vector of its slot
// (a new one if it has none) to be filled, recording text's hash. The
// caller holds s.mu.
func (s *Store) place(name, text string) []int8 {
	delete(s.pending, name)
	slot, ok := s.slots[name]
	if !ok {
		if n := len(s.free); n > 0 {
			slot = s.free[n-1]
			s.free = s.free[:n-1]
		} else {
			slot = len(s.names)
			s.names = append(s.names, "")
			s.hashes = append(s.hashes, 0)
			s.vecs = append(s.vecs, make([]int8, s.dim)...)
			if s.file != "" {
				s.keys = append(s.keys, textKey{})
			}
		}
		s.slots[name] = slot
		s.names[slot] = name
	}
	s.hashes[slot] = maphash.String(s.seed, text)
	return s.vecs[slot*s.dim : (slot+1)*s.dim]
}

// quantize writes v, scaled to unit length, as int8 (×127) into dst. A
// zero vector stays zero.
func quantize(dst []int8, v []float32) {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		clear(dst)
		return
	}
	k := 127 / math.Sqrt(norm)
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x) * k))
	}
}

// Query is a query's vector, ready for Nearest and Similarity.
type Query struct {
	v   []int8
	v16 []int16 // v widened, for dots
}

func newQuery(v []int8) Query {
	w := make([]int16, len(v))
	for i, x := range v {
		w[i] = int16(x)
	}
	return Query{v: v, v16: w}
}

// Embed embeds a query text, or takes it from the cache of recent queries.
func (s *Store) Embed(ctx context.Context, text string) (Query, error) {
	if v, ok := s.qcache.get(text); ok {
		return newQuery(v), nil
	}
	vecs, err := s.emb.Embed(ctx, []string{text})
	if err != nil {
		return Query{}, err
	}
	if len(vecs) != 1 {
		return Query{}, fmt.Errorf("%w: %d embeddings for 1 text", ErrEmbedder, len(vecs))
	}
	v := make([]int8, len(vecs[0]))
	quantize(v, vecs[0])
	s.qcache.put(text, v)
	return newQuery(v), nil
}

// Nearest returns the k tools most similar to q that allow accepts (all
// when allow is nil), best first; ties go to the smaller name. A query
// whose dimensions differ from the store's finds nothing.
func (s *Store) Nearest(q Query, k int, allow func(name string) bool) []Hit {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if k <= 0 || len(q.v) != s.dim || s.dim == 0 {
		return nil
	}
	h := make(hitHeap, 0, k+1)
	// Every slot's dot product first, in one pass over the vectors (SIMD
	// where the CPU has it), then the selection.
	sp := dotPool.Get().(*[]int32)
	defer dotPool.Put(sp)
	if cap(*sp) < len(s.names) {
		*sp = make([]int32, len(s.names))
	}
	sums := (*sp)[:len(s.names)]
	dots(q.v16, s.vecs, s.dim, sums)
	for slot, name := range s.names {
		if name == "" {
			continue
		}
		score := float64(sums[slot]) / (127 * 127)
		if len(h) == k && !better(score, name, h[0]) {
			continue
		}
		if allow != nil && !allow(name) {
			continue
		}
		heap.Push(&h, Hit{Name: name, Score: score})
		if len(h) > k {
			heap.Pop(&h)
		}
	}
	out := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Hit)
	}
	return out
}

// Similarity returns the cosine similarity of q and each named tool; ok[i]
// is false for a tool without a vector.
func (s *Store) Similarity(q Query, names []string) (scores []float64, ok []bool) {
	scores, ok = make([]float64, len(names)), make([]bool, len(names))
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(q.v) != s.dim || s.dim == 0 {
		return scores, ok
	}
	for i, n := range names {
		if slot, found := s.slots[n]; found {
			scores[i], ok[i] = dot(q.v, s.vecs[slot*s.dim:(slot+1)*s.dim]), true
		}
	}
	return scores, ok
}

var dotPool = sync.Pool{New: func() any { return new([]int32) }}

// dot is the cosine of two quantised unit vectors.
func dot(a, b []int8) float64 {
	b = b[:len(a)]
	var sum int32
	for i := range a {
		sum += int32(a[i]) * int32(b[i])
	}
	return float64(sum) / (127 * 127)
}

// better orders hits: higher score first, then smaller name.
func better(score float64, name string, than Hit) bool {
	if score != than.Score {
		return score > than.Score
	}
	return name < than.Name
}

// hitHeap is a min-heap of the best hits so far: its root is the worst.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j].Score, h[j].Name, h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// queryCache is a small LRU of query vectors.
type queryCache struct {
	mu    sync.Mutex
	max   int
	tick  uint64
	items map[string]*cached
}

type cached struct {
	v    []int8
	used uint64
}

func newQueryCache(n int) *queryCache {
	return &queryCache{max: n, items: make(map[string]*cached, n)}
}

func (c *queryCache) get(text string) ([]int8, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[text]
	if !ok {
		return nil, false
	}
	c.tick++
	e.used = c.tick
	return e.v, true
}

// put adds a vector; when full, the least recently used eighth goes (an
// O(n) sweep once per n/8 insertions).
func (c *queryCache) put(text string, v []int8) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	if len(c.items) >= c.max {
		ages := make([]uint64, 0, len(c.items))
		for _, e := range c.items {
			ages = append(ages, e.used)
		}
		sort.Slice(ages, func(i, j int) bool { return ages[i] < ages[j] })
		cut := ages[max(len(ages)/8, 1)-1]
		for k, e := range c.items {
			if e.used <= cut {
				delete(c.items, k)
			}
		}
	}
	c.items[text] = &cached{v: v, used: c.tick}
}
