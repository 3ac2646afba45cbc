package index

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The pool of tool names the random operations draw from. Several share an
// exact-name spelling (FindSymbol, find_symbol and the MCP find_symbol tools
// are all "find symbol"), and many share name parts.
var poolNames = func() []string {
	names := []string{
		"FindSymbol", "find_symbol", "mcp__serena__find_symbol", "mcp__lsp__find_symbol",
		"Read", "ReadFile", "mcp__fs__read_file", "CronCreate", "CronDelete", "CronList",
		"mcp__slack__send_message", "mcp__slack__list_channels", "mcp__slack__read_thread",
		"mcp__github__create_issue", "mcp__github__create_pull_request", "mcp__github__list_pull_requests",
		"SendUserFile", "SendUserMessage", "PushNotification", "REPL", "Snip", "Config",
		"EnterWorktree", "ExitWorktree", "workflow", "mcp__dingshi__add_job", "mcp__renwu__board",
	}
	verbs := []string{"create", "delete", "list", "get", "send", "schedule", "query"}
	nouns := []string{"message", "job", "issue", "page", "channel"}
	for i := 0; len(names) < 60; i++ {
		v, n := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		switch i % 3 {
		case 0:
			names = append(names, strings.ToUpper(v[:1])+v[1:]+strings.ToUpper(n[:1])+n[1:])
		case 1:
			names = append(names, "mcp__srv"+fmt.Sprint(i%4)+"__"+v+"_"+n)
		default:
			names = append(names, v+"-"+n)
		}
	}
	return slices.Compact(names)
}()

// vocabulary for word-salad text: name parts, stem collisions, stop words,
// one-letter words, identifiers and CJK.
var saladWords = strings.Fields(`schedule scheduled scheduling schedules cron job jobs daily every
morning reminder send sends message messages slack channel thread github issue pull request
requests review find symbol symbols definition code file files read write upload share user
device notification phone list create delete query sql database worktree git branch page
notion search searching a the of to in is x b send_message findSymbol node.js HTTPServer
定时任务 任务 调度 文件上传 看板`)

func salad(r *rand.Rand, min, max int) string {
	n := min + r.IntN(max-min+1)
	w := make([]string, n)
	for i := range w {
		w[i] = saladWords[r.IntN(len(saladWords))]
	}
	return strings.Join(w, " ")
}

func randomDoc(r *rand.Rand, name string) Doc {
	d := Doc{Name: name, Description: salad(r, 2, 14), Core: r.IntN(5) == 0}
	if r.IntN(3) > 0 {
		d.SearchHint = salad(r, 1, 4)
	}
	switch r.IntN(3) {
	case 0:
		d.Params = ParamText(map[string]any{"type": "object", "properties": map[string]any{
			saladWords[r.IntN(len(saladWords))]: map[string]any{"type": "string", "description": salad(r, 1, 5)},
			"limit":                             map[string]any{"type": "number"},
		}})
	case 1:
		d.Params = salad(r, 1, 6)
	}
	if r.IntN(10) == 0 {
		d.Aliases = []string{[]string{"Task", "KillShell", "find-symbol", "SendFile"}[r.IntN(4)]}
	}
	return d
}

var invariantQueries = []string{
	"schedule", "scheduling jobs", "send message", "slack send", "find symbol", "create issue github",
	"list channel", "read file", "a the of", "message", "job", "cron schedule daily every morning",
	"file upload share", "symbol definition code", "pull request review", "send_message", "findSymbol",
	"notification phone user", "query database sql", "node.js", "HTTPServer", "x b",
	"+slack send", "+github create", "+symbol", "+nosuchword send", "+send +message slack",
	"FindSymbol", "find_symbol", "CreateIssue", "mcp__slack__send_message", "read", "Task", "snip",
	"select:FindSymbol,find_symbol,NoSuch", "select:find symbol", "select:Task,CronList,Read,mcp__github__create_issue",
	"discover:send a message to a channel", "discover:schedule a job every day", "discover:定时任务",
	"mcp__slack", "mcp__github__", "mcp__serena__find", "mcp__srv1",
	"定时任务", "任务", "文件上传 upload", "定时 schedule",
}

var invariantOptions = []Options{{Max: MaxResults}, {Max: 3}, {Max: MaxResults, Mode: ModeKeyword}, {Max: MaxResults, Mode: ModeTFIDF}}

// diffResults describes how got differs from want, or returns "".
func diffResults(got, want Result) string {
	if got.Kind != want.Kind || got.Deferred != want.Deferred {
		return fmt.Sprintf("Kind, Deferred = %v, %d, want %v, %d", got.Kind, got.Deferred, want.Kind, want.Deferred)
	}
	if !slices.Equal(got.AlreadyLoaded, want.AlreadyLoaded) {
		return fmt.Sprintf("AlreadyLoaded = %v, want %v", got.AlreadyLoaded, want.AlreadyLoaded)
	}
	if !slices.Equal(got.NotFound, want.NotFound) {
		return fmt.Sprintf("NotFound = %v, want %v", got.NotFound, want.NotFound)
	}
	if !slices.Equal(hitNames(got.Hits), hitNames(want.Hits)) {
		return fmt.Sprintf("hits = %v, want %v", hitNames(got.Hits), hitNames(want.Hits))
	}
	for i, g := range got.Hits {
		w := want.Hits[i]
		const eps = 1e-9
		if math.Abs(g.Score-w.Score) > eps || math.Abs(g.Keyword-w.Keyword) > eps || math.Abs(g.TFIDF-w.TFIDF) > eps ||
			g.Points != w.Points || g.Match != w.Match {
			return fmt.Sprintf("hit %d = %+v, want %+v", i, g, w)
		}
	}
	return ""
}

// mutate applies n random operations to ix and returns the final set of
// documents.
func mutate(r *rand.Rand, ix *Index, n int) map[string]Doc {
	live := make(map[string]Doc)
	for range n {
		name := poolNames[r.IntN(len(poolNames))]
		switch op := r.IntN(20); {
		case op < 11: // new tool or replacement with changed text
			d := randomDoc(r, name)
			ix.Upsert(d)
			live[name] = d
		case op < 14: // core ↔ deferred flip, same text
			d, ok := live[name]
			if !ok {
				d = randomDoc(r, name)
			}
			d.Core = !d.Core
			ix.Upsert(d)
			live[name] = d
		case op < 15: // the same document again
			if d, ok := live[name]; ok {
				ix.Upsert(d)
			}
		default:
			_, ok := live[name]
			if got := ix.Remove(name); got != ok {
				panic(fmt.Sprintf("Remove(%q) = %v, want %v", name, got, ok))
			}
			delete(live, name)
		}
	}
	return live
}

func freshIndex(r *rand.Rand, live map[string]Doc, scorer ...Scorer) *Index {
	cfg := Config{Shards: 1}
	if len(scorer) > 0 {
		cfg.Scorer = scorer[0]
	}
	fresh := New(cfg)
	docs := slices.Collect(maps.Values(live))
	slices.SortFunc(docs, func(a, b Doc) int { return strings.Compare(a.Name, b.Name) })
	r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	for _, d := range docs {
		fresh.Upsert(d)
	}
	return fresh
}

func checkSameAsFresh(t *testing.T, label string, ix, fresh *Index, live map[string]Doc) {
	t.Helper()
	deferred := 0
	for _, d := range live {
		if !d.Core {
			deferred++
		}
	}
	if ix.Len() != len(live) || ix.Deferred() != deferred {
		t.Errorf("%s: Len, Deferred = %d, %d, want %d, %d", label, ix.Len(), ix.Deferred(), len(live), deferred)
	}
	for _, q := range invariantQueries {
		for _, opt := range invariantOptions {
			got, gerr := ix.Search(q, opt)
			want, werr := fresh.Search(q, opt)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%s: Search(%q) error = %v, want %v", label, q, gerr, werr)
			}
			if msg := diffResults(got, want); msg != "" {
				t.Errorf("%s: Search(%q, %+v): %s", label, q, opt, msg)
			}
		}
	}
}

func TestInvariantMutatedEqualsFresh(t *testing.T) {
	seeds := 50
	if testing.Short() {
		seeds = 5
	}
	for _, scorer := range []Scorer{ScorerBM25F, ScorerCosine} {
		for _, shards := range []int{1, 2, 3, 7, 40} {
			for seed := range uint64(seeds) {
				r := rand.New(rand.NewPCG(seed, uint64(shards)))
				ix := New(Config{Shards: shards, Scorer: scorer})
				live := mutate(r, ix, 300+r.IntN(300))
				checkSameAsFresh(t, fmt.Sprintf("%v shards=%d seed=%d", scorer, shards, seed), ix, freshIndex(r, live, scorer), live)
				if t.Failed() {
					return
				}
			}
		}
	}
}

// TestInvariantReshard: an index of the default shard count that splits
// and merges again as documents come and go answers every search as a
// fresh one-shard index of the same documents does.
func TestInvariantReshard(t *testing.T) {
	for _, scorer := range []Scorer{ScorerBM25F, ScorerCosine} {
		r := rand.New(rand.NewPCG(1, uint64(scorer)))
		ix := New(Config{Scorer: scorer})
		ix.splitTo, ix.splitFrom = 3, 60
		live := make(map[string]Doc)
		var seen []int // shard counts after each step
		check := func(step string) {
			t.Helper()
			seen = append(seen, len(ix.shards))
			checkSameAsFresh(t, fmt.Sprintf("%v %s (%d shards)", scorer, step, len(ix.shards)), ix, freshIndex(r, live, scorer), live)
		}
		for i := range 80 {
			d := randomDoc(r, fmt.Sprintf("extra_%d", i))
			ix.Upsert(d)
			live[d.Name] = d
		}
		check("after 80 new documents")
		for name, d := range mutate(r, ix, 300) {
			live[name] = d
		}
		for name := range live { // mutate's removals of pool names
			if !strings.HasPrefix(name, "extra_") && ix.byName(name) == nil {
				delete(live, name)
			}
		}
		check("after mutations")
		for name := range live {
			if len(live) < 25 {
				break
			}
			ix.Remove(name)
			delete(live, name)
		}
		check("after removals")
		if want := []int{3, 3, 1}; !slices.Equal(seen, want) {
			t.Errorf("%v: shard counts after each step %v, want %v", scorer, seen, want)
		}
	}
}

// Above parallelMin deferred documents the shards are scored in parallel.
func TestInvariantParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("large index")
	}
	r := rand.New(rand.NewPCG(7, 7))
	ix := New(Config{Shards: 4})
	live := make(map[string]Doc)
	for i := range parallelMin + 500 {
		d := randomDoc(r, fmt.Sprintf("%s_r%d", poolNames[i%len(poolNames)], i))
		d.Core = false
		ix.Upsert(d)
		live[d.Name] = d
	}
	for i := range 300 { // replacements and removals
		name := fmt.Sprintf("%s_r%d", poolNames[i%len(poolNames)], r.IntN(parallelMin))
		if i%3 == 0 {
			ix.Remove(name)
			delete(live, name)
			continue
		}
		d := randomDoc(r, name)
		ix.Upsert(d)
		live[name] = d
	}
	if ix.Deferred() < parallelMin {
		t.Fatalf("Deferred() = %d, want at least %d", ix.Deferred(), parallelMin)
	}
	checkSameAsFresh(t, "parallel", ix, freshIndex(r, live), live)
}

func FuzzInvariant(f *testing.F) {
	f.Add([]byte{3, 0, 1, 2, 0, 2, 9, 1, 3, 4, 2, 1, 0, 0, 0})
	f.Add([]byte{7, 0, 0, 5, 0, 1, 5, 3, 0, 7, 0, 2, 1, 1, 2, 3, 3, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 || len(data) > 3*200 {
			return
		}
		shards := 1 + int(data[0]%7)
		ix := New(Config{Shards: shards})
		live := make(map[string]Doc)
		for ops := data[1:]; len(ops) >= 3; ops = ops[3:] {
			name := poolNames[int(ops[1])%len(poolNames)]
			r := rand.New(rand.NewPCG(uint64(ops[2]), uint64(ops[1])))
			switch ops[0] % 4 {
			case 0, 1:
				d := randomDoc(r, name)
				ix.Upsert(d)
				live[name] = d
			case 2:
				d, ok := live[name]
				if !ok {
					d = randomDoc(r, name)
				}
				d.Core = !d.Core
				ix.Upsert(d)
				live[name] = d
			case 3:
				ix.Remove(name)
				delete(live, name)
			}
		}
		r := rand.New(rand.NewPCG(uint64(len(data)), 1))
		checkSameAsFresh(t, fmt.Sprintf("shards=%d", shards), ix, freshIndex(r, live), live)
	})
}

// checkHitOrder reports whether the ranked hits are by score descending, then
// name ascending, after the exact ones.
func checkHitOrder(hits []Hit) string {
	ranked := false
	for i, h := range hits {
		if h.Match != MatchRanked {
			if ranked {
				return fmt.Sprintf("hit %d (%s) is not ranked but follows ranked hits", i, h.Name)
			}
			continue
		}
		ranked = true
		if i > 0 && hits[i-1].Match == MatchRanked && compareHits(hits[i-1], h) >= 0 {
			return fmt.Sprintf("hits %d, %d = %+v, %+v, out of order", i-1, i, hits[i-1], h)
		}
	}
	return ""
}

func TestConcurrentSearchAndUpdate(t *testing.T) {
	t.Run("3 shards", func(t *testing.T) { concurrentSearchAndUpdate(t, New(Config{Shards: 3}), false) })
	t.Run("split and merged", func(t *testing.T) {
		// The writers fill the pool and empty it in turn, so the
		// index splits and merges while searches run.
		ix := New(Config{})
		ix.splitTo, ix.splitFrom = 3, len(poolNames)/2
		if n := concurrentSearchAndUpdate(t, ix, true); n < 4 {
			t.Errorf("the shard count changed %d times, want the index split and merged at least twice", n)
		}
	})
}

// concurrentSearchAndUpdate runs searches beside two writers and returns
// how many times a writer saw the shard count change. With sweep the
// writers alternate between mostly adding and mostly removing.
func concurrentSearchAndUpdate(t *testing.T, ix *Index, sweep bool) int {
	var changes atomic.Int32
	names := make(map[string]bool)
	for _, n := range poolNames {
		names[n] = true
	}
	iters := 400
	if testing.Short() {
		iters = 100
	}
	var stop atomic.Bool
	var writers, readers sync.WaitGroup
	for w := range 2 {
		writers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 99))
			shards := ix.shardCount()
			for i := range iters * 5 {
				name := poolNames[r.IntN(len(poolNames))]
				remove := r.IntN(3) == 0
				if sweep {
					remove = r.IntN(10) < 1+8*(i/150%2)
				}
				if remove {
					ix.Remove(name)
				} else {
					ix.Upsert(randomDoc(r, name))
				}
				if n := ix.shardCount(); n != shards {
					changes.Add(1)
					shards = n
				}
			}
		})
	}
	errs := make(chan string, 8)
	for g := range 8 {
		readers.Go(func() {
			for i := 0; !stop.Load(); i++ {
				q := invariantQueries[(g*7+i)%len(invariantQueries)]
				res, err := ix.Search(q, Options{Max: 10})
				if err != nil {
					errs <- fmt.Sprintf("Search(%q): %v", q, err)
					return
				}
				for _, h := range res.Hits {
					if !names[h.Name] {
						errs <- fmt.Sprintf("Search(%q) = %v, has unknown name %q", q, hitNames(res.Hits), h.Name)
						return
					}
				}
				for _, n := range append(res.AlreadyLoaded, res.NotFound...) {
					if !names[n] && !strings.Contains(q, n) {
						errs <- fmt.Sprintf("Search(%q): unknown name %q", q, n)
						return
					}
				}
				if msg := checkHitOrder(res.Hits); msg != "" {
					errs <- fmt.Sprintf("Search(%q): %s", q, msg)
					return
				}
			}
		})
	}
	writers.Wait()
	stop.Store(true)
	readers.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	return int(changes.Load())
}

// A search sees a document before or after an update, never half of it.
func TestSnapshotAtomicity(t *testing.T) {
	ix := New(Config{Shards: 3})
	// Fillers so that alpha and beta have a positive idf.
	fill := []Doc{
		{Name: "Filler1", Description: "alpha release notes"},
		{Name: "Filler2", Description: "beta channel builds"},
		{Name: "Filler3", Description: "gamma rays"},
		{Name: "Filler4", Description: "delta compression"},
	}
	for _, d := range fill {
		ix.Upsert(d)
	}
	a := Doc{Name: "Flip", Description: "alpha alpha tool for the alpha version", SearchHint: "alpha", Params: "alpha_mode\n"}
	b := Doc{Name: "Flip", Description: "beta tool with beta support", SearchHint: "beta testing"}
	queries := []string{"alpha beta", "alpha", "beta", "flip alpha"}
	want := make(map[string][2]Hit)
	for _, q := range queries {
		var pair [2]Hit
		for i, d := range []Doc{a, b} {
			ix.Upsert(d)
			res, _ := ix.Search(q, Options{Max: 10})
			pair[i], _ = findHit(res.Hits, "Flip")
		}
		if pair[0] == pair[1] {
			t.Fatalf("Search(%q): Flip hit %+v for both versions, want a difference", q, pair[0])
		}
		want[q] = pair
	}
	iters := 3000
	if testing.Short() {
		iters = 500
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				q := queries[(g+i)%len(queries)]
				res, _ := ix.Search(q, Options{Max: 10})
				h, _ := findHit(res.Hits, "Flip")
				if p := want[q]; h != p[0] && h != p[1] {
					errs <- fmt.Sprintf("Search(%q): Flip = %+v, want %+v or %+v", q, h, p[0], p[1])
					return
				}
				if ix.Len() != len(fill)+1 {
					errs <- fmt.Sprintf("Len() = %d, want %d", ix.Len(), len(fill)+1)
					return
				}
			}
		})
	}
	for i := range iters {
		if i%2 == 0 {
			ix.Upsert(b)
		} else {
			ix.Upsert(a)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// shardCount returns the number of shards, under the read lock.
func (ix *Index) shardCount() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.shards)
}
