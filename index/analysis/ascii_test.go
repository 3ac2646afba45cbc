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
