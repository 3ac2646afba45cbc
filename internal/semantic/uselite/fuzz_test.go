package uselite

import (
	"testing"
	"unicode/utf8"
)

// FuzzEncode: any text (query text comes from users) segments without
// panicking into valid ids, and the model embeds it into a unit vector.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", " ", "cron schedule", "a 🚀🚀 b", "\xff\xfe", "ﬁ\u0000\t\n", "::)"} {
		f.Add(s)
	}
	m, err := Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 2000 {
			s = s[:2000]
		}
		ids := m.Tokenizer().Encode(nil, s)
		for i, id := range ids {
			if id < 0 || int(id) >= m.Tokenizer().Size() || (id > 0 && id < reserved) {
				t.Fatalf("Encode(%q)[%d] = %d", s, i, id)
			}
			if i > 0 && id == 0 && ids[i-1] == 0 {
				t.Fatalf("Encode(%q): unknown pieces not merged", s)
			}
		}
		if utf8.ValidString(s) && len(ids) > 4*utf8.RuneCountInString(s)+1 {
			t.Fatalf("Encode(%q): %d ids", s, len(ids))
		}
		if len(s) < 200 {
			v := m.Vector(s)
			var n float64
			for _, x := range v {
				n += float64(x) * float64(x)
			}
			if n < 0.999 || n > 1.001 {
				t.Fatalf("Vector(%q): |v|² = %v", s, n)
			}
		}
	})
}
