package static

import (
	"encoding/binary"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/tooldex/tooldex/internal/semantic/uselite"
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

// FuzzDecode: a model file of any bytes decodes or fails with an error,
// never a panic or an allocation the file's size does not bound; a model
// that decodes embeds text.
func FuzzDecode(f *testing.F) {
	tok, err := uselite.LoadTokenizer()
	if err != nil {
		f.Fatal(err)
	}
	rows := make([][]float32, tok.Size()+2)
	for i := range rows {
		rows[i] = []float32{float32(i%7) - 3, 1}
	}
	valid, err := Encode(2, tok.Size(), []string{"cronjob", "kubectl"}, rows)
	if err != nil {
		f.Fatal(err)
	}
	huge := slices.Clone(valid[:20])
	binary.LittleEndian.PutUint32(huge[16:], 1<<31-1) // two billion words
	for _, b := range [][]byte{valid, valid[:len(valid)-1], valid[:20], huge, []byte("USESTAT1"), nil} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		if v := m.Vector("schedule a cronjob"); len(v) != m.Dim() {
			t.Fatalf("a decoded model's vector has %d dimensions, want %d", len(v), m.Dim())
		}
	})
}
