package eval

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// Embedder turns texts into vectors (semantic.Embedder).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// VectorCache is an Embedder that keeps every vector it gets from the
// embedder it wraps in a file, keyed by a hash of the text, so that a
// dataset is embedded once per model: the file is dir/<model>.vec, read
// whole at open and appended to. One cache per model name: the name must
// change when the model's vectors do.
type VectorCache struct {
	inner Embedder
	mu    sync.Mutex
	vecs  map[[16]byte][]float32
	f     *os.File
	w     *bufio.Writer
	model string
}

var cacheName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// maxCacheDim bounds a cached vector's length.
const maxCacheDim = 1 << 14

// OpenVectorCache opens (creating) the cache of model under dir.
func OpenVectorCache(dir, model string, inner Embedder) (*VectorCache, error) {
	if !cacheName.MatchString(model) {
		return nil, fmt.Errorf("vector cache: model name %q: want [A-Za-z0-9._-]{1,100}", model)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	path := filepath.Join(dir, model+".vec")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	c := &VectorCache{inner: inner, vecs: make(map[[16]byte][]float32), f: f, model: model}
	end, err := c.read()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("vector cache %s: %w", path, err)
	}
	// A record cut short (a run killed mid-write) is dropped.
	if err := f.Truncate(end); err != nil {
		f.Close()
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	c.w = bufio.NewWriterSize(f, 1<<16)
	return c, nil
}

// read loads the records: a 16-byte key, a uint32 length n, n float32.
// It returns the offset of the end of the last whole record.
func (c *VectorCache) read() (int64, error) {
	r := bufio.NewReaderSize(c.f, 1<<16)
	var end int64
	var head [20]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return end, nil
		}
		n := binary.LittleEndian.Uint32(head[16:])
		if n == 0 || n > maxCacheDim {
			return 0, errors.New("corrupt record (delete the file)")
		}
		buf := make([]byte, 4*n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return end, nil
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		var k [16]byte
		copy(k[:], head[:16])
		c.vecs[k] = v
		end += int64(20 + 4*n)
	}
}

func (c *VectorCache) key(text string) [16]byte {
	h := sha256.Sum256([]byte(c.model + "\x00" + text))
	var k [16]byte
	copy(k[:], h[:16])
	return k
}

// Len is the number of cached vectors.
func (c *VectorCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vecs)
}

// Embed returns cached vectors and embeds (and caches) the rest.
func (c *VectorCache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []string
	var at []int
	c.mu.Lock()
	for i, t := range texts {
		if v, ok := c.vecs[c.key(t)]; ok {
			out[i] = v
		} else {
			miss, at = append(miss, t), append(at, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	vecs, err := c.inner.Embed(ctx, miss)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(miss) {
		return nil, fmt.Errorf("vector cache: %d vectors for %d texts", len(vecs), len(miss))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, v := range vecs {
		out[at[j]] = v
		if len(v) == 0 || len(v) > maxCacheDim {
			continue
		}
		k := c.key(miss[j])
		if _, ok := c.vecs[k]; ok {
			continue
		}
		c.vecs[k] = v
		var head [20]byte
		copy(head[:], k[:])
		binary.LittleEndian.PutUint32(head[16:], uint32(len(v)))
		c.w.Write(head[:])
		for _, x := range v {
			c.w.Write(binary.LittleEndian.AppendUint32(head[:0], math.Float32bits(x)))
		}
	}
	if err := c.w.Flush(); err != nil {
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	return out, nil
}

// Close flushes and closes the file.
func (c *VectorCache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.w.Flush(), c.f.Close())
}
