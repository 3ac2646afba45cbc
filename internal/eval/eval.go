// Package eval evaluates tool-retrieval ranking on the datasets described in
// shared/datasets/README.md.
//
// A dataset is a tools.jsonl file (one tool a line: name, description,
// input_schema, group, extras) and a queries.jsonl file (one query a line: id,
// query, relevant tool names, extras). Dataset tool names are identifiers that
// may contain '/', spaces, dots or non-ASCII characters, so Load assigns every
// tool a provider-legal name (^[a-zA-Z0-9_-]{1,64}$, unique in the dataset)
// and rewrites each query's relevant list to those names. Run then asks a
// Ranker for the top 10 tools of every query and averages binary-relevance
// Recall@k, NDCG@k and Comp@k in percent.
package eval

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tooldex/tooldex/internal/jsonl"
	"github.com/tooldex/tooldex/internal/toolname"
)

// maxNameLen is the longest provider-legal tool name, in bytes.
const maxNameLen = toolname.MaxLen

// Tool is one dataset tool, with a provider-legal name assigned.
type Tool struct {
	Name              string // provider-legal: ^[a-zA-Z0-9_-]{1,64}$, unique in the dataset
	Original          string // the dataset's name
	Description       string
	InputSchema       map[string]any // nil when the dataset has none
	Group             string         // "" when none
	ServerDescription string         // livemcpbench's server_description, else ""
}

// Query is one dataset query. Relevant holds the legal names of its relevant
// tools, in dataset order without duplicates. A relevant name that is not a
// tool of the dataset is mapped to a legal name no tool has, so it can never be
// found.
type Query struct {
	ID       string   `json:"id"`
	Text     string   `json:"query"`
	Relevant []string `json:"relevant"` // mapped legal names
}

// Dataset is a loaded dataset: tools in file order and queries in file order.
type Dataset struct {
	Tools   []Tool
	Queries []Query
}

// Ranker returns tool names, best first, at most k.
type Ranker interface {
	Rank(query string, k int) ([]string, error)
}

// Metrics are ranking metrics averaged over the queries with at least one
// relevant tool, in percent (0..100).
type Metrics struct {
	R1, R5, R10, NDCG5, NDCG10, Comp10 float64
}

// MarshalJSON encodes m as {"R@1":..,"R@5":..,"R@10":..,"NDCG@5":..,
// "NDCG@10":..,"Comp@10":..} with values rounded to 2 decimals.
func (m Metrics) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		R1     float64 `json:"R@1"`
		R5     float64 `json:"R@5"`
		R10    float64 `json:"R@10"`
		NDCG5  float64 `json:"NDCG@5"`
		NDCG10 float64 `json:"NDCG@10"`
		Comp10 float64 `json:"Comp@10"`
	}{round2(m.R1), round2(m.R5), round2(m.R10), round2(m.NDCG5), round2(m.NDCG10), round2(m.Comp10)})
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// Load reads tools.jsonl and queries.jsonl. It maps each original name to a
// legal one (replace every char outside [a-zA-Z0-9_-] by '_', collapse nothing
// else, truncate to 64 bytes keeping uniqueness by appending _2, _3... inside
// the 64 limit) and rewrites Relevant.
//
// Names that are already legal keep themselves; the other tools are then
// named in file order, so on a clash ("math.gcd" next to "math_gcd") the
// legal original keeps the plain name and the mapped one gets a suffix.
// Relevant names missing from tools.jsonl stay in Relevant under a legal name
// that no tool has. Blank lines are skipped.
func Load(toolsPath, queriesPath string) (*Dataset, error) {
	tools, err := readTools(toolsPath)
	if err != nil {
		return nil, err
	}
	queries, err := readQueries(queriesPath)
	if err != nil {
		return nil, err
	}

	originals := make([]string, len(tools))
	for i := range tools {
		originals[i] = tools[i].Original
	}
	legalNames, names := assignNames(originals)
	legal := make(map[string]string, len(tools)) // original -> legal
	for i := range tools {
		tools[i].Name = legalNames[i]
		legal[tools[i].Original] = tools[i].Name
	}
	// Relevant names absent from tools get fresh legal names, consistently.
	for i := range queries {
		q := &queries[i]
		seen := make(map[string]bool, len(q.Relevant))
		rel := make([]string, 0, len(q.Relevant))
		for _, orig := range q.Relevant {
			name, ok := legal[orig]
			if !ok {
				name = names.claim(toolname.Sanitize(orig))
				legal[orig] = name
			}
			if !seen[name] {
				seen[name] = true
				rel = append(rel, name)
			}
		}
		q.Relevant = rel
	}
	return &Dataset{Tools: tools, Queries: queries}, nil
}

// assignNames maps distinct original names to unique legal names: first
// every already-legal name to itself, then the others, in order, to their
// sanitized form made unique by namer.claim. The namer is returned for further
// claims.
func assignNames(originals []string) ([]string, *namer) {
	names := newNamer()
	out := make([]string, len(originals))
	for i, o := range originals {
		if toolname.Valid(o) {
			out[i] = names.claim(o)
		}
	}
	for i, o := range originals {
		if out[i] == "" {
			out[i] = names.claim(toolname.Sanitize(o))
		}
	}
	return out, names
}

// namer hands out unique legal names.
type namer struct{ used map[string]bool }

func newNamer() *namer { return &namer{used: make(map[string]bool)} }

// claim returns base truncated to 64 bytes if free, else base truncated so
// that base+"_n" fits in 64 bytes, for the smallest free n >= 2. base must be
// sanitized and non-empty.
func (n *namer) claim(base string) string {
	name := base[:min(len(base), maxNameLen)]
	for i := 2; n.used[name]; i++ {
		suffix := "_" + strconv.Itoa(i)
		name = base[:min(len(base), maxNameLen-len(suffix))] + suffix
	}
	n.used[name] = true
	return name
}

type toolLine struct {
	Name              *string         `json:"name"`
	Description       string          `json:"description"`
	InputSchema       json.RawMessage `json:"input_schema"`
	Group             *string         `json:"group"`
	ServerDescription *string         `json:"server_description"`
}

type queryLine struct {
	ID       json.RawMessage `json:"id"`
	Query    string          `json:"query"`
	Relevant []string        `json:"relevant"`
}

func readTools(path string) ([]Tool, error) {
	var tools []Tool
	seen := make(map[string]int) // original name -> line
	err := jsonl.ReadFile(path, func(line int, data []byte) error {
		var tl toolLine
		if err := json.Unmarshal(data, &tl); err != nil {
			return err
		}
		if tl.Name == nil || *tl.Name == "" {
			return errors.New("missing or empty name")
		}
		if prev, dup := seen[*tl.Name]; dup {
			return fmt.Errorf("duplicate tool name %q (first on line %d)", *tl.Name, prev)
		}
		seen[*tl.Name] = line
		t := Tool{Original: *tl.Name, Description: tl.Description}
		if s := bytes.TrimSpace(tl.InputSchema); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
			if s[0] != '{' {
				return fmt.Errorf("tool %q: input_schema is neither an object nor null", t.Original)
			}
			if err := json.Unmarshal(s, &t.InputSchema); err != nil {
				return fmt.Errorf("tool %q: input_schema: %w", t.Original, err)
			}
		}
		if tl.Group != nil {
			t.Group = *tl.Group
		}
		if tl.ServerDescription != nil {
			t.ServerDescription = *tl.ServerDescription
		}
		tools = append(tools, t)
		return nil
	})
	return tools, err
}

func readQueries(path string) ([]Query, error) {
	var queries []Query
	seen := make(map[string]int) // id -> line
	err := jsonl.ReadFile(path, func(line int, data []byte) error {
		var ql queryLine
		if err := json.Unmarshal(data, &ql); err != nil {
			return err
		}
		id, err := idString(ql.ID)
		if err != nil {
			return err
		}
		if prev, dup := seen[id]; dup {
			return fmt.Errorf("duplicate query id %q (first on line %d)", id, prev)
		}
		seen[id] = line
		if strings.TrimSpace(ql.Query) == "" {
			return fmt.Errorf("query %q: empty query text", id)
		}
		for _, name := range ql.Relevant {
			if name == "" {
				return fmt.Errorf("query %q: empty relevant tool name", id)
			}
		}
		queries = append(queries, Query{ID: id, Text: ql.Query, Relevant: ql.Relevant})
		return nil
	})
	return queries, err
}

// idString accepts a JSON string or number id.
func idString(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", errors.New("missing id")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if s == "" {
			return "", errors.New("empty id")
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("id is neither a string nor a number: %s", raw)
	}
	return n.String(), nil
}

// discount[i] is 1/log2(i+2): the gain of a hit at 0-based rank i.
var discount = func() [10]float64 {
	var d [10]float64
	for i := range d {
		d[i] = 1 / math.Log2(float64(i+2))
	}
	return d
}()

// Run ranks every query with k=10 and averages the metrics over the queries
// with a non-empty relevant list. Results beyond the first 10 and repeated
// names are ignored. It fails if the ranker fails or no query has a relevant
// tool.
func Run(ds *Dataset, r Ranker) (Metrics, error) {
	var sum Metrics
	n := 0
	for _, q := range ds.Queries {
		if len(q.Relevant) == 0 {
			continue
		}
		ranked, err := rankTop(r, q, topK)
		if err != nil {
			return Metrics{}, err
		}
		m := queryMetrics(q, ranked)
		sum.R1 += m.R1
		sum.R5 += m.R5
		sum.R10 += m.R10
		sum.NDCG5 += m.NDCG5
		sum.NDCG10 += m.NDCG10
		sum.Comp10 += m.Comp10
		n++
	}
	if n == 0 {
		return Metrics{}, errors.New("eval: no query has a relevant tool")
	}
	scale := 100 / float64(n)
	return Metrics{
		R1: sum.R1 * scale, R5: sum.R5 * scale, R10: sum.R10 * scale,
		NDCG5: sum.NDCG5 * scale, NDCG10: sum.NDCG10 * scale, Comp10: sum.Comp10 * scale,
	}, nil
}

// topK is the depth every metric is measured at.
const topK = 10

// queryMetrics returns the metrics of one query with relevant tools, as
// fractions (0..1), for ranked, its top topK results. A repeated name
// counts once.
func queryMetrics(q Query, ranked []string) Metrics {
	const k = topK
	// hit[i]: the result at 0-based rank i is relevant (and not a repeat).
	var hit [k]bool
	for i, name := range ranked[:min(len(ranked), k)] {
		hit[i] = contains(q.Relevant, name) && !contains(ranked[:i], name)
	}
	var hits [k + 1]int    // hits[j]: relevant results in the top j
	var dcg [k + 1]float64 // dcg[j]: DCG of the top j
	for i := range k {
		hits[i+1], dcg[i+1] = hits[i], dcg[i]
		if hit[i] {
			hits[i+1]++
			dcg[i+1] += discount[i]
		}
	}
	rel := float64(len(q.Relevant))
	m := Metrics{
		R1: float64(hits[1]) / rel, R5: float64(hits[5]) / rel, R10: float64(hits[10]) / rel,
		NDCG5: dcg[5] / idcg(5, len(q.Relevant)), NDCG10: dcg[10] / idcg(10, len(q.Relevant)),
	}
	if hits[10] == len(q.Relevant) {
		m.Comp10 = 1
	}
	return m
}

// A Loss is a query that a ranking orders worse than a baseline does.
type Loss struct {
	Query Query `json:"query"`
	// NDCG and BaseNDCG are the query's NDCG@10 under the ranking and
	// the baseline, in percent.
	NDCG     float64 `json:"ndcg10"`
	BaseNDCG float64 `json:"base_ndcg10"`
	// Ranked and Base are their top results.
	Ranked []string `json:"ranked"`
	Base   []string `json:"base"`
}

// Losses returns at most n of ds's queries whose NDCG@10 under r falls
// below base's, the largest drops first (ties in dataset order): where a
// ranking loses against its floor, and what it ranked instead. It fails if
// a ranker fails.
func Losses(ds *Dataset, r, base Ranker, n int) ([]Loss, error) {
	var out []Loss
	for _, q := range ds.Queries {
		if len(q.Relevant) == 0 {
			continue
		}
		ranked, err := rankTop(r, q, topK)
		if err != nil {
			return nil, err
		}
		b, err := rankTop(base, q, topK)
		if err != nil {
			return nil, err
		}
		got, want := queryMetrics(q, ranked).NDCG10, queryMetrics(q, b).NDCG10
		if got < want {
			out = append(out, Loss{Query: q, NDCG: 100 * got, BaseNDCG: 100 * want, Ranked: ranked, Base: b})
		}
	}
	slices.SortStableFunc(out, func(a, b Loss) int {
		return cmp.Compare(a.NDCG-a.BaseNDCG, b.NDCG-b.BaseNDCG)
	})
	return out[:min(n, len(out))], nil
}

// idcg is the DCG of min(k, rel) hits at the top (k <= 10, rel >= 1).
func idcg(k, rel int) float64 {
	var s float64
	for i := range min(k, rel) {
		s += discount[i]
	}
	return s
}

// GroupRecall5 returns server-level Recall@5 in percent: for each query, the
// fraction of the distinct groups of its relevant tools that appear among the
// groups of the top-5 results.
//
// A tool without a group (and any name that is not a dataset tool) counts as
// its own one-tool group, so on datasets without groups this is Recall@5.
// Queries with an empty relevant list are skipped; it fails if the ranker fails
// or no query has a relevant tool.
func GroupRecall5(ds *Dataset, r Ranker) (float64, error) {
	const k = 5
	groupOf := make(map[string]string, len(ds.Tools))
	for _, t := range ds.Tools {
		if t.Group != "" {
			groupOf[t.Name] = "g:" + t.Group
		}
	}
	group := func(name string) string {
		if g, ok := groupOf[name]; ok {
			return g
		}
		return "t:" + name
	}
	var sum float64
	n := 0
	for _, q := range ds.Queries {
		if len(q.Relevant) == 0 {
			continue
		}
		ranked, err := rankTop(r, q, k)
		if err != nil {
			return 0, err
		}
		top := make([]string, len(ranked))
		for i, name := range ranked {
			top[i] = group(name)
		}
		want := make(map[string]bool, len(q.Relevant)) // distinct groups of the relevant tools
		for _, name := range q.Relevant {
			want[group(name)] = true
		}
		found := 0
		for g := range want {
			if contains(top, g) {
				found++
			}
		}
		sum += float64(found) / float64(len(want))
		n++
	}
	if n == 0 {
		return 0, errors.New("eval: no query has a relevant tool")
	}
	return sum * 100 / float64(n), nil
}

// rankTop asks r for the top k of q and keeps at most k results.
func rankTop(r Ranker, q Query, k int) ([]string, error) {
	ranked, err := r.Rank(q.Text, k)
	if err != nil {
		return nil, fmt.Errorf("eval: rank query %q: %w", q.ID, err)
	}
	return ranked[:min(len(ranked), k)], nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
