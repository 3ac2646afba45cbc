package service

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/semantic"
)

// DefaultSemanticRatio is the dense share of a fused score when
// Config.SemanticRatio is not set. Measured with a sentence embedder
// (Universal Sentence Encoder) on six tool-retrieval datasets, 0.2 gained
// up to 7.6 NDCG@10 points and lost at most 0.1, where 0.5 lost up to 6.9
// on long multi-tool tasks (docs/BENCHMARKS.md). The server and eval pass
// their mode's share (semantic.DefaultRatio) instead.
const DefaultSemanticRatio = 0.2

// FuseCandidates is how many lexical hits (at least the number asked
// for) a fused ranking reorders.
const FuseCandidates = 20

// Semantic ranking defaults (see Config).
const (
	defaultSemanticTimeout = 250 * time.Millisecond
	// semanticDepth is how many dense candidates join the lexical ones
	// when the lexical ranking found fewer than FuseCandidates tools.
	// When it found that many, dense retrieval only reorders them: that
	// saves a scan of every vector (memory-bound: about 1 ms per 10k tools
	// at 256 dimensions) and, measured on six datasets, costs nothing
	// (docs/BENCHMARKS.md).
	semanticDepth = 100
	// semanticWarnEvery spaces the warnings of a failing embedder.
	semanticWarnEvery = 10 * time.Second
)

// dense is the server's optional dense retrieval.
type dense struct {
	store    *semantic.Store
	ratio    float64
	timeout  time.Duration
	lastWarn atomic.Int64 // unix nanoseconds
}

func newDense(cfg Config) *dense {
	if cfg.Semantic == nil {
		return nil
	}
	d := &dense{store: cfg.Semantic, ratio: cfg.SemanticRatio, timeout: cfg.SemanticTimeout}
	if d.ratio <= 0 || d.ratio > 1 {
		d.ratio = DefaultSemanticRatio
	}
	if d.timeout <= 0 {
		d.timeout = defaultSemanticTimeout
	}
	return d
}

// rank runs a query through tenant's index and, for ranked queries when
// the server has an embedder, fuses the lexical ranking with dense
// retrieval. An embedder that fails or is slower than the timeout leaves
// the lexical ranking to answer alone.
func (s *Server) rank(ctx context.Context, tenant string, q index.Query, opt index.Options) index.Result {
	ix := s.cat.Index(tenant)
	d := s.dense
	if d == nil || (q.Kind != index.KindKeyword && q.Kind != index.KindDiscover) || strings.TrimSpace(q.Text) == "" {
		return ix.Run(q, opt)
	}
	n := opt.Max
	if n <= 0 {
		n = index.DefaultMax
	}
	n = min(n, index.MaxResults)
	ectx, cancel := context.WithTimeout(ctx, d.timeout)
	qv, err := d.store.Embed(ectx, q.Text)
	cancel()
	if err != nil {
		s.metrics.semanticFallback()
		if now := time.Now().UnixNano(); now-d.lastWarn.Load() > int64(semanticWarnEvery) {
			d.lastWarn.Store(now)
			s.log.Warn("embedding the query failed; ranking without it", zap.Duration("timeout", d.timeout), zap.Error(err))
		}
		return ix.Run(q, opt)
	}
	opt.Max = max(n, FuseCandidates)
	// The candidates' words as written get a say (index.WordShare).
	opt.BlendWords = q.Kind == index.KindKeyword
	res := ix.Run(q, opt)
	// The store holds every tenant's tools, each under its tenant's key:
	// dense candidates are only those the tenant sees.
	key := func(name string) string {
		if e := s.cat.Get(tenant, name); e != nil {
			return denseKey(e.Tenant(), name)
		}
		return ""
	}
	allow := func(k string) bool {
		owner, name, _ := strings.Cut(k, "\x00")
		e := s.cat.Get(tenant, name)
		return e != nil && e.Tenant() == owner && (opt.Allow == nil || opt.Allow(name))
	}
	res.Hits = fuseDense(d.store, qv, res, d.ratio, n, allow, key)
	return res
}

// denseKey is a tool's key in the dense store.
func denseKey(tenant, name string) string { return tenant + "\x00" + name }

// FuseDense is the ranking of a query with dense retrieval: res is the
// lexical result (run with Max max(n, FuseCandidates)) and qv the query's
// vector. Its ranked hits and, when they are fewer than that, the 100
// tools nearest to qv that allow accepts (all when nil) are fused
// (semantic.Fuse); exact hits stay first, and when the query required
// "+term" words dense retrieval only reorders the lexical hits. It returns the best n. The store's keys are
// the tools' names.
func FuseDense(st *semantic.Store, qv semantic.Query, res index.Result, ratio float64, n int, allow func(string) bool) []index.Hit {
	return fuseDense(st, qv, res, ratio, n, allow, func(name string) string { return name })
}

// fuseDense is FuseDense for a store whose key of each tool is key(name);
// allow takes keys. Keys hold the name after their last NUL byte, if any.
func fuseDense(st *semantic.Store, qv semantic.Query, res index.Result, ratio float64, n int, allow func(string) bool, key func(string) string) []index.Hit {
	lex := make([]semantic.Scored, 0, len(res.Hits))
	byKey := make(map[string]index.Hit, len(res.Hits))
	for _, h := range res.Hits {
		k := key(h.Name)
		if k == "" {
			continue
		}
		lex = append(lex, semantic.Scored{Name: k, Lexical: h.Score, Pinned: h.Match != index.MatchRanked})
		byKey[k] = h
	}
	depth := semanticDepth
	if res.Required || len(res.Hits) >= max(n, FuseCandidates) {
		depth = 0
	}
	fused := st.Rank(qv, lex, ratio, depth, n, allow)
	hits := make([]index.Hit, len(fused))
	for i, f := range fused {
		h, ok := byKey[f.Name]
		if !ok {
			name := f.Name
			if j := strings.LastIndexByte(name, 0); j >= 0 {
				name = name[j+1:]
			}
			h = index.Hit{Name: name, Match: index.MatchRanked}
		}
		if h.Match == index.MatchRanked {
			h.Score = f.Score
		}
		hits[i] = h
	}
	return hits
}

// changed keeps the dense store in step with the catalog (its
// Config.Changed): a stored deferred tool is queued for embedding, any
// other forgotten. Called with the catalog's lock held.
func (d *dense) changed(tenant, name string, e *catalog.Entry, doc index.Doc) {
	k := denseKey(tenant, name)
	if e == nil || e.Loading() != tooldexv1.Loading_LOADING_DEFERRED {
		d.store.Delete(k)
		return
	}
	d.store.Put(k, semantic.ToolText(name, doc.SearchHint, doc.Description, doc.Params))
}
