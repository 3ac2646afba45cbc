package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/permission"
	"github.com/tooldex/tooldex/internal/semantic"
	"github.com/tooldex/tooldex/registry"
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
	// Catalog configures the tool catalog: per-tenant limits and how long
	// a host principal keeps its names after its hosts left (its Index
	// and Changed fields are set by New).
	Catalog catalog.Config
}

// Server implements tooldex.v1.DiscoveryService.
type Server struct {
	tooldexv1.UnimplementedDiscoveryServiceServer

	log        *zap.Logger
	auditLog   *zap.Logger
	policy     Policy
	cat        *catalog.Catalog
	reg        *registry.Registry
	perms      *permission.Policy
	approver   *permission.Approver
	maxExecute time.Duration
	metrics    *Metrics
	sessions   *sessions
	dense      *dense     // nil without an embedder
	journal    *journaled // nil: the catalog is this process's only (journal.go)
	remote     *remote    // nil: no other replicas (remote.go)

	// hostsCtx ends every host session when cancelled (CloseHosts).
	hostsCtx   context.Context
	closeHosts context.CancelFunc
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
		reg:        registry.New(cfg.Registry),
		perms:      cfg.Permissions,
		approver:   permission.NewApprover(cfg.ApprovalKey, 0, nil),
		maxExecute: cfg.MaxExecute,
		metrics:    cfg.Metrics,
		sessions:   newSessions(time.Now),
		dense:      newDense(cfg),
		hostsCtx:   hostsCtx,
		closeHosts: closeHosts,
	}
	ccfg := cfg.Catalog
	ccfg.Index = cfg.Index
	if s.dense != nil {
		ccfg.Changed = s.dense.changed
	}
	s.cat = catalog.New(ccfg)
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

// Index returns the default tenant's search index (for in-process
// evaluation and start-up logs).
func (s *Server) Index() *index.Index { return s.cat.Index(auth.DefaultTenant) }

// RegisterTools validates the whole batch first; if any tool is invalid,
// nothing is registered and every violation is reported.
func (s *Server) RegisterTools(ctx context.Context, req *tooldexv1.RegisterToolsRequest) (*tooldexv1.RegisterToolsResponse, error) {
	start := time.Now()
	resp, err := s.register(ctx, req)
	err = s.toStatus(err)
	if !req.GetValidateOnly() {
		auditBatch(ctx, s, "register", req.GetTools(), (*tooldexv1.Tool).GetName, err, time.Since(start))
	}
	return resp, err
}

func (s *Server) register(ctx context.Context, req *tooldexv1.RegisterToolsRequest) (*tooldexv1.RegisterToolsResponse, error) {
	tenant, err := s.writeTenant(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	tools := req.GetTools()
	ve := &ValidationError{}
	switch {
	case len(tools) == 0:
		ve.add("tools", "is empty: nothing to register")
	case len(tools) > catalog.MaxBatch:
		ve.add("tools", "has %d tools, at most %d per request", len(tools), catalog.MaxBatch)
	}
	if err := ve.err(); err != nil {
		return nil, err
	}
	// Every entry is made, and its schema compiled, before the catalog's
	// lock is taken.
	entries := make([]*catalog.Entry, len(tools))
	seen := make(map[string]int, len(tools))
	for i, t := range tools {
		field := fmt.Sprintf("tools[%d]", i)
		if j, dup := seen[t.GetName()]; dup && t.GetName() != "" {
			ve.add(field+".name", "%q is also tools[%d]; names must be unique in a batch", t.GetName(), j)
		}
		seen[t.GetName()] = i
		entries[i] = catalog.NewEntry(&ve.ValidationError, field, t, tenant, tooldexv1.Origin_ORIGIN_FRONTEND, "", s.policy.loading(t))
	}
	if err := ve.err(); err != nil {
		return nil, err
	}
	by := principalOf(ctx).Name
	journal := s.journal != nil && !req.GetValidateOnly()
	done, err := s.cat.Register(tenant, by, entries, req.GetValidateOnly() || journal)
	if err != nil {
		return nil, err
	}
	if journal {
		if err := s.journalRegister(ctx, tenant, by, entries, done); err != nil {
			return nil, err
		}
	}
	resp := &tooldexv1.RegisterToolsResponse{Results: make([]*tooldexv1.RegisterResult, len(done))}
	for i, r := range done {
		resp.Results[i] = &tooldexv1.RegisterResult{Name: entries[i].Name(), Outcome: r.Outcome, Loading: r.Loading}
	}
	if !req.GetValidateOnly() {
		s.log.Info("tools registered", zap.String("tenant", tenant), zap.Int("count", len(entries)), zap.Int("catalog", s.cat.Len(tenant)))
	}
	return resp, nil
}

// UnregisterTools removes tools by name.
func (s *Server) UnregisterTools(ctx context.Context, req *tooldexv1.UnregisterToolsRequest) (*tooldexv1.UnregisterToolsResponse, error) {
	start := time.Now()
	resp, err := s.unregister(ctx, req)
	err = s.toStatus(err)
	auditBatch(ctx, s, "unregister", req.GetNames(), func(n string) string { return n }, err, time.Since(start))
	return resp, err
}

func (s *Server) unregister(ctx context.Context, req *tooldexv1.UnregisterToolsRequest) (*tooldexv1.UnregisterToolsResponse, error) {
	tenant, err := s.writeTenant(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	names := req.GetNames()
	if len(names) > catalog.MaxBatch {
		ve := &ValidationError{}
		ve.add("names", "has %d names, at most %d per request", len(names), catalog.MaxBatch)
		return nil, ve.err()
	}
	var removed, notFound []string
	if s.journal != nil {
		removed, notFound, err = s.journalUnregister(ctx, tenant, names)
	} else {
		removed, notFound, err = s.cat.Unregister(tenant, names)
	}
	if err != nil {
		return nil, err
	}
	if len(removed) > 0 {
		s.log.Info("tools unregistered", zap.String("tenant", tenant), zap.Int("count", len(removed)), zap.Int("catalog", s.cat.Len(tenant)))
	}
	return &tooldexv1.UnregisterToolsResponse{Removed: removed, NotFound: notFound}, nil
}

// ListTools lists registered tools sorted by name, a page at a time.
func (s *Server) ListTools(ctx context.Context, req *tooldexv1.ListToolsRequest) (*tooldexv1.ListToolsResponse, error) {
	resp, err := s.listTools(ctx, req)
	if err != nil {
		return nil, s.toStatus(err)
	}
	for i, t := range resp.Tools {
		resp.Tools[i] = ownCopy(t)
	}
	return resp, nil
}

// listTools is ListTools with the catalog's shared tools: what the gRPC
// handler sends (grpc.go).
func (s *Server) listTools(ctx context.Context, req *tooldexv1.ListToolsRequest) (*tooldexv1.ListToolsResponse, error) {
	tenant, err := s.readTenant(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	size, after, err := pageOf(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	entries, next := page(s.cat.List(tenant, req.GetNamePrefix(), req.GetLoading()), (*catalog.Entry).Name, after, size)
	tools := make([]*tooldexv1.Tool, len(entries))
	for i, e := range entries {
		tools[i] = e.WireTool()
	}
	return &tooldexv1.ListToolsResponse{Tools: tools, NextPageToken: next}, nil
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

// search is Search with the catalog's shared tools: what the gRPC handler
// sends (grpc.go). Errors are gRPC statuses.
func (s *Server) search(ctx context.Context, req *tooldexv1.SearchRequest) (*tooldexv1.SearchResponse, error) {
	res, results, entries, err := s.ranked(ctx, req.GetQuery(), index.ParseQuery, req.GetMaxResults(), req.GetSchemaView(), req.GetCaller())
	if err != nil {
		return nil, err
	}
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

// ranked is what Search and Discover share: the bounds of the request,
// its query parsed by parse, the caller's subject, the ranking of what the
// caller may see and its results in the schema view asked for. Errors are
// gRPC statuses.
func (s *Server) ranked(ctx context.Context, query string, parse func(string) (index.Query, error), maxResults int32, view tooldexv1.SchemaView, caller string) (index.Result, []*tooldexv1.SearchResult, []*catalog.Entry, error) {
	max, err := checkSearch(maxResults, view)
	if err != nil {
		return index.Result{}, nil, nil, s.toStatus(err)
	}
	q, err := parse(query)
	if err != nil {
		return index.Result{}, nil, nil, s.toStatus(err)
	}
	sub, err := subject(ctx, caller)
	if err != nil {
		return index.Result{}, nil, nil, s.toStatus(err)
	}
	res := s.rank(ctx, sub.Tenant, q, index.Options{Max: max, Allow: s.visible(sub)})
	results, entries := s.results(sub.Tenant, res.Hits, view)
	return res, results, entries, nil
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

// discover is Discover with the catalog's shared tools: what the gRPC
// handler sends (grpc.go). Errors are gRPC statuses.
func (s *Server) discover(ctx context.Context, req *tooldexv1.DiscoverRequest) (*tooldexv1.DiscoverResponse, error) {
	res, results, entries, err := s.ranked(ctx, req.GetQuery(), index.DiscoverQuery, req.GetMaxResults(), req.GetSchemaView(), req.GetCaller())
	if err != nil {
		return nil, err
	}
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

// fullResults replaces the catalog's shared tools by copies, for
// in-process callers, who own what they get.
func fullResults(results []*tooldexv1.SearchResult) {
	for _, r := range results {
		r.Tool = ownCopy(r.Tool)
	}
}

// ownCopy returns a copy of a catalog's shared tool decoded from the wire,
// as a client gets it (a STRUCT view's tool holds its schema marshalled,
// catalog.Entry.WireTool).
func ownCopy(t *tooldexv1.Tool) *tooldexv1.Tool {
	b, err := proto.Marshal(t)
	c := &tooldexv1.Tool{}
	if err != nil || proto.Unmarshal(b, c) != nil {
		return proto.CloneOf(t) // not UTF-8 (in-process only): its schema is a Struct
	}
	return c
}

// results attaches the definitions tenant sees, in the schema view v
// (view.go), to hits: the catalog's tools themselves, shared, never
// modified. A tool removed between ranking and lookup is dropped. v must
// have passed checkView.
func (s *Server) results(tenant string, hits []index.Hit, v tooldexv1.SchemaView) ([]*tooldexv1.SearchResult, []*catalog.Entry) {
	var buf [16]string // names of the usual few hits, on the stack
	names := buf[:0]
	for _, h := range hits {
		names = append(names, h.Name)
	}
	found := s.cat.GetAll(make([]*catalog.Entry, 0, len(hits)), tenant, names)
	out := make([]*tooldexv1.SearchResult, 0, len(hits))
	entries := found[:0]
	vals := make([]tooldexv1.SearchResult, len(hits)) // one allocation rather than one each
	for i, h := range hits {
		e := found[i]
		if e == nil {
			continue
		}
		entries = append(entries, e)
		r := &vals[i]
		r.Tool = viewTool(e, v)
		r.Score = h.Score
		r.KeywordScore = h.Keyword
		r.TfidfScore = h.TFIDF
		r.KeywordPoints = int32(h.Points)
		r.Match = matchKind(h.Match)
		out = append(out, r)
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
