package eval

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"unicode"
)

// Leave-one-dataset-out evaluation.
//
// A ranking parameter tuned on the datasets it is measured on flatters
// itself. CrossValidate measures every setting of a grid on every dataset
// and, for each dataset, picks the setting with the best mean NDCG@10 over
// the other datasets: that setting's NDCG@10 on the held-out dataset is its
// cross-validated (LODO) figure, which no choice made on that dataset
// inflates. The in-sample best (the grid's best on the dataset itself)
// shows how much tuning to one dataset would seem to gain.

// Axis is one named ranking parameter and the values a grid tries.
type Axis struct {
	Name   string
	Values []float64
}

// Grid is the Cartesian product of its axes.
type Grid []Axis

// Param is one parameter's value in a Setting.
type Param struct {
	Name  string
	Value float64
}

// Setting is one point of a grid: a value for each axis, in axis order.
type Setting []Param

// String formats s as "name=value ...".
func (s Setting) String() string {
	if len(s) == 0 {
		return "(defaults)"
	}
	parts := make([]string, len(s))
	for i, p := range s {
		parts[i] = p.Name + "=" + strconv.FormatFloat(p.Value, 'g', -1, 64)
	}
	return strings.Join(parts, " ")
}

// maxGrid bounds the settings of a grid: each costs a pass over every
// dataset.
const maxGrid = 4096

// ParseGrid parses "name=v1,v2,...;name=v1,..." (axes separated by ";",
// values by ","). Names are letters, digits, "-" and "_", each at most
// once; values are finite numbers. The product of the axes' sizes is at
// most 4096.
func ParseGrid(s string) (Grid, error) {
	var g Grid
	size := 1
	for axis := range strings.SplitSeq(s, ";") {
		axis = strings.TrimSpace(axis)
		if axis == "" {
			continue
		}
		name, vals, ok := strings.Cut(axis, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.IndexFunc(name, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_'
		}) >= 0 {
			return nil, fmt.Errorf("grid: axis %q: want name=v1,v2,...", axis)
		}
		if slices.ContainsFunc(g, func(a Axis) bool { return a.Name == name }) {
			return nil, fmt.Errorf("grid: axis %q given twice", name)
		}
		a := Axis{Name: name}
		for v := range strings.SplitSeq(vals, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, fmt.Errorf("grid: axis %q: value %q is not a finite number", name, v)
			}
			if !slices.Contains(a.Values, x) {
				a.Values = append(a.Values, x)
			}
		}
		if size *= len(a.Values); size > maxGrid {
			return nil, fmt.Errorf("grid: more than %d settings", maxGrid)
		}
		g = append(g, a)
	}
	if len(g) == 0 {
		return nil, errors.New("grid: no axis")
	}
	return g, nil
}

// Settings lists every point of g, the last axis varying fastest.
func (g Grid) Settings() []Setting {
	out := []Setting{{}}
	for _, a := range g {
		var next []Setting
		for _, s := range out {
			for _, v := range a.Values {
				next = append(next, append(slices.Clip(s), Param{a.Name, v}))
			}
		}
		out = next
	}
	return out
}

// Named is a dataset loaded from a folder, under the folder's name.
type Named struct {
	Name string
	*Dataset
}

// LoadDirs loads dir/tools.jsonl and dir/queries.jsonl of each folder.
func LoadDirs(dirs []string) ([]Named, error) {
	var out []Named
	for _, dir := range dirs {
		ds, err := Load(filepath.Join(dir, "tools.jsonl"), filepath.Join(dir, "queries.jsonl"))
		if err != nil {
			return nil, err
		}
		out = append(out, Named{Name: filepath.Base(filepath.Clean(dir)), Dataset: ds})
	}
	return out, nil
}

// Builder returns a ranker over the tools of sets[d], the held-out
// dataset of fold d, ranking with setting s. Whatever the ranking learns
// from data (a request-word table, say) it must learn from the other
// datasets only, as a ranking shipped for unseen data would.
type Builder func(d int, s Setting) (Ranker, error)

// Baseline is a fixed ranking measured beside the grid (plain BM25, the
// current defaults); Build is a Builder without a setting.
type Baseline struct {
	Name  string
	Build func(d int) (Ranker, error)
}

// CrossVal is the outcome of CrossValidate.
type CrossVal struct {
	Datasets  []string
	Baselines []string
	Settings  []Setting
	// Base[b][d] is baseline b's NDCG@10 on dataset d, Score[s][d]
	// setting s's.
	Base, Score [][]float64
	// Folds, one per dataset, in order.
	Folds []Fold
	// Overall is the setting with the best mean NDCG@10 over every
	// dataset, and Chosen counts how many folds chose each setting (by
	// index in Settings).
	Overall int
	Chosen  map[int]int
}

// Fold is one held-out dataset: the in-sample best setting and the one
// chosen on the other datasets, with their NDCG@10 on it.
type Fold struct {
	Best, LODO         int // indices in Settings
	BestNDCG, LODONDCG float64
}

// CrossValidate measures every baseline and setting on every dataset (at
// least two datasets) and runs the leave-one-dataset-out selection. It
// ranks on up to GOMAXPROCS goroutines.
func CrossValidate(sets []Named, settings []Setting, baselines []Baseline, build Builder) (*CrossVal, error) {
	if len(sets) < 2 {
		return nil, errors.New("crossval: need at least two datasets")
	}
	if len(settings) == 0 {
		return nil, errors.New("crossval: no setting")
	}
	cv := &CrossVal{Settings: settings, Chosen: make(map[int]int)}
	for _, s := range sets {
		cv.Datasets = append(cv.Datasets, s.Name)
	}
	for _, b := range baselines {
		cv.Baselines = append(cv.Baselines, b.Name)
	}
	grid := func(n int) [][]float64 {
		g := make([][]float64, n)
		for i := range g {
			g[i] = make([]float64, len(sets))
		}
		return g
	}
	cv.Base, cv.Score = grid(len(baselines)), grid(len(settings))
	type job struct {
		out  *float64
		ds   *Dataset
		make func() (Ranker, error)
		what string
	}
	var jobs []job
	for d, ds := range sets {
		for b, bl := range baselines {
			jobs = append(jobs, job{&cv.Base[b][d], ds.Dataset, func() (Ranker, error) { return bl.Build(d) }, bl.Name + " on " + ds.Name})
		}
		for i, s := range settings {
			jobs = append(jobs, job{&cv.Score[i][d], ds.Dataset, func() (Ranker, error) { return build(d, s) }, s.String() + " on " + ds.Name})
		}
	}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan job)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for j := range next {
				r, err := j.make()
				var m Metrics
				if err == nil {
					m, err = Run(j.ds, r)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("crossval: %s: %w", j.what, err)
					}
					mu.Unlock()
					continue
				}
				*j.out = m.NDCG10
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	// Settings are compared by their mean over datasets; ties keep the
	// earlier setting.
	bestBy := func(skip int) int {
		best, bestMean := 0, math.Inf(-1)
		for i, row := range cv.Score {
			var sum float64
			for d, v := range row {
				if d != skip {
					sum += v
				}
			}
			if sum > bestMean {
				best, bestMean = i, sum
			}
		}
		return best
	}
	for d := range sets {
		f := Fold{Best: 0, LODO: bestBy(d)}
		for i, row := range cv.Score {
			if row[d] > cv.Score[f.Best][d] {
				f.Best = i
			}
		}
		f.BestNDCG, f.LODONDCG = cv.Score[f.Best][d], cv.Score[f.LODO][d]
		cv.Folds = append(cv.Folds, f)
		cv.Chosen[f.LODO]++
	}
	cv.Overall = bestBy(-1)
	return cv, nil
}

// Print writes the cross-validated table: per dataset the baselines, the
// in-sample best and the LODO NDCG@10, their means, each fold's choice and
// the setting best over every dataset.
func (cv *CrossVal) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "NDCG@10\t")
	for _, b := range cv.Baselines {
		fmt.Fprintf(tw, "%s\t", b)
	}
	fmt.Fprintln(tw, "in-sample best\tLODO\t")
	means := make([]float64, len(cv.Baselines)+2)
	n := float64(len(cv.Datasets))
	for d, name := range cv.Datasets {
		fmt.Fprintf(tw, "%s\t", name)
		for b := range cv.Baselines {
			fmt.Fprintf(tw, "%.1f\t", cv.Base[b][d])
			means[b] += cv.Base[b][d] / n
		}
		f := cv.Folds[d]
		fmt.Fprintf(tw, "%.1f\t%.1f\t\n", f.BestNDCG, f.LODONDCG)
		means[len(cv.Baselines)] += f.BestNDCG / n
		means[len(cv.Baselines)+1] += f.LODONDCG / n
	}
	fmt.Fprint(tw, "mean\t")
	for _, m := range means {
		fmt.Fprintf(tw, "%.1f\t", m)
	}
	fmt.Fprintln(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d settings; the setting each fold chose on the other datasets:\n", len(cv.Settings))
	for d, name := range cv.Datasets {
		f := cv.Folds[d]
		fmt.Fprintf(w, "  without %s: %v (in-sample best on it: %v)\n", name, cv.Settings[f.LODO], cv.Settings[f.Best])
	}
	o := cv.Overall
	var sum float64
	for _, v := range cv.Score[o] {
		sum += v
	}
	_, err := fmt.Fprintf(w, "best over every dataset: %v (mean NDCG@10 %.1f; chosen by %d of %d folds)\n",
		cv.Settings[o], sum/n, cv.Chosen[o], len(cv.Datasets))
	return err
}

// PlainBM25 returns the floor a tool index must clear, as
// shared/datasets/README.md defines it: BM25 with k1 1.2 and b 0.75, idf
// ln(1 + (N - df + 0.5)/(df + 0.5)), over one document per tool: its dataset
// name, description and the name and description of every top-level
// parameter; words are runs of ASCII letters and digits split at camelCase
// and lower-cased (so snake_case, kebab-case and dotted names split too),
// stop words (bm25Stop) dropped, unstemmed; a query word counts once. Ties
// go to the earlier tool of the dataset. It shares no code with the index,
// so a change to tooldex's analysis cannot move its own floor.
func PlainBM25(ds *Dataset) Ranker {
	r := &plainBM25{ids: make(map[string]int32)}
	var total float64
	for _, t := range ds.Tools {
		tf := make(map[int32]float64)
		n := 0
		for _, w := range bm25Words(t.Original + " " + t.Description + " " + bm25Params(t.InputSchema)) {
			id, ok := r.ids[w]
			if !ok {
				id = int32(len(r.ids))
				r.ids[w] = id
				r.post = append(r.post, nil)
			}
			tf[id]++
			n++
		}
		doc := int32(len(r.names))
		r.names = append(r.names, t.Name)
		r.lens = append(r.lens, float64(n))
		total += float64(n)
		for id, c := range tf {
			r.post[id] = append(r.post[id], bm25Post{doc, c})
		}
	}
	r.avg = total / float64(max(1, len(r.names)))
	return r
}

type bm25Post struct {
	doc int32
	tf  float64
}

type plainBM25 struct {
	ids   map[string]int32
	post  [][]bm25Post
	names []string
	lens  []float64
	avg   float64
}

func (r *plainBM25) Rank(query string, k int) ([]string, error) {
	const k1, b = 1.2, 0.75
	acc := make(map[int32]float64)
	n := float64(len(r.names))
	seen := make(map[int32]bool)
	for _, w := range bm25Words(query) {
		id, ok := r.ids[w]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		df := float64(len(r.post[id]))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range r.post[id] {
			acc[p.doc] += idf * p.tf * (k1 + 1) / (p.tf + k1*(1-b+b*r.lens[p.doc]/r.avg))
		}
	}
	docs := make([]int32, 0, len(acc))
	for d := range acc {
		docs = append(docs, d)
	}
	slices.SortFunc(docs, func(a, b int32) int {
		if acc[a] != acc[b] {
			if acc[a] > acc[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(r.names[a], r.names[b])
	})
	out := make([]string, 0, k)
	for _, d := range docs[:min(k, len(docs))] {
		out = append(out, r.names[d])
	}
	return out, nil
}
