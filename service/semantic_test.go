package service

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/permission"
	"github.com/tooldex/tooldex/internal/semantic"
	"github.com/tooldex/tooldex/internal/semantic/semantictest"
)

// semanticServer returns a running server with dense retrieval and the
// demo tools registered, once they are all embedded.
func semanticServer(t *testing.T, emb semantic.Embedder, perms *permission.Policy) *Server {
	t.Helper()
	st := semantic.NewStore(semantic.StoreConfig{Embedder: emb, RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	s := New(Config{Logger: zaptest.NewLogger(t), Semantic: st, Permissions: perms, Metrics: NewMetrics()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	_, err := s.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{
		tool("get_outlook", "Returns the temperature outlook for a place."),
		tool("send_mail", "Deliver a message to an inbox."),
		tool("read_document", "Reads a document from disk."),
		tool("city_lookup", "Looks up a city by name."),
		{Name: "Read", Description: "Reads a file (core).", AlwaysLoad: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for st.Stats().Embedded < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("tools not embedded: %+v", st.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	return s
}

func TestSemanticSearch(t *testing.T) {
	emb := &semantictest.Concepts{}
	s := semanticServer(t, emb, nil)
	tests := []struct {
		query string
		want  []string // a prefix of the results
	}{
		// No word shared with the tool: only dense retrieval finds it.
		{"weather in Paris", []string{"get_outlook"}},
		{"email my boss", []string{"send_mail"}},
		// Lexical and dense agree.
		{"temperature outlook", []string{"get_outlook"}},
		// An exact name stays first whatever the vectors say.
		{"city_lookup", []string{"city_lookup"}},
		// +required: dense retrieval only reorders lexical matches.
		{"+city weather", []string{"city_lookup"}},
		// select: is untouched.
		{"select:send_mail", []string{"send_mail"}},
	}
	for _, tt := range tests {
		resp, err := s.search(t.Context(), &tooldexv1.SearchRequest{Query: tt.query, MaxResults: 5})
		if err != nil {
			t.Fatalf("search(%q): %v", tt.query, err)
		}
		got := resultNames(resp.GetResults())
		if len(got) < len(tt.want) || !slices.Equal(got[:len(tt.want)], tt.want) {
			t.Errorf("search(%q) = %v, want it to start with %v", tt.query, got, tt.want)
		}
		if slices.Contains(got, "Read") {
			t.Errorf("search(%q) = %v: lists the core tool Read", tt.query, got)
		}
		if tt.query == "+city weather" && len(got) != 1 {
			t.Errorf("search(%q) = %v, want only the tool with the required term", tt.query, got)
		}
	}
	d, err := s.discover(t.Context(), &tooldexv1.DiscoverRequest{Query: "forecast for tomorrow"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultNames(d.GetResults()); len(got) == 0 || got[0] != "get_outlook" {
		t.Errorf("discover(forecast for tomorrow) = %v, want get_outlook first", got)
	}

	// Unregistered tools leave the dense index too.
	if _, err := s.UnregisterTools(t.Context(), &tooldexv1.UnregisterToolsRequest{Names: []string{"get_outlook"}}); err != nil {
		t.Fatal(err)
	}
	resp, err := s.search(t.Context(), &tooldexv1.SearchRequest{Query: "weather in Paris"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultNames(resp.GetResults()); slices.Contains(got, "get_outlook") {
		t.Errorf("after unregistering, search = %v, still lists get_outlook", got)
	}

	// A failing embedder leaves the lexical ranking: still an answer.
	emb.Down.Store(true)
	resp, err = s.search(t.Context(), &tooldexv1.SearchRequest{Query: "read a document now"})
	if err != nil {
		t.Fatalf("search with the embedder down: %v", err)
	}
	if got := resultNames(resp.GetResults()); len(got) == 0 || got[0] != "read_document" {
		t.Errorf("embedder down: search = %v, want read_document from the lexical ranking", got)
	}
	resp, err = s.search(t.Context(), &tooldexv1.SearchRequest{Query: "please email the team"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultNames(resp.GetResults()); slices.Contains(got, "send_mail") {
		t.Errorf("embedder down: search(please email the team) = %v; want no dense match", got)
	}
	// A query embedded before the failure is still served from the cache.
	resp, err = s.search(t.Context(), &tooldexv1.SearchRequest{Query: "email my boss"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultNames(resp.GetResults()); len(got) == 0 || got[0] != "send_mail" {
		t.Errorf("embedder down: search(email my boss) = %v, want send_mail from the cached query vector", got)
	}
}

func TestSemanticSearchHidesDeniedTools(t *testing.T) {
	perms, err := permission.Parse([]byte(`{"rules":[{"tool":"send_mail","caller":"guest","action":"deny"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s := semanticServer(t, &semantictest.Concepts{}, perms)
	for _, caller := range []string{"guest", "admin"} {
		resp, err := s.search(t.Context(), &tooldexv1.SearchRequest{Query: "email my boss", Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		got := resultNames(resp.GetResults())
		if listed := slices.Contains(got, "send_mail"); listed != (caller == "admin") {
			t.Errorf("caller %s: search = %v; send_mail listed %v, want %v", caller, got, listed, caller == "admin")
		}
	}
}

// TestSemanticSearchKeepsTenantsApart checks that dense retrieval, whose
// store holds every tenant's tools, offers a tenant only what it sees.
func TestSemanticSearchKeepsTenantsApart(t *testing.T) {
	s := semanticServer(t, &semantictest.Concepts{}, nil) // the default tenant's tools
	other := auth.NewContext(t.Context(), principal("u", "other", allButAdmin...))
	if _, err := s.RegisterTools(other, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{
		tool("post_letter", "Deliver a message to a mailbox."),
	}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.dense.store.Stats().Embedded < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("tools not embedded: %+v", s.dense.store.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	tests := []struct {
		ctx        context.Context
		want, hide string
	}{
		{t.Context(), "send_mail", "post_letter"},
		{other, "post_letter", "send_mail"},
	}
	for _, tt := range tests {
		resp, err := s.search(tt.ctx, &tooldexv1.SearchRequest{Query: "email my boss", MaxResults: 10})
		if err != nil {
			t.Fatal(err)
		}
		got := resultNames(resp.GetResults())
		if !slices.Contains(got, tt.want) || slices.Contains(got, tt.hide) {
			t.Errorf("search = %v, want %s and never %s", got, tt.want, tt.hide)
		}
	}
}

// The server's fused ranking gives the candidates' words as written their
// say (index.Options.BlendWords): its hits are the blended lexical
// candidates fused, not the plain ones.
func TestSemanticSearchBlendsWords(t *testing.T) {
	s := semanticServer(t, &semantictest.Concepts{}, nil)
	q := index.Query{Kind: index.KindKeyword, Text: "reads the temperature outlook of a document"}
	got := s.rank(t.Context(), auth.DefaultTenant, q, index.Options{Max: 5}).Hits
	ix := s.Index()
	qv, err := s.dense.store.Embed(t.Context(), q.Text)
	if err != nil {
		t.Fatal(err)
	}
	fused := func(blend bool) []index.Hit {
		res := ix.Run(q, index.Options{Max: FuseCandidates, BlendWords: blend})
		key := func(name string) string { return denseKey(auth.DefaultTenant, name) }
		return fuseDense(s.dense.store, qv, res, s.dense.ratio, 5, func(string) bool { return true }, key)
	}
	want, plain := fused(true), fused(false)
	if !slices.Equal(got, want) {
		t.Errorf("rank = %+v, want the blended candidates fused %+v", got, want)
	}
	if slices.Equal(want, plain) {
		t.Errorf("blended and plain fusions agree (%+v): the query does not tell them apart", plain)
	}
}
