package devcli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/eval"
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
func hybridRanker(ds *eval.Dataset, cfg index.Config) eval.Ranker {
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
	for d := range strings.SplitSeq(spec, ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
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

// loadSets loads the dataset folders of spec (datasetDirs), over one
// catalog when mix is set (eval.Mix), and reshapes their queries.
func loadSets(spec string, shapes []eval.Shape, multi eval.MultiTool, mix bool) ([]eval.Named, error) {
	dirs, err := datasetDirs(spec)
	if err != nil {
		return nil, err
	}
	sets, err := eval.LoadDirs(dirs)
	if err != nil {
		return nil, err
	}
	if mix {
		sets = eval.Mix(sets)
	}
	for i := range sets {
		if sets[i].Dataset, err = eval.Reshape(sets[i].Dataset, shapes, multi); err != nil {
			return nil, fmt.Errorf("%s: %w", sets[i].Name, err)
		}
	}
	return sets, nil
}

// runCrossval is eval --crossval: the leave-one-dataset-out table of the
// grid over the datasets, beside plain BM25 and the current defaults.
func runCrossval(e env, datasets, grid string, shapes []eval.Shape, multi eval.MultiTool, mix bool) error {
	g, err := eval.ParseGrid(grid)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	settings := g.Settings()
	for _, s := range settings[:1] {
		if _, err := settingConfig(s); err != nil {
			return fmt.Errorf("eval: --grid: %w", err)
		}
	}
	sets, err := loadSets(datasets, shapes, multi, mix)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	baselines := []eval.Baseline{
		{Name: "BM25", Build: func(ds *eval.Dataset) (eval.Ranker, error) { return eval.PlainBM25(ds), nil }},
		{Name: "default", Build: func(ds *eval.Dataset) (eval.Ranker, error) { return hybridRanker(ds, index.DefaultConfig()), nil }},
	}
	build := func(ds *eval.Dataset, s eval.Setting) (eval.Ranker, error) {
		cfg, err := settingConfig(s)
		if err != nil {
			return nil, err
		}
		return hybridRanker(ds, cfg), nil
	}
	cv, err := eval.CrossValidate(sets, settings, baselines, build)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return cv.Print(e.stdout)
}
