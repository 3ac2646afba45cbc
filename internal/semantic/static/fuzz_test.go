package static

import (
	"testing"
	"unicode/utf8"
)

// FuzzVector: any text gives a unit or zero vector, and its words are
// lower-case runs of letters and digits of at most maxWord bytes.
func FuzzVector(f *testing.F) {
	for _, s := range []string{"", "CronCreate", "HTTPServer", "\xff", "ÀÉÎ ǅ ǈ", "a_b-c.d"} {
		f.Add(s)
	}
	m, err := Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Words(s, func(w string) {
			if w == "" || len(w) > maxWord+utf8.UTFMax || !utf8.ValidString(w) {
				t.Fatalf("Words(%q): word %q", s, w)
			}
		})
		v := m.Vector(s)
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n != 0 && (n < 0.999 || n > 1.001) {
			t.Fatalf("Vector(%q): |v|² = %v", s, n)
		}
	})
}
