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

// Semantic ranking defaults (see Config).
const (
	defaultSemanticRatio   = 0.5
	defaultSemanticTimeout = 250 * time.Millisecond
	// semanticDepth is how many dense candidates join the lexical ones.
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
		d.ratio = defaultSemanticRatio
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
	opt.Max = index.MaxResults
	res := s.ix.Run(q, opt)
	lex := make([]semantic.Scored, len(res.Hits))
	byName := make(map[string]index.Hit, len(res.Hits))
	for i, h := range res.Hits {
		lex[i] = semantic.Scored{Name: h.Name, Lexical: h.Score, Pinned: h.Match != index.MatchRanked}
		byName[h.Name] = h
	}
	depth := semanticDepth
	if requiresTerms(q.Text) {
		depth = 0 // "+term" queries: dense retrieval only reorders what matched
	}
	fused := d.store.Rank(qv, lex, d.ratio, depth, n, opt.Allow)
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
	res.Hits = hits
	return res
}

// requiresTerms reports whether a keyword query has "+term" words.
func requiresTerms(text string) bool {
	for _, f := range strings.Fields(text) {
		if len(f) > 1 && f[0] == '+' {
			return true
		}
	}
	return false
}

// indexDense queues a stored tool's text for embedding, or forgets the
// tool when it is not ranked (core or excluded). The caller holds s.mu.
func (s *Server) indexDense(e *entry, ranked bool) {
	if s.dense == nil {
		return
	}
	t := e.tool
	if !ranked {
		s.dense.store.Delete(t.GetName())
		return
	}
	s.dense.store.Put(t.GetName(), semantic.ToolText(t.GetName(), t.GetSearchHint(), t.GetDescription()))
}
