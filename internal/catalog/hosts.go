package catalog

import (
	"fmt"
	"strings"
	"time"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// owner is the host principal a name or a host id belongs to, and the
// host sessions using it. When the last session goes the owner stays for
// Config.Hold from left.
type owner struct {
	principal string
	sessions  map[string]struct{}
	left      time.Time
	hold      time.Duration
}

func (o *owner) until() time.Time { return o.left.Add(o.hold) }

// owner returns the owner of name in t, nil when none or its hold ended.
// The caller holds c.mu.
func (t *tenant) owner(name string, now time.Time) *owner {
	return live(t.names[name], now)
}

func live(o *owner, now time.Time) *owner {
	if o == nil || len(o.sessions) == 0 && !now.Before(o.until()) {
		return nil
	}
	return o
}

// takenBy reports whether o belongs to a principal other than p.
func takenBy(o *owner, p *auth.Principal) bool { return o != nil && o.principal != p.Name }

// claim adds session to the owner at key in m, making it p's.
func (c *Catalog) claim(m map[string]*owner, key string, p *auth.Principal, session string) {
	o := m[key]
	if o == nil || o.principal != p.Name {
		o = &owner{principal: p.Name, sessions: make(map[string]struct{}), hold: c.cfg.Hold}
		m[key] = o
	}
	o.sessions[session] = struct{}{}
}

// release removes session from the owner at key in m; when it was the
// last, the hold starts.
func release(m map[string]*owner, key, session string, now time.Time) (last bool) {
	o := m[key]
	if o == nil {
		return false
	}
	if _, ok := o.sessions[session]; !ok {
		return false
	}
	delete(o.sessions, session)
	if len(o.sessions) == 0 {
		o.left = now
		return true
	}
	return false
}

// sweepLocked forgets the owners whose hold ended, at most once per hold.
func (c *Catalog) sweepLocked(t *tenant, now time.Time) {
	if now.Sub(t.lastSweep) < c.cfg.Hold {
		return
	}
	t.lastSweep = now
	for _, m := range []map[string]*owner{t.names, t.hostIDs} {
		for k, o := range m {
			if live(o, now) == nil {
				delete(m, k)
			}
		}
	}
}

// BindHost binds host id hostID, in p's tenant, to p for session: a host
// id belongs to the principal whose host first used it, while any of its
// sessions lives and for Config.Hold after. Another principal's use is a
// *PermissionError (field hello.host_id).
func (c *Catalog) BindHost(p *auth.Principal, hostID, session string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tenantLocked(p.Tenant)
	now := c.cfg.Now()
	c.sweepLocked(t, now)
	if o := live(t.hostIDs[hostID], now); takenBy(o, p) {
		return &PermissionError{Field: "hello.host_id", Reason: fmt.Sprintf("host id %q belongs to another principal; choose another host id", hostID)}
	}
	c.claim(t.hostIDs, hostID, p, session)
	return nil
}

// Served is what Serve did with one tool a host offered: Rejected says why
// it was refused ("" when accepted).
type Served struct {
	Name     string
	Outcome  tooldexv1.RegisterOutcome
	Rejected string
}

// Serve registers the tools a host session of principal p offers, in p's
// tenant; entries[i] is nil for a tool that failed validation (its result
// is left for the caller to fill). A tool is refused when p may not serve
// its name (auth.Principal.MayServe), when the name belongs to another
// principal (served by its hosts, or within its hold), when the tenant is
// full, or when another registrant holds the name with a different
// definition (a catalog file's definition yields, and comes back when the
// last host leaves). An accepted name is the principal's, served by the
// session. It returns the names served, as stored.
func (c *Catalog) Serve(p *auth.Principal, session string, entries []*Entry) ([]Served, []string) {
	out := make([]Served, len(entries))
	var served []string
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tenantLocked(p.Tenant)
	now := c.cfg.Now()
	c.sweepLocked(t, now)
	for i, e := range entries {
		if e == nil {
			continue
		}
		name := e.Name()
		res := &out[i]
		res.Name = name
		if !p.MayServe(name) {
			res.Rejected = fmt.Sprintf("not allowed: principal %q may serve only tools matching %s in tenant %q", p.Name, patterns(p), p.Tenant)
			continue
		}
		o := t.owner(name, now)
		if takenBy(o, p) {
			if len(o.sessions) > 0 {
				res.Rejected = fmt.Sprintf("name taken: %q is served by another principal's hosts; replicas must be hosts of the same principal", name)
			} else {
				res.Rejected = fmt.Sprintf("name held: %q belongs to another principal, whose host left; it keeps the name until %s", name, o.until().UTC().Format(time.RFC3339))
			}
			continue
		}
		old := t.tools[name]
		mine := o != nil && (len(o.sessions) == 0 || len(o.sessions) == 1 && has(o.sessions, session))
		switch {
		case old == nil:
			if len(t.tools) >= c.cfg.MaxTenantTools {
				res.Rejected = fmt.Sprintf("tenant %q is full: it holds %d tools, its limit (MaxTenantTools)", p.Tenant, len(t.tools))
				continue
			}
			res.Outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED
		case old.SameDefinition(e):
			res.Outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED
			e = old
		case old.HostOwned() && (o == nil || mine):
			res.Outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED
		case old.Preloaded() && (o == nil || len(o.sessions) == 0):
			t.displaced[name] = old
			res.Outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED
		default:
			res.Rejected = fmt.Sprintf("name taken: %q is registered by %s with a different definition", name, DescribeSource(old.Source()))
			continue
		}
		if e != old {
			c.putLocked(t, e)
		}
		c.claim(t.names, name, p, session)
		served = append(served, e.Name())
	}
	return out, served
}

func has(m map[string]struct{}, k string) bool {
	_, ok := m[k]
	return ok
}

func patterns(p *auth.Principal) string {
	if len(p.HostPatterns) == 0 || !p.Has(auth.ScopeHost) {
		return "none (no host scope or no host patterns)"
	}
	return strings.Join(p.HostPatterns, ", ")
}

// Release stops session, of a host in tenant, serving names. A tool a host
// registered leaves the catalog with its last host (the catalog file's
// definition it displaced, if any, comes back); the name stays its
// principal's for Config.Hold. It returns how many tools left.
func (c *Catalog) Release(tenant, session string, names []string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tenants[tenant]
	if t == nil {
		return 0
	}
	return c.releaseLocked(t, session, names)
}

func (c *Catalog) releaseLocked(t *tenant, session string, names []string) int {
	now := c.cfg.Now()
	removed := 0
	for _, name := range names {
		if !release(t.names, name, session, now) {
			continue
		}
		e := t.tools[name]
		if e == nil || !e.HostOwned() {
			continue
		}
		if d := t.displaced[name]; d != nil {
			delete(t.displaced, name)
			c.putLocked(t, d)
			continue
		}
		c.dropLocked(t, name)
		removed++
	}
	return removed
}

// Leave ends session of host hostID in tenant: it stops serving every name
// (see Release) and its hold on the host id starts when it was the id's
// last session. It returns how many tools left.
func (c *Catalog) Leave(tenant, hostID, session string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tenants[tenant]
	if t == nil {
		return 0
	}
	var names []string
	for name, o := range t.names {
		if has(o.sessions, session) {
			names = append(names, name)
		}
	}
	release(t.hostIDs, hostID, session, c.cfg.Now())
	return c.releaseLocked(t, session, names)
}

// DescribeSource names who registered a tool, for messages.
func DescribeSource(src *tooldexv1.ToolSource) string {
	switch src.GetOrigin() {
	case tooldexv1.Origin_ORIGIN_HOST:
		return "tool host " + src.GetId()
	case tooldexv1.Origin_ORIGIN_CATALOG:
		return "the catalog " + src.GetId()
	case tooldexv1.Origin_ORIGIN_MCP:
		return "MCP server " + src.GetId()
	}
	if src.GetId() != "" {
		return "frontend " + src.GetId()
	}
	return "a frontend"
}
