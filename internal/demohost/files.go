package demohost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tooldex/tooldex/toolhost"
)

const (
	defaultReadBytes = 64 << 10
	maxReadBytes     = 1 << 20
	// maxEntries is the most entries list_files returns.
	maxEntries = 500
)

// fileResult is read_file's structured answer.
type fileResult struct {
	Path      string `json:"path"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated"`
}

// entry is one list_files entry.
type entry struct {
	Name  string `json:"name"`
	Size  int64  `json:"size"`
	IsDir bool   `json:"is_dir"`
}

// listing is list_files' answer.
type listing struct {
	Path      string  `json:"path"`
	Entries   []entry `json:"entries"`
	Total     int     `json:"total"`
	Truncated bool    `json:"truncated"`
}

// outside is the refusal for a path that leads out of the directory.
func outside(p string) error {
	return toolhost.Refuse(fmt.Sprintf("path %q leads outside the directory the file tools may read", p))
}

// checkLocal refuses, before anything is opened, a path that is absolute
// or climbs out of the directory. os.Root enforces the confinement (it also
// catches symlinks); this only gives the caller a clear answer.
func checkLocal(p string) error {
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || !filepath.IsLocal(p) {
		return outside(p)
	}
	return nil
}

// fsError turns an error of os.Root about p into a result or a refusal.
func fsError(p string, err error) (*toolhost.Result, error) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return toolhost.Errorf("%q does not exist", p), nil
	case escapes(err):
		return nil, outside(p)
	case errors.Is(err, fs.ErrPermission):
		return toolhost.Errorf("permission denied: %q", p), nil
	}
	return toolhost.Errorf("cannot read %q: %v", p, err), nil
}

// escapes reports whether err is os.Root refusing a path that leads out of
// the root (through "..", or a symlink to outside). The os package does not
// export that error, so it is recognised by its text; were the text to
// change, such paths would still be refused, as plain error results.
func escapes(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err != nil && err.Error() == "path escapes from parent"
}

// openRoot opens the directory the file tools may read.
func openRoot(dir string) (*os.Root, *toolhost.Result) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		// The error names the host's directory: keep it out of the result.
		return nil, toolhost.Errorf("the shared directory is not available")
	}
	return root, nil
}

// readFile returns the handler of read_file, confined to dir.
func readFile(dir string) toolhost.Handler {
	return func(_ context.Context, call *toolhost.Call) (*toolhost.Result, error) {
		p, err := stringParam(call.Params, "path", "")
		if err != nil {
			return toolhost.Errorf("%v", err), nil
		}
		if p == "" {
			return toolhost.Errorf("path is required, e.g. \"notes/todo.md\""), nil
		}
		limit, err := intParam(call.Params, "max_bytes", defaultReadBytes, 1, maxReadBytes)
		if err != nil {
			return toolhost.Errorf("%v", err), nil
		}
		if err := checkLocal(p); err != nil {
			return nil, err
		}
		root, res := openRoot(dir)
		if res != nil {
			return res, nil
		}
		defer root.Close()
		// Stat first, so that a FIFO or device is never opened (opening a
		// FIFO blocks).
		info, err := root.Stat(p)
		if err != nil {
			return fsError(p, err)
		}
		if info.IsDir() {
			return toolhost.Errorf("%q is a directory: use list_files", p), nil
		}
		if !info.Mode().IsRegular() {
			return toolhost.Errorf("%q is not a regular file", p), nil
		}
		f, err := root.Open(p)
		if err != nil {
			return fsError(p, err)
		}
		defer f.Close()
		buf := make([]byte, limit+1)
		n, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return fsError(p, err)
		}
		truncated := n > limit
		data := buf[:min(n, limit)]
		if truncated {
			data = trimPartialRune(data)
		}
		if looksBinary(data) {
			return toolhost.Errorf("%q looks like a binary file (%d bytes): read_file returns UTF-8 text only", p, info.Size()), nil
		}
		size := info.Size()
		if !truncated && int64(n) != size {
			size = int64(n) // the file changed since the stat
		}
		res = toolhost.Text(string(data))
		res.Structured = map[string]any{"path": filepath.ToSlash(filepath.Clean(p)), "size": size, "truncated": truncated}
		return res, nil
	}
}

// trimPartialRune drops an incomplete UTF-8 sequence that a truncation left
// at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		start := len(b) - i
		if utf8.RuneStart(b[start]) {
			if !utf8.FullRune(b[start:]) {
				return b[:start]
			}
			return b
		}
	}
	return b
}

// looksBinary reports whether b is not UTF-8 text: it holds a NUL byte or
// is not valid UTF-8.
func looksBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

// listFiles returns the handler of list_files, confined to dir.
func listFiles(dir string) toolhost.Handler {
	return func(_ context.Context, call *toolhost.Call) (*toolhost.Result, error) {
		p, err := stringParam(call.Params, "path", ".")
		if err != nil {
			return toolhost.Errorf("%v", err), nil
		}
		if p == "" {
			p = "."
		}
		pattern, err := stringParam(call.Params, "pattern", "")
		if err != nil {
			return toolhost.Errorf("%v", err), nil
		}
		if pattern != "" {
			if _, err := path.Match(pattern, ""); err != nil {
				return toolhost.Errorf("pattern %q is not a valid glob: %v", pattern, err), nil
			}
		}
		if err := checkLocal(p); err != nil {
			return nil, err
		}
		root, res := openRoot(dir)
		if res != nil {
			return res, nil
		}
		defer root.Close()
		f, err := root.Open(p)
		if err != nil {
			return fsError(p, err)
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return fsError(p, err)
		}
		if !info.IsDir() {
			return toolhost.Errorf("%q is not a directory: use read_file", p), nil
		}
		dirEntries, err := f.ReadDir(-1)
		if err != nil {
			return fsError(p, err)
		}
		out := listing{Path: filepath.ToSlash(filepath.Clean(p)), Entries: []entry{}}
		for _, de := range dirEntries {
			if pattern != "" {
				if ok, _ := path.Match(pattern, de.Name()); !ok {
					continue
				}
			}
			out.Total++
			out.Entries = append(out.Entries, describeEntry(root, p, de))
		}
		slices.SortFunc(out.Entries, func(a, b entry) int { return strings.Compare(a.Name, b.Name) })
		if len(out.Entries) > maxEntries {
			out.Entries = out.Entries[:maxEntries]
			out.Truncated = true
		}
		return toolhost.JSON(out)
	}
}

// describeEntry describes de, in directory p of root. A symlink is
// described by what it points to when that is inside the root, and has
// size 0 otherwise (dangling, or leading out).
func describeEntry(root *os.Root, p string, de fs.DirEntry) entry {
	e := entry{Name: de.Name(), IsDir: de.IsDir()}
	var info fs.FileInfo
	var err error
	if de.Type()&fs.ModeSymlink != 0 {
		info, err = root.Stat(path.Join(filepath.ToSlash(p), de.Name()))
	} else {
		info, err = de.Info()
	}
	if err != nil {
		return e
	}
	e.IsDir = info.IsDir()
	if !e.IsDir {
		e.Size = info.Size()
	}
	return e
}
