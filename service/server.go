package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
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
}

// Server implements tooldex.v1.DiscoveryService.
type Server struct {
	tooldexv1.UnimplementedDiscoveryServiceServer

	log    *zap.Logger
	policy Policy
	ix     *index.Index

	// mu guards tools and orders catalog changes with index updates.
	mu    sync.RWMutex
	tools map[string]*entry
}

// entry is one registered tool.
type entry struct {
	tool   *tooldexv1.Tool // as registered, with loading set; never mutated
	schema *jsonschema.Schema
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
	return &Server{
		log:    log.Named("discovery"),
		policy: cfg.Policy,
		ix:     index.New(cfg.Index),
		tools:  make(map[string]*entry),
	}
}

// Index returns the server's search index (for in-process evaluation).
func (s *Server) Index() *index.Index { return s.ix }

// RegisterTools validates the whole batch first; if any tool is invalid,
// nothing is registered and every violation is reported.
func (s *Server) RegisterTools(ctx context.Context, req *tooldexv1.RegisterToolsRequest) (*tooldexv1.RegisterToolsResponse, error) {
	resp, err := s.register(req)
	return resp, s.toStatus(err)
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
	entries := make([]*entry, len(tools))
	seen := make(map[string]int, len(tools))
	for i, t := range tools {
		field := fmt.Sprintf("tools[%d]", i)
		if j, dup := seen[t.GetName()]; dup && t.GetName() != "" {
			ve.add(field+".name", "%q is also tools[%d]; names must be unique in a batch", t.GetName(), j)
		}
		seen[t.GetName()] = i
		sch := validateTool(ve, field, t)
		c := proto.CloneOf(t)
		if c.GetSource().GetOrigin() == tooldexv1.Origin_ORIGIN_UNSPECIFIED {
			if c.Source == nil {
				c.Source = &tooldexv1.ToolSource{}
			}
			c.Source.Origin = tooldexv1.Origin_ORIGIN_FRONTEND
		}
		c.Loading = s.policy.loading(c)
		entries[i] = &entry{tool: c, schema: sch}
	}
	if err := ve.err(); err != nil {
		return nil, err
	}
	resp := &tooldexv1.RegisterToolsResponse{Results: make([]*tooldexv1.RegisterResult, len(entries))}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range entries {
		name := e.tool.GetName()
		outcome := tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED
		if old := s.tools[name]; old != nil {
			outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED
			if proto.Equal(old.tool, e.tool) {
				outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED
			}
		}
		resp.Results[i] = &tooldexv1.RegisterResult{Name: name, Outcome: outcome, Loading: e.tool.GetLoading()}
		if req.GetValidateOnly() || outcome == tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED {
			continue
		}
		s.tools[name] = e
		if e.tool.GetLoading() == tooldexv1.Loading_LOADING_EXCLUDED {
			s.ix.Remove(name)
			continue
		}
		s.ix.Upsert(docOf(e.tool))
	}
	if !req.GetValidateOnly() {
		s.log.Info("tools registered", zap.Int("count", len(entries)), zap.Int("catalog", len(s.tools)))
	}
	return resp, nil
}

// docOf converts a tool to what the index needs.
func docOf(t *tooldexv1.Tool) index.Doc {
	var params string
	if sch := t.GetInputSchema(); sch != nil {
		params = index.ParamText(sch.AsMap())
	}
	return index.Doc{
		Name:        t.GetName(),
		Aliases:     t.GetAliases(),
		Description: t.GetDescription(),
		SearchHint:  t.GetSearchHint(),
		Params:      params,
		Core:        t.GetLoading() == tooldexv1.Loading_LOADING_CORE,
	}
}

// UnregisterTools removes tools by name.
func (s *Server) UnregisterTools(ctx context.Context, req *tooldexv1.UnregisterToolsRequest) (*tooldexv1.UnregisterToolsResponse, error) {
	names := req.GetNames()
	if len(names) > MaxBatch {
		ve := &ValidationError{}
		ve.add("names", "has %d names, at most %d per request", len(names), MaxBatch)
		return nil, s.toStatus(ve)
	}
	resp := &tooldexv1.UnregisterToolsResponse{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if _, ok := s.tools[n]; !ok {
			resp.NotFound = append(resp.NotFound, n)
			continue
		}
		delete(s.tools, n)
		s.ix.Remove(n)
		resp.Removed = append(resp.Removed, n)
	}
	if len(resp.Removed) > 0 {
		s.log.Info("tools unregistered", zap.Int("count", len(resp.Removed)), zap.Int("catalog", len(s.tools)))
	}
	return resp, nil
}

// ListTools lists registered tools sorted by name.
func (s *Server) ListTools(ctx context.Context, req *tooldexv1.ListToolsRequest) (*tooldexv1.ListToolsResponse, error) {
	s.mu.RLock()
	var tools []*tooldexv1.Tool
	for name, e := range s.tools {
		if !strings.HasPrefix(name, req.GetNamePrefix()) {
			continue
		}
		if l := req.GetLoading(); l != tooldexv1.Loading_LOADING_UNSPECIFIED && l != e.tool.GetLoading() {
			continue
		}
		tools = append(tools, e.tool)
	}
	s.mu.RUnlock()
	slices.SortFunc(tools, func(a, b *tooldexv1.Tool) int { return strings.Compare(a.GetName(), b.GetName()) })
	return &tooldexv1.ListToolsResponse{Tools: tools}, nil
}

// Search runs a ToolSearch query.
func (s *Server) Search(ctx context.Context, req *tooldexv1.SearchRequest) (*tooldexv1.SearchResponse, error) {
	max, err := maxResults(req.GetMaxResults())
	if err != nil {
		return nil, s.toStatus(err)
	}
	q, err := index.ParseQuery(req.GetQuery())
	if err != nil {
		return nil, s.toStatus(err)
	}
	res := s.ix.Run(q, index.Options{Max: max})
	resp := &tooldexv1.SearchResponse{
		Results:            s.results(res.Hits),
		TotalDeferredTools: int32(res.Deferred),
		Mode:               queryMode(res.Kind),
		AlreadyLoaded:      res.AlreadyLoaded,
		NotFound:           res.NotFound,
	}
	resp.Text = renderSearch(req.GetQuery(), resp)
	return resp, nil
}

// Discover ranks deferred tools for a task by TF-IDF alone.
func (s *Server) Discover(ctx context.Context, req *tooldexv1.DiscoverRequest) (*tooldexv1.DiscoverResponse, error) {
	max, err := maxResults(req.GetMaxResults())
	if err != nil {
		return nil, s.toStatus(err)
	}
	q, err := index.DiscoverQuery(req.GetQuery())
	if err != nil {
		return nil, s.toStatus(err)
	}
	res := s.ix.Run(q, index.Options{Max: max})
	resp := &tooldexv1.DiscoverResponse{
		Results:            s.results(res.Hits),
		TotalDeferredTools: int32(res.Deferred),
	}
	resp.Text = renderDiscover(req.GetQuery(), resp)
	return resp, nil
}

func maxResults(n int32) (int, error) {
	if n < 0 {
		ve := &ValidationError{}
		ve.add("max_results", "is %d; use 0 for the default of %d, or a positive number", n, index.DefaultMax)
		return 0, ve
	}
	return int(n), nil
}

// results attaches the registered definitions to hits. A tool removed
// between ranking and lookup is dropped.
func (s *Server) results(hits []index.Hit) []*tooldexv1.SearchResult {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*tooldexv1.SearchResult, 0, len(hits))
	for _, h := range hits {
		e := s.tools[h.Name]
		if e == nil {
			continue
		}
		out = append(out, &tooldexv1.SearchResult{
			Tool:          e.tool,
			Score:         h.Score,
			KeywordScore:  h.Keyword,
			TfidfScore:    h.TFIDF,
			KeywordPoints: int32(h.Points),
			Match:         matchKind(h.Match),
		})
	}
	return out
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
