package eval

import (
	"slices"
	"strings"
)

// bm25Stop is the baseline's small stop list: Lucene's 33 English stop
// words and the pronouns, modals and question words of requests.
var bm25Stop = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on or
such that the their then there these they this to was will with
i me my you your we our please can could would should need want how what when where which who do does`) {
		m[w] = true
	}
	return m
}()

// bm25Words splits text into the baseline's words: maximal runs of ASCII
// letters and digits, each split at lower-to-upper case changes
// (camelCase → camel, case) and lower-cased; stop words dropped.
func bm25Words(text string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := text[start:end]
		from := 0
		for i := 1; i < len(w); i++ {
			if isLower(w[i-1]) && isUpper(w[i]) {
				out = appendWord(out, w[from:i])
				from = i
			}
		}
		out = appendWord(out, w[from:])
		start = -1
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if isLower(c) || isUpper(c) || (c >= '0' && c <= '9') {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

func appendWord(out []string, w string) []string {
	w = strings.ToLower(w)
	if bm25Stop[w] {
		return out
	}
	return append(out, w)
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// bm25Params is the baseline's parameter text: the name and description of
// every top-level property of schema.
func bm25Params(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte('\n')
		if p, ok := props[n].(map[string]any); ok {
			if d, ok := p["description"].(string); ok {
				b.WriteString(d)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
