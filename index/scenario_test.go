package index

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// catalogTool is one entry of testdata/catalog.json, a small catalog shaped
// like Claude Code's with short descriptions of our own.
type catalogTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	SearchHint  string         `json:"search_hint"`
	InputSchema map[string]any `json:"input_schema"`
	Core        bool           `json:"core"`
}

func loadCatalog(t testing.TB) []Doc {
	t.Helper()
	b, err := os.ReadFile("testdata/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []catalogTool
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatalf("testdata/catalog.json: %v", err)
	}
	docs := make([]Doc, len(tools))
	for i, tl := range tools {
		docs[i] = Doc{
			Name: tl.Name, Description: tl.Description, SearchHint: tl.SearchHint,
			Params: ParamText(tl.InputSchema), Core: tl.Core,
		}
	}
	return docs
}

func catalogIndex(t testing.TB, shards int) *Index {
	t.Helper()
	ix := New(Config{Shards: shards})
	for _, d := range loadCatalog(t) {
		ix.Upsert(d)
	}
	return ix
}

func hitNames(hits []Hit) []string {
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Name
	}
	return names
}

func findHit(hits []Hit, name string) (Hit, bool) {
	for _, h := range hits {
		if h.Name == name {
			return h, true
		}
	}
	return Hit{}, false
}

var scenarioShards = []int{1, 3, 8}

func TestCatalogShape(t *testing.T) {
	docs := loadCatalog(t)
	core, deferred := 0, 0
	seen := map[string]bool{}
	for _, d := range docs {
		if seen[d.Name] {
			t.Errorf("catalog lists %s twice", d.Name)
		}
		seen[d.Name] = true
		if d.Core {
			core++
		} else {
			deferred++
		}
	}
	if core != 31 {
		t.Errorf("catalog has %d core tools, want 31", core)
	}
	ix := catalogIndex(t, 3)
	if ix.Len() != len(docs) || ix.Deferred() != deferred {
		t.Errorf("Len, Deferred = %d, %d, want %d, %d", ix.Len(), ix.Deferred(), len(docs), deferred)
	}
}

func TestScenarioRanking(t *testing.T) {
	tests := []struct {
		query string
		first string   // name of the first hit
		top   []string // names among the first len(top) hits, any order
	}{
		{query: "cron schedule", first: "CronCreate"},
		{query: "worktree", top: []string{"EnterWorktree", "ExitWorktree"}},
		{query: "slack send", first: "mcp__slack__send_message"},
		{query: "discover:send a file to the user", first: "SendUserFile"},
		{query: "push notification phone", first: "PushNotification"},
		{query: "run sql against postgres", first: "mcp__postgres__query"},
		{query: "open a pull request", top: []string{"mcp__github__create_pull_request"}},
		{query: "cancel cron job", first: "CronDelete"},
	}
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		for _, tt := range tests {
			res, err := ix.Search(tt.query, Options{})
			if err != nil {
				t.Fatalf("shards=%d: Search(%q): %v", n, tt.query, err)
			}
			names := hitNames(res.Hits)
			if tt.first != "" && (len(names) == 0 || names[0] != tt.first) {
				t.Errorf("shards=%d: Search(%q) = %v, want %s first", n, tt.query, names, tt.first)
			}
			if len(tt.top) > 0 {
				k := min(len(tt.top), len(names))
				for _, w := range tt.top {
					if !slices.Contains(names[:k], w) {
						t.Errorf("shards=%d: Search(%q) = %v, want %v in the top %d", n, tt.query, names, tt.top, len(tt.top))
						break
					}
				}
			}
		}
	}
}

func TestScenarioRequired(t *testing.T) {
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		res, err := ix.Search("+slack send", Options{Max: 20})
		if err != nil {
			t.Fatal(err)
		}
		names := hitNames(res.Hits)
		if len(names) == 0 || names[0] != "mcp__slack__send_message" {
			t.Errorf("shards=%d: Search(%q) = %v, want mcp__slack__send_message first", n, "+slack send", names)
		}
		for _, name := range names {
			if !strings.HasPrefix(name, "mcp__slack__") {
				t.Errorf("shards=%d: Search(%q) = %v, want only Slack tools", n, "+slack send", names)
				break
			}
		}
		if !res.Required {
			t.Errorf("shards=%d: Search(%q).Required = false, want true", n, "+slack send")
		}
		// A required term nobody has rules everything out.
		res, _ = ix.Search("+zebra slack", Options{})
		if len(res.Hits) != 0 || !res.Required {
			t.Errorf("shards=%d: Search(%q) = %v, Required %v; want no hits, Required", n, "+zebra slack", hitNames(res.Hits), res.Required)
		}
		// Without a "+" word, or with only a stop word after it, nothing is required.
		for _, q := range []string{"slack send", "+the slack"} {
			if res, _ := ix.Search(q, Options{}); res.Required {
				t.Errorf("shards=%d: Search(%q).Required = true, want false", n, q)
			}
		}
	}
}

func TestScenarioCoreTools(t *testing.T) {
	tests := []struct {
		query  string
		loaded string // in AlreadyLoaded
		noHits bool
	}{
		{query: "notebook jupyter", loaded: "NotebookEdit", noHits: true},
		{query: "read", loaded: "Read"},
		{query: "Read", loaded: "Read"},
		{query: "bash", loaded: "Bash", noHits: true},
		{query: "task stop", loaded: "TaskStop"},
	}
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		for _, tt := range tests {
			res, err := ix.Search(tt.query, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(res.AlreadyLoaded, tt.loaded) {
				t.Errorf("shards=%d: Search(%q).AlreadyLoaded = %v, want %s in it", n, tt.query, res.AlreadyLoaded, tt.loaded)
			}
			if tt.noHits && len(res.Hits) != 0 {
				t.Errorf("shards=%d: Search(%q) = %v, want no hits", n, tt.query, hitNames(res.Hits))
			}
			for _, h := range res.Hits {
				if slices.Contains(res.AlreadyLoaded, h.Name) {
					t.Errorf("shards=%d: Search(%q): core tool %s ranked", n, tt.query, h.Name)
				}
			}
		}
	}
}

func TestScenarioExactName(t *testing.T) {
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		for _, q := range []string{"find symbol", "find_symbol", "FindSymbol", "findSymbol", "Find Symbol", "  find   symbol "} {
			res, err := ix.Search(q, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].Name != "mcp__serena__find_symbol" || res.Hits[0].Match != MatchExact {
				t.Errorf("shards=%d: Search(%q) = %+v, want mcp__serena__find_symbol first with MatchExact", n, q, res.Hits)
				continue
			}
			if h := res.Hits[0]; h.Score != 1 {
				t.Errorf("shards=%d: Search(%q) exact hit score = %v, want 1", n, q, h.Score)
			}
			if _, dup := findHit(res.Hits[1:], "mcp__serena__find_symbol"); dup {
				t.Errorf("shards=%d: Search(%q) = %v, want the exact hit once", n, q, hitNames(res.Hits))
			}
		}
	}
}

func TestScenarioSelect(t *testing.T) {
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		q := "select:CronCreate,NoSuchTool,Read"
		res, err := ix.Search(q, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := hitNames(res.Hits); !slices.Equal(got, []string{"CronCreate"}) {
			t.Errorf("shards=%d: Search(%q) = %v, want [CronCreate]", n, q, got)
		}
		if len(res.Hits) == 1 && res.Hits[0].Match != MatchSelect {
			t.Errorf("shards=%d: Search(%q) Match = %v, want MatchSelect", n, q, res.Hits[0].Match)
		}
		if !slices.Equal(res.NotFound, []string{"NoSuchTool"}) {
			t.Errorf("shards=%d: Search(%q).NotFound = %v, want [NoSuchTool]", n, q, res.NotFound)
		}
		if !slices.Equal(res.AlreadyLoaded, []string{"Read"}) {
			t.Errorf("shards=%d: Search(%q).AlreadyLoaded = %v, want [Read]", n, q, res.AlreadyLoaded)
		}
		// Names are found case-insensitively and by canonical spelling,
		// in request order, once.
		q = "select:cronlist,find_symbol,CronList,ExitWorktree"
		res, _ = ix.Search(q, Options{})
		if got, want := hitNames(res.Hits), []string{"CronList", "mcp__serena__find_symbol", "ExitWorktree"}; !slices.Equal(got, want) {
			t.Errorf("shards=%d: Search(%q) = %v, want %v", n, q, got, want)
		}
	}
}

func TestScenarioPrefix(t *testing.T) {
	want := []string{"mcp__github__create_issue", "mcp__github__create_pull_request", "mcp__github__list_pull_requests"}
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		for _, q := range []string{"mcp__github", "MCP__GitHub__"} {
			res, err := ix.Search(q, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := hitNames(res.Hits); !slices.Equal(got, want) {
				t.Errorf("shards=%d: Search(%q) = %v, want %v", n, q, got, want)
			}
			for _, h := range res.Hits {
				if h.Match != MatchPrefix {
					t.Errorf("shards=%d: Search(%q) hit %s Match = %v, want MatchPrefix", n, q, h.Name, h.Match)
				}
			}
		}
		// A whole MCP name is a prefix listing that finds the tool.
		res, _ := ix.Search("mcp__serena__find_symbol", Options{})
		if got := hitNames(res.Hits); !slices.Equal(got, []string{"mcp__serena__find_symbol"}) || res.Hits[0].Match != MatchPrefix {
			t.Errorf("shards=%d: Search(%q) = %+v, want only mcp__serena__find_symbol by prefix", n, "mcp__serena__find_symbol", res.Hits)
		}
		// Max caps a prefix listing.
		res, _ = ix.Search("mcp__", Options{})
		if res.Kind != KindKeyword {
			t.Errorf("shards=%d: Search(%q).Kind = %v, want KindKeyword", n, "mcp__", res.Kind)
		}
		res, _ = ix.Search("mcp__github", Options{Max: 2})
		if got := hitNames(res.Hits); !slices.Equal(got, want[:2]) {
			t.Errorf("shards=%d: Search(%q, Max 2) = %v, want %v", n, "mcp__github", got, want[:2])
		}
		// A prefix no tool has falls back to a keyword search.
		res, _ = ix.Search("mcp__nosuch", Options{})
		if res.Kind != KindKeyword {
			t.Errorf("shards=%d: Search(%q).Kind = %v, want KindKeyword", n, "mcp__nosuch", res.Kind)
		}
		for _, h := range res.Hits {
			if h.Match != MatchRanked {
				t.Errorf("shards=%d: Search(%q) hit %+v, want MatchRanked", n, "mcp__nosuch", h)
			}
		}
	}
}

// The reference boosts a tool whose name is a substring of the query, so
// REPL wins "replace…" and Snip gets 0.75 for "snippet". Whole words only.
func TestScenarioNoSubstringNameBoost(t *testing.T) {
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		res, _ := ix.Search("replace string in file", Options{Max: 20})
		if len(res.Hits) > 0 && res.Hits[0].Name == "REPL" {
			t.Errorf("shards=%d: Search(%q) = %v, want REPL not first", n, "replace string in file", hitNames(res.Hits))
		}
		if h, ok := findHit(res.Hits, "REPL"); ok && h.TFIDF >= 0.75 {
			t.Errorf("shards=%d: Search(%q): REPL TFIDF = %v, want < 0.75", n, "replace string in file", h.TFIDF)
		}
		res, _ = ix.Search("find code snippet", Options{Max: 20})
		if h, ok := findHit(res.Hits, "Snip"); ok && h.TFIDF >= 0.75 {
			t.Errorf("shards=%d: Search(%q): Snip TFIDF = %v, want < 0.75", n, "find code snippet", h.TFIDF)
		}
		// Whole words naming a (multi-word) tool do boost.
		res, _ = ix.Search("exit worktree please", Options{Max: 20})
		if h, ok := findHit(res.Hits, "ExitWorktree"); !ok || h.TFIDF < 0.75 || res.Hits[0].Name != "ExitWorktree" {
			t.Errorf("shards=%d: Search(%q) = %+v, want ExitWorktree first with TFIDF >= 0.75", n, "exit worktree please", res.Hits)
		}
	}
}

func TestScenarioOneLetterWords(t *testing.T) {
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		with, _ := ix.Search("schedule a reminder every morning", Options{Max: 100})
		without, _ := ix.Search("schedule reminder every morning", Options{Max: 100})
		if len(with.Hits) == 0 || with.Hits[0].Name != "CronCreate" {
			t.Errorf("shards=%d: Search(%q) = %v, want CronCreate first", n, "schedule a reminder every morning", hitNames(with.Hits))
		}
		for _, h := range with.Hits {
			if strings.HasPrefix(h.Name, "mcp__slack__") && h.Points != 0 {
				t.Errorf("shards=%d: Search(%q): %s Points = %d, want 0", n, "schedule a reminder every morning", h.Name, h.Points)
			}
		}
		if fmt.Sprint(with.Hits) != fmt.Sprint(without.Hits) {
			t.Errorf("shards=%d: Search(%q) = %+v, want the same as without \"a\": %+v", n, "schedule a reminder every morning", with.Hits, without.Hits)
		}
	}
}

func TestScenarioDiscover(t *testing.T) {
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		q := "discover:send a file to the user"
		res, err := ix.Search(q, Options{Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		if res.Kind != KindDiscover {
			t.Errorf("shards=%d: Search(%q).Kind = %v, want KindDiscover", n, q, res.Kind)
		}
		if len(res.Hits) == 0 || res.Hits[0].Name != "SendUserFile" {
			t.Errorf("shards=%d: Search(%q) = %v, want SendUserFile first", n, q, hitNames(res.Hits))
		}
		for _, h := range res.Hits {
			if h.Keyword != 0 || h.Points != 0 || h.Score != h.TFIDF {
				t.Errorf("shards=%d: Search(%q) hit %+v, want a TF-IDF-only score", n, q, h)
			}
		}
		// discover: never takes the exact-name path.
		res, _ = ix.Search("discover:CronList", Options{})
		for _, h := range res.Hits {
			if h.Match != MatchRanked {
				t.Errorf("shards=%d: Search(%q) hit %+v, want MatchRanked", n, "discover:CronList", h)
			}
		}
	}
}

func TestScenarioCJK(t *testing.T) {
	for _, n := range scenarioShards {
		ix := catalogIndex(t, n)
		for _, q := range []string{"定时任务", "帮我设置定时任务调度"} {
			res, err := ix.Search(q, Options{Max: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].Name != "mcp__dingshi__add_job" {
				t.Errorf("shards=%d: Search(%q) = %v, want mcp__dingshi__add_job first", n, q, hitNames(res.Hits))
			}
			// mcp__renwu__board shares only the bigram 任务: the CJK gate
			// (two bigrams) keeps it out; CronCreate shares nothing.
			for _, name := range []string{"mcp__renwu__board", "CronCreate"} {
				if _, ok := findHit(res.Hits, name); ok {
					t.Errorf("shards=%d: Search(%q) = %v, want no %s", n, q, hitNames(res.Hits), name)
				}
			}
		}
		// A query of one bigram needs only that one.
		res, _ := ix.Search("任务", Options{Max: 10})
		if got := hitNames(res.Hits); !slices.Contains(got, "mcp__renwu__board") || !slices.Contains(got, "mcp__dingshi__add_job") {
			t.Errorf("shards=%d: Search(%q) = %v, want both CJK tools", n, "任务", got)
		}
	}
}

// Results never depend on the shard count.
func TestScenarioShardIndependence(t *testing.T) {
	queries := []string{
		"cron schedule", "worktree", "slack send", "+slack send", "notebook jupyter", "read",
		"find symbol", "replace string in file", "find code snippet", "schedule a reminder every morning",
		"discover:send a file to the user", "定时任务", "github pull request", "mcp__slack", "list",
	}
	base := catalogIndex(t, 1)
	for _, n := range scenarioShards[1:] {
		ix := catalogIndex(t, n)
		for _, q := range queries {
			want, _ := base.Search(q, Options{Max: 100})
			got, _ := ix.Search(q, Options{Max: 100})
			if msg := diffResults(got, want); msg != "" {
				t.Errorf("shards=%d: Search(%q): %s", n, q, msg)
			}
		}
	}
}
