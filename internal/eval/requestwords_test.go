package eval

import (
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/index/analysis"
)

func requestSet(name string, queries, tools []string) Named {
	ds := &Dataset{}
	for _, q := range queries {
		ds.Queries = append(ds.Queries, Query{Text: q})
	}
	for i, d := range tools {
		ds.Tools = append(ds.Tools, Tool{Name: "tool" + string(rune('a'+i)), Description: d})
	}
	return Named{Name: name, Dataset: ds}
}

func TestRequestShares(t *testing.T) {
	sets := []Named{
		requestSet("a",
			[]string{"please help with the weather", "help me book a flight", "weather in Paris", "translate this"},
			[]string{"Weather forecast", "Book a flight", "Help pages"}),
		requestSet("b",
			[]string{"help me read the news", "please summarise the news", "news today"},
			[]string{"News headlines", "Read a feed"}),
	}
	an := analysis.New()
	got := RequestShares(an, sets, 0.5, 0.001)
	// help: a 2/4 − 0.5·1/3, b 1/3 − 0 → 1/3; please: 1/4 in a, 1/3 in b;
	// weather (a's topic) and news (b's) are in one set only.
	want := map[string]float64{"help": 1.0 / 3, an.Stem("please"): 0.25}
	if len(got) != len(want) {
		t.Fatalf("RequestShares = %v, want %v", got, want)
	}
	for term, w := range want {
		if g := got[term]; math.Abs(g-w) > 1e-12 {
			t.Errorf("share of %q = %v, want %v", term, g, w)
		}
	}
	if got := RequestShares(an, sets, 0.5, 0.3); !maps.Equal(got, map[string]float64{"help": 1.0 / 3}) {
		t.Errorf("with minShare 0.3: %v, want help alone", got)
	}
	if got := RequestShares(an, nil, 0.5, 0.001); len(got) != 0 {
		t.Errorf("no sets: %v, want none", got)
	}
}

func TestWriteRequestShares(t *testing.T) {
	shares := map[string]float64{"find": 0.095, "help": 0.1219, "pleas": 0.0286, "tiny": 0.00001, "am": 0.0286}
	var b strings.Builder
	if err := WriteRequestShares(&b, shares, []string{"made by a test"}); err != nil {
		t.Fatal(err)
	}
	want := "# made by a test\nhelp\t0.1219\nfind\t0.0950\nam\t0.0286\npleas\t0.0286\n"
	if b.String() != want {
		t.Errorf("WriteRequestShares:\n%s\nwant\n%s", b.String(), want)
	}
	back, err := analysis.ParseRequestShares(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	delete(shares, "tiny")
	if !maps.Equal(back, shares) {
		t.Errorf("parsed back %v, want %v", back, shares)
	}
}
