package semantic

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
)

// The vector file keeps a store's tool vectors across restarts
// (StoreConfig.File), so that a restarted server embeds only the tools
// whose text changed: through the full model a 10k-tool catalog is
// minutes of CPU, through an external embedder as many paid calls.
//
// Layout: an 8-byte magic, a uint32 dimension count (little-endian),
// then records of a 16-byte key (the first half of the SHA-256 of the
// tool's text) and dimension int8 components, the store's quantised unit
// vector. Records are appended as tools are embedded; a record cut short
// (a process killed mid-write) is dropped on reading. The file is
// rewritten with the live tools' records only once the store has had no
// Put for StoreConfig.CompactAfter (a restarted catalog arrives in
// bursts), and again whenever dead records (tools changed or removed)
// outnumber the live ones, so it stays within about twice the catalog's
// vectors. Its name must change when the model's vectors do
// (CacheName, ExternalCacheName).

var vecMagic = [8]byte{'T', 'D', 'X', 'V', 'E', 'C', '1', '\n'}

const (
	vecHeader = len(vecMagic) + 4
	keyLen    = 16
	// maxFileDim bounds the dimension count a file may claim.
	maxFileDim = 1 << 14
)

type textKey [keyLen]byte

func keyOf(text string) textKey {
	h := sha256.Sum256([]byte(text))
	return textKey(h[:keyLen])
}

// readVectors parses a vector file's contents: its dimension count, its
// records by key (a later record of a key replaces an earlier one), the
// number of records, and the length of the whole records read (a cut
// record's bytes are not counted). An empty input has dimension 0.
func readVectors(r io.Reader) (dim int, vecs map[textKey][]int8, records int, end int64, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var head [vecHeader]byte
	if n, err := io.ReadFull(br, head[:]); err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return 0, map[textKey][]int8{}, 0, 0, nil
		}
		return 0, nil, 0, 0, errors.New("vector file: short header")
	}
	if !bytes.Equal(head[:len(vecMagic)], vecMagic[:]) {
		return 0, nil, 0, 0, errors.New("vector file: not a tooldex vector file")
	}
	dim = int(binary.LittleEndian.Uint32(head[len(vecMagic):]))
	if dim == 0 || dim > maxFileDim {
		return 0, nil, 0, 0, fmt.Errorf("vector file: %d dimensions", dim)
	}
	vecs = make(map[textKey][]int8)
	end = int64(vecHeader)
	rec := make([]byte, keyLen+dim)
	var buf []int8 // vectors are cut from blocks of 1,024, not allocated one by one
	for {
		if _, err := io.ReadFull(br, rec); err != nil {
			return dim, vecs, records, end, nil // EOF, or a cut record
		}
		if len(buf) < dim {
			buf = make([]int8, 1024*dim)
		}
		v := buf[:dim:dim]
		buf = buf[dim:]
		for i, b := range rec[keyLen:] {
			v[i] = int8(b)
		}
		vecs[textKey(rec[:keyLen])] = v
		records++
		end += int64(len(rec))
	}
}

// appendRecord appends one record to w.
func appendRecord(w *bufio.Writer, k textKey, v []int8) error {
	if _, err := w.Write(k[:]); err != nil {
		return err
	}
	for _, x := range v {
		if err := w.WriteByte(byte(x)); err != nil {
			return err
		}
	}
	return nil
}

// vecFile is an open vector file, written by Store.Run's goroutine only.
type vecFile struct {
	path    string
	dim     int
	f       *os.File
	w       *bufio.Writer
	records int // records in the file, live or not
}

// openVecFile opens path for appending vectors of dim dimensions. With
// keep, the file is the one read at start, of dim dimensions, end the end
// of its last whole record (what follows is cut off) and records their
// number; otherwise it is started afresh.
func openVecFile(path string, dim int, end int64, keep bool, records int) (*vecFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	flags := os.O_RDWR | os.O_CREATE
	if !keep {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, err
	}
	vf := &vecFile{path: path, dim: dim, f: f}
	if keep {
		if err := f.Truncate(end); err != nil {
			f.Close()
			return nil, err
		}
		if _, err := f.Seek(end, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		vf.records = records
		vf.w = bufio.NewWriterSize(f, 1<<16)
		return vf, nil
	}
	vf.w = bufio.NewWriterSize(f, 1<<16)
	if err := vf.writeHeader(); err != nil {
		f.Close()
		return nil, err
	}
	return vf, nil
}

func (vf *vecFile) writeHeader() error {
	var head [vecHeader]byte
	copy(head[:], vecMagic[:])
	binary.LittleEndian.PutUint32(head[len(vecMagic):], uint32(vf.dim))
	_, err := vf.w.Write(head[:])
	return err
}

// add appends a record (flushed by flush).
func (vf *vecFile) add(k textKey, v []int8) error {
	vf.records++
	return appendRecord(vf.w, k, v)
}

func (vf *vecFile) flush() error { return vf.w.Flush() }

// rewritten writes the records each(yield) gives to a temporary file,
// renames it over vf's and returns it open for appending; vf is left as
// it was (the caller swaps them).
func (vf *vecFile) rewritten(each func(yield func(textKey, []int8) error) error) (*vecFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(vf.path), filepath.Base(vf.path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name()) // once renamed, there is nothing to remove
	next := &vecFile{path: vf.path, dim: vf.dim, f: tmp, w: bufio.NewWriterSize(tmp, 1<<16)}
	err = next.writeHeader()
	if err == nil {
		err = each(next.add)
	}
	if err == nil {
		err = next.w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), vf.path)
	}
	if err != nil {
		tmp.Close()
		return nil, err
	}
	return next, nil
}

func (vf *vecFile) close() error {
	return errors.Join(vf.w.Flush(), vf.f.Close())
}

// loadFile reads the store's vector file, if it has one, for
// takeFromFile. A file that cannot be read is logged and replaced once
// the store knows its dimensions.
func (s *Store) loadFile() {
	if s.file == "" {
		return
	}
	f, err := os.Open(s.file)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		s.log.Warn("the vector file cannot be read; every tool is embedded again", zap.String("file", s.file), zap.Error(err))
		return
	}
	defer f.Close()
	dim, vecs, records, end, err := readVectors(f)
	if err != nil {
		s.log.Warn("the vector file cannot be read; every tool is embedded again", zap.String("file", s.file), zap.Error(err))
		return
	}
	if dim == 0 {
		return // empty: started afresh once the store knows its dimensions
	}
	s.loaded, s.fdim, s.fend, s.frecs = vecs, dim, end, records
	s.log.Info("vector file read", zap.String("file", s.file), zap.Int("vectors", len(vecs)), zap.Int("dimensions", dim))
}

// openFile opens the vector file for appending once the store knows its
// dimensions: the file read at start when it has them, else a new one.
// The caller holds s.mu.
func (s *Store) openFile() {
	keep := s.loaded != nil && s.fdim == s.dim
	if s.loaded != nil && !keep {
		s.log.Warn("the vector file holds vectors of other dimensions; it is replaced", zap.String("file", s.file), zap.Int("file_dimensions", s.fdim), zap.Int("dimensions", s.dim))
		s.loaded = nil
	}
	vf, err := openVecFile(s.file, s.dim, s.fend, keep, s.frecs)
	if err != nil {
		s.fileFailed("opening", err)
		return
	}
	s.vf = vf
}

// fileFailed gives up the vector file after an error: the store goes on
// without it. The caller holds s.mu.
func (s *Store) fileFailed(what string, err error) {
	s.log.Error("vector file failed; tool vectors are no longer kept across restarts", zap.String("file", s.file), zap.String("while", what), zap.Error(err))
	if s.vf != nil {
		s.vf.f.Close() //nolint:errcheck // given up
	}
	s.vf, s.file, s.loaded, s.keys = nil, "", nil, nil
}

// takeFromFile stores the vectors the file holds for the batch's texts
// and returns the tools left to embed. The first batch is embedded
// whatever the file holds: it sets the store's dimensions, against which
// the file's are checked.
func (s *Store) takeFromFile(names, texts []string) ([]string, []string) {
	if len(s.loaded) == 0 {
		return names, texts
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dim == 0 || s.vf == nil {
		return names, texts
	}
	var restN, restT []string
	for i, name := range names {
		k := keyOf(texts[i])
		v, ok := s.loaded[k]
		if !ok {
			restN, restT = append(restN, name), append(restT, texts[i])
			continue
		}
		if cur, ok := s.pending[name]; !ok || cur != texts[i] {
			continue // deleted or changed meanwhile: next picks it up again
		}
		copy(s.place(name, texts[i]), v)
		s.keys[s.slots[name]] = k
		s.fromFile++
	}
	return restN, restT
}

// flushFile writes out the records of the last batch.
func (s *Store) flushFile() {
	if s.vf == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vf != nil {
		if err := s.vf.flush(); err != nil {
			s.fileFailed("writing", err)
		}
	}
}

// compactDue tells, when nothing is queued, whether to compact the
// vector file now and, if not yet, how long until it may be due (0: it
// is not). A file is compacted once the store has had no Put for
// compactAfter, so that a catalog registered again in bursts (its files,
// a replay, hosts reconnecting) finds its records: until then a restarted
// store keeps what it read. Compacting drops that, and then whenever
// the dead records (tools changed or removed) outnumber the live ones by
// more than compactSlack.
func (s *Store) compactDue(now time.Time) (bool, time.Duration) {
	s.mu.RLock()
	vf, live := s.vf, len(s.slots)
	need := vf != nil && (s.loaded != nil || vf.records > 2*live+compactSlack)
	s.mu.RUnlock()
	if !need {
		return false, 0
	}
	idle := now.Sub(time.Unix(0, s.lastPut.Load()))
	if idle >= s.compactAfter {
		return true, 0
	}
	return false, s.compactAfter - idle
}

// compact rewrites the vector file with the live tools' records only.
func (s *Store) compact() {
	next, err := s.vf.rewritten(s.liveRecords)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.fileFailed("compacting", err)
		return
	}
	s.vf.f.Close() //nolint:errcheck // replaced by the renamed file, flushed after its last batch
	s.vf, s.loaded = next, nil
}

// compactSlack is how many dead records the vector file may hold beyond
// as many as live ones before it is compacted.
const compactSlack = 1024

// defaultCompactAfter is StoreConfig.CompactAfter's default.
const defaultCompactAfter = 30 * time.Second

// liveRecords yields the key and vector of every tool in the store, a
// chunk of slots at a time under the read lock, so that Put and searches
// wait for a copy of a chunk at most. Tools that change meanwhile are
// written with whichever text they had; either is a valid record.
func (s *Store) liveRecords(yield func(textKey, []int8) error) error {
	const chunk = 1024
	var keys []textKey
	var vecs []int8
	for from := 0; ; from += chunk {
		keys, vecs = keys[:0], vecs[:0]
		s.mu.RLock()
		n := len(s.names)
		dim := s.dim
		for slot := from; slot < min(from+chunk, n); slot++ {
			if s.names[slot] != "" && slot < len(s.keys) {
				keys = append(keys, s.keys[slot])
				vecs = append(vecs, s.vecs[slot*dim:(slot+1)*dim]...)
			}
		}
		s.mu.RUnlock()
		for i, k := range keys {
			if err := yield(k, vecs[i*dim:(i+1)*dim]); err != nil {
				return err
			}
		}
		if from+chunk >= n {
			return nil
		}
	}
}

// closeFile flushes and closes the vector file when Run returns.
func (s *Store) closeFile() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vf == nil {
		return
	}
	if err := s.vf.close(); err != nil {
		s.log.Warn("closing the vector file", zap.String("file", s.file), zap.Error(err))
	}
	s.vf = nil
}
