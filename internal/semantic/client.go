// Package semantic adds dense retrieval to tooldex. Tool and query texts
// are embedded by one of the models tooldex carries (Local: the static
// model of package static, the default, or the sentence encoder of
// package uselite) or by a model server the operator runs, through the
// OpenAI embeddings API (Client; OpenAI, Ollama, vLLM, llama.cpp's server,
// LM Studio and Hugging Face's text-embeddings-inference all serve it); a
// Store keeps one quantised vector per tool, embeds new and changed tools
// in the background, and answers nearest-neighbour queries; Fuse merges its
// hits with the lexical ranking.
//
// With ModeOff the ranking is lexical, and when an embedder is slow or
// down a search falls back to it.
package semantic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrEmbedder reports a failure of the model server: unreachable, an error
// status, or an answer that is not what was asked for.
var ErrEmbedder = errors.New("embedder")

// StatusError is a model server's answer with an HTTP status other than
// 200. Errors of Embed that carry one also wrap ErrEmbedder.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("status %d: %s", e.Code, e.Message)
}

// Refused reports whether the server refused the request itself (a 4xx
// other than timeouts and rate limits): sending it again cannot succeed.
func (e *StatusError) Refused() bool {
	return e.Code >= 400 && e.Code < 500 && e.Code != http.StatusRequestTimeout && e.Code != http.StatusTooManyRequests
}

// ClientConfig configures a Client.
type ClientConfig struct {
	// URL is the API base ("http://localhost:11434/v1"); the client posts to
	// URL + "/embeddings".
	URL string
	// Model names the embedding model ("nomic-embed-text", "bge-small-en").
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// HTTPClient defaults to a client with a 30 s timeout.
	HTTPClient *http.Client
}

// Client embeds texts through the OpenAI embeddings API.
type Client struct {
	endpoint string
	model    string
	apiKey   string
	http     *http.Client
}

// maxResponseBytes bounds an embeddings response (a batch of 64 texts at
// 4,096 dimensions as JSON is about 5 MB).
const maxResponseBytes = 64 << 20

// NewClient checks cfg and returns a client. It does not contact the server.
func NewClient(cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("semantic: embedder URL %q: want http(s)://host[:port]/path", cfg.URL)
	}
	if cfg.Model == "" {
		return nil, errors.New("semantic: embedder model is required")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{
		endpoint: strings.TrimRight(cfg.URL, "/") + "/embeddings",
		model:    cfg.Model,
		apiKey:   cfg.APIKey,
		http:     hc,
	}, nil
}

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Embed returns one vector per text, in order. Errors wrap ErrEmbedder or
// the context's error.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(embedRequest{Model: c.model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("semantic: encode request: %w", err)
	}
	resp, err := c.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read response: %w", ErrEmbedder, err)
	}
	if len(raw) > maxResponseBytes {
		return nil, fmt.Errorf("%w: response larger than %d bytes", ErrEmbedder, maxResponseBytes)
	}
	return parseResponse(resp.StatusCode, raw, len(texts))
}

// post sends an embeddings request. A request that fails before any
// response is sent once more: embedding has no side effects, and the
// usual cause is a kept-alive connection the server closed while idle
// (Node's servers close them after 5 s, Go's client keeps them 90 s),
// which Go's transport retries by itself only for idempotent methods.
func (c *Client) post(ctx context.Context, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("semantic: %w", err)
		}
		req.Header.Set("Content-Type", "application/json")
		if c.apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+c.apiKey)
		}
		resp, err := c.http.Do(req)
		if err == nil {
			return resp, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("semantic: embed: %w", ctxErr)
		}
		if attempt == 1 {
			return nil, fmt.Errorf("%w: %w", ErrEmbedder, err)
		}
	}
}

// parseResponse checks and decodes an embeddings response for n texts.
func parseResponse(code int, raw []byte, n int) ([][]float32, error) {
	if n == 0 && code == http.StatusOK {
		return nil, nil
	}
	var out embedResponse
	jsonErr := json.Unmarshal(raw, &out)
	if code != http.StatusOK {
		msg := strings.TrimSpace(string(raw))
		if jsonErr == nil && out.Error != nil {
			msg = out.Error.Message
		}
		if len(msg) > 200 {
			msg = strings.ToValidUTF8(msg[:200], "") + "..."
		}
		return nil, fmt.Errorf("%w: %w", ErrEmbedder, &StatusError{Code: code, Message: msg})
	}
	if jsonErr != nil {
		return nil, fmt.Errorf("%w: decode response: %w", ErrEmbedder, jsonErr)
	}
	if len(out.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d texts", ErrEmbedder, len(out.Data), n)
	}
	vecs := make([][]float32, n)
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= n || vecs[d.Index] != nil {
			return nil, fmt.Errorf("%w: bad or repeated index %d", ErrEmbedder, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("%w: empty embedding at index %d", ErrEmbedder, d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	dim := len(vecs[0])
	for i, v := range vecs {
		if len(v) != dim {
			return nil, fmt.Errorf("%w: embedding %d has %d dimensions, embedding 0 has %d", ErrEmbedder, i, len(v), dim)
		}
	}
	return vecs, nil
}
