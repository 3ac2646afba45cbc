package index

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// scanPrefix is runPrefix by reading every deferred document's name.
func scanPrefix(ix *Index, prefix string, allow func(string) bool) []string {
	var names []string
	for _, sh := range ix.shards {
		for _, d := range sh.docs {
			if d != nil && strings.HasPrefix(strings.ToLower(d.name), prefix) && allow(d.name) {
				names = append(names, d.name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// Prefix listings read the matching servers' tools only, and list what a
// scan of every tool's name lists, through additions, replacements (with
// and without new aliases), removals and reshards.
func TestPrefixMatchesScan(t *testing.T) {
	names := []string{
		"mcp__github__create_issue", "mcp__GitHub__list_prs", "mcp__github_x", "mcp__githubx__y",
		"mcp__git__log", "mcp__gitlab__merge", "mcp____odd", "mcp_____odder", "mcp__solo",
		"MCP__Up__Down", "mcp__up__low", "mcp__a__b__c", "mcp__a_", "notmcp__github__x", "Read",
		"mcp__Ünï__x", "mcp__İx__y", "mcp__ix__z", "MCP__ÜNÏ__Y",
	}
	prefixes := []string{
		"mcp__g", "mcp__git", "mcp__github", "mcp__github_", "mcp__github__", "mcp__github__c",
		"mcp__githubx", "mcp___", "mcp____", "mcp_____", "mcp__solo", "mcp__solo__", "mcp__up",
		"mcp__up__", "mcp__up__d", "mcp__a", "mcp__a_", "mcp__a__", "mcp__a__b__", "mcp__zzz",
		"mcp__ü", "mcp__ünï__", "mcp__i", "mcp__i̇", "mcp__i̇x__",
	}
	for _, shards := range []int{1, 3} {
		r := rand.New(rand.NewPCG(uint64(shards), 7))
		ix := New(Config{Shards: shards})
		for step := range 400 {
			name := names[r.IntN(len(names))]
			switch r.IntN(5) {
			case 0:
				ix.Remove(name)
			case 1:
				ix.Upsert(Doc{Name: name, Description: "v", Aliases: []string{fmt.Sprintf("alias_%d", step)}})
			case 2:
				ix.Upsert(Doc{Name: name, Description: "core", Core: true})
			default:
				ix.Upsert(Doc{Name: name, Description: fmt.Sprintf("version %d", step)})
			}
			allow := func(n string) bool { return len(n)%3 != 0 }
			for _, p := range prefixes {
				for _, a := range []func(string) bool{func(string) bool { return true }, allow} {
					all := scanPrefix(ix, p, a)
					for _, n := range []int{MaxResults, 2} {
						want := all[:min(n, len(all))]
						var res Result
						ix.mu.RLock()
						found := ix.runPrefix(p, n, a, &res)
						ix.mu.RUnlock()
						var got []string
						for _, h := range res.Hits {
							got = append(got, h.Name)
						}
						if found != (len(all) > 0) || !slices.Equal(got, want) {
							t.Fatalf("shards=%d step=%d: runPrefix(%q, %d) = %v (%v), want %v", shards, step, p, n, got, found, want)
						}
					}
				}
			}
		}
	}
}

// TestPrefixListingCost reports what the server lists save
// (TOOLDEX_PREFIX_COST=1 go test -run PrefixListingCost -v): prefix
// listings over 100k tools of 1,000 MCP servers, through the lists and by
// the scan of every name they replaced, alternated. It only reports.
func TestPrefixListingCost(t *testing.T) {
	if os.Getenv("TOOLDEX_PREFIX_COST") == "" {
		t.Skip("set TOOLDEX_PREFIX_COST=1 to build 100k tools and report")
	}
	ix := New(Config{})
	for s := range 1000 {
		for k := range 100 {
			ix.Upsert(Doc{Name: fmt.Sprintf("mcp__Server%03d__tool_%02d", s, k), Description: "A tool."})
		}
	}
	all := func(string) bool { return true }
	for _, p := range []string{"mcp__server042__", "mcp__server042", "mcp__server04", "mcp__s"} {
		var lists, scan []time.Duration
		for range 5 {
			start := time.Now()
			var res Result
			ix.mu.RLock()
			ix.runPrefix(p, DefaultMax, all, &res)
			ix.mu.RUnlock()
			lists = append(lists, time.Since(start))
			start = time.Now()
			ix.mu.RLock()
			scanPrefix(ix, p, all)
			ix.mu.RUnlock()
			scan = append(scan, time.Since(start))
		}
		t.Logf("%q: server lists %v, scan %v", p, median(lists), median(scan))
	}
}
