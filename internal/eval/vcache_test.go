package eval

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// countingEmbedder gives each text a vector of its length and counts the
// texts it was asked for.
type countingEmbedder struct{ texts []string }

func (c *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.texts = append(c.texts, texts...)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1}
	}
	return out, nil
}

func TestVectorCache(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	inner := &countingEmbedder{}
	c, err := OpenVectorCache(dir, "m1", inner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(ctx, []string{"a", "bb"}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Embed(ctx, []string{"bb", "ccc", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "bb", "ccc"}; !slices.Equal(inner.texts, want) {
		t.Errorf("embedded %q, want each text once: %q", inner.texts, want)
	}
	if got[0][0] != 2 || got[1][0] != 3 || got[2][0] != 1 {
		t.Errorf("vectors %v out of order", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// A record cut short (a killed run) is dropped; the rest survive.
	path := filepath.Join(dir, "m1.vec")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()-3); err != nil {
		t.Fatal(err)
	}
	inner2 := &countingEmbedder{}
	c2, err := OpenVectorCache(dir, "m1", inner2)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if c2.Len() != 2 {
		t.Errorf("reopened cache has %d vectors, want 2", c2.Len())
	}
	if _, err := c2.Embed(ctx, []string{"a", "bb", "ccc"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inner2.texts, []string{"ccc"}) {
		t.Errorf("after reopening, embedded %q, want only the lost ccc", inner2.texts)
	}
	// Another model has its own file.
	c3, err := OpenVectorCache(dir, "m2", &countingEmbedder{})
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if c3.Len() != 0 {
		t.Errorf("model m2 sees %d of m1's vectors", c3.Len())
	}
}

func TestVectorCacheBadName(t *testing.T) {
	for _, name := range []string{"", "../x", "a/b", "a b"} {
		if _, err := OpenVectorCache(t.TempDir(), name, &countingEmbedder{}); err == nil {
			t.Errorf("OpenVectorCache(%q): no error", name)
		}
	}
}
