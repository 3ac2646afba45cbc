package analysis

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The code before the allocation-light rewrite, kept as a reference: the
// fast paths must give exactly what it gave.

func refTokensASCII(text string) []Token {
	var out []Token
	i := 0
	for i < len(text) {
		if !isWordByte(text[i]) {
			i++
			continue
		}
		start := i
		for i < len(text) {
			if isWordByte(text[i]) {
				i++
				continue
			}
			if i > start && i+1 < len(text) && joins(text[i-1], text[i], text[i+1]) {
				i += 2
				continue
			}
			break
		}
		if parts := refSplitIdentifierASCII(text[start:i]); len(parts) > 0 {
			out = append(out, Token{Parts: parts})
		}
	}
	return out
}

func (a *Analyzer) refTermsOf(dst []string, toks []Token) []string {
	for _, tok := range toks {
		if tok.CJK {
			dst = append(dst, tok.Parts[0])
			continue
		}
		if len(tok.Parts) > 1 {
			// The joined form is filtered too: "it's" must not give "its".
			if j := tok.Joined(); !a.IsStopWord(j) {
				dst = append(dst, j)
			}
		}
		for _, p := range tok.Parts {
			if a.keep(p) {
				dst = append(dst, a.Stem(p))
			}
		}
	}
	return dst
}

func (a *Analyzer) refKeywordTerms(query string) []KeywordTerm {
	var out []KeywordTerm
	for _, f := range strings.Fields(query) {
		req := false
		if len(f) > 1 && f[0] == '+' && (f[1] < '0' || f[1] > '9') {
			req, f = true, f[1:]
		}
		trimmed := strings.TrimFunc(f, func(r rune) bool { return !isWordRune(r) })
		raw := strings.ToLower(trimmed)
		if raw == "" {
			continue
		}
		var words []string
		for _, p := range refSplitIdentifier(trimmed) {
			if r, _ := utf8.DecodeRuneInString(p); !isCJK(r) && a.keep(p) {
				words = append(words, p)
			}
		}
		if len(words) == 0 {
			continue
		}
		whole := raw
		if strings.ContainsFunc(raw, func(r rune) bool { return !isWordRune(r) }) {
			whole = ""
		}
		out = append(out, KeywordTerm{Raw: raw, Whole: whole, Words: words, Required: req})
	}
	return out
}

func refSplitIdentifierASCII(s string) []string {
	var parts []string
	start := -1
	emit := func(end int) {
		if start >= 0 && end > start {
			parts = append(parts, lowerASCII(s[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isUpperASCII(c) && !isLowerASCII(c) && !isDigitASCII(c) {
			emit(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		if isUpperASCII(c) {
			prev := s[i-1]
			if isLowerASCII(prev) || isDigitASCII(prev) {
				emit(i)
				start = i
			} else if isUpperASCII(prev) && i+1 < len(s) && isLowerASCII(s[i+1]) {
				emit(i)
				start = i
			}
		}
	}
	emit(len(s))
	return parts
}

func refSplitIdentifier(s string) []string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return splitIdentifierRunes(s)
		}
	}
	return refSplitIdentifierASCII(s)
}

func refTokens(text string) []Token {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return tokensUnicode(text)
		}
	}
	return refTokensASCII(text)
}

func checkSameAsRef(t *testing.T, a *Analyzer, s string) {
	t.Helper()
	if got, want := Tokens(s), refTokens(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("Tokens(%q) = %v, reference %v", s, got, want)
	}
	if got, want := a.Terms(nil, s), a.refTermsOf(nil, refTokens(s)); !reflect.DeepEqual(got, want) {
		t.Fatalf("Terms(%q) = %q, reference %q", s, got, want)
	}
	if got, want := a.Terms([]string{"x"}, s), a.refTermsOf([]string{"x"}, refTokens(s)); !reflect.DeepEqual(got, want) {
		t.Fatalf("Terms(dst, %q) = %q, reference %q", s, got, want)
	}
	got, want := a.KeywordTerms(s), a.refKeywordTerms(s)
	if len(got) != len(want) {
		t.Fatalf("KeywordTerms(%q) = %+v, reference %+v", s, got, want)
	}
	for i := range got {
		if !equalKeywordTerm(got[i], want[i]) {
			t.Fatalf("KeywordTerms(%q) = %+v, reference %+v", s, got, want)
		}
	}
	if got, want := SplitIdentifier(s), refSplitIdentifier(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("SplitIdentifier(%q) = %q, reference %q", s, got, want)
	}
	// AppendWords may repeat words; in first-seen order they are Words.
	var distinct []string
	for _, w := range AppendWords([]string{"kept"}, s)[1:] {
		if !slices.Contains(distinct, w) {
			distinct = append(distinct, w)
		}
	}
	if want := Words(s); !slices.Equal(distinct, want) {
		t.Fatalf("AppendWords(%q), distinct = %q, Words %q", s, distinct, want)
	}
}

func TestSameAsReference(t *testing.T) {
	a := New()
	for _, s := range append(append([]string{}, fuzzSeeds...), asciiSeeds...) {
		checkSameAsRef(t, a, s)
	}
	const alphabet = "aAbZz09_-.:',;/ +\tÉé优化テ"
	words := []string{"the", "of", "a", "I", "HTTPServer", "getFile", "send_message", "+req", "node.js", "it's", "x", "running", "quickly", "été", "优化", "Ünïcode", "+", "(cron),", "v2.0", "3.14"}
	r := rand.New(rand.NewPCG(1, 2))
	runes := []rune(alphabet)
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			if r.IntN(2) == 0 {
				b.WriteString(words[r.IntN(len(words))])
			} else {
				for range 1 + r.IntN(6) {
					b.WriteRune(runes[r.IntN(len(runes))])
				}
			}
			if r.IntN(3) != 0 {
				b.WriteByte(' ')
			}
		}
		checkSameAsRef(t, a, b.String())
	}
}

func FuzzSameAsReference(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	a := New()
	f.Fuzz(func(t *testing.T, s string) { checkSameAsRef(t, a, s) })
}
