package devcli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/eval"
	"github.com/tooldex/tooldex/internal/semantic"
)

// cmdEval loads a dataset into an in-process index and prints retrieval
// metrics for plain BM25 (the floor), keyword-only, TF-IDF-only and hybrid
// ranking, and dense retrieval fused in unless --semantic off, on the queries
// rewritten by --query-shape and --multi-tool.
func cmdEval(e env, args []string) error {
	fs := newFlags("eval", e)
	tools := fs.String("tools", "", "dataset tools.jsonl")
	queries := fs.String("queries", "", "dataset queries.jsonl")
	asJSON := fs.Bool("json", false, "print one JSON object")
	wk := fs.Float64("weight-keyword", 0, "hybrid keyword weight (default: the scorer's, 0.2 for bm25f, 0.4 for cosine)")
	wt := fs.Float64("weight-tfidf", 0, "hybrid text weight (default: the scorer's, 0.8 for bm25f, 0.6 for cosine)")
	pw := fs.Float64("param-weight", index.DefaultConfig().ParamWeight, "text weight of parameter text")
	boost := fs.Float64("name-boost", 0, "text-score floor for tools the query names (default: the scorer's, none for bm25f, 0.75 for cosine; negative: off)")
	groups := fs.Bool("groups", false, "also report server-level Recall@5 (group = server)")
	scorer := fs.String("scorer", index.DefaultConfig().Scorer.String(), "text scorer: bm25f, or cosine (the spec's TF-IDF)")
	k1 := fs.Float64("k1", index.DefaultConfig().K1, "BM25F saturation")
	b := fs.Float64("b", index.DefaultConfig().B, "BM25F length normalisation (negative: none)")
	k3 := fs.Float64("k3", index.DefaultConfig().K3, "BM25F saturation of repeated query terms (negative: count every repeat)")
	matrix := fs.Bool("matrix", false, "with --datasets: for each dataset, the default ranking's NDCG@10 minus plain BM25's over every query shape, alone and paired, each fold's request words learned without it (as --crossval's; with --mix too)")
	crossval := fs.Bool("crossval", false, "leave-one-dataset-out evaluation of --grid over --datasets (see README)")
	datasets := fs.String("datasets", "", "with --crossval or --mix: dataset folders, comma-separated (a folder of dataset folders counts as each of them)")
	mix := fs.Bool("mix", false, "with --datasets: every dataset's queries over one catalog of all their tools, a mixed deployment's (with --crossval too)")
	grid := fs.String("grid", defaultGrid, "with --crossval: parameters and values, name=v1,v2;... (keyword, text, k1, b, k3, name, hint, desc, param, min, request, and semantic: the dense share)")
	shape := fs.String("query-shape", string(eval.ShapeFull), "rewrite queries: full, short (first 6 words), keywords (5 longest content words); several joined by '+' are evaluated together")
	losses := fs.Int("losses", 0, "also list the N queries whose NDCG@10 under the default ranking (the first semantic row, else hybrid) falls furthest below plain BM25's, with both top 5s")
	damping := fs.Float64("request-damping", 0, "weigh a request word of share g by (1 − g)^this (default: the scorer's, 48 for bm25f, none for cosine; negative: none)")
	requestWords := fs.String("request-words", "", "a request-word table (tooldex-dev request-words's output) in place of the embedded one, to measure one made without the evaluated dataset (with --crossval or --matrix: for every fold, instead of each fold's own)")
	requestFrom := fs.String("request-from", "", "with --crossval or --matrix: the datasets, by folder name and comma-separated, a fold's request-word table may learn from (default: every other one)")
	multi := fs.String("multi-tool", string(eval.MultiAll), "queries: all, only (those with several relevant tools), pairs (two queries joined by 'and', relevant tools united)")
	var sem semanticFlags
	sem.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	shapes, err := eval.ParseShapes(*shape)
	if err != nil {
		return fmt.Errorf("eval: --query-shape: %w", err)
	}
	mt, err := eval.ParseMultiTool(*multi)
	if err != nil {
		return fmt.Errorf("eval: --multi-tool: %w", err)
	}
	switch {
	case *losses < 0:
		return errors.New("eval: --losses must not be negative")
	case *losses > 0 && (*crossval || *mix):
		return errors.New("eval: --losses lists one dataset's queries: it does not combine with --crossval or --mix")
	}
	var shares map[string]float64
	if *requestWords != "" {
		if shares, err = readRequestShares(*requestWords); err != nil {
			return fmt.Errorf("eval: --request-words: %w", err)
		}
	}
	if *matrix {
		if *crossval || *losses > 0 {
			return errors.New("eval: --matrix does not combine with --crossval or --losses")
		}
		return runMatrix(e, crossvalRun{datasets: *datasets, mix: *mix, sem: &sem, shares: shares, from: commaList(*requestFrom)}, *asJSON)
	}
	if *crossval {
		return runCrossval(e, crossvalRun{datasets: *datasets, grid: *grid, shapes: shapes, multi: mt, mix: *mix, sem: &sem, shares: shares, from: commaList(*requestFrom)})
	}
	var sets []eval.Named
	switch {
	case *mix:
		if sets, err = loadSets(*datasets, shapes, mt, true); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	case *tools == "" || *queries == "":
		return errors.New("eval: --tools and --queries are required (or --mix and --datasets)")
	default:
		ds, err := eval.Load(*tools, *queries)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if ds, err = eval.Reshape(ds, shapes, mt); err != nil {
			return err
		}
		sets = []eval.Named{{Name: "", Dataset: ds}}
	}
	ds := sets[0].Dataset // every set's tools are the same under --mix
	sc, err := index.ParseScorer(*scorer)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	cfg := index.ScorerConfig(sc)
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["weight-keyword"] {
		cfg.KeywordWeight = *wk
	}
	if set["weight-tfidf"] {
		cfg.TFIDFWeight = *wt
	}
	if set["name-boost"] {
		cfg.NameBoost = *boost
	}
	if cfg.KeywordWeight < 0 || cfg.TFIDFWeight < 0 || cfg.KeywordWeight+cfg.TFIDFWeight == 0 {
		return errors.New("eval: weights must be non-negative and not both zero")
	}
	cfg.ParamWeight, cfg.K1, cfg.B, cfg.K3 = *pw, *k1, *b, *k3
	if set["request-damping"] {
		cfg.RequestDamping = *damping
	}
	cfg.RequestShares = shares
	ix := index.New(cfg)
	for _, t := range ds.Tools {
		ix.Upsert(index.Doc{Name: t.Name, Description: t.Description, Params: index.ParamText(t.InputSchema)})
	}
	modes := []struct {
		key  string
		mode index.Mode
	}{{"keyword", index.ModeKeyword}, {"tfidf", index.ModeTFIDF}, {"hybrid", index.ModeHybrid}}
	// bm25 is the floor (shared/datasets/README.md), measured on the same
	// queries as every other row.
	rankers := []namedRanker{{"bm25", eval.PlainBM25(ds)}}
	for _, m := range modes {
		rankers = append(rankers, namedRanker{m.key, ranker{ix: ix, mode: m.mode}})
	}
	if mode, err := sem.resolve(); err != nil {
		return fmt.Errorf("eval: %w", err)
	} else if mode != semantic.ModeOff {
		srs, stop, err := sem.rankers(mode, ix, ds.Tools)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		defer stop()
		rankers = append(rankers, srs...)
	}
	if *mix {
		return printMix(e, sets, rankers, *asJSON)
	}
	out := make(map[string]any)
	var order []string
	for _, m := range rankers {
		r := m.r
		metrics, err := eval.Run(ds, r)
		if err != nil {
			return fmt.Errorf("eval %s: %w", m.key, err)
		}
		out[m.key] = metrics
		order = append(order, m.key)
		if *groups {
			g, err := eval.GroupRecall5(ds, r)
			if err != nil {
				return fmt.Errorf("eval %s: %w", m.key, err)
			}
			out[m.key+"_server_R@5"] = g
		}
	}
	var lost []eval.Loss
	def := rankers[min(4, len(rankers)-1)] // bm25, keyword, tfidf, hybrid, then the semantic rows
	if *losses > 0 {
		if lost, err = eval.Losses(ds, def.r, rankers[0].r, *losses); err != nil {
			return fmt.Errorf("eval --losses: %w", err)
		}
		out["losses"] = lost
	}
	if *asJSON {
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(e.stdout, string(b))
		return err
	}
	fmt.Fprintf(e.stdout, "%d tools, %d queries\n", len(ds.Tools), len(ds.Queries))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ranking\tR@1\tR@5\tR@10\tNDCG@5\tNDCG@10\tComp@10\t")
	for _, k := range order {
		m := out[k].(eval.Metrics)
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", k, m.R1, m.R5, m.R10, m.NDCG5, m.NDCG10, m.Comp10)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if *groups {
		for _, k := range order {
			fmt.Fprintf(e.stdout, "%s server-level R@5: %.1f\n", k, out[k+"_server_R@5"].(float64))
		}
	}
	if *losses > 0 {
		printLosses(e, lost, def.key)
	}
	return nil
}

// printLosses writes eval --losses' list: each query, its relevant tools
// and the top 5 of the default ranking (named key) and of plain BM25.
func printLosses(e env, lost []eval.Loss, key string) {
	fmt.Fprintf(e.stdout, "\n%d queries ranked furthest below bm25 by %s (NDCG@10 difference, %s / bm25):\n", len(lost), key, key)
	top := func(names []string) string { return strings.Join(names[:min(5, len(names))], " ") }
	for _, l := range lost {
		fmt.Fprintf(e.stdout, "\n%.1f (%.1f / %.1f) %s %q\n  relevant: %s\n  %s: %s\n  bm25: %s\n",
			l.NDCG-l.BaseNDCG, l.NDCG, l.BaseNDCG, l.Query.ID, l.Query.Text,
			strings.Join(l.Query.Relevant, " "), key, top(l.Ranked), top(l.Base))
	}
}

// printMix writes eval --mix's table: each dataset's NDCG@10 over the
// mixed catalog, for every ranker, and the mean over the datasets.
func printMix(e env, sets []eval.Named, rankers []namedRanker, asJSON bool) error {
	out := make(map[string]map[string]eval.Metrics, len(sets))
	mean := make([]float64, len(rankers))
	for _, s := range sets {
		out[s.Name] = make(map[string]eval.Metrics, len(rankers))
		for i, m := range rankers {
			metrics, err := eval.Run(s.Dataset, m.r)
			if err != nil {
				return fmt.Errorf("eval %s on %s: %w", m.key, s.Name, err)
			}
			out[s.Name][m.key] = metrics
			mean[i] += metrics.NDCG10 / float64(len(sets))
		}
	}
	if asJSON {
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(e.stdout, string(b))
		return err
	}
	fmt.Fprintf(e.stdout, "NDCG@10 of each dataset's queries over one catalog of %d tools\n", len(sets[0].Tools))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "dataset\tqueries\t")
	for _, m := range rankers {
		fmt.Fprintf(tw, "%s\t", m.key)
	}
	fmt.Fprintln(tw)
	for _, s := range sets {
		fmt.Fprintf(tw, "%s\t%d\t", s.Name, len(s.Queries))
		for _, m := range rankers {
			fmt.Fprintf(tw, "%.1f\t", out[s.Name][m.key].NDCG10)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "mean\t\t")
	for i := range rankers {
		fmt.Fprintf(tw, "%.1f\t", mean[i])
	}
	fmt.Fprintln(tw)
	return tw.Flush()
}

// ranker adapts the index to eval.Ranker. Dataset queries are ranked as
// keyword text, whatever they start with.
type ranker struct {
	ix   *index.Index
	mode index.Mode
}

func (r ranker) Rank(query string, k int) ([]string, error) {
	if len(query) > index.MaxQueryBytes {
		query = query[:index.MaxQueryBytes]
	}
	res := r.ix.Run(index.Query{Kind: index.KindKeyword, Text: query}, index.Options{Max: k, Mode: r.mode})
	names := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		names[i] = h.Name
	}
	return names, nil
}
