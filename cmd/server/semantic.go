package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/tooldex/tooldex/internal/semantic"
)

// parseSemantic resolves --semantic: unset, it is the default mode, or
// external when --embedder-url is given; external needs the URL and model.
func parseSemantic(mode, url, model string) (semantic.Mode, error) {
	if mode == "" {
		if url == "" {
			return semantic.DefaultMode, nil
		}
		mode = string(semantic.ModeExternal)
	}
	m, err := semantic.ParseMode(mode)
	if err != nil {
		return "", fmt.Errorf("--semantic: %w", err)
	}
	switch {
	case m == semantic.ModeExternal && url == "":
		return "", errors.New("--semantic=external needs --embedder-url")
	case url != "" && model == "":
		return "", errors.New("--embedder-model is required with --embedder-url")
	case m != semantic.ModeExternal && url != "":
		return "", fmt.Errorf("--embedder-url is for --semantic=external, not %s", m)
	}
	return m, nil
}

// newSemanticStore returns the store of the chosen embedder (nil when
// dense retrieval is off). Embedded models load here, once (the full
// model decodes 28 MB of weights in a fraction of a second).
func newSemanticStore(c *config, getenv func(string) string, log *zap.Logger) (*semantic.Store, error) {
	var emb semantic.Embedder
	var name string // of the vector file
	switch c.semantic {
	case semantic.ModeOff:
		log.Info("dense retrieval off: lexical ranking only")
		return nil, nil
	case semantic.ModeExternal:
		client, err := semantic.NewClient(semantic.ClientConfig{URL: c.embedderURL, Model: c.embedderModel, APIKey: getenv(c.embedderKeyEnv)})
		if err != nil {
			return nil, fmt.Errorf("--embedder-url: %w", err)
		}
		emb, name = client, semantic.ExternalCacheName(c.embedderURL, c.embedderModel)
	default:
		e, err := semantic.Local(c.semantic)
		if err != nil {
			return nil, fmt.Errorf("--semantic=%s: %w", c.semantic, err)
		}
		emb, name = e, semantic.CacheName(c.semantic)
	}
	var file string
	if c.vectorCache != "" {
		file = filepath.Join(c.vectorCache, name+".vec")
	}
	fields := []zap.Field{zap.String("semantic", string(c.semantic)), zap.Float64("ratio", c.semanticRatio)}
	if c.semantic == semantic.ModeExternal {
		fields = append(fields, zap.String("embedder", c.embedderURL), zap.String("model", c.embedderModel))
	}
	fields = append(fields, zap.String("vector_file", file))
	log.Info("dense retrieval on", fields...)
	return semantic.NewStore(semantic.StoreConfig{Embedder: emb, Log: log.Named("semantic"), MinSimilarity: semantic.MinSimilarity(c.semantic), File: file}), nil
}
