package textcut

import (
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	tests := []struct {
		s       string
		n       int
		want    string
		wantCut bool
	}{
		{"abc", 5, "abc", false},
		{"abc", 3, "abc", false},
		{"abc", 2, "ab", true},
		{"abc", 0, "", true},
		{"héllo", 2, "h", true}, // é is two bytes: not split
		{"héllo", 3, "hé", true},
		{"日本", 4, "日", true},
		{"日本", -1, "", true},
	}
	for _, tt := range tests {
		got, cut := Prefix(tt.s, tt.n)
		if got != tt.want || cut != tt.wantCut {
			t.Errorf("Prefix(%q, %d) = %q, %v; want %q, %v", tt.s, tt.n, got, cut, tt.want, tt.wantCut)
		}
	}
}

func FuzzPrefix(f *testing.F) {
	f.Add("héllo wörld", 4)
	f.Fuzz(func(t *testing.T, s string, n int) {
		got, cut := Prefix(s, n)
		if len(got) > max(n, 0) && cut || !cut && got != s || len(got) > len(s) || s[:len(got)] != got {
			t.Fatalf("Prefix(%q, %d) = %q, %v", s, n, got, cut)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Prefix(%q, %d) = %q split a rune", s, n, got)
		}
	})
}
