package demohost

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/toolhost"
)

// shared makes a directory for the file tools, inside a parent that also
// holds a secret file and directory the tools must not reach, and returns
// both.
func shared(t *testing.T) (dir, parent string) {
	t.Helper()
	parent = t.TempDir()
	dir = filepath.Join(parent, "shared")
	files := map[string]string{
		"hello.txt":         "hello, world\n",
		"sub/notes.md":      "# Notes\n",
		"sub/deeper/x.txt":  "x",
		"big.txt":           strings.Repeat("0123456789", 10_000), // 100,000 bytes
		"utf8.txt":          "aé",                                 // é is 2 bytes: a limit of 2 cuts it
		"binary.bin":        "PK\x03\x04\x00\x00binary",
		"latin1.txt":        "caf\xe9",
		"empty.txt":         "",
		"../secret.txt":     "top secret",
		"../secretdir/s.md": "secret",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link_out":     "../secret.txt",
		"abs_link_out": filepath.Join(parent, "secret.txt"),
		"dir_link_out": "../secretdir",
		"link_in":      "sub/notes.md",
		"dir_link_in":  "sub",
		"dangling":     "nowhere.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skipf("symlinks not supported: %v", err)
		}
	}
	return dir, parent
}

func TestReadFile(t *testing.T) {
	dir, _ := shared(t)
	read := readFile(dir)
	tests := []struct {
		name          string
		params        map[string]any
		wantText      string // exact, for successes
		wantSize      int64
		wantTruncated bool
		wantErr       string // a substring of an error result
	}{
		{name: "file", params: map[string]any{"path": "hello.txt"}, wantText: "hello, world\n", wantSize: 13},
		{name: "nested", params: map[string]any{"path": "sub/notes.md"}, wantText: "# Notes\n", wantSize: 8},
		{name: "dot segments inside", params: map[string]any{"path": "./sub/../hello.txt"}, wantText: "hello, world\n", wantSize: 13},
		{name: "symlink inside", params: map[string]any{"path": "link_in"}, wantText: "# Notes\n", wantSize: 8},
		{name: "through dir symlink inside", params: map[string]any{"path": "dir_link_in/notes.md"}, wantText: "# Notes\n", wantSize: 8},
		{name: "empty", params: map[string]any{"path": "empty.txt"}, wantText: "", wantSize: 0},
		{name: "max_bytes", params: map[string]any{"path": "hello.txt", "max_bytes": 5.0}, wantText: "hello", wantSize: 13, wantTruncated: true},
		{name: "max_bytes equal to size", params: map[string]any{"path": "hello.txt", "max_bytes": 13.0}, wantText: "hello, world\n", wantSize: 13},
		{name: "default limit", params: map[string]any{"path": "big.txt"}, wantText: strings.Repeat("0123456789", 10_000)[:65536], wantSize: 100_000, wantTruncated: true},
		{name: "cut rune dropped", params: map[string]any{"path": "utf8.txt", "max_bytes": 2.0}, wantText: "a", wantSize: 3, wantTruncated: true},
		{name: "binary", params: map[string]any{"path": "binary.bin"}, wantErr: "binary"},
		{name: "not utf-8", params: map[string]any{"path": "latin1.txt"}, wantErr: "binary"},
		{name: "directory", params: map[string]any{"path": "sub"}, wantErr: "is a directory"},
		{name: "missing", params: map[string]any{"path": "nope.txt"}, wantErr: "does not exist"},
		{name: "dangling symlink", params: map[string]any{"path": "dangling"}, wantErr: "does not exist"},
		{name: "no path", params: nil, wantErr: "path is required"},
		{name: "max_bytes too big", params: map[string]any{"path": "hello.txt", "max_bytes": float64(2 << 20)}, wantErr: "between 1 and 1048576"},
		{name: "max_bytes zero", params: map[string]any{"path": "hello.txt", "max_bytes": 0.0}, wantErr: "between 1 and 1048576"},
		{name: "max_bytes fraction", params: map[string]any{"path": "hello.txt", "max_bytes": 1.5}, wantErr: "whole number"},
		{name: "max_bytes string", params: map[string]any{"path": "hello.txt", "max_bytes": "10"}, wantErr: "must be an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, read, tt.params)
			if !checkOutcome(t, res, tt.wantErr) {
				return
			}
			if got := resultText(t, res); got != tt.wantText {
				t.Errorf("text = %.40q (%d bytes), want %.40q (%d bytes)", got, len(got), tt.wantText, len(tt.wantText))
			}
			var got fileResult
			decode(t, res, &got)
			if got.Size != tt.wantSize || got.Truncated != tt.wantTruncated || got.Path == "" {
				t.Errorf("structured = %+v, want size %d, truncated %v and a path", got, tt.wantSize, tt.wantTruncated)
			}
		})
	}
}

func TestListFiles(t *testing.T) {
	dir, _ := shared(t)
	list := listFiles(dir)
	tests := []struct {
		name        string
		params      map[string]any
		wantEntries string // name:size:dir, comma-separated
		wantErr     string
	}{
		{
			name:   "root",
			params: nil,
			wantEntries: "abs_link_out:0:false,big.txt:100000:false,binary.bin:12:false,dangling:0:false," +
				"dir_link_in:0:true,dir_link_out:0:false,empty.txt:0:false,hello.txt:13:false,latin1.txt:4:false," +
				"link_in:8:false,link_out:0:false,sub:0:true,utf8.txt:3:false",
		},
		{name: "sub", params: map[string]any{"path": "sub"}, wantEntries: "deeper:0:true,notes.md:8:false"},
		{name: "pattern", params: map[string]any{"pattern": "*.txt"}, wantEntries: "big.txt:100000:false,empty.txt:0:false,hello.txt:13:false,latin1.txt:4:false,utf8.txt:3:false"},
		{name: "pattern no match", params: map[string]any{"pattern": "*.go"}, wantEntries: ""},
		{name: "dir symlink inside", params: map[string]any{"path": "dir_link_in"}, wantEntries: "deeper:0:true,notes.md:8:false"},
		{name: "bad pattern", params: map[string]any{"pattern": "[a-"}, wantErr: "not a valid glob"},
		{name: "a file", params: map[string]any{"path": "hello.txt"}, wantErr: "not a directory"},
		{name: "missing", params: map[string]any{"path": "nope"}, wantErr: "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, list, tt.params)
			if !checkOutcome(t, res, tt.wantErr) {
				return
			}
			var got listing
			decode(t, res, &got)
			var parts []string
			for _, e := range got.Entries {
				parts = append(parts, fmt.Sprintf("%s:%d:%v", e.Name, e.Size, e.IsDir))
			}
			if s := strings.Join(parts, ","); s != tt.wantEntries {
				t.Errorf("entries = %s\nwant %s", s, tt.wantEntries)
			}
			if got.Truncated || got.Total != len(got.Entries) {
				t.Errorf("total = %d, truncated = %v, want %d, false", got.Total, got.Truncated, len(got.Entries))
			}
		})
	}
}

func TestListFilesLimit(t *testing.T) {
	dir := t.TempDir()
	for i := range maxEntries + 20 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := mustRun(t, listFiles(dir), nil)
	var got listing
	decode(t, res, &got)
	if len(got.Entries) != maxEntries || got.Total != maxEntries+20 || !got.Truncated {
		t.Errorf("got %d entries, total %d, truncated %v, want %d, %d, true", len(got.Entries), got.Total, got.Truncated, maxEntries, maxEntries+20)
	}
	if got.Entries[0].Name != "f0000" || got.Entries[maxEntries-1].Name != fmt.Sprintf("f%04d", maxEntries-1) {
		t.Errorf("entries run %s..%s, want the first %d by name", got.Entries[0].Name, got.Entries[len(got.Entries)-1].Name, maxEntries)
	}
}

// TestPathEscapesRefused checks that no path leads either file tool out of
// its directory: such calls are refused (PERMISSION_DENIED for the caller).
func TestPathEscapesRefused(t *testing.T) {
	dir, parent := shared(t)
	tools := map[string]toolhost.Handler{ReadFile: readFile(dir), ListFiles: listFiles(dir)}
	paths := map[string][]string{
		ReadFile: {
			"../secret.txt", "sub/../../secret.txt", "./../secret.txt", "..",
			filepath.Join(parent, "secret.txt"), "/etc/passwd",
			"link_out", "abs_link_out", "dir_link_out/s.md",
		},
		ListFiles: {
			"..", "../", "sub/../..", "../secretdir",
			parent, "/", "/etc",
			"dir_link_out",
		},
	}
	for name, fn := range tools {
		for _, p := range paths[name] {
			t.Run(name+" "+p, func(t *testing.T) {
				res, err := run(t, fn, map[string]any{"path": p})
				reason, refused := toolhost.IsRefusal(err)
				if !refused {
					t.Fatalf("%s(%q) = %+v, %v, want a refusal", name, p, res, err)
				}
				if strings.Contains(reason, "secret") && !strings.Contains(p, "secret") {
					t.Errorf("refusal reason %q leaks what is outside", reason)
				}
				if strings.Contains(reason, parent) && !strings.Contains(p, parent) {
					t.Errorf("refusal reason %q leaks the host's directory", reason)
				}
			})
		}
	}
}
