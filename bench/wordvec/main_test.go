package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestServe(t *testing.T) {
	file := filepath.Join(t.TempDir(), "v.json")
	vectors := `{"dimensions":2,"words":["the","rain","storm"],"vectors":{"the":[1,0,0,0],"rain":[0,1,0,0],"storm":[0,2,0,0]}}`
	if err := os.WriteFile(file, []byte(vectors), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := load(file)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/embeddings", bytes.NewBufferString(`{"model":"x","input":["Rain!","nothing known"]}`)))
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Data) != 2 {
		t.Fatalf("response %q: %v", rec.Body, err)
	}
	if got := out.Data[0].Embedding; len(got) != 2 || got[1] <= 0 {
		t.Errorf("embedding of Rain! = %v, want a positive second dimension", got)
	}
	if got := out.Data[1].Embedding; got[1] != 0 {
		t.Errorf("embedding of unknown words = %v, want only the epsilon", got)
	}
	if got := words("readFile, now"); !slices.Equal(got, []string{"read", "file", "now"}) {
		t.Errorf("words = %q", got)
	}
}
