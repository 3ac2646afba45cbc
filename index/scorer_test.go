package index

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
)

func TestParseScorer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Scorer
		ok   bool
	}{
		{"bm25f", ScorerBM25F, true}, {"BM25", ScorerBM25F, true}, {"cosine", ScorerCosine, true},
		{"tfidf", ScorerCosine, true}, {"", 0, false}, {"dense", 0, false},
	} {
		got, err := ParseScorer(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseScorer(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && got.String() != map[Scorer]string{ScorerBM25F: "bm25f", ScorerCosine: "cosine"}[tc.want] {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}

func TestConfigDefaultsFollowScorer(t *testing.T) {
	for _, tc := range []struct {
		cfg        Config
		wk, wt, nb float64
	}{
		{Config{}, DefaultKeywordWeight, DefaultTextWeight, -1},
		{Config{Scorer: ScorerCosine}, 0.4, 0.6, 0.75},
		{Config{Scorer: ScorerCosine, KeywordWeight: 0.5, TFIDFWeight: 0.5, NameBoost: -1}, 0.5, 0.5, -1},
	} {
		got := New(tc.cfg).Config()
		if got.KeywordWeight != tc.wk || got.TFIDFWeight != tc.wt || got.NameBoost != tc.nb {
			t.Errorf("New(%+v).Config() weights %v/%v boost %v, want %v/%v boost %v",
				tc.cfg, got.KeywordWeight, got.TFIDFWeight, got.NameBoost, tc.wk, tc.wt, tc.nb)
		}
	}
}

// BM25F normalises each field by its length: one mention of a term in a
// short description counts more than one in a long one, and a term
// repeated many times saturates instead of growing without bound.
func TestBM25FLengthAndSaturation(t *testing.T) {
	filler := "It reads records, writes reports, keeps caches warm and answers status questions for operators. "
	ix := New(Config{Shards: 2, Scorer: ScorerBM25F, KeywordWeight: 0, TFIDFWeight: 1})
	ix.Upsert(Doc{Name: "short_tool", Description: "Convert currency amounts."})
	ix.Upsert(Doc{Name: "long_tool", Description: "Convert currency amounts. " + filler + filler + filler})
	ix.Upsert(Doc{Name: "spam_tool", Description: "currency currency currency currency currency currency currency currency currency currency"})
	for i := range 20 {
		ix.Upsert(Doc{Name: "other_" + string(rune('a'+i)), Description: "Send a message to a channel. " + filler})
	}
	res, err := ix.Search("convert currency", Options{Max: 10, Mode: ModeTFIDF})
	if err != nil {
		t.Fatal(err)
	}
	got := hitNames(res.Hits)
	if len(got) != 3 || got[0] != "short_tool" {
		t.Fatalf("convert currency: got %v, want short_tool first of three", got)
	}
	long, _ := findHit(res.Hits, "long_tool")
	if long.TFIDF >= res.Hits[0].TFIDF {
		t.Errorf("long_tool %v >= short_tool %v: the same words in a longer description must count less", long.TFIDF, res.Hits[0].TFIDF)
	}
	for _, h := range res.Hits {
		if h.TFIDF <= 0 || h.TFIDF > 1 || h.Score != h.TFIDF {
			t.Errorf("%s: text score %v, score %v: want in (0, 1] and equal in text mode", h.Name, h.TFIDF, h.Score)
		}
	}
	spam, _ := findHit(res.Hits, "spam_tool")
	short, _ := findHit(res.Hits, "short_tool")
	if spam.TFIDF >= short.TFIDF {
		t.Errorf("spam_tool %v >= short_tool %v: repeating one term must not beat matching both", spam.TFIDF, short.TFIDF)
	}
}

// The spec's configuration stays reachable: cosine with the 0.75 floor for
// a tool the query names.
func TestSpecConfigNameBoost(t *testing.T) {
	docs := []Doc{
		{Name: "send_message", Description: "Deliver a note to a chat channel of the workspace, with threads and mentions."},
		{Name: "read_inbox", Description: "List the newest messages and send receipts."},
	}
	for _, tc := range []struct {
		cfg     Config
		atLeast float64
	}{
		{SpecConfig(), 0.75},
		{DefaultConfig(), 0},
	} {
		ix := New(tc.cfg)
		for _, d := range docs {
			ix.Upsert(d)
		}
		res, err := ix.Search("please send message now", Options{Mode: ModeTFIDF})
		if err != nil {
			t.Fatal(err)
		}
		h, ok := findHit(res.Hits, "send_message")
		if !ok || res.Hits[0].Name != "send_message" {
			t.Fatalf("%v: got %v, want send_message first", tc.cfg.Scorer, hitNames(res.Hits))
		}
		if h.TFIDF < tc.atLeast {
			t.Errorf("%v: send_message text score %v, want at least %v", tc.cfg.Scorer, h.TFIDF, tc.atLeast)
		}
	}
}

// A term repeated in the query counts c(k3+1)/(c+k3) times, not c times:
// with the default k3 of 1, "alpha" written three times weighs 1.5 against
// "beta" written once, and a negative k3 keeps the raw count of 3. (The
// text score is the square root of the weighted sum over the ideal.)
func TestQueryTermSaturation(t *testing.T) {
	for _, tc := range []struct {
		k3, want float64
	}{
		{0, 1.5}, // the default, k3 = 1
		{1, 1.5},
		{3, 2},
		{-1, 3},
	} {
		ix := New(Config{Shards: 2, KeywordWeight: 0, TFIDFWeight: 1, K3: tc.k3})
		ix.Upsert(Doc{Name: "first_tool", Description: "alpha records for operators"})
		ix.Upsert(Doc{Name: "second_tool", Description: "beta records for operators"})
		ix.Upsert(Doc{Name: "third_tool", Description: "gamma records for operators"})
		res, err := ix.Search("alpha alpha alpha beta", Options{Mode: ModeTFIDF})
		if err != nil {
			t.Fatal(err)
		}
		a, okA := findHit(res.Hits, "first_tool")
		b, okB := findHit(res.Hits, "second_tool")
		if !okA || !okB {
			t.Fatalf("k3 %v: got %v, want first_tool and second_tool", tc.k3, hitNames(res.Hits))
		}
		if got := (a.TFIDF * a.TFIDF) / (b.TFIDF * b.TFIDF); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("k3 %v: alpha×3 weighs %v times beta, want %v", tc.k3, got, tc.want)
		}
	}
}

// TestDefaultShards checks that an index of the default shard count holds
// one shard until it reaches splitFrom deferred documents, then GOMAXPROCS
// shards up to MaxDefaultShards, and one again below half of splitFrom.
func TestDefaultShards(t *testing.T) {
	for _, procs := range []int{1, 2, 4, 16} {
		old := runtime.GOMAXPROCS(procs)
		ix := New(Config{})
		runtime.GOMAXPROCS(old)
		ix.splitFrom = 40
		split := min(procs, MaxDefaultShards)
		steps := []struct {
			docs, want int // deferred documents after the step, shards then
		}{{39, 1}, {40, split}, {20, split}, {19, 1}, {40, split}}
		n := 0
		for _, st := range steps {
			for ; n < st.docs; n++ {
				ix.Upsert(Doc{Name: fmt.Sprintf("tool_%d", n), Description: "a tool"})
			}
			for ; n > st.docs; n-- {
				ix.Remove(fmt.Sprintf("tool_%d", n-1))
			}
			if got := len(ix.shards); got != st.want {
				t.Errorf("GOMAXPROCS %d, %d documents: %d shards, want %d", procs, n, got, st.want)
			}
		}
	}
	if got := len(New(Config{Shards: 3}).shards); got != 3 {
		t.Errorf("Config{Shards: 3}: %d shards, want 3 (a shard count given is kept)", got)
	}
}

// A keyword term counts toward the keyword score by its idf: a rare word
// in a description outweighs a word most tools' names have, which the
// point scheme alone scores four times higher (name part 10, description
// word 2).
func TestKeywordTermsWeightedByIDF(t *testing.T) {
	ix := New(Config{Shards: 2})
	ix.Upsert(Doc{Name: "covid_cases", Description: "Latest coronavirus case counts by country."})
	for i := range 20 {
		ix.Upsert(Doc{Name: "information_" + string(rune('a'+i)), Description: "Returns records of kind " + string(rune('a'+i)) + "."})
	}
	res, err := ix.Search("coronavirus information", Options{Max: 5, Mode: ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Name != "covid_cases" {
		t.Fatalf("Search(coronavirus information) = %v, want covid_cases first", hitNames(res.Hits))
	}
	// The points are the seed's, unweighted: the name match still has more.
	if got, want := res.Hits[0].Points, 2; got != want {
		t.Errorf("covid_cases points = %d, want %d", got, want)
	}
	if got := res.Hits[1].Points; got <= res.Hits[0].Points {
		t.Errorf("%s points = %d, want more than covid_cases' %d", res.Hits[1].Name, got, res.Hits[0].Points)
	}
	// With every other tool removed, the weights are the same for every
	// term again: a one-term query scores 1 for a full match.
	for i := range 20 {
		ix.Remove("information_" + string(rune('a'+i)))
	}
	res, err = ix.Search("coronavirus", Options{Max: 5, Mode: ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || math.Abs(res.Hits[0].Keyword-math.Sqrt(2.0/16)) > 1e-12 {
		t.Errorf("Search(coronavirus) = %+v, want covid_cases at keyword score sqrt(2/16)", res.Hits)
	}
}

// BlendWords re-scores the ranked hits by the words as written:
// "interested" stems like "interests", so both tools match it as a text
// term, but only bond_rates has the word itself and gets the whole
// WordShare; hobby_groups keeps (1 − WordShare) of its score. The hits
// are those of the unblended search, sorted by their new scores, and a
// query naming a tool keeps it first.
func TestBlendWords(t *testing.T) {
	ix := New(Config{Shards: 2})
	ix.Upsert(Doc{Name: "hobby_groups", Description: "Groups matching the interests you list."})
	ix.Upsert(Doc{Name: "bond_rates", Description: "Rates for investors interested in bonds."})
	for i := range 20 {
		ix.Upsert(Doc{Name: "filler_" + string(rune('a'+i)), Description: "Returns records of kind " + string(rune('a'+i)) + "."})
	}
	run := func(q string, blend bool) []Hit {
		return ix.Run(Query{Kind: KindKeyword, Text: q}, Options{Max: 20, BlendWords: blend}).Hits
	}
	plain, blended := run("interested", false), run("interested", true)
	if len(plain) != 2 || len(blended) != 2 {
		t.Fatalf("Run(interested) = %v / %v, want both tools", plain, blended)
	}
	want := map[string]float64{}
	for _, h := range plain {
		want[h.Name] = (1 - WordShare) * h.Score
		if h.Name == "bond_rates" {
			want[h.Name] += WordShare
		}
	}
	for _, h := range blended {
		if math.Abs(h.Score-want[h.Name]) > 1e-12 {
			t.Errorf("%s blended score = %v, want %v", h.Name, h.Score, want[h.Name])
		}
		if h.words != 0 {
			t.Errorf("%s: Run returned its word score", h.Name)
		}
	}
	if blended[0].Score < blended[1].Score {
		t.Errorf("blended hits out of order: %+v", blended)
	}
	// An exact name stays first; a Discover query (text only) is unchanged.
	if got := run("bond_rates", true); len(got) == 0 || got[0].Name != "bond_rates" || got[0].Match != MatchExact {
		t.Errorf("Run(bond_rates) = %+v, want the named tool first", got)
	}
	d1 := ix.Run(Query{Kind: KindDiscover, Text: "interested"}, Options{Max: 20})
	d2 := ix.Run(Query{Kind: KindDiscover, Text: "interested"}, Options{Max: 20, BlendWords: true})
	if !slices.Equal(d1.Hits, d2.Hits) {
		t.Errorf("discover with BlendWords = %+v, want %+v", d2.Hits, d1.Hits)
	}
}
