package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// pairsIndex is a small catalog whose words have several forms.
func pairsIndex() *Index {
	ix := New(Config{Shards: 2})
	for _, d := range []Doc{
		{Name: "send_message", Description: "Send a message to a Slack channel"},
		{Name: "list_messages", Description: "List the messages of a channel, newest first"},
		{Name: "messaging_status", Description: "Whether messaging is enabled for a workspace"},
		{Name: "create_channel", Description: "Create a channel and invite members"},
		{Name: "upload_file", Description: "Upload a file to a channel", SearchHint: "share attachment"},
		{Name: "sender_profile", Description: "The profile of a message's sender"},
		{Name: "schedule_message", Description: "定时发送 a message"},
	} {
		ix.Upsert(d)
	}
	return ix
}

// pairedWords returns the words of p's paired keyword terms, in p.kw order,
// after checking what the plan's pairing must hold.
func pairedWords(t *testing.T, ix *Index, p *plan) []string {
	t.Helper()
	if len(p.pairs) != len(p.tf) {
		t.Fatalf("len(pairs) = %d, want len(tf) = %d", len(p.pairs), len(p.tf))
	}
	var words []string
	last := -1
	for j, k := range p.kw {
		if k.text < 0 {
			last = len(p.kw) // paired terms come first
			continue
		}
		if j > last && last == len(p.kw) || k.text <= last {
			t.Fatalf("kw[%d] paired with tf[%d] after kw paired with tf[%d] or an unpaired one", j, k.text, last)
		}
		last = k.text
		if !k.single() || p.pairs[k.text] != j || p.tf[k.text].ord != p.termOrd[k.stemAt] {
			t.Fatalf("kw[%d] %+v paired with tf[%d] %+v (pairs %v)", j, k, k.text, p.tf[k.text], p.pairs)
		}
		words = append(words, ix.kw.strs[k.words[0]])
	}
	for ti, j := range p.pairs {
		if j >= 0 && p.kw[j].text != ti {
			t.Fatalf("pairs[%d] = %d, whose term is paired with %d", ti, j, p.kw[j].text)
		}
	}
	return words
}

func TestPairTerms(t *testing.T) {
	ix := pairsIndex()
	for _, tc := range []struct {
		query string
		mode  Mode
		want  []string // paired words, any order
	}{
		{"send messages to a slack channel", ModeHybrid, []string{"send", "messages", "slack", "channel"}},
		{"message message", ModeHybrid, []string{"message"}}, // one text term
		{"+send message", ModeHybrid, []string{"message"}},   // required terms score apart
		{"send_message", ModeHybrid, nil},                    // an identifier's words must match together
		{"messaging sender", ModeHybrid, []string{"messaging", "sender"}},
		{"send message", ModeKeyword, nil},
		{"send message", ModeTFIDF, nil},
		{"定时 message", ModeHybrid, nil},                 // CJK terms the index knows are scored apart
		{"未知 message", ModeHybrid, []string{"message"}}, // unknown ones are not
		{"nosuchword", ModeHybrid, nil},
	} {
		p := ix.compile(tc.query, tc.mode, 10, nil, false)
		got := pairedWords(t, ix, p)
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) {
			t.Errorf("%q (mode %d): paired %q, want %q", tc.query, tc.mode, got, want)
		}
		ix.putPlan(p)
	}
	// The cosine scorer never pairs.
	cos := New(Config{Shards: 1, Scorer: ScorerCosine})
	cos.Upsert(Doc{Name: "send_message", Description: "Send a message"})
	p := cos.compile("send message", ModeHybrid, 10, nil, false)
	if got := pairedWords(t, cos, p); got != nil {
		t.Errorf("cosine: paired %q, want none", got)
	}
}

// keptPairs counts the merged keyword fields shards keep for the epoch.
func keptPairs(ix *Index) int {
	n := 0
	for _, sh := range ix.shards {
		if xs := sh.xs.Load(); xs != nil {
			for i := range xs.l {
				if e := xs.l[i].Load(); e != nil && e.epoch == ix.epoch {
					for i := range e.pairs {
						if e.pairs[i].Load() != nil {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

// Searches keep paired fields and answer from them as they did when
// making them; after updates they answer as a fresh index of the same
// documents does.
func TestPairsKeptAndFollowUpdates(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 14))
	ix := New(Config{Shards: 2})
	live := map[string]Doc{}
	for _, name := range poolNames {
		d := randomDoc(r, name)
		ix.Upsert(d)
		live[name] = d
	}
	search := func(ix *Index) map[string]Result {
		out := map[string]Result{}
		for _, q := range invariantQueries {
			res, err := ix.Search(q, Options{Max: 100})
			if err != nil {
				t.Fatal(err)
			}
			out[q] = res
		}
		return out
	}
	first := search(ix)
	if keptPairs(ix) == 0 {
		t.Fatal("no paired fields kept after exhaustive searches")
	}
	for q, res := range search(ix) {
		if !slices.Equal(res.Hits, first[q].Hits) {
			t.Fatalf("%q from kept pairs: %+v, first %+v", q, res.Hits, first[q].Hits)
		}
	}
	for round := range 5 {
		for range 10 {
			name := poolNames[r.IntN(len(poolNames))]
			d := randomDoc(r, name)
			ix.Upsert(d)
			live[name] = d
		}
		fresh := New(Config{Shards: 2})
		for _, d := range live {
			fresh.Upsert(d)
		}
		want := search(fresh)
		for q, res := range search(ix) {
			if d := diffResults(res, want[q]); d != "" {
				t.Fatalf("round %d, %q: %s", round, q, d)
			}
		}
	}
}

// A document the word reaches but its stem does not (a name part that
// contains the word) is scored from the paired term's extra slots.
func TestPairedPartialOnly(t *testing.T) {
	ix := pairsIndex()
	for _, q := range []string{"send", "send a message"} {
		res, err := ix.Search(q, Options{Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res.Hits, func(h Hit) bool { return h.Name == "sender_profile" })
		if q == "send" && (i < 0 || res.Hits[i].Points != 5) {
			t.Errorf("%q: sender_profile at %d in %+v, want it with 5 points (a name part containing the word)", q, i, res.Hits)
		}
		if q != "send" && (i < 0 || res.Hits[i].Points != 5+2) {
			t.Errorf("%q: sender_profile at %d in %+v, want it with 7 points", q, i, res.Hits)
		}
	}
}
