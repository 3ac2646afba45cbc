package analysis

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSplitIdentifier(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"findSymbol", []string{"find", "symbol"}},
		{"FindSymbol", []string{"find", "symbol"}},
		{"find_symbol", []string{"find", "symbol"}},
		{"find-symbol", []string{"find", "symbol"}},
		{"mcp__slack__send_message", []string{"mcp", "slack", "send", "message"}},
		{"__init__", []string{"init"}},
		{"os.path.join", []string{"os", "path", "join"}},
		{"a:b/c", []string{"a", "b", "c"}},
		{"HTTPServer", []string{"http", "server"}},
		{"getHTTPResponseCode", []string{"get", "http", "response", "code"}},
		{"IOError", []string{"io", "error"}},
		{"REPL", []string{"repl"}},
		{"ListMcpResourcesTool", []string{"list", "mcp", "resources", "tool"}},
		{"base64Encode", []string{"base64", "encode"}},
		{"v2API", []string{"v2", "api"}},
		{"utf8", []string{"utf8"}},
		{"ÉtéCafé", []string{"été", "café"}},
		{"优化重构", []string{"优化重构"}},
		{"", nil},
		{"___", nil},
	}
	for _, tt := range tests {
		if got := SplitIdentifier(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("SplitIdentifier(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string // parts joined by "+", CJK tokens prefixed with "cjk:"
	}{
		{"findSymbol in a file", []string{"find+symbol", "in", "a", "file"}},
		{"send_message, then exit.", []string{"send+message", "then", "exit"}},
		{"node.js v2.0", []string{"node+js", "v2+0"}},
		// Word segmentation breaks at "-", so a kebab-case word becomes
		// separate tokens (Token.Joined's doc says otherwise).
		{"find-symbol", []string{"find", "symbol"}},
		{"优化重构流程", []string{"cjk:优化", "cjk:化重", "cjk:重构", "cjk:构流", "cjk:流程"}},
		{"优 is lonely", []string{"cjk:优", "is", "lonely"}},
		{"定时任务 cron", []string{"cjk:定时", "cjk:时任", "cjk:任务", "cron"}},
		{"任务。列表", []string{"cjk:任务", "cjk:列表"}},
		{"日本語テキスト", []string{"cjk:日本", "cjk:本語", "cjk:語テ", "cjk:テキ", "cjk:キス", "cjk:スト"}},
		{"  ,;  ", nil},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, tok := range Tokens(tt.in) {
			s := strings.Join(tok.Parts, "+")
			if tok.CJK {
				s = "cjk:" + s
			}
			got = append(got, s)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTokenJoined(t *testing.T) {
	for _, in := range []string{"find_symbol", "findSymbol", "FindSymbol", "find.symbol"} {
		toks := Tokens(in)
		if len(toks) != 1 || toks[0].Joined() != "findsymbol" {
			t.Errorf("Tokens(%q) = %v, want one token joined as findsymbol", in, toks)
		}
	}
}

func TestTerms(t *testing.T) {
	a := New()
	tests := []struct {
		in   string
		want []string
	}{
		{"scheduling scheduled", []string{"schedul", "schedul"}},
		{"Schedules a recurring job", []string{"schedul", "recur", "job"}},
		{"the quick a b fox", []string{"quick", "fox"}},
		{"I use it for you", nil},
		{"findSymbol", []string{"findsymbol", "find", "symbol"}},
		{"send_message", []string{"sendmessage", "send", "messag"}},
		{"HTTPServer", []string{"httpserver", "http", "server"}},
		{"base64Encode", []string{"base64encode", "base64", "encod"}},
		{"优化重构流程", []string{"优化", "化重", "重构", "构流", "流程"}},
		{"优 x", []string{"优"}},
		{"123 4 x", []string{"123", "4"}},
		{"Café über", []string{"café", "über"}},
		{"it's B'Y don't", []string{"dont", "don"}}, // joined forms are stop-filtered too
		{"envoyer à ｂ é 7", []string{"envoy", "7"}}, // one letter of any script
		{"", nil},
	}
	for _, tt := range tests {
		if got := a.Terms(nil, tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Terms appends to dst.
	if got := a.Terms([]string{"x"}, "files"); !slices.Equal(got, []string{"x", "file"}) {
		t.Errorf("Terms([x], %q) = %q, want [x file]", "files", got)
	}
}

func TestStem(t *testing.T) {
	a := New()
	tests := []struct{ in, want string }{
		{"scheduling", "schedul"},
		{"scheduled", "schedul"},
		{"schedules", "schedul"},
		{"running", "run"},
		{"notifications", "notif"},
		{"go", "go"},         // two letters: unchanged
		{"base64", "base64"}, // digits: unchanged
		{"café", "café"},     // not ASCII: unchanged
		{"send_message", "send_message"},
	}
	for _, tt := range tests {
		// Twice: the second call is served from the cache.
		for range 2 {
			if got := a.Stem(tt.in); got != tt.want {
				t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
			}
		}
	}
}

func TestIsStopWord(t *testing.T) {
	a := New()
	tests := []struct {
		in   string
		want bool
	}{
		{"the", true}, {"using", true}, {"whom", true}, {"dare", true},
		{"slack", false}, {"The", false}, {"", false},
	}
	for _, tt := range tests {
		if got := a.IsStopWord(tt.in); got != tt.want {
			t.Errorf("IsStopWord(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	// The list has 114 distinct words, and IsStopWord knows each.
	words := strings.Fields(stopList)
	if n := len(words); n != 114 {
		t.Errorf("len(stop list) = %d, want 114", n)
	}
	n := 0
	for l := range a.stop {
		for _, b := range a.stop[l] {
			n += len(b)
		}
	}
	if n != len(words) {
		t.Errorf("stop table holds %d words, want %d", n, len(words))
	}
	for _, w := range words {
		if !a.IsStopWord(w) || a.IsStopWord(w+"s") && !slices.Contains(words, w+"s") {
			t.Errorf("IsStopWord(%q) = false or IsStopWord(%q) = true", w, w+"s")
		}
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"scheduled_tasks.json", []string{"scheduled_tasks", "json"}},
		{"NotebookEdit", []string{"notebookedit"}},
		{"Send a message, a reply.", []string{"send", "a", "message", "reply"}},
		{"don't stop", []string{"don", "t", "stop"}},
		{"Send it, send IT again", []string{"send", "it", "again"}},
		{"定时任务 cron", []string{"定时任务", "cron"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := slices.Compact(slices.Sorted(slices.Values(AppendWords(nil, tt.in)))); !slices.Equal(got, slices.Sorted(slices.Values(tt.want))) {
			t.Errorf("AppendWords(%q), sorted and distinct = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestKeywordTerms(t *testing.T) {
	a := New()
	tests := []struct {
		in   string
		want []KeywordTerm
	}{
		{"slack send", []KeywordTerm{
			{Raw: "slack", Whole: "slack", Words: []string{"slack"}},
			{Raw: "send", Whole: "send", Words: []string{"send"}},
		}},
		{"+slack send", []KeywordTerm{
			{Raw: "slack", Whole: "slack", Words: []string{"slack"}, Required: true},
			{Raw: "send", Whole: "send", Words: []string{"send"}},
		}},
		{"send_message", []KeywordTerm{
			{Raw: "send_message", Whole: "send_message", Words: []string{"send", "message"}},
		}},
		{"node.js", []KeywordTerm{{Raw: "node.js", Words: []string{"node", "js"}}}},
		{"(cron),", []KeywordTerm{{Raw: "cron", Whole: "cron", Words: []string{"cron"}}}},
		{"schedule a reminder", []KeywordTerm{
			{Raw: "schedule", Whole: "schedule", Words: []string{"schedule"}},
			{Raw: "reminder", Whole: "reminder", Words: []string{"reminder"}},
		}},
		{"the of + x +a", nil},
		// "+" before a digit is a number's sign, not the operator.
		{"verify +4915123577723 +3d", []KeywordTerm{
			{Raw: "verify", Whole: "verify", Words: []string{"verify"}},
			{Raw: "4915123577723", Whole: "4915123577723", Words: []string{"4915123577723"}},
			{Raw: "3d", Whole: "3d", Words: []string{"3d"}},
		}},
		{"+4915 numéro +slack", []KeywordTerm{
			{Raw: "4915", Whole: "4915", Words: []string{"4915"}},
			{Raw: "numéro", Whole: "numéro", Words: []string{"numéro"}},
			{Raw: "slack", Whole: "slack", Words: []string{"slack"}, Required: true},
		}},
		{"定时任务", nil},
		{"fichier à é ｂ", []KeywordTerm{{Raw: "fichier", Whole: "fichier", Words: []string{"fichier"}}}},
		{"", nil},
	}
	for _, tt := range tests {
		got := a.KeywordTerms(tt.in)
		if !slices.EqualFunc(got, tt.want, equalKeywordTerm) {
			t.Errorf("KeywordTerms(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func equalKeywordTerm(a, b KeywordTerm) bool {
	return a.Raw == b.Raw && a.Whole == b.Whole && a.Required == b.Required && slices.Equal(a.Words, b.Words)
}

func TestAnalyzerConcurrent(t *testing.T) {
	a := New()
	done := make(chan []string)
	for range 4 {
		go func() { done <- a.Terms(nil, "scheduling recurring notifications running") }()
	}
	want := []string{"schedul", "recur", "notif", "run"}
	for range 4 {
		if got := <-done; !slices.Equal(got, want) {
			t.Errorf("Terms = %q, want %q", got, want)
		}
	}
}

var fuzzSeeds = []string{
	"", "findSymbol", "HTTPServer base64Encode", "优化重构流程", "优 is lonely", "+slack send",
	"mcp__slack__send_message", "node.js v2.0", "\xff\xfe", "a__b x-y", "İstanbul ǅungla",
	"日本語テキスト and 한국어", "\u0300\u0301 combining", "+", "++x", "ＡＢＣ全角", "Ｂ ", "à é", "B'Y it's",
}

func FuzzTerms(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	a := New()
	f.Fuzz(func(t *testing.T, s string) {
		terms := a.Terms(nil, s)
		for _, term := range terms {
			if term == "" {
				t.Fatalf("Terms(%q) = %q, has an empty term", s, terms)
			}
			if utf8.ValidString(s) && !utf8.ValidString(term) {
				t.Fatalf("Terms(%q) = %q, has invalid UTF-8 term %q", s, terms, term)
			}
		}
		for _, tok := range Tokens(s) {
			if len(tok.Parts) == 0 {
				t.Fatalf("Tokens(%q) has a token without parts", s)
			}
			for _, p := range tok.Parts {
				if p == "" {
					t.Fatalf("Tokens(%q) has an empty part", s)
				}
			}
		}
		for _, w := range Words(s) {
			if w == "" || (utf8.ValidString(s) && !utf8.ValidString(w)) {
				t.Fatalf("Words(%q) has bad word %q", s, w)
			}
		}
	})
}

func FuzzKeywordTerms(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	a := New()
	f.Fuzz(func(t *testing.T, s string) {
		terms := a.KeywordTerms(s)
		for _, kt := range terms {
			if kt.Raw == "" || len(kt.Words) == 0 {
				t.Fatalf("KeywordTerms(%q) = %+v, has an empty term", s, terms)
			}
			if kt.Whole != "" && kt.Whole != kt.Raw {
				t.Fatalf("KeywordTerms(%q): Whole %q, want \"\" or Raw %q", s, kt.Whole, kt.Raw)
			}
			for _, w := range kt.Words {
				if w == "" {
					t.Fatalf("KeywordTerms(%q) = %+v, has an empty word", s, terms)
				}
				if r, n := utf8.DecodeRuneInString(w); a.IsStopWord(w) || (n == len(w) && !unicode.IsDigit(r)) {
					t.Fatalf("KeywordTerms(%q) = %+v, keeps stop or one-letter word %q", s, terms, w)
				}
				if utf8.ValidString(s) && !utf8.ValidString(w) {
					t.Fatalf("KeywordTerms(%q) = %+v, has invalid UTF-8 word %q", s, terms, w)
				}
			}
			if utf8.ValidString(s) && !utf8.ValidString(kt.Raw) {
				t.Fatalf("KeywordTerms(%q) = %+v, has invalid UTF-8 raw %q", s, terms, kt.Raw)
			}
		}
	})
}

// StemAt points each one-word keyword term at its word's TF-IDF term.
func TestAnalyzeStemAt(t *testing.T) {
	a := New()
	for _, tc := range []struct {
		text string
		want []string // per keyword term: its TF-IDF term, "" for none
	}{
		{"Send messages to Slack", []string{"send", "messag", "slack"}},
		{"send_message now", []string{"", "now"}}, // an identifier is two words
		{"the messages, the messaging", []string{"messag", "messag"}},
		{"node.js +files 定时", []string{"", "file"}}, // CJK is no keyword term
		{"", nil},
	} {
		var q QueryText
		a.Analyze(&q, tc.text, true, true)
		var got []string
		for i, at := range q.StemAt {
			switch {
			case at < 0:
				got = append(got, "")
			case len(q.Keywords[i].Words) != 1:
				t.Fatalf("%q: StemAt[%d] = %d for %+v", tc.text, i, at, q.Keywords[i])
			default:
				got = append(got, q.Terms[at])
			}
		}
		if len(q.StemAt) != len(q.Keywords) || !slices.Equal(got, tc.want) {
			t.Errorf("%q: stems %q (of %d keyword terms), want %q", tc.text, got, len(q.Keywords), tc.want)
		}
	}
}

func FuzzAnalyzeStemAt(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	a := New()
	f.Fuzz(func(t *testing.T, s string) {
		var q QueryText
		a.Analyze(&q, s, true, true)
		if len(q.StemAt) != len(q.Keywords) {
			t.Fatalf("Analyze(%q): %d StemAt for %d keyword terms", s, len(q.StemAt), len(q.Keywords))
		}
		for i, at := range q.StemAt {
			if at < 0 {
				continue
			}
			k := q.Keywords[i]
			if int(at) >= len(q.Terms) || len(k.Words) != 1 || q.Terms[at] != a.Stem(k.Words[0]) {
				t.Fatalf("Analyze(%q): StemAt[%d] = %d for %+v, terms %q", s, i, at, k, q.Terms)
			}
		}
	})
}
