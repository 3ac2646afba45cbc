package service

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"weak"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// arenaTool is version v of tool i: descriptions and schemas of varied
// sizes.
func arenaTool(t testing.TB, i, v int) *tooldexv1.Tool {
	return &tooldexv1.Tool{
		Name:        fmt.Sprintf("tool_%03d", i),
		Description: arenaDesc(i, v),
		InputSchema: mustStruct(t, fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string","description":"version %d"}}}`, i, v)),
	}
}

func arenaDesc(i, v int) string {
	return fmt.Sprintf("Tool %d, version %d. %s", i, v, strings.Repeat("word ", 20+(i*7+v)%40))
}

// checkBlocks checks the arena's accounting: liveBlocks is the bytes of
// the catalog's blocks, and the chunks hold at most twice that plus the
// slack.
func checkBlocks(t *testing.T, s *Server) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	live := 0
	for _, e := range s.tools {
		live += arenaLen(e)
	}
	if live != s.liveBlocks {
		t.Fatalf("liveBlocks = %d, want %d (the catalog's blocks)", s.liveBlocks, live)
	}
	if got, most := s.blocks.bytes(), 2*live+arenaSlack; got > most {
		t.Fatalf("chunks hold %d bytes, want at most %d (2 x %d live + %d)", got, most, live, arenaSlack)
	}
}

// checkTools checks that the catalog lists exactly the tools of want, as
// registered.
func checkTools(t *testing.T, s *Server, want map[string]*tooldexv1.Tool) {
	t.Helper()
	resp, err := s.ListTools(context.Background(), &tooldexv1.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Tools) != len(want) {
		t.Fatalf("ListTools returned %d tools, want %d", len(resp.Tools), len(want))
	}
	for _, got := range resp.Tools {
		w := want[got.GetName()]
		if w == nil {
			t.Fatalf("ListTools returned %q, which is not registered", got.GetName())
		}
		if got.GetDescription() != w.GetDescription() || !proto.Equal(got.GetInputSchema(), w.GetInputSchema()) {
			t.Fatalf("%s reads back as %q %v, want %q %v", w.GetName(), got.GetDescription(), got.GetInputSchema(), w.GetDescription(), w.GetInputSchema())
		}
	}
}

// Tools replaced, left unchanged and removed: the chunks are compacted,
// every tool reads back as last registered, and the chunks from before a
// compaction are garbage afterwards (nothing else points into them).
func TestArenaCompaction(t *testing.T) {
	defer func(v int) { arenaSlack = v }(arenaSlack)
	arenaSlack = arenaMaxChunk
	s := New(Config{Logger: zap.NewNop()})
	type chunkRef struct {
		p   weak.Pointer[byte]
		gen int
	}
	var mu sync.Mutex
	var chunks []chunkRef
	s.blocks.chunk = func(b []byte, gen int) {
		mu.Lock()
		defer mu.Unlock()
		chunks = append(chunks, chunkRef{weak.Make(&b[0]), gen})
	}
	ctx := context.Background()
	want := map[string]*tooldexv1.Tool{}
	const n = 300
	for round := range 16 {
		var batch []*tooldexv1.Tool
		for i := range n {
			if round > 0 && i%4 == round%4 {
				batch = append(batch, want[fmt.Sprintf("tool_%03d", i)]) // unchanged, if present
				continue
			}
			tl := arenaTool(t, i, round)
			batch = append(batch, tl)
			want[tl.Name] = tl
		}
		for i, tl := range batch {
			if tl == nil {
				batch[i] = arenaTool(t, i, round)
				want[batch[i].Name] = batch[i]
			}
		}
		if _, err := s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: batch}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if round%5 == 4 {
			var names []string
			for i := range 60 {
				names = append(names, fmt.Sprintf("tool_%03d", i*5))
			}
			if _, err := s.UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: names}); err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				delete(want, name)
			}
		}
		checkBlocks(t, s)
		checkTools(t, s, want)
	}
	if s.blocks.resets == 0 {
		t.Fatal("16 rounds of replacements made no compaction")
	}
	s.mu.Lock()
	s.moveBlocks()
	gen := s.blocks.resets
	s.mu.Unlock()
	checkBlocks(t, s)
	checkTools(t, s, want)
	runtime.GC()
	runtime.GC()
	mu.Lock()
	defer mu.Unlock()
	for i, c := range chunks {
		if c.gen < gen && c.p.Value() != nil {
			t.Errorf("chunk %d (made before compaction %d) is still reachable after the last compaction", i, c.gen+1)
		}
		if c.gen == gen && c.p.Value() == nil {
			t.Errorf("chunk %d of the live generation was collected", i)
		}
	}
	runtime.KeepAlive(s) // its entries point into the live generation
}

// Readers of entries (ListTools, Search) run while replacements move the
// blocks: every tool reads as one of its versions (the race detector
// checks the moves).
func TestArenaConcurrentReaders(t *testing.T) {
	defer func(v int) { arenaSlack = v }(arenaSlack)
	arenaSlack = 0
	s := New(Config{Logger: zap.NewNop()})
	ctx := context.Background()
	const n = 50
	register := func(v int) {
		batch := make([]*tooldexv1.Tool, n)
		for i := range batch {
			batch[i] = arenaTool(t, i, v)
		}
		if _, err := s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: batch}); err != nil {
			t.Error(err)
		}
	}
	register(0)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, tl := range s.listTools(&tooldexv1.ListToolsRequest{}).GetTools() {
					var i, v int
					if _, err := fmt.Sscanf(tl.GetDescription(), "Tool %d, version %d.", &i, &v); err != nil || tl.GetDescription() != arenaDesc(i, v) {
						t.Errorf("%s reads as %q", tl.GetName(), tl.GetDescription())
						return
					}
				}
				if _, err := s.Search(ctx, &tooldexv1.SearchRequest{Query: "tool version word"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for v := 1; v <= 40; v++ {
		register(v)
	}
	close(done)
	wg.Wait()
	if s.blocks.resets == 0 {
		t.Fatal("no compaction while readers ran")
	}
	checkBlocks(t, s)
}

// BenchmarkMoveBlocks measures a compaction's pause (the catalog's write
// lock is held throughout) for 20,000 tools.
func BenchmarkMoveBlocks(b *testing.B) {
	s := New(Config{Logger: zap.NewNop()})
	const n, batch = 20000, 1000
	for from := 0; from < n; from += batch {
		tools := make([]*tooldexv1.Tool, batch)
		for i := range tools {
			tools[i] = arenaTool(b, from+i, 0)
		}
		if _, err := s.RegisterTools(context.Background(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(s.liveBlocks))
	b.ResetTimer()
	for b.Loop() {
		s.mu.Lock()
		s.moveBlocks()
		s.mu.Unlock()
	}
}
