package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/internal/toolname"
)

// fakeRanker returns a fixed ranking per query text and records the k asked.
type fakeRanker struct {
	rankings map[string][]string
	ks       []int
}

var errRank = errors.New("rank failed")

func (f *fakeRanker) Rank(query string, k int) ([]string, error) {
	f.ks = append(f.ks, k)
	if query == "fail" {
		return nil, errRank
	}
	return f.rankings[query], nil
}

// approx compares two metrics field by field to within 0.005 (the precision
// of the hand-computed values).
func approx(got, want Metrics) bool {
	g := []float64{got.R1, got.R5, got.R10, got.NDCG5, got.NDCG10, got.Comp10}
	w := []float64{want.R1, want.R5, want.R10, want.NDCG5, want.NDCG10, want.Comp10}
	for i := range g {
		if math.Abs(g[i]-w[i]) > 0.005 {
			return false
		}
	}
	return true
}

func TestRun(t *testing.T) {
	ten := []string{"b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}
	tests := []struct {
		name     string
		queries  []Query
		rankings map[string][]string
		want     Metrics
	}{
		{
			name:     "perfect single",
			queries:  []Query{{ID: "1", Text: "q", Relevant: []string{"a"}}},
			rankings: map[string][]string{"q": {"a", "b", "c"}},
			want:     Metrics{100, 100, 100, 100, 100, 100},
		},
		{
			name:     "perfect multi in any order",
			queries:  []Query{{ID: "1", Text: "q", Relevant: []string{"a", "b", "c"}}},
			rankings: map[string][]string{"q": {"c", "a", "b", "x"}},
			want:     Metrics{33.33, 100, 100, 100, 100, 100},
		},
		{
			// NDCG = (1/log2(3)) / 1 = 0.6309.
			name:     "relevant at rank 2",
			queries:  []Query{{ID: "1", Text: "q", Relevant: []string{"a"}}},
			rankings: map[string][]string{"q": {"b", "a"}},
			want:     Metrics{0, 100, 100, 63.09, 63.09, 100},
		},
		{
			// NDCG@10 = 1/log2(7) = 0.3562; nothing in the top 5.
			name:     "relevant at rank 6",
			queries:  []Query{{ID: "1", Text: "q", Relevant: []string{"a"}}},
			rankings: map[string][]string{"q": {"b", "c", "d", "e", "f", "a"}},
			want:     Metrics{0, 0, 100, 0, 35.62, 100},
		},
		{
			// DCG 1, IDCG 1 + 1/log2(3) = 1.6309: NDCG 61.31.
			name:     "two relevant, one in top 10",
			queries:  []Query{{ID: "1", Text: "q", Relevant: []string{"a", "z"}}},
			rankings: map[string][]string{"q": append([]string{"a"}, ten[:9]...)},
			want:     Metrics{50, 50, 50, 61.31, 61.31, 0},
		},
		{
			name:     "result past k ignored",
			queries:  []Query{{ID: "1", Text: "q", Relevant: []string{"a"}}},
			rankings: map[string][]string{"q": append(append([]string{}, ten...), "a")},
			want:     Metrics{0, 0, 0, 0, 0, 0},
		},
		{
			name:     "repeated result counted once",
			queries:  []Query{{ID: "1", Text: "q", Relevant: []string{"a", "b"}}},
			rankings: map[string][]string{"q": {"a", "a", "a"}},
			want:     Metrics{50, 50, 50, 61.31, 61.31, 0},
		},
		{
			name: "average, empty relevant skipped",
			queries: []Query{
				{ID: "1", Text: "hit", Relevant: []string{"a"}},
				{ID: "2", Text: "miss", Relevant: []string{"a"}},
				{ID: "3", Text: "none", Relevant: nil},
			},
			rankings: map[string][]string{"hit": {"a"}, "miss": {"b"}, "none": {"a"}},
			want:     Metrics{50, 50, 50, 50, 50, 50},
		},
		{
			name:     "empty ranking",
			queries:  []Query{{ID: "1", Text: "q", Relevant: []string{"a"}}},
			rankings: map[string][]string{},
			want:     Metrics{0, 0, 0, 0, 0, 0},
		},
		{
			// Six relevant: IDCG@5 covers 5 hits, IDCG@10 covers 6; hits at
			// ranks 1 and 3 give DCG 1 + 0.5 = 1.5. IDCG@5 = 2.9485,
			// IDCG@10 = 3.3047.
			name:     "more relevant than k=5",
			queries:  []Query{{ID: "1", Text: "q", Relevant: []string{"r1", "r2", "r3", "r4", "r5", "r6"}}},
			rankings: map[string][]string{"q": {"r1", "x", "r2"}},
			want:     Metrics{16.67, 33.33, 33.33, 50.87, 45.39, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRanker{rankings: tc.rankings}
			got, err := Run(&Dataset{Queries: tc.queries}, f)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !approx(got, tc.want) {
				t.Errorf("Run = %+v, want %+v", got, tc.want)
			}
			for _, k := range f.ks {
				if k != 10 {
					t.Errorf("Rank called with k=%d, want 10", k)
				}
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		queries []Query
		wantErr error // nil: any error
	}{
		{"no queries", nil, nil},
		{"only empty relevant", []Query{{ID: "1", Text: "q"}}, nil},
		{"ranker error", []Query{{ID: "1", Text: "fail", Relevant: []string{"a"}}}, errRank},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(&Dataset{Queries: tc.queries}, &fakeRanker{})
			if err == nil {
				t.Fatal("Run: got nil error, want an error")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("Run error = %v, want it to wrap %v", err, tc.wantErr)
			}
			if _, gerr := GroupRecall5(&Dataset{Queries: tc.queries}, &fakeRanker{}); gerr == nil {
				t.Error("GroupRecall5: got nil error, want an error")
			}
		})
	}
}

func TestMarshalJSON(t *testing.T) {
	tests := []struct {
		m    Metrics
		want string
	}{
		{Metrics{}, `{"R@1":0,"R@5":0,"R@10":0,"NDCG@5":0,"NDCG@10":0,"Comp@10":0}`},
		{
			Metrics{100, 200.0 / 3, 100 / math.Log2(3), 12.3456, 0.004, 100.0 / 3},
			`{"R@1":100,"R@5":66.67,"R@10":63.09,"NDCG@5":12.35,"NDCG@10":0,"Comp@10":33.33}`,
		},
	}
	for _, tc := range tests {
		got, err := json.Marshal(tc.m)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", tc.m, err)
		}
		if string(got) != tc.want {
			t.Errorf("Marshal(%+v) = %s, want %s", tc.m, got, tc.want)
		}
		// Through a pointer and nested in a map the same encoding is used.
		got, err = json.Marshal(map[string]*Metrics{"x": &tc.m})
		if want := `{"x":` + tc.want + `}`; err != nil || string(got) != want {
			t.Errorf("Marshal(map) = %s, %v, want %s", got, err, want)
		}
	}
}

func TestGroupRecall5(t *testing.T) {
	ds := func(rel ...string) *Dataset {
		return &Dataset{
			Tools: []Tool{
				{Name: "s1_a", Group: "s1"}, {Name: "s1_b", Group: "s1"}, {Name: "s1_c", Group: "s1"},
				{Name: "s2_a", Group: "s2"}, {Name: "s2_b", Group: "s2"},
				{Name: "s3_a", Group: "s3"},
				{Name: "x"}, {Name: "y"},
			},
			Queries: []Query{{ID: "1", Text: "q", Relevant: rel}},
		}
	}
	tests := []struct {
		name    string
		ds      *Dataset
		ranking []string
		want    float64
	}{
		{"other tools of the right servers", ds("s1_a", "s2_a"), []string{"s1_c", "s2_b"}, 100},
		{"one of two servers", ds("s1_a", "s2_a"), []string{"s1_b", "s3_a"}, 50},
		{"server counted once", ds("s1_a", "s1_b", "s2_a"), []string{"s1_c"}, 50},
		{"server at rank 6 ignored", ds("s3_a"), []string{"s1_a", "s1_b", "s1_c", "s2_a", "s2_b", "s3_a"}, 0},
		{"groupless tool is its own group: miss", ds("x"), []string{"y", "s1_a"}, 0},
		{"groupless tool is its own group: hit", ds("x", "s1_a"), []string{"x", "s1_b"}, 100},
		{"unknown relevant never found", ds("missing"), []string{"x", "y", "s1_a"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRanker{rankings: map[string][]string{"q": tc.ranking}}
			got, err := GroupRecall5(tc.ds, f)
			if err != nil {
				t.Fatalf("GroupRecall5: %v", err)
			}
			if math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("GroupRecall5 = %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(f.ks, []int{5}) {
				t.Errorf("Rank k values = %v, want [5]", f.ks)
			}
		})
	}
	// Averaged over queries, skipping empty relevant lists.
	d := ds("s1_a")
	d.Queries = append(d.Queries, Query{ID: "2", Text: "q2", Relevant: []string{"s2_a"}}, Query{ID: "3", Text: "q3"})
	f := &fakeRanker{rankings: map[string][]string{"q": {"s1_b"}, "q2": {"s1_a"}}}
	if got, err := GroupRecall5(d, f); err != nil || got != 50 {
		t.Errorf("GroupRecall5 over 2 queries = %v, %v, want 50", got, err)
	}
}

func TestAssignNames(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"slash", []string{"bing-cn-mcp/bing_search"}, []string{"bing-cn-mcp_bing_search"}},
		{"space and slash", []string{"TheClique/Songkick concert"}, []string{"TheClique_Songkick_concert"}},
		{"dot", []string{"math.factorial"}, []string{"math_factorial"}},
		{"no collapsing", []string{"a..b / c"}, []string{"a__b___c"}},
		{"non-ASCII rune is one char", []string{"👋 Onboarding/Get", "café"}, []string{"__Onboarding_Get", "caf_"}},
		{"legal unchanged", []string{"get_by-id_2"}, []string{"get_by-id_2"}},
		{"legal original keeps its name", []string{"math.gcd", "math_gcd"}, []string{"math_gcd_2", "math_gcd"}},
		{"clash in file order", []string{"a.b", "a/b", "a b"}, []string{"a_b", "a_b_2", "a_b_3"}},
		{"suffix skips taken name", []string{"a_b_2", "a.b", "a/b"}, []string{"a_b_2", "a_b", "a_b_3"}},
		{"truncated to 64", []string{x(70) + "/y"}, []string{x(64)}},
		{"truncated duplicate", []string{x(64) + "/a", x(64) + "/b"}, []string{x(64), x(62) + "_2"}},
		{"long legal name", []string{x(65), x(64)}, []string{x(62) + "_2", x(64)}},
		{"short names suffixed without truncation", []string{"a/1", "a.1"}, []string{"a_1", "a_1_2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := assignNames(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("assignNames(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}

	// Ten and more duplicates: the suffix grows and the base shrinks to fit.
	var in []string
	for i := range 12 {
		in = append(in, fmt.Sprintf("%s/%d", x(64), i))
	}
	got, _ := assignNames(in)
	want := []string{x(64)}
	for i := 2; i <= 12; i++ {
		s := fmt.Sprintf("_%d", i)
		want = append(want, x(64-len(s))+s)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("assignNames(12 long duplicates) = %q, want %q", got, want)
	}
	for _, n := range got {
		if !legalRE.MatchString(n) {
			t.Errorf("name %q is not legal", n)
		}
	}
}

var legalRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func writeFiles(t *testing.T, tools, queries string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	tp, qp := filepath.Join(dir, "tools.jsonl"), filepath.Join(dir, "queries.jsonl")
	if err := os.WriteFile(tp, []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(qp, []byte(queries), 0o644); err != nil {
		t.Fatal(err)
	}
	return tp, qp
}

func TestLoad(t *testing.T) {
	tools := `{"name": "srv/search", "description": "Search the web", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}, "group": "srv", "tool_name": "search", "server_description": "A search server"}

{"name": "plain_tool", "description": "Plain", "input_schema": null, "group": null, "extra": [1, 2]}
{"name": "plain.tool", "description": "Dotted"}
`
	queries := `{"id": "q1", "query": "find pages", "relevant": ["srv/search", "plain.tool", "srv/search"], "subset": "x"}
{"id": 7, "query": "numeric id", "relevant": ["gone/tool", "plain_tool"]}
{"id": "q3", "query": "no relevant", "relevant": []}
{"id": "q4", "query": "missing again", "relevant": ["gone/tool"]}`
	tp, qp := writeFiles(t, tools, queries)
	got, err := Load(tp, qp)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := &Dataset{
		Tools: []Tool{
			{
				Name: "srv_search", Original: "srv/search", Description: "Search the web",
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
				Group:       "srv", ServerDescription: "A search server",
			},
			{Name: "plain_tool", Original: "plain_tool", Description: "Plain"},
			{Name: "plain_tool_2", Original: "plain.tool", Description: "Dotted"},
		},
		Queries: []Query{
			{ID: "q1", Text: "find pages", Relevant: []string{"srv_search", "plain_tool_2"}},
			{ID: "7", Text: "numeric id", Relevant: []string{"gone_tool", "plain_tool"}},
			{ID: "q3", Text: "no relevant", Relevant: []string{}},
			{ID: "q4", Text: "missing again", Relevant: []string{"gone_tool"}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("Load = %s\nwant %s", g, w)
	}

	// The missing relevant tool is unfindable even by a ranker returning
	// every tool.
	all := []string{"srv_search", "plain_tool", "plain_tool_2"}
	f := &fakeRanker{rankings: map[string][]string{"find pages": all, "numeric id": all, "missing again": all}}
	m, err := Run(got, f)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// q1: 2/2 found, q7: 1/2, q4: 0/1.
	if wantR10 := 50.0; math.Abs(m.R10-wantR10) > 1e-9 {
		t.Errorf("R@10 = %v, want %v", m.R10, wantR10)
	}
	if wantComp := 100.0 / 3; math.Abs(m.Comp10-wantComp) > 1e-9 {
		t.Errorf("Comp@10 = %v, want %v", m.Comp10, wantComp)
	}
}

func TestLoadMissingNameClash(t *testing.T) {
	// A missing relevant name whose sanitized form is a tool's name must
	// not alias that tool.
	tp, qp := writeFiles(t,
		`{"name": "a_b", "description": "", "input_schema": null, "group": null}`,
		`{"id": "1", "query": "q", "relevant": ["a.b"]}`)
	ds, err := Load(tp, qp)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got, want := ds.Queries[0].Relevant, []string{"a_b_2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Relevant = %q, want %q", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	okTool := `{"name": "t", "description": "d", "input_schema": null, "group": null}`
	okQuery := `{"id": "1", "query": "q", "relevant": ["t"]}`
	tests := []struct {
		name, tools, queries string
	}{
		{"bad tool json", `{"name": `, okQuery},
		{"missing name", `{"description": "d"}`, okQuery},
		{"empty name", `{"name": ""}`, okQuery},
		{"duplicate name", okTool + "\n" + okTool, okQuery},
		{"schema not object", `{"name": "t", "input_schema": "string"}`, okQuery},
		{"group not string", `{"name": "t", "group": 3}`, okQuery},
		{"bad query json", okTool, `{"id": "1", "query": "q", "relevant": "t"}`},
		{"missing id", okTool, `{"query": "q", "relevant": ["t"]}`},
		{"duplicate id", okTool, okQuery + "\n" + okQuery},
		{"empty query text", okTool, `{"id": "1", "query": "  ", "relevant": ["t"]}`},
		{"empty relevant name", okTool, `{"id": "1", "query": "q", "relevant": [""]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp, qp := writeFiles(t, tc.tools, tc.queries)
			if ds, err := Load(tp, qp); err == nil {
				t.Errorf("Load = %+v, nil error; want an error", ds)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.jsonl"), "none.jsonl"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing file) error = %v, want os.ErrNotExist", err)
	}
}

// oracle ranks a query's relevant tools first.
type oracle map[string][]string

func (o oracle) Rank(query string, k int) ([]string, error) {
	r := o[query]
	return r[:min(len(r), k)], nil
}

// TestRealDatasets loads every dataset under ../../../shared/datasets.
func TestRealDatasets(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "datasets")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Skipf("no datasets: %v", err)
	}
	n := 0
	for _, e := range entries {
		tp := filepath.Join(root, e.Name(), "tools.jsonl")
		qp := filepath.Join(root, e.Name(), "queries.jsonl")
		if _, err := os.Stat(tp); !e.IsDir() || err != nil {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			ds, err := Load(tp, qp)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(ds.Tools) == 0 || len(ds.Queries) == 0 {
				t.Fatalf("got %d tools, %d queries; want both > 0", len(ds.Tools), len(ds.Queries))
			}
			names := make(map[string]bool, len(ds.Tools))
			renamed := 0
			for _, tool := range ds.Tools {
				if !legalRE.MatchString(tool.Name) {
					t.Errorf("tool %q: name %q is not legal", tool.Original, tool.Name)
				}
				if names[tool.Name] {
					t.Errorf("tool %q: name %q is not unique", tool.Original, tool.Name)
				}
				names[tool.Name] = true
				if legalRE.MatchString(tool.Original) && tool.Name != tool.Original {
					t.Errorf("legal name %q mapped to %q", tool.Original, tool.Name)
				}
				if tool.Name != toolname.Sanitize(tool.Original) {
					renamed++
				}
			}
			o := make(oracle, len(ds.Queries))
			missing, empty := 0, 0
			for _, q := range ds.Queries {
				if q.ID == "" || strings.TrimSpace(q.Text) == "" {
					t.Errorf("query %q: empty id or text %q", q.ID, q.Text)
				}
				if len(q.Relevant) == 0 {
					empty++
				}
				for _, r := range q.Relevant {
					if !legalRE.MatchString(r) {
						t.Errorf("query %q: relevant %q is not legal", q.ID, r)
					}
					if !names[r] {
						missing++
					}
				}
				o[q.Text] = q.Relevant
			}
			t.Logf("%d tools (%d truncated or de-duplicated), %d queries, %d with no relevant tool, %d relevant names missing from tools",
				len(ds.Tools), renamed, len(ds.Queries), empty, missing)
			m, err := Run(ds, o)
			if err != nil {
				t.Fatalf("Run(oracle): %v", err)
			}
			if missing == 0 && (m.R10 < 99.999 || m.NDCG10 < 99.999) {
				t.Errorf("Run(oracle) = %+v, want R@10 and NDCG@10 100", m)
			}
		})
	}
	if n == 0 {
		t.Skip("no datasets found")
	}
}

func TestLosses(t *testing.T) {
	ds := &Dataset{Queries: []Query{
		{ID: "1", Text: "a", Relevant: []string{"x"}},      // 1 → 1/log2(3): a loss of 37
		{ID: "2", Text: "b", Relevant: []string{"x"}},      // 1 → 0: the worst
		{ID: "3", Text: "c", Relevant: []string{"x"}},      // 0 → 1: a gain, left out
		{ID: "4", Text: "d", Relevant: []string{"x"}},      // equal, left out
		{ID: "5", Text: "e", Relevant: nil},                // no relevant tool, left out
		{ID: "6", Text: "f", Relevant: []string{"x", "y"}}, // both → y only: a loss of 39
	}}
	base := &fakeRanker{rankings: map[string][]string{
		"a": {"x"}, "b": {"x"}, "c": {"z"}, "d": {"x"}, "e": {"x"}, "f": {"x", "y"},
	}}
	r := &fakeRanker{rankings: map[string][]string{
		"a": {"z", "x"}, "b": {"z"}, "c": {"x"}, "d": {"x"}, "e": {"z"}, "f": {"y"},
	}}
	tests := []struct {
		n    int
		want []string // query ids
	}{
		{10, []string{"2", "6", "1"}},
		{2, []string{"2", "6"}},
		{0, nil},
	}
	for _, tc := range tests {
		got, err := Losses(ds, r, base, tc.n)
		if err != nil {
			t.Fatalf("Losses(n=%d): %v", tc.n, err)
		}
		var ids []string
		for _, l := range got {
			ids = append(ids, l.Query.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("Losses(n=%d) = %v, want %v", tc.n, ids, tc.want)
		}
	}
	got, _ := Losses(ds, r, base, 1)
	if l := got[0]; l.NDCG != 0 || l.BaseNDCG != 100 || !slices.Equal(l.Ranked, []string{"z"}) || !slices.Equal(l.Base, []string{"x"}) {
		t.Errorf("worst loss = %+v, want NDCG 0, base 100, ranked [z], base [x]", l)
	}
	if _, err := Losses(&Dataset{Queries: []Query{{Text: "fail", Relevant: []string{"x"}}}}, r, base, 1); !errors.Is(err, errRank) {
		t.Errorf("Losses with a failing ranker: err = %v, want %v", err, errRank)
	}
}
