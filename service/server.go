package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/permission"
	"github.com/tooldex/tooldex/registry"
	"github.com/tooldex/tooldex/semantic"
)

// Config configures a Server.
type Config struct {
	// Policy decides core, deferred and excluded tools. A nil Core list
	// means DefaultCoreTools.
	Policy Policy
	// Index configures the search index.
	Index index.Config
	// Logger receives structured logs; nil means no logs.
	Logger *zap.Logger
	// Registry configures host sessions and call routing.
	Registry registry.Config
	// Permissions decide who may execute and see which tools; nil allows
	// everything.
	Permissions *permission.Policy
	// ApprovalKey signs approval tokens; nil picks a random key (tokens
	// then last as long as the process).
	ApprovalKey []byte
	// MaxExecute caps an Execute call's deadline; 0 means 60s.
	MaxExecute time.Duration
	// Metrics records Prometheus metrics; nil records none.
	Metrics *Metrics
	// Semantic, when set, adds dense retrieval to the ranking of Search
	// and Discover: the store embeds every deferred tool (Run runs it) and
	// each ranked query, and the two rankings are fused.
	Semantic *semantic.Store
	// SemanticRatio is the dense share of a fused score, in (0, 1]; 0
	// means DefaultSemanticRatio.
	SemanticRatio float64
	// SemanticTimeout bounds embedding a query; past it the lexical
	// ranking answers alone. 0 means 250ms.
	SemanticTimeout time.Duration
}

// Server implements tooldex.v1.DiscoveryService.
type Server struct {
	tooldexv1.UnimplementedDiscoveryServiceServer

	log        *zap.Logger
	auditLog   *zap.Logger
	policy     Policy
	ix         *index.Index
	reg        *registry.Registry
	perms      *permission.Policy
	approver   *permission.Approver
	maxExecute time.Duration
	metrics    *Metrics
	sessions   *sessions
	dense      *dense // nil without an embedder

	// hostsCtx ends every host session when cancelled (CloseHosts).
	hostsCtx   context.Context
	closeHosts context.CancelFunc

	// sources interns the stored tools' sources.
	sources sources

	// mu guards tools and liveBlocks and orders catalog changes with
	// index updates.
	mu    sync.RWMutex
	tools map[string]*entry
	// blocks holds the entries' blocks (it has a lock of its own: entries
	// are made before mu is taken); liveBlocks is the bytes of the blocks
	// of the entries in tools (arena.go).
	blocks     blockArena
	liveBlocks int
}

var _ tooldexv1.DiscoveryServiceServer = (*Server)(nil)

// New returns a Server with an empty catalog.
func New(cfg Config) *Server {
	if cfg.Policy.Core == nil {
		cfg.Policy.Core = DefaultCoreTools
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.Permissions == nil {
		cfg.Permissions = permission.AllowAll()
	}
	if cfg.MaxExecute <= 0 {
		cfg.MaxExecute = 60 * time.Second
	}
	if cfg.Registry.Logger == nil {
		cfg.Registry.Logger = log.Named("registry")
	}
	hostsCtx, closeHosts := context.WithCancel(context.Background())
	s := &Server{
		log:        log.Named("discovery"),
		auditLog:   log.Named("audit"),
		policy:     cfg.Policy,
		ix:         index.New(cfg.Index),
		reg:        registry.New(cfg.Registry),
		perms:      cfg.Permissions,
		approver:   permission.NewApprover(cfg.ApprovalKey, 0, nil),
		maxExecute: cfg.MaxExecute,
		metrics:    cfg.Metrics,
		sessions:   newSessions(time.Now),
		dense:      newDense(cfg),
		hostsCtx:   hostsCtx,
		closeHosts: closeHosts,
		tools:      make(map[string]*entry),
	}
	cfg.Metrics.watch(s)
	return s
}

// Run runs the host registry's liveness checks, and the embedding of
// tools when the server has an embedder, until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	if s.dense == nil {
		return s.reg.Run(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- s.dense.store.Run(ctx) }()
	err := s.reg.Run(ctx)
	if derr := <-done; err == nil && !errors.Is(derr, context.Canceled) && !errors.Is(derr, context.DeadlineExceeded) {
		err = derr
	}
	return err
}

// DrainHosts tells every host the server is going away: they finish
// in-flight calls and take no more.
func (s *Server) DrainHosts(grace time.Duration) { s.reg.Drain(grace) }

// WaitCalls returns when no call is in flight on any host, or when ctx is
// done. Part of shutdown, between DrainHosts and CloseHosts.
func (s *Server) WaitCalls(ctx context.Context) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n := 0
		for _, h := range s.reg.Hosts() {
			n += h.InFlight
		}
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// CloseHosts ends every host session; their in-flight calls fail with
// UNAVAILABLE. Part of shutdown, before GracefulStop, which would
// otherwise wait for the long-lived streams.
func (s *Server) CloseHosts() { s.closeHosts() }

// Index returns the server's search index (for in-process evaluation).
func (s *Server) Index() *index.Index { return s.ix }

// RegisterTools validates the whole batch first; if any tool is invalid,
// nothing is registered and every violation is reported.
func (s *Server) RegisterTools(ctx context.Context, req *tooldexv1.RegisterToolsRequest) (*tooldexv1.RegisterToolsResponse, error) {
	start := time.Now()
	resp, err := s.register(req)
	err = s.toStatus(err)
	if !req.GetValidateOnly() {
		auditBatch(ctx, s, "register", req.GetTools(), (*tooldexv1.Tool).GetName, err, time.Since(start))
	}
	return resp, err
}

func (s *Server) register(req *tooldexv1.RegisterToolsRequest) (*tooldexv1.RegisterToolsResponse, error) {
	tools := req.GetTools()
	ve := &ValidationError{}
	switch {
	case len(tools) == 0:
		ve.add("tools", "is empty: nothing to register")
	case len(tools) > MaxBatch:
		ve.add("tools", "has %d tools, at most %d per request", len(tools), MaxBatch)
	}
	if err := ve.err(); err != nil {
		return nil, err
	}
	// Validate and prepare the whole batch, then build the entries:
	// validation and preparation make garbage (compiling a schema to
	// check it, decoding it for the index, encoding it), and allocating
	// what the catalog keeps after it, rather than interleaved with it,
	// packs the kept objects into fewer pages (resident memory,
	// docs/BENCHMARKS.md).
	preps := make([]prepared, len(tools))
	var buf []byte // the batch's schemas encoded (prepareTool)
	seen := make(map[string]int, len(tools))
	for i, t := range tools {
		field := fmt.Sprintf("tools[%d]", i)
		if j, dup := seen[t.GetName()]; dup && t.GetName() != "" {
			ve.add(field+".name", "%q is also tools[%d]; names must be unique in a batch", t.GetName(), j)
		}
		seen[t.GetName()] = i
		doc := validateTool(ve, field, t)
		if ve.err() != nil {
			continue // the batch will be refused: prepare no more
		}
		preps[i], buf = prepareTool(t, doc, buf)
	}
	if err := ve.err(); err != nil {
		return nil, err
	}
	entries := make([]*entry, len(tools))
	for i, t := range tools {
		entries[i] = s.buildEntry(t, preps[i], buf, tooldexv1.Origin_ORIGIN_FRONTEND, "")
	}
	resp := &tooldexv1.RegisterToolsResponse{Results: make([]*tooldexv1.RegisterResult, len(entries))}
	results := make([]tooldexv1.RegisterResult, len(entries)) // one allocation rather than one each
	s.mu.Lock()
	defer s.mu.Unlock()
	conflicts := &ConflictError{}
	for i, e := range entries {
		if old := s.tools[e.name]; old != nil && len(old.hosts()) > 0 && !old.sameDefinition(e) {
			conflicts.add(fmt.Sprintf("tools[%d].name", i), "%q is served by connected tool hosts with a different definition; change it there", e.name)
		}
	}
	if err := conflicts.err(); err != nil {
		return nil, err
	}
	for i, e := range entries {
		name := e.name
		outcome := tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED
		if old := s.tools[name]; old != nil {
			e.takeHosts(old)
			outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED
			if old.equal(e) {
				outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED
			}
		}
		r := &results[i]
		r.Name, r.Outcome, r.Loading = name, outcome, e.load()
		resp.Results[i] = r
		if req.GetValidateOnly() || outcome == tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED {
			continue
		}
		s.put(e, preps[i].paramText)
	}
	if !req.GetValidateOnly() {
		s.log.Info("tools registered", zap.Int("count", len(entries)), zap.Int("catalog", len(s.tools)))
	}
	return resp, nil
}

// validEntry validates a tool and builds its catalog entry, along with its
// input schema's parameter text for the index. Violations go to ve; the
// entry is nil when there are any.
func (s *Server) validEntry(ve *ValidationError, field string, t *tooldexv1.Tool, origin tooldexv1.Origin, id string) (*entry, string) {
	before := len(ve.Violations)
	doc := validateTool(ve, field, t)
	if len(ve.Violations) > before {
		return nil, ""
	}
	p, buf := prepareTool(t, doc, nil)
	return s.buildEntry(t, p, buf, origin, id), p.paramText
}

// buildEntry makes the catalog entry of a valid tool from what prepareTool
// derived into buf, with its source and loading set (see sources.source and
// Policy.loading).
func (s *Server) buildEntry(t *tooldexv1.Tool, p prepared, buf []byte, origin tooldexv1.Origin, id string) *entry {
	src := s.sources.source(t.GetSource(), origin, id)
	return makeEntry(&s.blocks, t, p, buf, src, s.policy.loading(t))
}

// put stores an entry and updates the index; paramText is its input
// schema's parameter text (index.ParamText). The caller holds s.mu.
func (s *Server) put(e *entry, paramText string) {
	if old := s.tools[e.name]; old != nil {
		s.liveBlocks -= arenaLen(old)
	}
	s.tools[e.name] = e
	s.liveBlocks += arenaLen(e)
	s.compactBlocks()
	s.indexDense(e, e.load() == tooldexv1.Loading_LOADING_DEFERRED, paramText)
	if e.load() == tooldexv1.Loading_LOADING_EXCLUDED {
		s.ix.Remove(e.name)
		return
	}
	s.ix.Upsert(e.indexDoc(paramText))
}

// drop removes a tool from the catalog and the index. The caller holds s.mu.
func (s *Server) drop(name string) {
	if old := s.tools[name]; old != nil {
		s.liveBlocks -= arenaLen(old)
	}
	delete(s.tools, name)
	s.ix.Remove(name)
	if s.dense != nil {
		s.dense.store.Delete(name)
	}
}

// UnregisterTools removes tools by name.
func (s *Server) UnregisterTools(ctx context.Context, req *tooldexv1.UnregisterToolsRequest) (*tooldexv1.UnregisterToolsResponse, error) {
	start := time.Now()
	resp, err := s.unregister(req)
	auditBatch(ctx, s, "unregister", req.GetNames(), func(n string) string { return n }, err, time.Since(start))
	return resp, err
}

func (s *Server) unregister(req *tooldexv1.UnregisterToolsRequest) (*tooldexv1.UnregisterToolsResponse, error) {
	names := req.GetNames()
	if len(names) > MaxBatch {
		ve := &ValidationError{}
		ve.add("names", "has %d names, at most %d per request", len(names), MaxBatch)
		return nil, s.toStatus(ve)
	}
	resp := &tooldexv1.UnregisterToolsResponse{}
	s.mu.Lock()
	defer s.mu.Unlock()
	conflicts := &ConflictError{}
	for i, n := range names {
		if e := s.tools[n]; e != nil && len(e.hosts()) > 0 {
			conflicts.add(fmt.Sprintf("names[%d]", i), "%q is served by connected tool hosts; they remove their own tools", n)
		}
	}
	if err := conflicts.err(); err != nil {
		return nil, s.toStatus(err)
	}
	for _, n := range names {
		if _, ok := s.tools[n]; !ok {
			resp.NotFound = append(resp.NotFound, n)
			continue
		}
		s.drop(n)
		resp.Removed = append(resp.Removed, n)
	}
	if len(resp.Removed) > 0 {
		s.log.Info("tools unregistered", zap.Int("count", len(resp.Removed)), zap.Int("catalog", len(s.tools)))
	}
	return resp, nil
}

// ListTools lists registered tools sorted by name.
func (s *Server) ListTools(ctx context.Context, req *tooldexv1.ListToolsRequest) (*tooldexv1.ListToolsResponse, error) {
	resp := s.listTools(req)
	for i, t := range resp.Tools {
		resp.Tools[i] = fullTool(t)
	}
	return resp, nil
}

// listTools is ListTools with light tools (see catalog.go): what the gRPC
// handler sends.
func (s *Server) listTools(req *tooldexv1.ListToolsRequest) *tooldexv1.ListToolsResponse {
	s.mu.RLock()
	var entries []*entry
	for name, e := range s.tools {
		if !strings.HasPrefix(name, req.GetNamePrefix()) {
			continue
		}
		if l := req.GetLoading(); l != tooldexv1.Loading_LOADING_UNSPECIFIED && l != e.load() {
			continue
		}
		entries = append(entries, e)
	}
	s.mu.RUnlock()
	slices.SortFunc(entries, func(a, b *entry) int { return strings.Compare(a.name, b.name) })
	vals := make([]tooldexv1.Tool, len(entries)) // one allocation rather than one each
	tools := make([]*tooldexv1.Tool, len(entries))
	for i, e := range entries {
		e.lightInto(&vals[i], true)
		tools[i] = &vals[i]
	}
	return &tooldexv1.ListToolsResponse{Tools: tools}
}

// Search runs a ToolSearch query.
func (s *Server) Search(ctx context.Context, req *tooldexv1.SearchRequest) (*tooldexv1.SearchResponse, error) {
	resp, err := s.search(ctx, req)
	if err != nil {
		return nil, err
	}
	fullResults(resp.Results)
	return resp, nil
}

// search is Search with light tools (see catalog.go): what the gRPC handler
// sends. Errors are gRPC statuses.
func (s *Server) search(ctx context.Context, req *tooldexv1.SearchRequest) (*tooldexv1.SearchResponse, error) {
	max, err := checkSearch(req.GetMaxResults(), req.GetSchemaView())
	if err != nil {
		return nil, s.toStatus(err)
	}
	q, err := index.ParseQuery(req.GetQuery())
	if err != nil {
		return nil, s.toStatus(err)
	}
	sub, err := subject(ctx, req.GetCaller())
	if err != nil {
		return nil, s.toStatus(err)
	}
	res := s.rank(ctx, q, index.Options{Max: max, Allow: s.visible(sub)})
	results, entries := s.lightResults(res.Hits, req.GetSchemaView())
	resp := &tooldexv1.SearchResponse{
		Results:            results,
		TotalDeferredTools: int32(res.Deferred),
		Mode:               queryMode(res.Kind),
		AlreadyLoaded:      res.AlreadyLoaded,
		NotFound:           res.NotFound,
	}
	resp.Text = renderSearch(req.GetQuery(), resp, entries)
	if resp.ContentJson, err = searchContent(req.GetProvider(), req.GetToolReference(), resp.GetResults(), resp.GetText()); err != nil {
		return nil, s.toStatus(err)
	}
	return resp, nil
}

// Discover ranks deferred tools for a task by the text scorer alone.
func (s *Server) Discover(ctx context.Context, req *tooldexv1.DiscoverRequest) (*tooldexv1.DiscoverResponse, error) {
	resp, err := s.discover(ctx, req)
	if err != nil {
		return nil, err
	}
	fullResults(resp.Results)
	return resp, nil
}

// discover is Discover with light tools (see catalog.go): what the gRPC
// handler sends. Errors are gRPC statuses.
func (s *Server) discover(ctx context.Context, req *tooldexv1.DiscoverRequest) (*tooldexv1.DiscoverResponse, error) {
	max, err := checkSearch(req.GetMaxResults(), req.GetSchemaView())
	if err != nil {
		return nil, s.toStatus(err)
	}
	q, err := index.DiscoverQuery(req.GetQuery())
	if err != nil {
		return nil, s.toStatus(err)
	}
	sub, err := subject(ctx, req.GetCaller())
	if err != nil {
		return nil, s.toStatus(err)
	}
	res := s.rank(ctx, q, index.Options{Max: max, Allow: s.visible(sub)})
	results, entries := s.lightResults(res.Hits, req.GetSchemaView())
	resp := &tooldexv1.DiscoverResponse{
		Results:            results,
		TotalDeferredTools: int32(res.Deferred),
	}
	resp.Text = renderDiscover(req.GetQuery(), resp, entries)
	if resp.ContentJson, err = searchContent(req.GetProvider(), req.GetToolReference(), resp.GetResults(), resp.GetText()); err != nil {
		return nil, s.toStatus(err)
	}
	return resp, nil
}

// visible returns the filter that hides tools the subject is denied, or
// nil when the policy denies nothing.
func (s *Server) visible(sub *permission.Subject) func(string) bool {
	if !s.perms.Restricts() {
		return nil
	}
	return func(name string) bool { return s.perms.VisibleFor(name, sub) }
}

// checkSearch validates Search's and Discover's max_results and
// schema_view, and returns max_results.
func checkSearch(n int32, view tooldexv1.SchemaView) (int, error) {
	if n >= 0 && view >= tooldexv1.SchemaView_SCHEMA_VIEW_UNSPECIFIED && view <= tooldexv1.SchemaView_SCHEMA_VIEW_NONE {
		return int(n), nil // valid: no ValidationError to allocate
	}
	ve := &ValidationError{}
	if n < 0 {
		ve.add("max_results", "is %d; use 0 for the default of %d, or a positive number", n, index.DefaultMax)
	}
	checkView(ve, view)
	return int(n), ve.err()
}

// fullResults replaces light tools by full ones, for in-process callers.
func fullResults(results []*tooldexv1.SearchResult) {
	for _, r := range results {
		r.Tool = fullTool(r.Tool)
	}
}

// lightResults attaches the registered definitions, as light tools (see
// catalog.go) in the schema view v (view.go), to hits. A tool removed
// between ranking and lookup is dropped. v must have passed checkView.
func (s *Server) lightResults(hits []index.Hit, v tooldexv1.SchemaView) ([]*tooldexv1.SearchResult, []*entry) {
	out := make([]*tooldexv1.SearchResult, 0, len(hits))
	entries := make([]*entry, 0, len(hits))
	// One allocation for the results and their tools rather than one
	// each.
	vals := make([]struct {
		res  tooldexv1.SearchResult
		tool tooldexv1.Tool
	}, len(hits))
	s.mu.RLock()
	for i, h := range hits {
		e := s.tools[h.Name]
		if e == nil {
			continue
		}
		entries = append(entries, e)
		r := &vals[i].res
		r.Tool = &vals[i].tool
		r.Score = h.Score
		r.KeywordScore = h.Keyword
		r.TfidfScore = h.TFIDF
		r.KeywordPoints = int32(h.Points)
		r.Match = matchKind(h.Match)
		out = append(out, r)
	}
	s.mu.RUnlock()
	for i, r := range out {
		viewTool(r.Tool, entries[i], v)
	}
	return out, entries
}

func queryMode(k index.QueryKind) tooldexv1.QueryMode {
	switch k {
	case index.KindSelect:
		return tooldexv1.QueryMode_QUERY_MODE_SELECT
	case index.KindDiscover:
		return tooldexv1.QueryMode_QUERY_MODE_DISCOVER
	case index.KindPrefix:
		return tooldexv1.QueryMode_QUERY_MODE_PREFIX
	}
	return tooldexv1.QueryMode_QUERY_MODE_KEYWORD
}

func matchKind(m index.Match) tooldexv1.MatchKind {
	switch m {
	case index.MatchExact:
		return tooldexv1.MatchKind_MATCH_KIND_EXACT
	case index.MatchSelect:
		return tooldexv1.MatchKind_MATCH_KIND_SELECT
	case index.MatchPrefix:
		return tooldexv1.MatchKind_MATCH_KIND_PREFIX
	}
	return tooldexv1.MatchKind_MATCH_KIND_RANKED
}
