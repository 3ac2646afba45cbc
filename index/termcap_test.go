package index

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// wordsIndex returns an index of cfg where word i of words appears in i+1
// documents, so that the words weigh less the later they come.
func wordsIndex(cfg Config, words []string) *Index {
	ix := New(cfg)
	for d := range len(words) {
		ix.Upsert(Doc{Name: fmt.Sprintf("tool_%03d", d), Description: strings.Join(words[d:], " ")})
	}
	return ix
}

// capWords returns n distinct words that neither stem nor split.
func capWords(n int) []string {
	var words []string
	for i := range n {
		words = append(words, fmt.Sprintf("zq%c%cx", 'a'+i/26, 'a'+i%26))
	}
	return words
}

// A search scores at most MaxQueryTerms text and keyword terms, the
// rarest; every required term besides. What the plan sums over its terms
// (BM25F's ideal score, the cosine's query norm, the keyword total) is
// summed over those kept.
func TestQueryTermCap(t *testing.T) {
	words := capWords(MaxQueryTerms + 40)
	for _, scorer := range []Scorer{ScorerBM25F, ScorerCosine} {
		ix := wordsIndex(Config{Scorer: scorer}, words)
		// The commonest word last, required: under the cap by weight,
		// kept for its "+".
		query := strings.Join(slices.Concat(words[:len(words)-1], []string{"+" + words[len(words)-1]}), " ")
		ix.mu.RLock()
		p := ix.compile(query, ModeHybrid, 10, nil, false)
		var text []string
		var ideal, norm float64
		for _, q := range p.tf {
			text = append(text, ix.tf.strs[q.id])
			ideal += q.qw
			norm += q.w * q.w
		}
		var kw []string
		var total float64
		for _, k := range p.kw {
			kw = append(kw, ix.kw.strs[k.words[0]])
			total += k.w
		}
		reqAll, kwTotal, pIdeal, qnorm := p.reqAll, p.kwTotal, p.ideal, p.qnorm
		ix.putPlan(p)
		ix.mu.RUnlock()

		slices.Sort(text)
		if want := words[:MaxQueryTerms]; !slices.Equal(text, want) {
			t.Errorf("%v: text terms %v, want the %d rarest %v", scorer, text, MaxQueryTerms, want)
		}
		if want := slices.Concat(words[:MaxQueryTerms], words[len(words)-1:]); !slices.Equal(kw, want) {
			t.Errorf("%v: keyword terms %v, want the %d rarest and the required one %v", scorer, kw, MaxQueryTerms, want)
		}
		if reqAll == 0 {
			t.Errorf("%v: the required term lost its bit", scorer)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
		if scorer == ScorerBM25F && !near(pIdeal, ideal) || scorer == ScorerCosine && !near(qnorm, math.Sqrt(norm)) || !near(kwTotal, total) {
			t.Errorf("%v: ideal %v, query norm %v, keyword total %v; want the kept terms' %v, %v, %v",
				scorer, pIdeal, qnorm, kwTotal, ideal, math.Sqrt(norm), total)
		}

		// Past the cap a required word still filters: one no tool has
		// empties the results.
		res, err := ix.Search(strings.Join(words[:len(words)-1], " ")+" +nosuchword", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 0 {
			t.Errorf("%v: a required word no tool has: %d hits, want none", scorer, len(res.Hits))
		}
	}
}

// A long query ranks as its rarest words do: the tool that has them comes
// first, however many common words come before them.
func TestQueryTermCapRanksByRareWords(t *testing.T) {
	ix := New(Config{})
	common := capWords(MaxQueryTerms * 2)
	for d := range 20 {
		ix.Upsert(Doc{Name: fmt.Sprintf("filler_%02d", d), Description: strings.Join(common, " ")})
	}
	ix.Upsert(Doc{Name: "image_resize", Description: "Resizes an image to the given width and height."})
	q := strings.Join(common, " ") + " resize this image to a smaller width"
	res, err := ix.Search(q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Name != "image_resize" {
		t.Errorf("Search(%d words): %+v, want image_resize first", len(strings.Fields(q)), res.Hits)
	}
}

// TestQueryTermCapCost reports what the term cap saves
// (TOOLDEX_TERM_CAP_COST=1 go test -run TermCapCost -v): the time of one
// search of MaxQueryBytes of distinct words from the benchmark corpus's
// descriptions, with every term scored and with the cap, alternated, at
// 10k and 100k tools. It only reports, so it is skipped unless asked for.
func TestQueryTermCapCost(t *testing.T) {
	b := reportCorpus(t, "TOOLDEX_TERM_CAP_COST")
	defer func() { maxTerms = MaxQueryTerms }()
	for _, n := range []int{10_000, 100_000} {
		c := benchIndex(b, n)
		seen := map[string]bool{}
		var sb strings.Builder
		for i := 0; sb.Len() < MaxQueryBytes-64; i++ {
			for _, w := range strings.Fields(c.doc(i * 7).Description) {
				w = strings.ToLower(strings.Trim(w, `.,;:()"'`))
				if len(w) >= 3 && !seen[w] && sb.Len() < MaxQueryBytes-64 {
					seen[w] = true
					sb.WriteString(w + " ")
				}
			}
		}
		q := sb.String()
		per := map[int][]time.Duration{}
		for range 5 {
			for _, m := range []int{math.MaxInt, MaxQueryTerms} {
				maxTerms = m
				start := time.Now()
				for range 10 {
					if _, err := c.ix.Search(q, Options{Max: 100, BlendWords: true}); err != nil {
						t.Fatal(err)
					}
				}
				per[m] = append(per[m], time.Since(start)/10)
			}
		}
		all, capped := median(per[math.MaxInt]), median(per[MaxQueryTerms])
		t.Logf("%d tools, a query of %d bytes, %d distinct words: every term %v, at most %d %v (%.1fx less)",
			n, len(q), len(seen), all, MaxQueryTerms, capped, float64(all)/float64(capped))
	}
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
