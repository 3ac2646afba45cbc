package devcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/eval"
	"github.com/tooldex/tooldex/internal/semantic"
	"github.com/tooldex/tooldex/internal/semantic/static"
	"github.com/tooldex/tooldex/service"
)

// namedRanker is one row of the eval table.
type namedRanker struct {
	key string
	r   eval.Ranker
}

// semanticFlags configure dense retrieval for eval, as the server's do.
type semanticFlags struct {
	mode               string
	url, model, keyEnv string
	ratios             []float64
	cacheDir           string
	staticModel        string // a model file in place of the embedded static model
}

func (f *semanticFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "semantic", "", "dense retrieval fused into a 'semantic' row: off, static, full or external (default: "+string(semantic.DefaultMode)+", or external with --embedder-url)")
	fs.StringVar(&f.url, "embedder-url", "", "OpenAI-compatible embeddings API base (http://host:port/v1), for --semantic=external")
	fs.StringVar(&f.model, "embedder-model", "", "embedding model name")
	fs.StringVar(&f.keyEnv, "embedder-key-env", "", "environment variable holding the embedder's API key")
	fs.Func("semantic-ratio", "dense share of the fused score, in (0, 1]; a comma-separated list gives one row each (default: the mode's, 0.1 static, 0.25 full, 0.2 external)", func(s string) error {
		f.ratios = f.ratios[:0]
		for _, p := range strings.Split(s, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || !(r > 0 && r <= 1) {
				return fmt.Errorf("%q: want numbers in (0, 1]", p)
			}
			f.ratios = append(f.ratios, r)
		}
		return nil
	})
	fs.StringVar(&f.staticModel, "static-model", "", "with --semantic=static: a model file (internal/semantic/static/gen's output) in place of the embedded one, to measure a candidate without rebuilding")
	dir, err := os.UserCacheDir()
	if err == nil {
		dir = filepath.Join(dir, "tooldex", "vectors")
	}
	fs.StringVar(&f.cacheDir, "vector-cache", dir, "directory of the on-disk cache of tool and query vectors, by model and text hash (empty: no cache)")
}

// resolve checks the flags and returns the mode.
func (f *semanticFlags) resolve() (semantic.Mode, error) {
	if f.mode == "" {
		if f.url != "" {
			return semantic.ModeExternal, nil
		}
		return semantic.DefaultMode, nil
	}
	m, err := semantic.ParseMode(f.mode)
	if err != nil {
		return "", err
	}
	if m == semantic.ModeExternal && (f.url == "" || f.model == "") {
		return "", errors.New("--semantic=external needs --embedder-url and --embedder-model")
	}
	if f.staticModel != "" && m != semantic.ModeStatic {
		return "", fmt.Errorf("--static-model needs --semantic=static, not %s", m)
	}
	return m, nil
}

// rankers embeds every tool (waiting until all are done) and returns the
// fused rankers over ix, one per ratio, and a function that stops the
// store.
func (f *semanticFlags) rankers(mode semantic.Mode, ix *index.Index, tools []eval.Tool) ([]namedRanker, func(), error) {
	st, stop, err := f.store(mode, tools)
	if err != nil {
		return nil, nil, err
	}
	ratios := f.ratios
	if len(ratios) == 0 {
		ratios = []float64{semantic.DefaultRatio(mode)}
	}
	var out []namedRanker
	for _, r := range ratios {
		key := "semantic"
		if len(ratios) > 1 {
			key = fmt.Sprintf("semantic@%g", r)
		}
		out = append(out, namedRanker{key, semanticRanker{ix: ix, st: st, ratio: r}})
	}
	return out, stop, nil
}

// store returns a dense store of mode's embedder holding every tool,
// once all are embedded, and a function that stops it.
func (f *semanticFlags) store(mode semantic.Mode, tools []eval.Tool) (*semantic.Store, func(), error) {
	var emb semantic.Embedder
	var name string
	if mode == semantic.ModeExternal {
		c, err := semantic.NewClient(semantic.ClientConfig{URL: f.url, Model: f.model, APIKey: os.Getenv(f.keyEnv)})
		if err != nil {
			return nil, nil, err
		}
		emb, name = c, semantic.ExternalCacheName(f.url, f.model)
	} else if f.staticModel != "" {
		b, err := os.ReadFile(f.staticModel)
		if err != nil {
			return nil, nil, fmt.Errorf("--static-model: %w", err)
		}
		m, err := static.Decode(b)
		if err != nil {
			return nil, nil, fmt.Errorf("--static-model %s: %w", f.staticModel, err)
		}
		emb, name = m, "static-"+static.DigestOf(b)
	} else {
		var err error
		if emb, err = semantic.Local(mode); err != nil {
			return nil, nil, err
		}
		name = semantic.CacheName(mode)
	}
	closeCache := func() error { return nil }
	if f.cacheDir != "" {
		vc, err := eval.OpenVectorCache(f.cacheDir, name, emb)
		if err != nil {
			return nil, nil, err
		}
		emb, closeCache = vc, vc.Close
	}
	st := semantic.NewStore(semantic.StoreConfig{Embedder: emb, RetryMin: 100 * time.Millisecond, RetryMax: time.Second, MinSimilarity: semantic.MinSimilarity(mode)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	stop := func() {
		cancel()
		<-done
		closeCache() //nolint:errcheck // a cache that fails to flush only costs a re-embedding
	}
	for _, t := range tools {
		st.Put(t.Name, semantic.ToolText(t.Name, "", t.Description, index.ParamText(t.InputSchema)))
	}
	for {
		s := st.Stats()
		if s.Pending == 0 {
			break
		}
		if s.Failures > 5 {
			stop()
			return nil, nil, errors.New("the embedder keeps failing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return st, stop, nil
}

type semanticRanker struct {
	ix    *index.Index
	st    *semantic.Store
	ratio float64
}

func (r semanticRanker) Rank(query string, k int) ([]string, error) {
	if len(query) > index.MaxQueryBytes {
		query = query[:index.MaxQueryBytes]
	}
	q, err := r.st.Embed(context.Background(), query)
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	res := r.ix.Run(index.Query{Kind: index.KindKeyword, Text: query}, index.Options{Max: max(k, service.FuseCandidates), Mode: index.ModeHybrid, BlendWords: true}) // as the server ranks
	fused := service.FuseDense(r.st, q, res, r.ratio, k, nil)
	names := make([]string, len(fused))
	for i, x := range fused {
		names[i] = x.Name
	}
	return names, nil
}
