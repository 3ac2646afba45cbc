package devcli

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/index/analysis"
	"github.com/tooldex/tooldex/internal/eval"
	"github.com/tooldex/tooldex/internal/semantic"
)

// defaultGrid is the lexical grid eval --crossval tries unless --grid is
// given: the hybrid's keyword share (the text share is 1 minus it) and
// BM25F's k1, b and field weights.
const defaultGrid = "keyword=0.1,0.2,0.3,0.4;k1=0.9,1.2,1.6;b=0.5,0.75,0.9;name=2,3,4;param=0.25,0.5,1"

// gridParams maps a grid's parameter names to the index configuration.
var gridParams = map[string]func(c *index.Config, v float64){
	"keyword": func(c *index.Config, v float64) { c.KeywordWeight = v },
	"text":    func(c *index.Config, v float64) { c.TFIDFWeight = v },
	"k1":      func(c *index.Config, v float64) { c.K1 = v },
	"b":       func(c *index.Config, v float64) { c.B = v },
	"k3":      func(c *index.Config, v float64) { c.K3 = v },
	"name":    func(c *index.Config, v float64) { c.NameWeight = v },
	"hint":    func(c *index.Config, v float64) { c.HintWeight = v },
	"desc":    func(c *index.Config, v float64) { c.DescWeight = v },
	"param":   func(c *index.Config, v float64) { c.ParamWeight = v },
	"min":     func(c *index.Config, v float64) { c.MinTFIDF = v },
	"request": func(c *index.Config, v float64) { c.RequestDamping = v },
}

// settingConfig is the default configuration with s applied. A keyword
// share without a text one sets the text share to 1 minus it.
func settingConfig(s eval.Setting) (index.Config, error) {
	c := index.DefaultConfig()
	text := false
	for _, p := range s {
		set, ok := gridParams[p.Name]
		if !ok {
			names := make([]string, 0, len(gridParams))
			for n := range gridParams {
				names = append(names, n)
			}
			return c, fmt.Errorf("unknown grid parameter %q (want one of %s)", p.Name, strings.Join(sorted(names), ", "))
		}
		if p.Value < 0 && p.Name != "b" && p.Name != "k3" && p.Name != "request" {
			return c, fmt.Errorf("grid parameter %s=%v: must not be negative", p.Name, p.Value)
		}
		set(&c, p.Value)
		text = text || p.Name == "text"
	}
	for _, p := range s {
		if p.Name == "keyword" && !text {
			c.TFIDFWeight = 1 - p.Value
		}
	}
	if c.KeywordWeight+c.TFIDFWeight <= 0 {
		return c, fmt.Errorf("setting %v: keyword and text weights both zero", s)
	}
	return c, nil
}

func sorted(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// hybridRanker indexes ds's tools with cfg and ranks hybrid.
func hybridRanker(ds *eval.Dataset, cfg index.Config) ranker {
	ix := index.New(cfg)
	for _, t := range ds.Tools {
		ix.Upsert(index.Doc{Name: t.Name, Description: t.Description, Params: index.ParamText(t.InputSchema)})
	}
	return ranker{ix: ix, mode: index.ModeHybrid}
}

// datasetDirs returns the dataset folders of spec: a comma-separated list
// of folders, each a dataset (holding tools.jsonl) or a folder of them.
func datasetDirs(spec string) ([]string, error) {
	var dirs []string
	for _, d := range commaList(spec) {
		if m, _ := filepath.Glob(filepath.Join(d, "tools.jsonl")); len(m) > 0 {
			dirs = append(dirs, d)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(d, "*", "tools.jsonl"))
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no tools.jsonl in it or its folders", d)
		}
		for _, p := range m {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	if len(dirs) < 2 {
		return nil, fmt.Errorf("--datasets %q: want at least two datasets", spec)
	}
	return dirs, nil
}

// commaList returns the non-empty items of a comma-separated list, trimmed.
func commaList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// loadSets loads the dataset folders of spec (datasetDirs), over one
// catalog when mix is set (eval.Mix), and reshapes their queries.
func loadSets(spec string, shapes []eval.Shape, multi eval.MultiTool, mix bool) ([]eval.Named, error) {
	raw, err := loadRaw(spec)
	if err != nil {
		return nil, err
	}
	return shapeSets(raw, shapes, multi, mix)
}

// loadRaw loads the dataset folders of spec (datasetDirs) as they are.
func loadRaw(spec string) ([]eval.Named, error) {
	dirs, err := datasetDirs(spec)
	if err != nil {
		return nil, err
	}
	return eval.LoadDirs(dirs)
}

// shapeSets puts raw's datasets over one catalog when mix is set
// (eval.Mix) and reshapes their queries; raw is not changed.
func shapeSets(raw []eval.Named, shapes []eval.Shape, multi eval.MultiTool, mix bool) ([]eval.Named, error) {
	sets := slices.Clone(raw)
	if mix {
		sets = eval.Mix(sets)
	}
	var err error
	for i := range sets {
		if sets[i].Dataset, err = eval.Reshape(sets[i].Dataset, shapes, multi); err != nil {
			return nil, fmt.Errorf("%s: %w", sets[i].Name, err)
		}
	}
	return sets, nil
}

// crossvalRun is what eval --crossval and --matrix measure.
type crossvalRun struct {
	datasets, grid string
	shapes         []eval.Shape
	multi          eval.MultiTool
	mix            bool
	sem            *semanticFlags
	// shares, when set, is the request-word table of every fold
	// (--request-words); otherwise each fold learns its own from the
	// other datasets, those named in from if it is not empty
	// (--request-from).
	shares map[string]float64
	from   []string
}

// ratioAxis is the grid axis of the dense share of a fused score.
const ratioAxis = "semantic"

// splitSetting separates a setting's dense share (ratioAxis), ratio when
// it has none, from its index parameters.
func splitSetting(s eval.Setting, ratio float64) (eval.Setting, float64) {
	var idx eval.Setting
	for _, p := range s {
		if p.Name == ratioAxis {
			ratio = p.Value
			continue
		}
		idx = append(idx, p)
	}
	return idx, ratio
}

// foldShares returns, for each dataset of raw, the request-word table
// learned from the other datasets' queries and tools with request-words'
// defaults, as the embedded table is made (eval.RequestShares): a fold's
// ranking never learns from the queries it is measured on. When from is
// not empty, only the datasets it names are learned from (the embedded
// table's are those whose licences allow a derived file).
func foldShares(raw []eval.Named, from []string) ([]map[string]float64, error) {
	for _, name := range from {
		if !slices.ContainsFunc(raw, func(n eval.Named) bool { return n.Name == name }) {
			return nil, fmt.Errorf("--request-from: no dataset %q among --datasets", name)
		}
	}
	an := analysis.New()
	out := make([]map[string]float64, len(raw))
	for d := range raw {
		var train []eval.Named
		for i, s := range raw {
			if i != d && (len(from) == 0 || slices.Contains(from, s.Name)) {
				train = append(train, s)
			}
		}
		out[d] = eval.RequestShares(an, train, defaultRequestKappa, defaultRequestMinShare)
	}
	return out, nil
}

// folds is what every fold of a leave-one-dataset-out run ranks with:
// the datasets as loaded, each fold's request-word table, one dense store
// per catalog (none with --semantic off) and the dense share.
type folds struct {
	raw    []eval.Named
	shares []map[string]float64
	stores []*semantic.Store
	ratio  float64
	stops  []func()
	what   string // how they rank, for the table's header
}

// folds loads c's datasets and prepares their folds; close stops the
// dense stores.
func (c crossvalRun) folds(mode semantic.Mode) (*folds, error) {
	raw, err := loadRaw(c.datasets)
	if err != nil {
		return nil, err
	}
	f := &folds{raw: raw, ratio: semantic.DefaultRatio(mode), stores: make([]*semantic.Store, len(raw))}
	if len(c.sem.ratios) > 0 {
		f.ratio = c.sem.ratios[0]
	}
	if c.shares != nil {
		f.shares = make([]map[string]float64, len(raw))
		for d := range f.shares {
			f.shares[d] = c.shares
		}
	} else if f.shares, err = foldShares(raw, c.from); err != nil {
		return nil, err
	}
	if mode != semantic.ModeOff {
		// Reshaping keeps a dataset's tools; mixing renames some, so
		// the mixed catalog has a store of its own, every set's.
		catalogs := raw
		if c.mix {
			catalogs = eval.Mix(raw)[:1]
		}
		for d := range raw {
			if d >= len(catalogs) {
				f.stores[d] = f.stores[0]
				continue
			}
			st, stop, err := c.sem.store(mode, catalogs[d].Tools)
			if err != nil {
				f.close()
				return nil, err
			}
			f.stores[d], f.stops = st, append(f.stops, stop)
		}
	}
	f.what = "lexical (--semantic off)"
	if mode != semantic.ModeOff {
		f.what = fmt.Sprintf("fused with the %s model's dense retrieval at %g", mode, f.ratio)
	}
	switch {
	case c.shares != nil:
		f.what += "; every fold's request words from --request-words"
	case len(c.from) > 0:
		f.what += "; each fold's request words learned from the other datasets among " + strings.Join(c.from, ", ")
	default:
		f.what += "; each fold's request words learned from the other datasets"
	}
	return f, nil
}

func (f *folds) close() {
	for _, stop := range f.stops {
		stop()
	}
}

// rank returns the ranker of fold d over sets[d] (sets being f.raw
// reshaped or mixed) with setting s: the server's ranking, with the
// fold's request words and, unless off, dense retrieval fused.
func (f *folds) rank(sets []eval.Named, d int, s eval.Setting) (eval.Ranker, error) {
	idx, r := splitSetting(s, f.ratio)
	cfg, err := settingConfig(idx)
	if err != nil {
		return nil, err
	}
	cfg.RequestShares = f.shares[d]
	lex := hybridRanker(sets[d].Dataset, cfg)
	if f.stores[d] == nil {
		return lex, nil
	}
	return semanticRanker{ix: lex.ix, st: f.stores[d], ratio: r}, nil
}

// runCrossval is eval --crossval: the leave-one-dataset-out table of the
// grid over the datasets, beside plain BM25 and the current defaults.
// Every ranking is the server's default one (folds.rank): with dense
// retrieval fused unless --semantic is off (one store per catalog, shared
// by its folds' settings), and with the request-word table learned
// without the held-out dataset.
func runCrossval(e env, c crossvalRun) error {
	g, err := eval.ParseGrid(c.grid)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	mode, err := c.sem.resolve()
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	settings := g.Settings()
	for _, s := range settings {
		idx, ratio := splitSetting(s, 0)
		if _, err := settingConfig(idx); err != nil {
			return fmt.Errorf("eval: --grid: %w", err)
		}
		if len(idx) < len(s) && (mode == semantic.ModeOff || !(ratio > 0 && ratio <= 1)) {
			return fmt.Errorf("eval: --grid: %s=%v needs dense retrieval and a share in (0, 1]", ratioAxis, ratio)
		}
	}
	f, err := c.folds(mode)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.close()
	sets, err := shapeSets(f.raw, c.shapes, c.multi, c.mix)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	rank := func(d int, s eval.Setting) (eval.Ranker, error) { return f.rank(sets, d, s) }
	baselines := []eval.Baseline{
		{Name: "BM25", Build: func(d int) (eval.Ranker, error) { return eval.PlainBM25(sets[d].Dataset), nil }},
		{Name: "default", Build: func(d int) (eval.Ranker, error) { return rank(d, nil) }},
	}
	cv, err := eval.CrossValidate(sets, settings, baselines, rank)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	fmt.Fprintf(e.stdout, "rankings %s\n\n", f.what)
	return cv.Print(e.stdout)
}

// column is one of eval --matrix's query sets.
type column struct {
	shape eval.Shape
	multi eval.MultiTool
}

func (c column) name() string {
	if c.multi == eval.MultiPairs {
		return string(c.shape) + " pairs"
	}
	return string(c.shape)
}

// runMatrix is eval --matrix: for each dataset, the default ranking's
// NDCG@10 minus plain BM25's for every query shape, alone and paired
// (eval.Reshape), each fold ranking as runCrossval's do; then the mean,
// the worst cell and the cells under BM25.
// With asJSON it prints the cells as one JSON object instead.
func runMatrix(e env, c crossvalRun, asJSON bool) error {
	mode, err := c.sem.resolve()
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	f, err := c.folds(mode)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.close()
	var cols []column
	for _, m := range []eval.MultiTool{eval.MultiAll, eval.MultiPairs} {
		for _, sh := range eval.Shapes {
			cols = append(cols, column{sh, m})
		}
	}
	// Reshaping keeps a dataset's tools, so each fold's two rankings are
	// built once and rank every column's queries.
	catalogs, err := shapeSets(f.raw, []eval.Shape{eval.ShapeFull}, eval.MultiAll, c.mix)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defs, bases := make([]eval.Ranker, len(f.raw)), make([]eval.Ranker, len(f.raw))
	for d := range catalogs {
		if defs[d], err = f.rank(catalogs, d, nil); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		bases[d] = eval.PlainBM25(catalogs[d].Dataset)
	}
	cells := make([][]float64, len(f.raw)) // [dataset][column]
	for d := range cells {
		cells[d] = make([]float64, len(cols))
	}
	for ci, col := range cols {
		sets, err := shapeSets(f.raw, []eval.Shape{col.shape}, col.multi, c.mix)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		for d := range sets {
			def, err := eval.Run(sets[d].Dataset, defs[d])
			if err != nil {
				return fmt.Errorf("eval %s: %w", sets[d].Name, err)
			}
			base, err := eval.Run(sets[d].Dataset, bases[d])
			if err != nil {
				return fmt.Errorf("eval %s: %w", sets[d].Name, err)
			}
			cells[d][ci] = def.NDCG10 - base.NDCG10
		}
	}
	if asJSON {
		// {"dataset": {"full": Δ, "full pairs": Δ, ...}, ...}
		out := make(map[string]map[string]float64, len(cells))
		for d, row := range cells {
			out[f.raw[d].Name] = make(map[string]float64, len(row))
			for ci, v := range row {
				out[f.raw[d].Name][cols[ci].name()] = math.Round(v*100) / 100
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(e.stdout, string(b))
		return err
	}
	fmt.Fprintf(e.stdout, "NDCG@10, default minus plain BM25; rankings %s\n\n", f.what)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "dataset\t")
	for _, col := range cols {
		fmt.Fprintf(tw, "%s\t", col.name())
	}
	fmt.Fprintln(tw, "mean\t")
	var all []float64
	for d, row := range cells {
		fmt.Fprintf(tw, "%s\t", f.raw[d].Name)
		var sum float64
		for _, v := range row {
			fmt.Fprintf(tw, "%+.2f\t", v)
			sum += v
			all = append(all, v)
		}
		fmt.Fprintf(tw, "%+.2f\t\n", sum/float64(len(row)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var sum float64
	worst, under := math.Inf(1), 0
	for _, v := range all {
		sum += v
		worst = min(worst, v)
		if v < 0 {
			under++
		}
	}
	_, err = fmt.Fprintf(e.stdout, "\n%d cells: mean %+.2f, worst %+.2f, %d under BM25\n", len(all), sum/float64(len(all)), worst, under)
	return err
}
