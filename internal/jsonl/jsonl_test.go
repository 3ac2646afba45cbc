package jsonl

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type got struct {
	N      int
	Offset int64
	Line   string
}

func TestEach(t *testing.T) {
	long := strings.Repeat("x", 200000)
	tests := []struct {
		name string
		in   string
		want []got
	}{
		{"empty", "", nil},
		{"blank lines", "\n  \n\t\r\n", nil},
		{"no final newline", `{"a":1}` + "\n" + `{"b":2}`, []got{{1, 0, `{"a":1}`}, {2, 8, `{"b":2}`}}},
		{"blank between", "1\n\n 2\r\n", []got{{1, 0, "1"}, {3, 3, " 2\r"}}},
		{"long line", long + "\n3", []got{{1, 0, long}, {2, 200001, "3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []got
			err := Each(strings.NewReader(tt.in), func(n int, offset int64, line []byte) error {
				lines = append(lines, got{n, offset, string(line)})
				return nil
			})
			if err != nil {
				t.Fatalf("Each: %v", err)
			}
			if !reflect.DeepEqual(lines, tt.want) {
				t.Errorf("Each = %v, want %v", lines, tt.want)
			}
		})
	}
}

func TestEachStopsAtError(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	err := Each(strings.NewReader("1\n2\n3\n"), func(n int, _ int64, _ []byte) error {
		calls++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Errorf("Each = %v after %d calls, want %v after 2", err, calls, stop)
	}
}

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(path, []byte("1\n\n3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ns []int
	if err := ReadFile(path, func(n int, _ []byte) error { ns = append(ns, n); return nil }); err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	if want := []int{1, 3}; !reflect.DeepEqual(ns, want) {
		t.Errorf("lines %v, want %v", ns, want)
	}
	bad := errors.New("bad")
	err := ReadFile(path, func(n int, _ []byte) error { return bad })
	if !errors.Is(err, bad) || err.Error() != path+":1: bad" {
		t.Errorf("ReadFile error = %v, want %s:1: bad", err, path)
	}
	if err := ReadFile(filepath.Join(t.TempDir(), "none"), func(int, []byte) error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want not exist", err)
	}
}

func FuzzEach(f *testing.F) {
	for _, s := range []string{"", "\n", "a\nb", "{}\n\n{}\r\n", " \t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		last := int64(-1)
		err := Each(strings.NewReader(s), func(n int, offset int64, line []byte) error {
			if offset <= last || !strings.HasPrefix(s[offset:], string(line)) {
				t.Fatalf("line %d at %d: %q is not the input's", n, offset, line)
			}
			last = offset
			b.Write(line)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() > len(s) {
			t.Fatalf("read %d bytes of %d", b.Len(), len(s))
		}
	})
}
