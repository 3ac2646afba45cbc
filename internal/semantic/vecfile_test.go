package semantic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// startStore runs s until the returned function stops it and checks
// that Run returned the context's error.
func startStore(t *testing.T, s *Store) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	}
}

// waitFileRecords waits until s's vector file holds want records.
func waitFileRecords(t *testing.T, s *Store, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().FileRecords != want {
		if time.Now().After(deadline) {
			t.Fatalf("the vector file holds %d records, want %d", s.Stats().FileRecords, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// fileTools are n tools with distinct texts.
func fileTools(n int) map[string]string {
	out := make(map[string]string, n)
	words := []string{"read", "write", "file", "send", "email", "weather", "calendar", "forecast"}
	for i := range n {
		out[fmt.Sprintf("t%03d", i)] = fmt.Sprintf("%s %s %d", words[i%len(words)], words[(i/len(words))%len(words)], i)
	}
	return out
}

// TestStoreFileAcrossRestarts: a restarted store takes the vectors its
// file holds and embeds only the first batch (which checks the file's
// dimensions) and the tools whose text changed; searches rank alike.
func TestStoreFileAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vectors", "m.vec")
	tools := fileTools(100)
	emb := &wordEmbedder{}
	s := NewStore(StoreConfig{Embedder: emb, Batch: 8, File: path})
	stop := startStore(t, s)
	for n, text := range tools {
		s.Put(n, text)
	}
	settle(t, s, len(tools))
	q, _ := s.Embed(context.Background(), "send email")
	want := s.Nearest(q, 10, nil)
	stop()

	emb2 := &wordEmbedder{}
	s2 := NewStore(StoreConfig{Embedder: emb2, Batch: 8, File: path, CompactAfter: time.Millisecond})
	for n, text := range tools {
		s2.Put(n, text)
	}
	s2.Put("t000", "weather calendar changed") // changed: embedded again
	stop2 := startStore(t, s2)
	settle(t, s2, len(tools))
	st := s2.Stats()
	if got := len(emb2.texts()); got > 8+1 {
		t.Errorf("restart embedded %d texts, want at most one batch (8) and the changed one", got)
	}
	if !slices.Contains(emb2.texts(), "weather calendar changed") {
		t.Errorf("the changed text was not embedded: %q", emb2.texts())
	}
	if st.FromFile < uint64(len(tools)-9) {
		t.Errorf("FromFile = %d, want at least %d", st.FromFile, len(tools)-9)
	}
	q2, _ := s2.Embed(context.Background(), "send email")
	got := s2.Nearest(q2, 10, nil)
	if !slices.Equal(got, want) {
		t.Errorf("after restart Nearest = %v, want %v", got, want)
	}
	// Idle, the file is rewritten with the live tools only: one record
	// each (t000's old text is gone).
	waitFileRecords(t, s2, len(tools))
	stop2()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, vecs, records, _, err := readVectors(f)
	if err != nil {
		t.Fatal(err)
	}
	if records != len(tools) || len(vecs) != len(tools) {
		t.Errorf("file holds %d records (%d keys), want %d", records, len(vecs), len(tools))
	}
	if _, ok := vecs[keyOf(tools["t000"])]; ok {
		t.Error("the file still holds t000's old text")
	}
}

// TestStoreFileCompacts: dead records are dropped once they outnumber
// the live ones by more than compactSlack.
func TestStoreFileCompacts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.vec")
	s := NewStore(StoreConfig{Embedder: &wordEmbedder{}, Batch: 64, File: path, CompactAfter: time.Millisecond})
	defer startStore(t, s)()
	for round := range 12 {
		for i := range 200 {
			s.Put(fmt.Sprint("t", i), fmt.Sprintf("read file %d %d", i, round))
		}
		settle(t, s, 200)
	}
	// 2,400 records were written; compactions keep the file within
	// twice the live tools and the slack.
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().FileRecords > 2*200+compactSlack {
		if time.Now().After(deadline) {
			t.Fatalf("file holds %d records for 200 tools, want at most %d", s.Stats().FileRecords, 2*200+compactSlack)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStoreFileOtherDimensions: a file of other dimensions (another model
// under the same name) is replaced, and every tool embedded.
func TestStoreFileOtherDimensions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.vec")
	tools := fileTools(20)
	s := NewStore(StoreConfig{Embedder: &wordEmbedder{dims: 7}, File: path})
	stop := startStore(t, s)
	for n, text := range tools {
		s.Put(n, text)
	}
	settle(t, s, len(tools))
	stop()
	emb := &wordEmbedder{}
	s2 := NewStore(StoreConfig{Embedder: emb, Batch: 4, File: path})
	defer startStore(t, s2)()
	for n, text := range tools {
		s2.Put(n, text)
	}
	settle(t, s2, len(tools))
	if got := len(emb.texts()); got != len(tools) {
		t.Errorf("embedded %d texts, want all %d", got, len(tools))
	}
	if st := s2.Stats(); st.FromFile != 0 || st.Dimensions != len(vocabulary)+1 {
		t.Errorf("stats %+v: want nothing from the file, the new dimensions", st)
	}
}

// TestStoreFileUnreadable: a file that is not a vector file is logged and
// replaced; a cut record is dropped and the records before it kept.
func TestStoreFileUnreadable(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.vec")
	if err := os.WriteFile(junk, []byte("not a vector file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewStore(StoreConfig{Embedder: &wordEmbedder{}, File: junk})
	stop := startStore(t, s)
	s.Put("a", "read file")
	settle(t, s, 1)
	stop()
	f, _ := os.Open(junk)
	_, vecs, _, _, err := readVectors(f)
	f.Close()
	if err != nil || len(vecs) != 1 {
		t.Errorf("after replacing junk: %d vectors, %v; want 1", len(vecs), err)
	}
	// Cut the last record short: the first survives.
	cut := filepath.Join(dir, "cut.vec")
	s = NewStore(StoreConfig{Embedder: &wordEmbedder{}, Batch: 1, File: cut})
	stop = startStore(t, s)
	s.Put("a", "read file")
	settle(t, s, 1)
	s.Put("b", "send email")
	settle(t, s, 2)
	stop()
	b, _ := os.ReadFile(cut)
	dim, vecs, records, end, err := readVectors(bytes.NewReader(b[:len(b)-3]))
	if err != nil || records != 1 || len(vecs) != 1 || end != int64(vecHeader+keyLen+dim) {
		t.Errorf("cut file: %d records, end %d, %v; want 1 record ending at %d", records, end, err, vecHeader+keyLen+dim)
	}
}

func TestReadVectorsErrors(t *testing.T) {
	head := func(dim uint32) []byte {
		b := append([]byte(nil), vecMagic[:]...)
		return append(b, byte(dim), byte(dim>>8), byte(dim>>16), byte(dim>>24))
	}
	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"empty", nil, true},
		{"short header", vecMagic[:5], false},
		{"bad magic", []byte("XXXXXXXX\x04\x00\x00\x00"), false},
		{"zero dimensions", head(0), false},
		{"too many dimensions", head(maxFileDim + 1), false},
		{"header only", head(4), true},
	}
	for _, tt := range tests {
		_, _, _, _, err := readVectors(bytes.NewReader(tt.in))
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func FuzzReadVectors(f *testing.F) {
	f.Add([]byte{})
	f.Add(append(append([]byte(nil), vecMagic[:]...), 2, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x7f, 0x81))
	f.Fuzz(func(t *testing.T, b []byte) {
		dim, vecs, records, end, err := readVectors(bytes.NewReader(b))
		if err != nil {
			return
		}
		if end > int64(len(b)) || len(vecs) > records {
			t.Fatalf("end %d of %d bytes, %d keys of %d records", end, len(b), len(vecs), records)
		}
		for _, v := range vecs {
			if len(v) != dim {
				t.Fatalf("a vector of %d dimensions in a file of %d", len(v), dim)
			}
		}
	})
}

// TestStoreFileConcurrent: puts, deletes and searches beside Run's
// appends and compactions (run with -race) leave a file a restarted
// store reads whole.
func TestStoreFileConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.vec")
	s := NewStore(StoreConfig{Embedder: &wordEmbedder{}, Batch: 16, File: path})
	stop := startStore(t, s)
	q, _ := s.Embed(context.Background(), "read file")
	done := make(chan struct{})
	for w := range 3 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 600 {
				name := fmt.Sprint("t", (i*7+w)%150)
				switch i % 5 {
				case 4:
					s.Delete(name)
				default:
					s.Put(name, fmt.Sprintf("read file %d %d", i%40, w))
				}
				if i%50 == 0 {
					s.Nearest(q, 5, nil)
				}
			}
		}()
	}
	for range 3 {
		<-done
	}
	for i := range 150 {
		s.Put(fmt.Sprint("t", i), fmt.Sprintf("final text %d", i))
	}
	settle(t, s, 150)
	stop()
	// Run starts before the tools come back, as a replay or hosts
	// reconnecting bring them: the file serves all but the first batch.
	emb := &wordEmbedder{}
	s2 := NewStore(StoreConfig{Embedder: emb, Batch: 16, File: path})
	defer startStore(t, s2)()
	for i := range 150 {
		s2.Put(fmt.Sprint("t", i), fmt.Sprintf("final text %d", i))
	}
	settle(t, s2, 150)
	if got := len(emb.texts()); got > 16 {
		t.Errorf("the restarted store embedded %d texts, want the first batch (16) at most", got)
	}
}

// TestStoreFileUnwritable: a vector file that cannot be created is given
// up; the store embeds and answers as without one.
func TestStoreFileUnwritable(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewStore(StoreConfig{Embedder: &wordEmbedder{}, File: filepath.Join(notDir, "m.vec")})
	defer startStore(t, s)()
	for n, text := range fileTools(40) {
		s.Put(n, text)
	}
	settle(t, s, 40)
	q, _ := s.Embed(context.Background(), "send email")
	if got := s.Nearest(q, 3, nil); len(got) != 3 {
		t.Errorf("Nearest = %v, want 3 hits", got)
	}
}
