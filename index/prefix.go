package index

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Prefix queries (mcp__server…) list the deferred tools whose names start
// with the prefix, in any case. The index keeps those tools by server so
// that a listing reads the matching servers' tools rather than every
// tool's name (at 100k tools a scan took 24 ms, 400 ordinary searches).

// serverKey returns the lower-case server prefix of an MCP tool name: the
// lower-cased name up to the "__" that ends its server part ("mcp__github"
// for mcp__GitHub__create_issue), or all of it when it has none; ok is
// false for a name that does not start with mcp__ in any case.
func serverKey(name string) (key string, ok bool) {
	const pre = "mcp__"
	// No other rune lower-cases to m, c, p or _, so the test needs no
	// lowering.
	if len(name) < len(pre) || !strings.EqualFold(name[:len(pre)], pre) {
		return "", false
	}
	low := strings.ToLower(name)
	if i := strings.Index(low[len(pre):], "__"); i >= 0 {
		low = low[:len(pre)+i]
	}
	return low, true
}

// addServer files deferred document d under its server, if it has one.
func (ix *Index) addServer(d *doc) {
	if k, ok := serverKey(d.name); ok {
		ix.servers[k] = append(ix.servers[k], d)
	}
}

// removeServer takes deferred document d out of its server's list, whose
// order does not matter: listings sort by name.
func (ix *Index) removeServer(d *doc) {
	k, ok := serverKey(d.name)
	if !ok {
		return
	}
	list := ix.servers[k]
	i := slices.Index(list, d)
	if i < 0 {
		return
	}
	last := len(list) - 1
	list[i] = list[last]
	list[last] = nil
	if last == 0 {
		delete(ix.servers, k)
		return
	}
	ix.servers[k] = list[:last]
}

// runPrefix lists the deferred documents whose lower-cased names start
// with prefix (lower case, starting with mcp__) and that allow lets
// through: the first n by name. It reports whether any matched. A name's
// server key is its lower-cased name cut at the first "__" after mcp__,
// so a prefix that has such a "__" is matched by the one server key it
// starts with; one that has not, by the keys it is a prefix of, or that
// are a prefix of it (mcp__github_ and mcp__github__…).
func (ix *Index) runPrefix(prefix string, n int, allow func(string) bool, res *Result) bool {
	var top []string // the first n matching names, sorted
	found := false
	collect := func(docs []*doc) {
		for _, d := range docs {
			if !hasPrefixLower(d.name, prefix) || !allow(d.name) {
				continue
			}
			found = true
			i, _ := slices.BinarySearch(top, d.name)
			if i < n {
				if len(top) == n {
					top = top[:n-1]
				}
				top = slices.Insert(top, i, d.name)
			}
		}
	}
	if key, ok := serverKey(prefix); ok && len(key) < len(prefix) {
		collect(ix.servers[key])
	} else {
		for k, docs := range ix.servers {
			if strings.HasPrefix(k, prefix) || strings.HasPrefix(prefix, k) {
				collect(docs)
			}
		}
	}
	for _, name := range top {
		res.Hits = append(res.Hits, Hit{Name: name, Score: 1, Keyword: 1, Match: MatchPrefix})
	}
	return found
}

// hasPrefixLower reports whether name, lower-cased, starts with prefix
// (lower case), lowering only what it must: lower-casing maps each rune
// alone, and an ASCII one to one byte.
func hasPrefixLower(name, prefix string) bool {
	if len(name) < len(prefix) {
		return strings.HasPrefix(strings.ToLower(name), prefix) // lowering can lengthen
	}
	for i := 0; i < len(prefix); i++ {
		c := name[i]
		if c >= utf8.RuneSelf {
			return strings.HasPrefix(strings.ToLower(name), prefix)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
