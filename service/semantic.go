package service

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/semantic"
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

// rank runs a query through the index and, for ranked queries when the
// server has an embedder, fuses the lexical ranking with dense retrieval.
// An embedder that fails or is slower than the timeout leaves the lexical
// ranking to answer alone.
func (s *Server) rank(ctx context.Context, q index.Query, opt index.Options) index.Result {
	d := s.dense
	if d == nil || (q.Kind != index.KindKeyword && q.Kind != index.KindDiscover) || strings.TrimSpace(q.Text) == "" {
		return s.ix.Run(q, opt)
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
		return s.ix.Run(q, opt)
	}
	opt.Max = max(n, FuseCandidates)
	res := s.ix.Run(q, opt)
	res.Hits = FuseDense(d.store, qv, res, d.ratio, n, opt.Allow)
	return res
}

// FuseDense is the ranking of a query with dense retrieval: res is the
// lexical result (run with Max max(n, FuseCandidates)) and qv the query's
// vector. Its ranked hits and, when they are fewer than that, the 100
// tools nearest to qv that allow accepts (all
// when nil) are fused (semantic.Fuse); exact hits stay first, and when the
// query required "+term" words dense retrieval only reorders the lexical
// hits. It returns the best n.
func FuseDense(st *semantic.Store, qv semantic.Query, res index.Result, ratio float64, n int, allow func(string) bool) []index.Hit {
	lex := make([]semantic.Scored, len(res.Hits))
	byName := make(map[string]index.Hit, len(res.Hits))
	for i, h := range res.Hits {
		lex[i] = semantic.Scored{Name: h.Name, Lexical: h.Score, Pinned: h.Match != index.MatchRanked}
		byName[h.Name] = h
	}
	depth := semanticDepth
	if res.Required || len(res.Hits) >= max(n, FuseCandidates) {
		depth = 0
	}
	fused := st.Rank(qv, lex, ratio, depth, n, allow)
	hits := make([]index.Hit, len(fused))
	for i, f := range fused {
		h, ok := byName[f.Name]
		if !ok {
			h = index.Hit{Name: f.Name, Match: index.MatchRanked}
		}
		if h.Match == index.MatchRanked {
			h.Score = f.Score
		}
		hits[i] = h
	}
	return hits
}

// indexDense queues a stored tool's text for embedding, or forgets the
// tool when it is not ranked (core or excluded); paramText is its input
// schema's parameter text. The caller holds s.mu.
func (s *Server) indexDense(e *entry, ranked bool, paramText string) {
	if s.dense == nil {
		return
	}
	if !ranked {
		s.dense.store.Delete(e.name)
		return
	}
	s.dense.store.Put(e.name, semantic.ToolText(e.name, e.searchHint(), e.description(), paramText))
}
