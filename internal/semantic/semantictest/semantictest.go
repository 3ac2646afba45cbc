// Package semantictest provides a toy embedding model and an
// OpenAI-compatible embeddings server around any model, for tests of dense
// retrieval that cannot fetch a real model.
package semantictest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
)

// ErrDown is what a Concepts model that is down returns.
var ErrDown = errors.New("semantictest: model down")

// Concepts is a toy model that knows synonyms: a text's vector counts the
// words of each of three concepts (weather, mail, files), plus a small
// constant so it is never zero. "weather" is near "temperature outlook"
// though they share no word. Down makes it fail.
type Concepts struct {
	Down atomic.Bool
}

var concepts = [][]string{
	{"weather", "temperature", "outlook", "forecast", "rain"},
	{"email", "mail", "message", "deliver", "inbox"},
	{"file", "document", "disk", "folder"},
}

// Embed implements semantic.Embedder.
func (c *Concepts) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.Down.Load() {
		return nil, ErrDown
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(concepts)+1)
		v[len(concepts)] = 0.05
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r < 'a' || r > 'z' }) {
			for c, words := range concepts {
				if slices.Contains(words, w) {
					v[c]++
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

// Model is what Serve serves.
type Model interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Serve starts an OpenAI-compatible embeddings server on loopback: POST
// /v1/embeddings with {"model", "input": [...]} answers the model's vectors
// (in reverse order of index, which clients must handle); an error of the
// model is a 503 with an OpenAI-style error body. The caller closes it.
func Serve(m Model) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		vecs, err := m.Embed(r.Context(), req.Input)
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": err.Error()}}) //nolint:errcheck // test server
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i := len(vecs) - 1; i >= 0; i-- {
			out.Data = append(out.Data, item{Index: i, Embedding: vecs[i]})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out) //nolint:errcheck // test server
	}))
}
