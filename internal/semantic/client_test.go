package semantic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// wordServer is an OpenAI-compatible embeddings server whose model gives
// each text a vector counting a few fixed words: enough to check what the
// client sends and decodes.
func wordServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, req embedRequest) bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var req embedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		if handle != nil && handle(w, r, req) {
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		// Answer in reverse order: the client must place by index.
		for i := len(req.Input) - 1; i >= 0; i-- {
			out.Data = append(out.Data, item{Index: i, Embedding: wordVector(req.Input[i])})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var vocabulary = []string{"weather", "forecast", "file", "read", "write", "email", "send", "calendar"}

func wordVector(text string) []float32 {
	v := make([]float32, len(vocabulary)+1)
	v[len(vocabulary)] = 0.01 // never the zero vector
	for _, w := range strings.Fields(strings.ToLower(text)) {
		for i, x := range vocabulary {
			if w == x {
				v[i]++
			}
		}
	}
	return v
}

func TestClientEmbed(t *testing.T) {
	var gotAuth, gotModel string
	srv := wordServer(t, func(w http.ResponseWriter, r *http.Request, req embedRequest) bool {
		gotAuth, gotModel = r.Header.Get("Authorization"), req.Model
		return false
	})
	c, err := NewClient(ClientConfig{URL: srv.URL + "/v1/", Model: "m1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"weather forecast", "read file", "send email"}
	vecs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		want := wordVector(text)
		if len(vecs[i]) != len(want) {
			t.Fatalf("vector %d: got %d dims, want %d", i, len(vecs[i]), len(want))
		}
		for j := range want {
			if vecs[i][j] != want[j] {
				t.Errorf("vector %d = %v, want %v (%q)", i, vecs[i], want, text)
				break
			}
		}
	}
	if gotAuth != "Bearer k" || gotModel != "m1" {
		t.Errorf("request: auth %q model %q, want %q %q", gotAuth, gotModel, "Bearer k", "m1")
	}
	if v, err := c.Embed(context.Background(), nil); v != nil || err != nil {
		t.Errorf("Embed(nil) = %v, %v; want nil, nil", v, err)
	}
}

func TestNewClientErrors(t *testing.T) {
	for _, cfg := range []ClientConfig{
		{URL: "", Model: "m"},
		{URL: "localhost:11434", Model: "m"},
		{URL: "ftp://host/v1", Model: "m"},
		{URL: "http://host/v1", Model: ""},
	} {
		if _, err := NewClient(cfg); err == nil {
			t.Errorf("NewClient(%+v): no error", cfg)
		}
	}
}

func TestClientErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"error status with message", 500, `{"error":{"message":"model not loaded"}}`, "model not loaded"},
		{"error status, plain body", 404, "no such model", "no such model"},
		{"not json", 200, "<html>", "decode response"},
		{"too few", 200, `{"data":[{"index":0,"embedding":[1]}]}`, "1 embeddings for 2 texts"},
		{"repeated index", 200, `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`, "repeated index"},
		{"index out of range", 200, `{"data":[{"index":0,"embedding":[1]},{"index":5,"embedding":[1]}]}`, "bad or repeated index 5"},
		{"empty vector", 200, `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[1]}]}`, "empty embedding"},
		{"ragged", 200, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`, "has 1 dimensions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := wordServer(t, func(w http.ResponseWriter, r *http.Request, req embedRequest) bool {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
				return true
			})
			c, err := NewClient(ClientConfig{URL: srv.URL + "/v1", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Embed(context.Background(), []string{"a", "b"})
			if !errors.Is(err, ErrEmbedder) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Embed error = %v; want ErrEmbedder containing %q", err, tt.want)
			}
			var se *StatusError
			if got := errors.As(err, &se); got != (tt.status != 200) || (got && se.Code != tt.status) {
				t.Errorf("Embed error = %v: StatusError %v (%+v), want one with code %d for a non-200 answer", err, got, se, tt.status)
			}
		})
	}
}

func TestClientUnreachableAndCancelled(t *testing.T) {
	srv := wordServer(t, nil)
	url := srv.URL
	srv.Close()
	c, _ := NewClient(ClientConfig{URL: url + "/v1", Model: "m"})
	if _, err := c.Embed(context.Background(), []string{"a"}); !errors.Is(err, ErrEmbedder) {
		t.Errorf("closed server: got %v, want ErrEmbedder", err)
	}

	block := make(chan struct{})
	slow := wordServer(t, func(w http.ResponseWriter, r *http.Request, req embedRequest) bool {
		select {
		case <-block:
		case <-r.Context().Done():
		}
		return true
	})
	defer close(block)
	c, _ = NewClient(ClientConfig{URL: slow.URL + "/v1", Model: "m"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Embed(ctx, []string{"a"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: got %v, want context.DeadlineExceeded", err)
	}
}

// TestClientRetriesDroppedConnection checks that a request whose
// connection the server drops without an answer (as one closed while idle
// does) is sent once more, and only once.
func TestClientRetriesDroppedConnection(t *testing.T) {
	for _, tt := range []struct {
		name      string
		drops     int
		wantCalls int
		wantErr   bool
	}{
		{"first dropped", 1, 2, false},
		{"every one dropped", 1000, 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := wordServer(t, func(w http.ResponseWriter, r *http.Request, req embedRequest) bool {
				if int(calls.Add(1)) > tt.drops {
					return false
				}
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Errorf("hijack: %v", err)
					return true
				}
				conn.Close()
				return true
			})
			c, _ := NewClient(ClientConfig{URL: srv.URL + "/v1", Model: "m"})
			vecs, err := c.Embed(context.Background(), []string{"weather"})
			if got := int(calls.Load()); got != tt.wantCalls {
				t.Errorf("server saw %d requests, want %d", got, tt.wantCalls)
			}
			if tt.wantErr {
				if !errors.Is(err, ErrEmbedder) {
					t.Errorf("got %v, want ErrEmbedder", err)
				}
				return
			}
			if err != nil || len(vecs) != 1 || vecs[0][0] != 1 {
				t.Errorf("Embed = %v, %v; want the vector of \"weather\"", vecs, err)
			}
		})
	}
}

func FuzzParseResponse(f *testing.F) {
	f.Add(200, []byte(`{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[3,4]}]}`), 2)
	f.Add(500, []byte(`{"error":{"message":"x"}}`), 1)
	f.Add(200, []byte(`{"data":[{"index":-1,"embedding":[1e39]}]}`), 1)
	f.Add(200, []byte(`{"data":[]}`), 0)
	f.Fuzz(func(t *testing.T, code int, raw []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		vecs, err := parseResponse(code, raw, n)
		if err != nil {
			if !errors.Is(err, ErrEmbedder) {
				t.Fatalf("error %v does not wrap ErrEmbedder", err)
			}
			return
		}
		if code != 200 {
			t.Fatalf("status %d accepted", code)
		}
		if len(vecs) != n {
			t.Fatalf("%d vectors for %d texts", len(vecs), n)
		}
		for _, v := range vecs {
			if len(v) == 0 || len(v) != len(vecs[0]) {
				t.Fatalf("ragged or empty vectors accepted: %v", vecs)
			}
		}
	})
}
