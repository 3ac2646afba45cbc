package semantic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// wordEmbedder embeds in process with wordVector. fail makes the next
// calls fail; gate, when set, holds each call until it is read from.
type wordEmbedder struct {
	mu    sync.Mutex
	calls [][]string
	fail  int
	dims  int // 0: wordVector's own
	gate  chan struct{}
}

func (e *wordEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, slices.Clone(texts))
	fail, gate := e.fail > 0, e.gate
	if fail {
		e.fail--
	}
	dims := e.dims
	e.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail {
		return nil, fmt.Errorf("%w: injected", ErrEmbedder)
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = wordVector(t)
		if dims > 0 {
			out[i] = make([]float32, dims)
			out[i][0] = 1
		}
	}
	return out, nil
}

func (e *wordEmbedder) texts() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var all []string
	for _, c := range e.calls {
		all = append(all, c...)
	}
	return all
}

// runStore runs s until the test ends (startStore).
func runStore(t *testing.T, s *Store) {
	t.Helper()
	t.Cleanup(startStore(t, s))
}

// settle waits until nothing is pending and want tools are embedded.
func settle(t *testing.T, s *Store, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.Stats()
		if st.Pending == 0 && st.Embedded == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("store did not settle: %+v, want %d embedded", st, want)
		}
		time.Sleep(time.Millisecond)
	}
}

func names(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

func TestStoreNearest(t *testing.T) {
	emb := &wordEmbedder{}
	s := NewStore(StoreConfig{Embedder: emb, Batch: 2})
	runStore(t, s)
	tools := map[string]string{
		"get_weather":   "weather forecast",
		"read_file":     "read file",
		"write_file":    "write file",
		"send_email":    "send email",
		"list_calendar": "calendar",
	}
	for n, text := range tools {
		s.Put(n, text)
	}
	settle(t, s, len(tools))
	if got := s.Stats().Dimensions; got != len(vocabulary)+1 {
		t.Errorf("Dimensions = %d, want %d", got, len(vocabulary)+1)
	}
	q, err := s.Embed(context.Background(), "file read")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(s.Nearest(q, 2, nil)); !slices.Equal(got, []string{"read_file", "write_file"}) {
		t.Errorf("Nearest(file read, 2) = %v, want [read_file write_file]", got)
	}
	hide := func(n string) bool { return n != "read_file" }
	if got := names(s.Nearest(q, 1, hide)); !slices.Equal(got, []string{"write_file"}) {
		t.Errorf("Nearest with read_file hidden = %v, want [write_file]", got)
	}
	all := s.Nearest(q, 10, nil)
	if len(all) != len(tools) {
		t.Fatalf("Nearest(k=10) gave %d hits, want %d", len(all), len(tools))
	}
	for i := 1; i < len(all); i++ {
		if better(all[i].Score, all[i].Name, all[i-1]) {
			t.Errorf("hits out of order at %d: %v", i, all)
		}
	}
	if math.Abs(all[0].Score-cosine(wordVector("file read"), wordVector("read file"))) > 0.02 {
		t.Errorf("top score %v, want about the cosine %v", all[0].Score, cosine(wordVector("file read"), wordVector("read file")))
	}
	sims, ok := s.Similarity(q, []string{"write_file", "missing"})
	if !ok[0] || ok[1] || sims[0] <= 0 {
		t.Errorf("Similarity = %v %v; want a positive score for write_file, none for missing", sims, ok)
	}

	// Deleting frees the slot; a new tool reuses it.
	s.Delete("read_file")
	if got := names(s.Nearest(q, 1, nil)); !slices.Equal(got, []string{"write_file"}) {
		t.Errorf("after Delete: Nearest = %v, want [write_file]", got)
	}
	s.Put("read_notes", "read")
	settle(t, s, len(tools))
	if got := len(s.names); got != len(tools) {
		t.Errorf("slots = %d after delete and put, want %d (reused)", got, len(tools))
	}
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i] * b[i])
		aa += float64(a[i] * a[i])
		bb += float64(b[i] * b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func TestStoreEmbedsOnlyChangedText(t *testing.T) {
	emb := &wordEmbedder{}
	s := NewStore(StoreConfig{Embedder: emb})
	runStore(t, s)
	s.Put("a", "read file")
	settle(t, s, 1)
	s.Put("a", "read file") // unchanged: no new request
	s.Put("b", "send email")
	settle(t, s, 2)
	s.Put("a", "write file") // changed: embedded again
	settle(t, s, 2)
	want := []string{"read file", "send email", "write file"}
	if got := emb.texts(); !slices.Equal(got, want) {
		t.Errorf("embedded texts = %q, want %q", got, want)
	}
	q, _ := s.Embed(context.Background(), "write")
	if got := names(s.Nearest(q, 1, nil)); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after the change, Nearest(write) = %v, want [a]", got)
	}
}

func TestStoreRetriesFailedBatches(t *testing.T) {
	emb := &wordEmbedder{fail: 2}
	s := NewStore(StoreConfig{Embedder: emb, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond})
	runStore(t, s)
	s.Put("a", "read file")
	settle(t, s, 1)
	if got := s.Stats().Failures; got != 2 {
		t.Errorf("Failures = %d, want 2", got)
	}
}

func TestStoreChangeWhileInFlight(t *testing.T) {
	gate := make(chan struct{})
	emb := &wordEmbedder{gate: gate}
	s := NewStore(StoreConfig{Embedder: emb})
	runStore(t, s)
	s.Put("a", "read file")
	s.Put("gone", "send email")
	// Wait for the batch to be in flight, then change one tool and delete
	// the other before it returns.
	for len(emb.texts()) == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Put("a", "weather")
	s.Delete("gone")
	gate <- struct{}{} // first batch returns: its vectors are stale
	gate <- struct{}{} // second batch: "weather"
	settle(t, s, 1)
	emb.mu.Lock()
	emb.gate = nil
	emb.mu.Unlock()
	q, _ := s.Embed(context.Background(), "weather")
	hits := s.Nearest(q, 5, nil)
	if got := names(hits); !slices.Equal(got, []string{"a"}) || hits[0].Score < 0.99 {
		t.Errorf("Nearest(weather) = %v, want a with the new text's vector", hits)
	}
}

func TestStoreDimensionChange(t *testing.T) {
	emb := &wordEmbedder{}
	s := NewStore(StoreConfig{Embedder: emb, RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	runStore(t, s)
	s.Put("a", "read")
	settle(t, s, 1)
	emb.mu.Lock()
	emb.dims = 3
	emb.mu.Unlock()
	q, err := s.Embed(context.Background(), "anything new")
	if err != nil {
		t.Fatal(err)
	}
	if hits := s.Nearest(q, 3, nil); hits != nil {
		t.Errorf("a query of other dimensions found %v", hits)
	}
	s.Put("b", "write")
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Failures == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := s.Stats(); st.Failures == 0 || st.Embedded != 1 {
		t.Errorf("after a model change: %+v; want failures and the old vector kept", st)
	}
}

func TestQueryCache(t *testing.T) {
	emb := &wordEmbedder{}
	s := NewStore(StoreConfig{Embedder: emb, QueryCache: 8})
	for i := range 20 {
		if _, err := s.Embed(context.Background(), fmt.Sprint("q", i%10)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Embed(context.Background(), "hot"); err != nil {
			t.Fatal(err)
		}
	}
	texts := emb.texts()
	hot := 0
	for _, x := range texts {
		if x == "hot" {
			hot++
		}
	}
	if hot != 1 {
		t.Errorf("the repeated query was embedded %d times, want 1", hot)
	}
	if n := len(s.qcache.items); n > 8 {
		t.Errorf("cache holds %d queries, want at most 8", n)
	}
	emb.fail = 1
	if _, err := s.Embed(context.Background(), "new"); !errors.Is(err, ErrEmbedder) {
		t.Errorf("failing embedder: got %v, want ErrEmbedder", err)
	}
}

func TestQuantize(t *testing.T) {
	dst := make([]int8, 3)
	quantize(dst, []float32{3, 4, 0})
	if want := []int8{76, 102, 0}; !slices.Equal(dst, want) {
		t.Errorf("quantize(3,4,0) = %v, want %v", dst, want)
	}
	quantize(dst, []float32{0, 0, 0})
	if !slices.Equal(dst, []int8{0, 0, 0}) {
		t.Errorf("quantize(0) = %v, want zeros", dst)
	}
	quantize(dst, []float32{float32(math.Inf(1)), 1, 0})
	if !slices.Equal(dst, []int8{0, 0, 0}) {
		t.Errorf("quantize(inf) = %v, want zeros", dst)
	}
}

// refusingEmbedder refuses, as a model server answering 400 would, any
// batch with a text containing "poison".
type refusingEmbedder struct {
	wordEmbedder
	refusals atomic.Int64
}

func (e *refusingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, "poison") {
			e.refusals.Add(1)
			return nil, fmt.Errorf("%w: %w", ErrEmbedder, &StatusError{Code: 400, Message: "input too long"})
		}
	}
	return e.wordEmbedder.Embed(ctx, texts)
}

func TestStoreSkipsRefusedText(t *testing.T) {
	emb := &refusingEmbedder{}
	s := NewStore(StoreConfig{Embedder: emb, Batch: 8, RetryMin: time.Hour}) // a retry wait would hang the test
	runStore(t, s)
	for i := range 20 {
		s.Put(fmt.Sprint("tool", i), "read file")
	}
	s.Put("tool7x", "poison")
	settle(t, s, 20)
	st := s.Stats()
	if st.Skipped != 1 || st.Failures != 0 {
		t.Errorf("Stats = %+v, want 1 skipped, 0 failures (refusals are not retried)", st)
	}
	if n := emb.refusals.Load(); n > 4 {
		t.Errorf("%d refused requests for one bad text in batches of 8, want at most 4 (the batch, then one per halving)", n)
	}
	// A changed text is tried again.
	s.Put("tool7x", "write file")
	settle(t, s, 21)
}

// TestRankMinSimilarity: a tool the lexical ranking did not find joins
// only when its similarity reaches the floor; a lexical candidate keeps
// its place whatever its similarity.
func TestRankMinSimilarity(t *testing.T) {
	tests := []struct {
		name  string
		floor float64
		want  []string
	}{
		{"no floor", 0, []string{"send_email", "read_file", "write_file"}},
		{"floor above the weak match", 0.99, []string{"send_email", "read_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(StoreConfig{Embedder: &wordEmbedder{}, MinSimilarity: tt.floor})
			runStore(t, s)
			tools := map[string]string{"read_file": "read file", "write_file": "write file", "send_email": "send email"}
			for n, text := range tools {
				s.Put(n, text)
			}
			settle(t, s, len(tools))
			q, err := s.Embed(context.Background(), "read file")
			if err != nil {
				t.Fatal(err)
			}
			lex := []Scored{{Name: "send_email", Lexical: 1}}
			var got []string
			for _, c := range s.Rank(q, lex, 0.0001, 10, 10, nil) {
				got = append(got, c.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Rank = %v, want %v", got, tt.want)
			}
		})
	}
}
