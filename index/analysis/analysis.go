// Package analysis turns tool text and queries into index terms.
//
// Two pipelines share one identifier splitter:
//
//   - Terms, for TF-IDF: Unicode word segmentation (blevesearch/segment) →
//     lower case → identifier splitting (camelCase, snake_case, kebab-case,
//     "__", dotted) that keeps the joined form of a multi-part identifier
//     ("findSymbol" → findsymbol, find, symbol) → stop words and one-letter
//     words dropped → Snowball English stemming. Runs of CJK characters become
//     overlapping bigrams (a lone CJK character is kept as a unigram).
//   - Words, for the keyword scorer: the same segmentation and splitting, no
//     stop-word removal and no stemming, so that a query term is compared
//     with the words a person typed.
//
// An Analyzer is safe for concurrent use. It keeps a bounded cache of stems.
package analysis

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/segment"
	"github.com/kljensen/snowball/english"
)

// stopList is Claude Code's 114-word stop list (localSearch.ts).
const stopList = `a an the is are was were be been being have has had do does did will
would could should may might shall can need dare ought used to of in for on with at by from as
into through during before after above below between out off over under again further then once
here there when where why how all each every both few more most other some such no nor not only
own same so than too very just because but and or if while this that these those it its i me my
we our you your he him his she her they them their what which who whom use using`

// maxStemCache bounds the stem cache so that hostile input cannot grow it
// without limit.
const maxStemCache = 1 << 17

// Analyzer runs the pipelines. The zero value is not usable; call New.
type Analyzer struct {
	// stop holds the stop words by length and first letter: a lookup
	// compares a few strings instead of hashing.
	stop [maxStopLen + 1][26][]string

	mu    sync.RWMutex
	stems map[string]string
}

// New returns an Analyzer with the default stop list.
func New() *Analyzer {
	a := &Analyzer{stems: make(map[string]string)}
	for _, w := range strings.Fields(stopList) {
		if len(w) > maxStopLen || !isASCIILetters(w) {
			panic("analysis: stop word " + w + " is not 1 to 7 lower-case letters")
		}
		b := &a.stop[len(w)][w[0]-'a']
		*b = append(*b, w)
	}
	return a
}

// maxStopLen is the length of the longest stop word.
const maxStopLen = 7

// IsStopWord reports whether w (lower case) is on the stop list.
func (a *Analyzer) IsStopWord(w string) bool {
	if len(w) == 0 || len(w) > maxStopLen || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for _, x := range a.stop[len(w)][w[0]-'a'] {
		if x == w {
			return true
		}
	}
	return false
}

// Stem returns the Snowball English stem of a lower-case word. Words that
// are not plain ASCII letters (numbers, identifiers with digits, other
// scripts) are returned unchanged.
func (a *Analyzer) Stem(w string) string {
	if len(w) <= 2 || !isASCIILetters(w) {
		return w
	}
	a.mu.RLock()
	s, ok := a.stems[w]
	a.mu.RUnlock()
	if ok {
		return s
	}
	s = english.Stem(w, true)
	a.mu.Lock()
	if len(a.stems) < maxStemCache {
		// Copies: w and s may be slices of a whole query or
		// description, which the cache would keep alive.
		a.stems[strings.Clone(w)] = strings.Clone(s)
	}
	a.mu.Unlock()
	return s
}

// Token is one word of text with its identifier parts.
type Token struct {
	// Parts are the lower-case identifier parts ("findSymbol" → find,
	// symbol). A CJK token has one part: the bigram or lone character.
	Parts []string
	// CJK marks a CJK bigram or unigram.
	CJK bool
}

// Joined returns the parts concatenated: the normalised form shared by
// find_symbol, findSymbol, FindSymbol and find-symbol.
func (t Token) Joined() string { return strings.Join(t.Parts, "") }

// Tokens segments text into words and splits each into identifier parts.
// Punctuation and spaces separate words; "_", "-", "." and ":" inside a word
// separate parts.
func Tokens(text string) []Token {
	if !isASCII(text) {
		return tokensUnicode(text)
	}
	return tokensASCII(text)
}

// QueryText is the analysis of one query for every pass that needs it
// (or of one field of a document), reusable: Analyze keeps its arrays for
// the next text.
type QueryText struct {
	// Tokens are Tokens(text).
	Tokens []Token
	// Terms are TermsOf(Tokens), when asked for.
	Terms []string
	// Keywords are KeywordTerms(text), when asked for.
	Keywords []KeywordTerm
	// StemAt holds, when both were asked for, the position in Terms of
	// each one-word keyword term's TF-IDF term (the term TermsOf gave
	// the same word), by index in Keywords; -1 for the others.
	StemAt []int32

	tok   tokenBuf
	words []string
	// parts are the parts TermsOf kept, in text order, and partAt the
	// positions of their terms in Terms: stems reads them.
	parts  []string
	partAt []int32
}

// Analyze fills q from text: its tokens always, its TF-IDF terms when
// terms is set, its keyword terms when keywords is. The results share
// arrays with q and are valid until the next Analyze or Reset.
func (a *Analyzer) Analyze(q *QueryText, text string, terms, keywords bool) {
	q.Reset()
	ascii := isASCII(text)
	var low string
	if ascii {
		low = lowerASCII(text)
		q.tok.asciiLower(text, low)
		q.Tokens = q.tok.out
	} else {
		q.Tokens = tokensUnicode(text)
	}
	if terms {
		var rec *QueryText
		if keywords {
			rec = q
		}
		q.Terms = a.termsOf(q.Terms, q.Tokens, rec)
	}
	switch {
	case keywords && ascii:
		q.Keywords, q.words = a.keywordTermsLower(q.Keywords, q.words, text, low)
	case keywords:
		q.Keywords, q.words = a.keywordTermsUnicode(q.Keywords, q.words, text)
	}
	if terms && keywords {
		q.stems()
	}
}

// stems sets q.StemAt from the parts TermsOf recorded: both passes meet a
// text's words in the same order, so each word is looked for from where
// the last was found, a few parts on at most.
func (q *QueryText) stems() {
	next := 0
	for _, k := range q.Keywords {
		at := int32(-1)
		if len(k.Words) == 1 {
			for i := next; i < len(q.parts) && i < next+4; i++ {
				if q.parts[i] == k.Words[0] {
					at, next = q.partAt[i], i+1
					break
				}
			}
		}
		q.StemAt = append(q.StemAt, at)
	}
}

// Reset empties q, keeping its arrays, and lets go of the query's text.
func (q *QueryText) Reset() {
	q.tok.reset()
	clear(q.Terms)
	clear(q.Keywords)
	clear(q.words)
	clear(q.parts)
	q.Tokens, q.Terms, q.Keywords, q.words = nil, q.Terms[:0], q.Keywords[:0], q.words[:0]
	q.StemAt, q.parts, q.partAt = q.StemAt[:0], q.parts[:0], q.partAt[:0]
}

// tokensASCII is Tokens for ASCII text. It applies the word-boundary rules
// of Unicode's UAX #29 that matter for ASCII (letters, digits and "_" form
// words; "." and "'" join two letters or two digits, ":" two letters, ","
// and ";" two digits) without the segmenter's tables, which cost more than
// the rest of the analysis together.
func tokensASCII(text string) []Token {
	var b tokenBuf
	b.ascii(text)
	return b.out
}

// tokenBuf holds Tokens' output and the arrays behind it, for reuse: the
// parts of every token share one array, so that a query costs a few
// allocations rather than one per word.
type tokenBuf struct {
	out   []Token
	parts []string
	ends  []int32 // ends[i]: the end of token i's parts in parts
}

func (b *tokenBuf) reset() {
	clear(b.out)
	clear(b.parts)
	b.out, b.parts, b.ends = b.out[:0], b.parts[:0], b.ends[:0]
}

// ascii appends the tokens of ASCII text to b.out.
func (b *tokenBuf) ascii(text string) {
	b.asciiLower(text, lowerASCII(text)) // parts are slices of it: one copy at most
}

// asciiLower is ascii with text in lower case given: low, of text's
// length.
func (b *tokenBuf) asciiLower(text, low string) {
	parts, ends := b.parts, b.ends[:0]
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
		if more := splitIdentifierLower(parts, text[start:i], low[start:i]); len(more) > len(parts) {
			parts = more
			ends = append(ends, int32(len(parts)))
		}
	}
	from := int32(len(b.parts))
	for _, e := range ends {
		b.out = append(b.out, Token{Parts: parts[from:e:e]})
		from = e
	}
	b.parts, b.ends = parts, ends
}

func isWordByte(c byte) bool {
	return isLowerASCII(c) || isUpperASCII(c) || isDigitASCII(c) || c == '_'
}

func isLetterASCII(c byte) bool { return isLowerASCII(c) || isUpperASCII(c) }

// joins reports whether mid joins prev and next into one word (UAX #29
// rules WB6-7 and WB11-12).
func joins(prev, mid, next byte) bool {
	switch mid {
	case '.', '\'':
		return isLetterASCII(prev) && isLetterASCII(next) || isDigitASCII(prev) && isDigitASCII(next)
	case ':':
		return isLetterASCII(prev) && isLetterASCII(next)
	case ',', ';':
		return isDigitASCII(prev) && isDigitASCII(next)
	}
	return false
}

// tokensUnicode segments text with blevesearch/segment (UAX #29).
func tokensUnicode(text string) []Token {
	var out []Token
	seg := segment.NewWordSegmenterDirect([]byte(text))
	var cjk []string // current run of CJK characters
	lastEnd, pos := -1, 0
	flush := func() {
		switch len(cjk) {
		case 0:
		case 1:
			out = append(out, Token{Parts: []string{cjk[0]}, CJK: true})
		default:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, Token{Parts: []string{cjk[i] + cjk[i+1]}, CJK: true})
			}
		}
		cjk = cjk[:0]
	}
	for seg.Segment() {
		b := seg.Bytes()
		start := pos
		pos += len(b)
		typ := seg.Type()
		if typ == segment.Ideo || typ == segment.Kana || isCJKRun(b) {
			if start != lastEnd {
				flush()
			}
			for _, r := range string(b) {
				cjk = append(cjk, strings.ToLower(string(r)))
			}
			lastEnd = pos
			continue
		}
		flush()
		if typ == segment.None {
			// The segmenter leaves some identifier shapes (a__b, x-y) as
			// separate pieces; "_" is handled by splitting below.
			if !strings.ContainsFunc(string(b), isWordRune) {
				continue
			}
		}
		parts := SplitIdentifier(string(b))
		if len(parts) > 0 {
			out = append(out, Token{Parts: parts})
		}
	}
	flush()
	return out
}

// Terms runs the TF-IDF pipeline over text and appends the terms to dst.
func (a *Analyzer) Terms(dst []string, text string) []string {
	return a.TermsOf(dst, Tokens(text))
}

// TermsOf is Terms over tokens already segmented by Tokens.
//
// Stems are looked up in the cache under one read lock for the whole
// text; the words it misses are stemmed after, and cached.
func (a *Analyzer) TermsOf(dst []string, toks []Token) []string {
	return a.termsOf(dst, toks, nil)
}

// termsOf is TermsOf; with rec set, it records in rec.parts and
// rec.partAt each part it keeps and the position of its term in dst.
func (a *Analyzer) termsOf(dst []string, toks []Token, rec *QueryText) []string {
	var miss []int // positions in dst still holding an unstemmed word
	a.mu.RLock()
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
			if !a.keep(p) {
				continue
			}
			if rec != nil {
				rec.parts, rec.partAt = append(rec.parts, p), append(rec.partAt, int32(len(dst)))
			}
			if len(p) <= 2 || !isASCIILetters(p) {
				dst = append(dst, p)
				continue
			}
			if s, ok := a.stems[p]; ok {
				dst = append(dst, s)
				continue
			}
			miss = append(miss, len(dst))
			dst = append(dst, p)
		}
	}
	a.mu.RUnlock()
	for _, i := range miss {
		dst[i] = a.Stem(dst[i])
	}
	return dst
}

// keep reports whether a part survives stop-word and length filtering.
func (a *Analyzer) keep(p string) bool {
	if a.IsStopWord(p) {
		return false
	}
	if r, n := utf8.DecodeRuneInString(p); n == len(p) && !unicode.IsDigit(r) {
		return false // one letter (of any script), not a digit
	}
	return true
}

// KeywordTerm is one query term for the keyword scorer.
type KeywordTerm struct {
	// Raw is the term as typed, lower case, punctuation trimmed.
	Raw string
	// Whole is Raw when it is one word (letters, digits, "_"), matched
	// against whole description and hint words; "" for terms with
	// punctuation inside (node.js), whose Words must all match.
	Whole string
	// Words are its identifier parts ("send_message" → send, message),
	// matched against name parts.
	Words []string
	// Required is set for "+term".
	Required bool
}

// KeywordTerms splits a keyword query on white space into scoring terms.
// "+term" marks a required term, unless a digit follows the "+": "+4915…"
// and "+1" are phone numbers and signed numbers that a request quotes, not
// operators (requiring a number no tool mentions emptied the results of
// such requests; docs/BENCHMARKS.md, session 8). Stop words and one-letter
// terms are dropped, so they never score.
func (a *Analyzer) KeywordTerms(query string) []KeywordTerm {
	out, _ := a.keywordTerms(nil, nil, query)
	return out
}

// keywordTerms appends the keyword terms of query to out; their words
// are appended to words, which it returns too.
func (a *Analyzer) keywordTerms(out []KeywordTerm, words []string, query string) ([]KeywordTerm, []string) {
	if isASCII(query) {
		return a.keywordTermsASCII(out, words, query)
	}
	return a.keywordTermsUnicode(out, words, query)
}

// keywordTermsUnicode is keywordTerms for any text.
func (a *Analyzer) keywordTermsUnicode(out []KeywordTerm, words []string, query string) ([]KeywordTerm, []string) {
	for f := range strings.FieldsSeq(query) {
		req := false
		if len(f) > 1 && f[0] == '+' && !isDigitASCII(f[1]) {
			req, f = true, f[1:]
		}
		trimmed := strings.TrimFunc(f, notWordRune)
		raw := strings.ToLower(trimmed)
		if raw == "" {
			continue
		}
		n := len(words)
		if isASCII(trimmed) {
			words = splitIdentifierASCII(words, trimmed)
		} else {
			words = append(words, splitIdentifierRunes(trimmed)...)
		}
		k := n
		for _, p := range words[n:] {
			if r, _ := utf8.DecodeRuneInString(p); !isCJK(r) && a.keep(p) {
				words[k] = p
				k++
			}
		}
		clear(words[k:])
		words = words[:k]
		if k == n {
			continue
		}
		whole := raw
		if strings.ContainsFunc(raw, notWordRune) {
			whole = ""
		}
		out = append(out, KeywordTerm{Raw: raw, Whole: whole, Words: words[n:k:k], Required: req})
	}
	return out, words
}

// keywordTermsASCII is keywordTerms for ASCII queries: the query is
// lowered once and every term, word and part is a slice of it.
func (a *Analyzer) keywordTermsASCII(out []KeywordTerm, words []string, query string) ([]KeywordTerm, []string) {
	return a.keywordTermsLower(out, words, query, lowerASCII(query))
}

// keywordTermsLower is keywordTermsASCII with the query in lower case
// given: low, of query's length.
func (a *Analyzer) keywordTermsLower(out []KeywordTerm, words []string, query, low string) ([]KeywordTerm, []string) {
	for i := 0; i < len(query); {
		if isSpaceASCII(query[i]) {
			i++
			continue
		}
		start := i
		for i < len(query) && !isSpaceASCII(query[i]) {
			i++
		}
		from, to := start, i
		req := false
		if to-from > 1 && query[from] == '+' && !isDigitASCII(query[from+1]) {
			req = true
			from++
		}
		// Trim what is not a word byte at both ends.
		for from < to && !isWordByte(query[from]) {
			from++
		}
		for to > from && !isWordByte(query[to-1]) {
			to--
		}
		if from == to {
			continue
		}
		n := len(words)
		words = splitIdentifierLower(words, query[from:to], low[from:to])
		k := n
		for _, p := range words[n:] {
			if a.keep(p) {
				words[k] = p
				k++
			}
		}
		clear(words[k:])
		words = words[:k]
		if k == n {
			continue
		}
		raw := low[from:to]
		whole := raw
		for j := 0; j < len(raw); j++ {
			if !isWordByte(raw[j]) {
				whole = ""
				break
			}
		}
		out = append(out, KeywordTerm{Raw: raw, Whole: whole, Words: words[n:k:k], Required: req})
	}
	return out, words
}

// isSpaceASCII reports the ASCII white space strings.Fields splits on.
func isSpaceASCII(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func notWordRune(r rune) bool { return !isWordRune(r) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Words returns the distinct lower-case words of text as a word-boundary
// match sees them: runs of letters, digits and "_" ("scheduled_tasks.json"
// → scheduled_tasks, json; "NotebookEdit" → notebookedit), unstemmed and
// unfiltered. The keyword scorer matches description and hint words so.
func Words(text string) []string {
	seen := make(map[string]struct{})
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !isWordRune(r) }) {
		if _, ok := seen[f]; !ok {
			seen[f] = struct{}{}
			out = append(out, f)
		}
	}
	return out
}

// AppendWords appends the words of Words(text) to dst, in text order and
// possibly more than once each, for callers that count or deduplicate
// them anyway. ASCII text is split with one copy at most (a lower-case
// one, when it has capitals).
func AppendWords(dst []string, text string) []string {
	if !isASCII(text) {
		return append(dst, Words(text)...)
	}
	low := lowerASCII(text)
	for i := 0; i < len(low); {
		if !isWordByte(low[i]) {
			i++
			continue
		}
		start := i
		for i < len(low) && isWordByte(low[i]) {
			i++
		}
		dst = append(dst, low[start:i])
	}
	return dst
}

// SplitIdentifier splits one word into lower-case parts at "_", "-", ".",
// ":", "/" and other non-alphanumeric runes, and at camelCase boundaries
// (lower→Upper, and before the last capital of an acronym: HTTPServer →
// http, server). Digits stay with the letters before them (base64Encode →
// base64, encode). Empty parts are dropped.
func SplitIdentifier(s string) []string {
	return AppendSplitIdentifier(nil, s)
}

// AppendSplitIdentifier appends the parts of SplitIdentifier(s) to dst.
func AppendSplitIdentifier(dst []string, s string) []string {
	if !isASCII(s) {
		return append(dst, splitIdentifierRunes(s)...)
	}
	return splitIdentifierASCII(dst, s)
}

func isUpperASCII(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLowerASCII(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigitASCII(c byte) bool { return c >= '0' && c <= '9' }

// splitIdentifierASCII is SplitIdentifier for ASCII input, slicing s
// instead of building strings; it appends the parts to parts.
func splitIdentifierASCII(parts []string, s string) []string {
	return splitIdentifierLower(parts, s, lowerASCII(s))
}

// splitIdentifierLower is splitIdentifierASCII with s in lower case
// given: low, of s's length. The parts are slices of low.
func splitIdentifierLower(parts []string, s, low string) []string {
	start := -1
	emit := func(end int) {
		if start >= 0 && end > start {
			parts = append(parts, low[start:end])
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

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if isUpperASCII(s[i]) {
			return strings.ToLower(s)
		}
	}
	return s
}

func splitIdentifierRunes(s string) []string {
	var parts []string
	var cur strings.Builder
	emit := func() {
		if cur.Len() > 0 {
			parts = append(parts, strings.ToLower(cur.String()))
			cur.Reset()
		}
	}
	var prev rune
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) {
			emit()
			prev = 0
			continue
		}
		if cur.Len() > 0 && unicode.IsUpper(r) {
			if unicode.IsLower(prev) || unicode.IsDigit(prev) {
				emit()
			} else if unicode.IsUpper(prev) {
				next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
				if unicode.IsLower(next) {
					emit()
				}
			}
		}
		cur.WriteRune(r)
		prev = r
	}
	emit()
	return parts
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isWordByte(byte(r))
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// isCJK reports whether r is a CJK ideograph (unified, extension A,
// compatibility) or kana.
func isCJK(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

func isCJKRun(b []byte) bool {
	r, _ := utf8.DecodeRune(b)
	return isCJK(r)
}
