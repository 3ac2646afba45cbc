package permission

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummary(t *testing.T) {
	long := strings.Repeat("a", 50)
	tests := []struct {
		name   string
		params map[string]any
		max    int
		want   string
	}{
		{"nil", nil, 80, ""},
		{"empty", map[string]any{}, 80, ""},
		{"sorted by key", map[string]any{"path": "/etc/hosts", "max_bytes": 100.0}, 80, `max_bytes=100, path="/etc/hosts"`},
		{"long string cut to 40 runes", map[string]any{"s": long}, 0, `s="` + strings.Repeat("a", 39) + `…"`},
		{"string of exactly 40 runes", map[string]any{"s": long[:40]}, 0, `s="` + long[:40] + `"`},
		{"runes, not bytes", map[string]any{"s": strings.Repeat("é", 45)}, 0, `s="` + strings.Repeat("é", 39) + `…"`},
		{"escapes", map[string]any{"s": "a\nb\t\"c\"\u202e"}, 80, `s="a\nb\t\"c\"\u202e"`},
		{"nested object", map[string]any{"opts": map[string]any{"a": 1.0, "b": map[string]any{}}}, 80, `opts={2 keys}`},
		{"one key, empty object", map[string]any{"a": map[string]any{"x": 1.0}, "b": map[string]any{}}, 80, `a={1 key}, b={}`},
		{"arrays", map[string]any{"a": []any{1.0, "x", nil}, "b": []any{}, "c": []any{true}}, 80, `a=[3 items], b=[], c=[1 item]`},
		{"scalars", map[string]any{"t": true, "f": false, "n": nil, "x": 1.5, "big": 1e21, "neg": -3.0}, 80, `big=1e+21, f=false, n=null, neg=-3, t=true, x=1.5`},
		{"go values", map[string]any{"i": 7, "u": uint8(3), "f": float32(0.5), "ss": []string{"a", "b"}, "m": map[string]int{"a": 1}, "n": json.Number("12")}, 80, `f=0.5, i=7, m={1 key}, n=12, ss=[2 items], u=3`},
		{"other values escaped", map[string]any{"c": complex(1, 2), "p": struct{ S string }{"a\nb"}}, 80, `c=(1+2i), p={a\nb}`},
		{"odd keys quoted", map[string]any{"a b": 1.0, "": 2.0, "x=y": 3.0, "ok-key.v2_é": 4.0, "nl\n": 5.0}, 80, `""=2, "a b"=1, "nl\n"=5, ok-key.v2_é=4, "x=y"=3`},
		{"total cut", map[string]any{"path": "/etc/hosts", "max_bytes": 100.0}, 20, `max_bytes=100, path…`},
		{"total fits exactly", map[string]any{"a": 1.0}, 3, `a=1`},
		{"total one over", map[string]any{"a": 10.0}, 3, `a=…`},
		{"max 1", map[string]any{"a": 10.0}, 1, `…`},
		{"total cut counts runes", map[string]any{"s": "ééééé"}, 5, `s="é…`},
		{"no limit", map[string]any{"a": long[:30], "b": long[:30]}, 0, `a="` + long[:30] + `", b="` + long[:30] + `"`},
		{"negative max is no limit", map[string]any{"a": 1.0, "b": 2.0}, -1, `a=1, b=2`},
	}
	for _, tt := range tests {
		got := Summary(tt.params, tt.max)
		if got != tt.want {
			t.Errorf("%s: Summary(%v, %d) = %s, want %s", tt.name, tt.params, tt.max, got, tt.want)
		}
		if n := utf8.RuneCountInString(got); tt.max > 0 && n > tt.max {
			t.Errorf("%s: Summary(%v, %d) has %d runes, want at most %d", tt.name, tt.params, tt.max, n, tt.max)
		}
	}
}

// TestSummaryLimit checks the rune limit for every max on one input.
func TestSummaryLimit(t *testing.T) {
	params := map[string]any{"path": "/tmp/ünïcödé/" + strings.Repeat("x", 60), "flags": []any{"-r"}, "n": 3.0}
	full := Summary(params, 0)
	runes := utf8.RuneCountInString(full)
	for max := 1; max <= runes+2; max++ {
		got := Summary(params, max)
		n := utf8.RuneCountInString(got)
		switch {
		case max >= runes && got != full:
			t.Errorf("Summary(max %d) = %q, want the whole %q", max, got, full)
		case max < runes && (n != max || !strings.HasSuffix(got, "…") || !strings.HasPrefix(full, strings.TrimSuffix(got, "…"))):
			t.Errorf("Summary(max %d) = %q (%d runes), want %d runes: a prefix of %q and \"…\"", max, got, n, max, full)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Summary(max %d) = %q, not valid UTF-8", max, got)
		}
	}
}
