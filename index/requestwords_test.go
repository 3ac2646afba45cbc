package index

import (
	"math"
	"testing"
)

// requestCatalog: a help-desk tool whose description uses the words
// people ask with, beside the tools a request is about.
var requestCatalog = []Doc{
	{Name: "support_desk", Description: "Help desk: open a support ticket, or find help articles for a user who wants help."},
	{Name: "ticker_lookup", Description: "Latest stock price and daily change for a ticker symbol."},
	{Name: "currency_convert", Description: "Convert an amount between two currencies at today's rate."},
	{Name: "weather_now", Description: "Current weather and temperature of a city."},
	{Name: "news_headlines", Description: "Top news headlines by country and topic."},
	{Name: "calendar_add", Description: "Add an event to the user's calendar."},
}

// TestRequestWords: with request words weighed down (the default), a
// request's subject ranks first, not the tool that shares the words of
// asking; with damping off, or with a table that names the subject's
// word instead, the ranking follows the words.
func TestRequestWords(t *testing.T) {
	const q = "Please help me, I want to find the stock price of a company"
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"default", Config{}, "ticker_lookup"},
		{"off", Config{RequestDamping: -1}, "support_desk"},
		{"own table", Config{RequestShares: map[string]float64{"stock": 0.3, "price": 0.3}}, "support_desk"},
		{"own table out of range", Config{RequestShares: map[string]float64{"stock": 7, "price": -2, "help": math.NaN()}}, "support_desk"},
	}
	for _, tt := range tests {
		ix := New(tt.cfg)
		for _, d := range requestCatalog {
			ix.Upsert(d)
		}
		res, err := ix.Search(q, Options{Max: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Name != tt.want {
			t.Errorf("%s: %q ranks %v first, want %s", tt.name, q, res.Hits, tt.want)
		}
	}
}

// TestRequestWordsSpec: the spec's cosine configuration keeps the spec's
// query weights.
func TestRequestWordsSpec(t *testing.T) {
	if ix := New(Config{Scorer: ScorerCosine}); ix.tf.weights != nil {
		t.Errorf("cosine scorer: %d request words weighed, want none", len(ix.tf.weights))
	}
	if ix := New(Config{Scorer: ScorerCosine, RequestDamping: 8}); len(ix.tf.weights) == 0 {
		t.Error("cosine scorer with RequestDamping 8: no request words weighed")
	}
}

// TestRequestWordAlone: a query of one request word ranks as it would
// undamped: the word's weight scales the ideal score with it.
func TestRequestWordAlone(t *testing.T) {
	on, off := New(Config{}), New(Config{RequestDamping: -1})
	for _, d := range requestCatalog {
		on.Upsert(d)
		off.Upsert(d)
	}
	id, ok := on.tf.lookup(on.an.Stem("help"))
	if !ok || on.tf.weight(id) >= 0.5 {
		t.Fatalf("help (known %v) weighs %v by default, want well under 1", ok, on.tf.weight(id))
	}
	got, err := on.Search("help", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := off.Search("help", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Hits) != len(want.Hits) || len(got.Hits) == 0 {
		t.Fatalf("help: %v damped, %v undamped", got.Hits, want.Hits)
	}
	for i := range got.Hits {
		if g, w := got.Hits[i], want.Hits[i]; g.Name != w.Name || math.Abs(g.Score-w.Score) > 1e-12 {
			t.Errorf("help, hit %d: %s %.15f damped, %s %.15f undamped", i, g.Name, g.Score, w.Name, w.Score)
		}
	}
}
