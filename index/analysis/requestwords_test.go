package analysis

import (
	"maps"
	"strings"
	"testing"
)

func TestParseRequestShares(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]float64
		wantErr string
	}{
		{in: "", want: map[string]float64{}},
		{in: "# made by a test\n\nhelp\t0.12\nfind\t0.0950\n", want: map[string]float64{"help": 0.12, "find": 0.095}},
		{in: "help 0.12\n", wantErr: "line 1: want term<TAB>share"},
		{in: "\t0.1\n", wantErr: "line 1: want term<TAB>share"},
		{in: "he lp\t0.1\n", wantErr: "line 1: want term<TAB>share"},
		{in: "#\nhelp\tmuch\n", wantErr: `line 2: share "much"`},
		{in: "help\t0\n", wantErr: "want a number in (0, 1)"},
		{in: "help\t1\n", wantErr: "want a number in (0, 1)"},
		{in: "help\tNaN\n", wantErr: "want a number in (0, 1)"},
		{in: "help\t-0.5\n", wantErr: "want a number in (0, 1)"},
		{in: "help\t0.1\nhelp\t0.2\n", wantErr: `line 2: term "help" given twice`},
	}
	for _, tt := range tests {
		got, err := ParseRequestShares(strings.NewReader(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRequestShares(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("ParseRequestShares(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestRequestSharesEmbedded: the embedded table parses and holds the
// words of asking, by their terms, and not the words that name a tool's
// job.
func TestRequestSharesEmbedded(t *testing.T) {
	m := RequestShares()
	if len(m) < 50 {
		t.Fatalf("RequestShares() has %d terms, want the embedded table's hundreds", len(m))
	}
	for _, w := range []string{"help", "find", "please", "want"} {
		if term := New().Stem(w); m[term] < 0.02 {
			t.Errorf("request share of %q (term %q) = %v, want at least 0.02", w, term, m[term])
		}
	}
	for _, w := range []string{"cron", "schedule", "grep", "weather", "slack"} {
		if term := New().Stem(w); m[term] > 0.002 {
			t.Errorf("request share of %q (term %q) = %v, want about none: it names what a tool does", w, term, m[term])
		}
	}
}

func FuzzParseRequestShares(f *testing.F) {
	f.Add(requestWordsFile)
	f.Add("help\t0.5\n# c\n\nfind\t1e-3")
	f.Add("a\t0.1\na\t0.2")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := ParseRequestShares(strings.NewReader(in))
		if err != nil {
			return
		}
		for term, g := range m {
			if term == "" || strings.ContainsAny(term, " \t\r\n") || !(g > 0 && g < 1) {
				t.Fatalf("accepted %q → %v", term, g)
			}
		}
	})
}
