package service

import (
	"sync"

	"go.uber.org/zap"
)

// Where entries' blocks live.
//
// A catalog entry's block (its description, parameter-summary recipe and
// wire bytes, see entry.data) is a few hundred bytes. Allocated one by
// one, each block is rounded up to a size class, and a large catalog is
// registered in batches that make garbage of the same sizes (decoding,
// validation), so after the load the blocks sit in pages among freed
// slots (a 100k-tool server kept 12 MB more heap in use than live after its
// load). blockArena packs blocks end to end into chunks instead, which took
// about 5 MB off that server's resident memory (docs/BENCHMARKS.md,
// "Resident memory"), and the Server moves the live blocks into fresh
// chunks (compactBlocks) once the chunks hold more than twice the live
// bytes, so replaced and removed tools cost memory only until then.
//
// Blocks are never written after they are made, and moving one stores a
// new pointer into the entry (entry.data is atomic): a reader that loaded
// the old pointer reads the old copy, identical, which the garbage
// collector keeps while anything points into its chunk.

const (
	// Chunk sizes double from arenaMinChunk to arenaMaxChunk, so a small
	// catalog holds little.
	arenaMinChunk = 16 << 10
	arenaMaxChunk = 256 << 10
	// arenaMaxBlock is the largest block packed into a chunk; larger ones
	// are allocated alone.
	arenaMaxBlock = arenaMaxChunk / 8
)

// arenaSlack is how many chunk bytes beyond twice the live bytes wait
// for a compaction: small catalogs never compact. A variable for tests.
var arenaSlack = 4 << 20

// blockArena hands out blocks from chunks. Its methods may be called
// concurrently.
type blockArena struct {
	mu   sync.Mutex
	free []byte // the current chunk's unused tail
	next int    // the size of the next chunk
	size int    // bytes of the chunks made since the last reset
	// resets counts the resets; chunk, when set, is called with every
	// new chunk (tests).
	resets int
	chunk  func(b []byte, resets int)
}

// alloc returns a block of n bytes, n > 0. A nil arena allocates alone.
func (a *blockArena) alloc(n int) []byte {
	if a == nil || n > arenaMaxBlock {
		return make([]byte, n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.free) < n {
		a.next = min(max(2*a.next, arenaMinChunk), arenaMaxChunk)
		a.free = make([]byte, a.next)
		a.size += a.next
		if a.chunk != nil {
			a.chunk(a.free, a.resets)
		}
	}
	b := a.free[:n:n]
	a.free = a.free[n:]
	return b
}

// arenaLen is the bytes e's block takes in a chunk: 0 for a block
// allocated alone (see blockArena.alloc).
func arenaLen(e *entry) int {
	if n := e.blockLen(); n <= arenaMaxBlock {
		return n
	}
	return 0
}

// bytes returns the bytes of the chunks made since the last reset.
func (a *blockArena) bytes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.size
}

// reset starts new chunks: blocks allocated from now on share no chunk
// with earlier ones.
func (a *blockArena) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.free, a.next, a.size = nil, 0, 0
	a.resets++
}

// compactBlocks moves the catalog's blocks into new chunks when the
// chunks made since the last compaction hold more than twice the live
// blocks' bytes (plus arenaSlack), so that the chunks left only to
// replaced or removed tools can be collected. The copy is proportional to
// the live bytes and happens only after at least as many bytes died, so
// its cost per registered byte is bounded. The caller holds s.mu.
func (s *Server) compactBlocks() {
	if held := s.blocks.bytes(); held > 2*s.liveBlocks+arenaSlack {
		s.moveBlocks()
		s.log.Debug("catalog blocks compacted", zap.Int("held", held), zap.Int("live", s.liveBlocks))
	}
}

// moveBlocks copies every entry's block into new chunks. The caller holds
// s.mu.
func (s *Server) moveBlocks() {
	s.blocks.reset()
	live := 0
	for _, e := range s.tools {
		n := arenaLen(e)
		if n == 0 {
			continue
		}
		b := s.blocks.alloc(n)
		copy(b, e.block())
		e.data.Store(&b[0])
		live += n
	}
	s.liveBlocks = live
}
