package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tooldex/tooldex/eval"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/semantic"
	"github.com/tooldex/tooldex/service"
)

// namedRanker is one row of the eval table.
type namedRanker struct {
	key string
	r   eval.Ranker
}

// semanticFlags configure dense retrieval for eval, as the server's do.
type semanticFlags struct {
	url, model, keyEnv string
	ratio              float64
}

func (f *semanticFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "embedder-url", "", "OpenAI-compatible embeddings API base (http://host:port/v1): adds a 'semantic' row, hybrid fused with dense retrieval")
	fs.StringVar(&f.model, "embedder-model", "", "embedding model name")
	fs.StringVar(&f.keyEnv, "embedder-key-env", "", "environment variable holding the embedder's API key")
	fs.Float64Var(&f.ratio, "semantic-ratio", service.DefaultSemanticRatio, "dense share of the fused score, 0..1")
}

// ranker embeds every tool (waiting until all are done) and returns the
// fused ranker and a function that stops the store.
func (f *semanticFlags) ranker(ix *index.Index, tools []eval.Tool) (eval.Ranker, func(), error) {
	c, err := semantic.NewClient(semantic.ClientConfig{URL: f.url, Model: f.model, APIKey: os.Getenv(f.keyEnv)})
	if err != nil {
		return nil, nil, err
	}
	st := semantic.NewStore(semantic.StoreConfig{Embedder: c, RetryMin: 100 * time.Millisecond, RetryMax: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	stop := func() {
		cancel()
		<-done
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
	return semanticRanker{ix: ix, st: st, ratio: f.ratio}, stop, nil
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
	res := r.ix.Run(index.Query{Kind: index.KindKeyword, Text: query}, index.Options{Max: index.MaxResults, Mode: index.ModeHybrid})
	fused := service.FuseDense(r.st, q, res, r.ratio, k, nil)
	names := make([]string, len(fused))
	for i, x := range fused {
		names[i] = x.Name
	}
	return names, nil
}
