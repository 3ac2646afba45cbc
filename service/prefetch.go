package service

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/textcut"
)

// Prefetch limits and defaults.
const (
	prefetchLimit     = 3
	prefetchMaxLimit  = 20
	prefetchMinScore  = 0.15
	prefetchDescChars = 100
	// A session remembers at most sessionNames names; past that the oldest
	// are forgotten down to sessionKeep (the reference's 500 → 400).
	sessionNames = 500
	sessionKeep  = 400
	// At most maxSessions sessions are kept; the least recently used goes
	// first. A session idle for sessionTTL is forgotten.
	maxSessions = 10000
	sessionTTL  = 30 * time.Minute
	// contextChars bounds how much recent context joins a short message.
	contextChars = 300
	// Bounds on a request: longer session ids, more or longer loaded names
	// and more context entries are INVALID_ARGUMENT. A long message is
	// not: only its first messageScan bytes are read (the query is cut to
	// index.MaxQueryBytes anyway).
	MaxPrefetchSessionID = 256
	MaxPrefetchLoaded    = 1000
	MaxPrefetchName      = 256
	MaxPrefetchContext   = 1000
	messageScan          = 4 * index.MaxQueryBytes
	// sessionBytes bounds the memory all sessions keep (names and their
	// bookkeeping, nameCost bytes each besides the name); past it the
	// least recently used sessions are forgotten.
	sessionBytes = 32 << 20
	nameCost     = 64
)

// sessions remembers, per frontend session, the tools already recommended
// or loaded, with bounded memory: names per session are capped, sessions
// are evicted least-recently-used beyond maxSessions or the byte limit,
// and expire after sessionTTL. Expiry is lazy (checked on use), so no
// goroutine is needed.
type sessions struct {
	mu    sync.Mutex
	now   func() time.Time
	lru   *simplelru.LRU[string, *session]
	bytes int // kept by every session: id and names, with nameCost each
	limit int // of bytes; 0 means sessionBytes
}

type session struct {
	id       string
	lastUsed time.Time // guarded by sessions.mu
	bytes    int       // guarded by sessions.mu: what this session adds to sessions.bytes

	mu    sync.Mutex
	seen  map[string]bool
	order []string // insertion order of seen
}

func newSessions(now func() time.Time) *sessions {
	ss := &sessions{now: now}
	// Every removal, the LRU's own past maxSessions included, goes
	// through the callback, so the byte count stays right.
	ss.lru, _ = simplelru.NewLRU(maxSessions, func(_ string, s *session) { ss.bytes -= s.bytes })
	return ss
}

// get returns the session (nil for an empty id: a session of its own that
// remembers nothing), with loaded added to what it has seen.
func (ss *sessions) get(id string, loaded []string) *session {
	if id == "" {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.touch(id)
	ss.grow(s, s.add(loaded...))
	return s
}

// record adds recommended names to the session.
func (ss *sessions) record(id string, names []string) {
	if id == "" || len(names) == 0 {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.touch(id)
	ss.grow(s, s.add(names...))
}

// grow accounts for delta bytes more kept by s, forgetting the least
// recently used other sessions while all keep more than the limit. s is
// the most recently used (touch made it so). The caller holds ss.mu.
func (ss *sessions) grow(s *session, delta int) {
	s.bytes += delta
	ss.bytes += delta
	limit := ss.limit
	if limit == 0 {
		limit = sessionBytes
	}
	for ss.bytes > limit {
		if _, old, ok := ss.lru.GetOldest(); !ok || old == s {
			return
		}
		ss.lru.RemoveOldest()
	}
}

// has reports whether the session has seen name. A nil session has seen
// nothing.
func (s *session) has(name string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[name]
}

// touch returns the session, creating it, marking it used, and evicting
// expired sessions (from the least recently used end: the LRU's order is
// that of lastUsed). The caller holds ss.mu.
func (ss *sessions) touch(id string) *session {
	now := ss.now()
	for {
		_, old, ok := ss.lru.GetOldest()
		if !ok || now.Sub(old.lastUsed) < sessionTTL {
			break
		}
		ss.lru.RemoveOldest()
	}
	if s, ok := ss.lru.Get(id); ok {
		s.lastUsed = now
		return s
	}
	s := &session{id: id, lastUsed: now, seen: make(map[string]bool)}
	ss.lru.Add(id, s) // past maxSessions, forgets the least recently used
	ss.grow(s, len(id)+nameCost)
	return s
}

// add adds names to what s has seen and returns how many bytes more s
// keeps (negative when it forgot more than it learned).
func (s *session) add(names ...string) (delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if s.seen[n] {
			continue
		}
		n = strings.Clone(n) // not the request's buffer
		s.seen[n] = true
		s.order = append(s.order, n)
		delta += len(n) + nameCost
	}
	if len(s.order) > sessionNames {
		drop := len(s.order) - sessionKeep
		for _, n := range s.order[:drop] {
			delete(s.seen, n)
			delta -= len(n) + nameCost
		}
		s.order = append(s.order[:0:0], s.order[drop:]...)
	}
	return delta
}

// len returns the number of sessions kept.
func (ss *sessions) len() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.lru.Len()
}

// Prefetch recommends tools for a user's message. It is cheap enough to
// call on every pause in typing; frontends fire it without waiting and use
// the answer only if it arrives before they build the model request.
func (s *Server) Prefetch(ctx context.Context, req *tooldexv1.PrefetchRequest) (*tooldexv1.PrefetchResponse, error) {
	resp, err := s.prefetch(ctx, req)
	if err != nil {
		return nil, s.toStatus(err)
	}
	fullResults(resp.Results)
	return resp, nil
}

// prefetch is Prefetch with the catalog's shared tools: what the gRPC
// handler registered by RegisterDiscoveryService sends.
func (s *Server) prefetch(ctx context.Context, req *tooldexv1.PrefetchRequest) (*tooldexv1.PrefetchResponse, error) {
	ve := &ValidationError{}
	limit := int(req.GetLimit())
	switch {
	case limit < 0:
		ve.add("limit", "is %d; use 0 for the default of %d", limit, prefetchLimit)
	case limit == 0:
		limit = prefetchLimit
	case limit > prefetchMaxLimit:
		limit = prefetchMaxLimit
	}
	minScore := req.GetMinScore()
	switch {
	case minScore < 0 || minScore > 1:
		ve.add("min_score", "is %v; it must be in [0, 1] (0 means %.2f)", minScore, prefetchMinScore)
	case minScore == 0:
		minScore = prefetchMinScore
	}
	checkView(ve, req.GetSchemaView())
	if n := len(req.GetSessionId()); n > MaxPrefetchSessionID {
		ve.add("session_id", "is %d bytes, at most %d", n, MaxPrefetchSessionID)
	}
	if n := len(req.GetContext()); n > MaxPrefetchContext {
		ve.add("context", "has %d entries, at most %d (the most recent first)", n, MaxPrefetchContext)
	}
	if n := len(req.GetLoaded()); n > MaxPrefetchLoaded {
		ve.add("loaded", "has %d names, at most %d", n, MaxPrefetchLoaded)
	} else {
		for i, name := range req.GetLoaded() {
			if len(name) > MaxPrefetchName {
				ve.add(fmt.Sprintf("loaded[%d]", i), "is %d bytes, at most %d", len(name), MaxPrefetchName)
				break
			}
		}
	}
	if err := ve.err(); err != nil {
		return nil, err
	}
	sub, err := subject(ctx, req.GetCaller())
	if err != nil {
		return nil, err
	}
	text := prefetchQuery(req.GetMessage(), req.GetContext())
	resp := &tooldexv1.PrefetchResponse{}
	if text == "" {
		return resp, nil
	}
	// Sessions are per subject: another principal naming the same session
	// id neither reads nor changes this one's memory.
	key := sessionKey(sub, req.GetSessionId())
	sess := s.sessions.get(key, req.GetLoaded())
	loaded := make(map[string]bool, len(req.GetLoaded()))
	for _, n := range req.GetLoaded() {
		loaded[n] = true
	}
	visible := s.visible(sub)
	allow := func(name string) bool {
		return !loaded[name] && !sess.has(name) && (visible == nil || visible(name))
	}
	tenant := principalOf(ctx).Tenant
	res := s.cat.Index(tenant).Run(index.Query{Kind: index.KindKeyword, Text: text}, index.Options{Max: limit, Allow: allow})
	hits := res.Hits[:0]
	for _, h := range res.Hits {
		if h.Score >= minScore {
			hits = append(hits, h)
		}
	}
	var entries []*catalog.Entry
	resp.Results, entries = s.results(tenant, hits, req.GetSchemaView())
	names := make([]string, len(resp.Results))
	for i, r := range resp.Results {
		names[i] = r.GetTool().GetName()
	}
	s.sessions.record(key, names)
	resp.Text = renderPrefetch(resp.Results, entries)
	return resp, nil
}

// prefetchQuery builds the query from the latest user message. A short
// message ("yes, do that") borrows words from the recent context, most
// recent first. "+" at the start of a word means nothing in a message, so
// it is dropped, and the text is cut (at a rune boundary) to the query
// limit: prefetch is best effort, never an error for a long message.
func prefetchQuery(message string, context []string) string {
	message, _ = textcut.Prefix(message, messageScan)
	text := strings.TrimSpace(message)
	if len(strings.Fields(text)) < 3 {
		var b strings.Builder
		b.WriteString(text)
		for _, c := range context {
			if b.Len() >= contextChars {
				break
			}
			b.WriteByte(' ')
			b.WriteString(c[:min(len(c), contextChars)])
		}
		text = b.String()
	}
	words := strings.Fields(text)
	for i, w := range words {
		words[i] = strings.TrimLeft(w, "+")
	}
	text = strings.Join(words, " ")
	text, _ = textcut.Prefix(text, index.MaxQueryBytes)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, " ")
	}
	return strings.TrimSpace(text)
}

// renderPrefetch is the system reminder a frontend may add for the model.
func renderPrefetch(results []*tooldexv1.SearchResult, entries []*catalog.Entry) string {
	if len(results) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("The following tools were discovered as relevant to your task. Use ExecuteTool to invoke any of them by name:\n")
	for i, r := range results {
		d := entries[i].OneLine()
		if utf8.RuneCountInString(d) > prefetchDescChars {
			d = string([]rune(d)[:prefetchDescChars]) + "…"
		}
		fmt.Fprintf(&b, "- %s: %s\n", r.GetTool().GetName(), d)
	}
	return b.String()
}
