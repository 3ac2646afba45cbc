package analysis

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

// The ASCII fast path must segment exactly as the UAX #29 segmenter does.
var asciiSeeds = []string{
	"Don't stop", "v2.0 API", "GitHub PR #123", "node.js and scheduled_tasks.json", "a:b 1,000;2 x.y.z",
	"HTTPServer base64Encode find-symbol __init__", "e.g. 3.14, it's 'quoted' (paren) [x]", "mcp__slack__send_message",
	"trailing. dots.. and 'apostrophes' don''t", "1.a a.1 a:1 1:1 1,a", "tabs\tand\nnewlines", "",
}

func TestTokensASCIIMatchesSegmenter(t *testing.T) {
	for _, s := range asciiSeeds {
		if got, want := tokensASCII(s), tokensUnicode(s); !reflect.DeepEqual(got, want) {
			t.Errorf("tokensASCII(%q) = %v, want %v (segmenter)", s, got, want)
		}
	}
}

func FuzzTokensASCIIMatchesSegmenter(f *testing.F) {
	for _, s := range asciiSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return
			}
		}
		if got, want := tokensASCII(s), tokensUnicode(s); !reflect.DeepEqual(got, want) {
			t.Errorf("tokensASCII(%q) = %v, want %v (segmenter)", s, got, want)
		}
	})
}

// The ASCII keyword terms must be those of the general path.
var keywordSeeds = []string{
	"+slack send", "send_message +GitHub pull", "node.js, (paren) 'quoted' +", "a the of +x ++y",
	"FindSymbol find-symbol mcp__slack__send_message", "\ttabs\nand\vspaces\f\r", "+", "..", "",
}

func keywordsBothWays(a *Analyzer, s string) (got, want []KeywordTerm) {
	got, _ = a.keywordTermsASCII(nil, nil, s)
	want, _ = a.keywordTermsUnicode(nil, nil, s)
	return got, want
}

func TestKeywordTermsASCIIMatchesUnicode(t *testing.T) {
	a := New()
	for _, s := range keywordSeeds {
		if got, want := keywordsBothWays(a, s); !reflect.DeepEqual(got, want) {
			t.Errorf("keywordTermsASCII(%q) = %+v, want %+v", s, got, want)
		}
	}
}

func FuzzKeywordTermsASCIIMatchesUnicode(f *testing.F) {
	for _, s := range keywordSeeds {
		f.Add(s)
	}
	a := New()
	f.Fuzz(func(t *testing.T, s string) {
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return
			}
		}
		if got, want := keywordsBothWays(a, s); !reflect.DeepEqual(got, want) {
			t.Errorf("keywordTermsASCII(%q) = %+v, want %+v", s, got, want)
		}
	})
}
