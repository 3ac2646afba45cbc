package catalog

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
)

// Defaults for the zero fields of a Config.
const (
	// DefaultMaxTenantTools caps the tools a tenant holds of its own.
	DefaultMaxTenantTools = 100_000
	// DefaultHold is how long a name (or host id) stays its principal's
	// after its last host left: long enough for any reconnect with
	// backoff, short enough that a retired host frees its names the same
	// day.
	DefaultHold = 10 * time.Minute
)

// Config configures a Catalog. The zero value is usable.
type Config struct {
	// Index configures each tenant's search index.
	Index index.Config
	// MaxTenantTools caps the tools of a tenant's own (the shared tenant's
	// included); 0 means DefaultMaxTenantTools.
	MaxTenantTools int
	// Hold is how long a name and a host id stay bound to their principal
	// after its last host session serving them ended; 0 means DefaultHold.
	Hold time.Duration
	// Now tells the time of holds; nil means time.Now.
	Now func() time.Time
	// Changed, when set, is called after every change to a tenant's own
	// tools, with the catalog's lock held: e is the new entry (doc what
	// the index holds of it), nil when the tool left. It must not call the
	// Catalog.
	Changed func(tenant, name string, e *Entry, doc index.Doc)
}

// Catalog is the tool definitions of every tenant. Create it with New.
type Catalog struct {
	cfg Config

	// mu guards tenants and everything in them, and orders every change
	// with its index update.
	mu      sync.RWMutex
	tenants map[string]*tenant
	shared  *tenant // tenants[auth.SharedTenant]
}

// tenant is one tenant's tools and what it sees.
type tenant struct {
	name  string
	tools map[string]*Entry // its own
	// ix indexes what the tenant sees: its own tools and the shared ones
	// it does not shadow (the shared tenant: its own). nil until the
	// tenant is first used; the default tenant's is made at once.
	ix *index.Index
	// names are the host principals owning names (hosts.go), hostIDs those
	// owning host ids.
	names, hostIDs map[string]*owner
	// displaced holds the catalog-file definitions live hosts displaced,
	// restored when the last of them leaves.
	displaced map[string]*Entry
	lastSweep time.Time
}

// New returns an empty catalog.
func New(cfg Config) *Catalog {
	if cfg.MaxTenantTools <= 0 {
		cfg.MaxTenantTools = DefaultMaxTenantTools
	}
	if cfg.Hold <= 0 {
		cfg.Hold = DefaultHold
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Catalog{cfg: cfg, tenants: make(map[string]*tenant)}
	c.shared = c.tenantLocked(auth.SharedTenant)
	c.viewLocked(c.tenantLocked(auth.DefaultTenant))
	return c
}

// Config returns the configuration in force, defaults filled in.
func (c *Catalog) Config() Config { return c.cfg }

// tenantLocked returns the tenant named name, making it. The caller holds
// c.mu for writing.
func (c *Catalog) tenantLocked(name string) *tenant {
	t := c.tenants[name]
	if t == nil {
		t = &tenant{
			name: name, tools: make(map[string]*Entry),
			names: make(map[string]*owner), hostIDs: make(map[string]*owner),
			displaced: make(map[string]*Entry),
		}
		c.tenants[name] = t
	}
	return t
}

// viewLocked makes t's index when it has none. The caller holds c.mu for
// writing.
func (c *Catalog) viewLocked(t *tenant) *index.Index {
	if t.ix != nil {
		return t.ix
	}
	ix := index.New(c.cfg.Index)
	for _, e := range t.tools {
		put(ix, e, c.docLocked(e))
	}
	if t.name != auth.SharedTenant {
		for name, e := range c.shared.tools {
			if t.tools[name] == nil {
				put(ix, e, c.docLocked(e))
			}
		}
	}
	t.ix = ix
	return ix
}

// put indexes e as doc, or unindexes its name when it is excluded.
func put(ix *index.Index, e *Entry, doc index.Doc) {
	if e.Loading() == tooldexv1.Loading_LOADING_EXCLUDED {
		ix.Remove(e.Name())
		return
	}
	ix.Upsert(doc)
}

// docLocked returns what the index holds of e: its parameter text as
// NewEntry derived it until the entry was first stored, then derived again
// from the stored schema (a tenant's first use indexes the shared tools
// again). The caller holds c.mu for writing.
func (c *Catalog) docLocked(e *Entry) index.Doc {
	d := e.doc
	d.Params = e.paramText
	if d.Params == "" && e.hasSchema {
		d.Params = index.ParamText(e.inputSchema().AsMap())
	}
	return d
}

// Index returns the search index of what tenant sees: its own tools and
// the shared ones. It is made on the tenant's first use.
func (c *Catalog) Index(tenant string) *index.Index {
	c.mu.RLock()
	t := c.tenants[tenant]
	if t != nil && t.ix != nil {
		defer c.mu.RUnlock()
		return t.ix
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.viewLocked(c.tenantLocked(tenant))
}

// seesLocked returns the entry named name that tenant sees: its own, else
// the shared one. The caller holds c.mu.
func (c *Catalog) seesLocked(tenant, name string) *Entry {
	return c.sees(c.tenants[tenant], name)
}

// sees returns the entry named name that t (nil: a tenant never used) sees.
// The caller holds c.mu.
func (c *Catalog) sees(t *tenant, name string) *Entry {
	if t != nil {
		if e := t.tools[name]; e != nil || t == c.shared {
			return e
		}
	}
	return c.shared.tools[name]
}

// Get returns the entry named name that tenant sees (its own, else the
// shared one); nil when none.
func (c *Catalog) Get(tenant, name string) *Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.seesLocked(tenant, name)
}

// GetAll appends to dst, for each name, the entry tenant sees (nil where
// none), under one lock.
func (c *Catalog) GetAll(dst []*Entry, tenant string, names []string) []*Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t := c.tenants[tenant]
	for _, n := range names {
		dst = append(dst, c.sees(t, n))
	}
	return dst
}

// ByAlias returns the entry tenant sees that has alias (its own first);
// nil when none.
func (c *Catalog) ByAlias(tenant, alias string) *Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, tn := range []string{tenant, auth.SharedTenant} {
		t := c.tenants[tn]
		if t == nil {
			continue
		}
		for _, e := range t.tools {
			if slices.Contains(e.tool.GetAliases(), alias) && c.seesLocked(tenant, e.Name()) == e {
				return e
			}
		}
	}
	return nil
}

// List returns the entries tenant sees whose name starts with prefix and,
// unless loading is LOADING_UNSPECIFIED, loaded that way, sorted by name.
func (c *Catalog) List(tenant, prefix string, loading tooldexv1.Loading) []*Entry {
	keep := func(e *Entry) bool {
		return strings.HasPrefix(e.Name(), prefix) &&
			(loading == tooldexv1.Loading_LOADING_UNSPECIFIED || loading == e.Loading())
	}
	var out []*Entry
	c.mu.RLock()
	own := c.tenants[tenant]
	if own != nil {
		for _, e := range own.tools {
			if keep(e) {
				out = append(out, e)
			}
		}
	}
	if tenant != auth.SharedTenant {
		for name, e := range c.shared.tools {
			if (own == nil || own.tools[name] == nil) && keep(e) {
				out = append(out, e)
			}
		}
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Entry) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Len returns how many tools tenant holds of its own.
func (c *Catalog) Len(tenant string) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t := c.tenants[tenant]; t != nil {
		return len(t.tools)
	}
	return 0
}

// Registered is what Register did with one entry.
type Registered struct {
	Outcome tooldexv1.RegisterOutcome
	Loading tooldexv1.Loading
}

// Register stores a batch of entries (made by NewEntry, for tenant, names
// unique) for a frontend of principal by: all or none. A name that hosts
// serve with a different definition, or that another host principal holds
// (see the package doc), is a *ConflictError; going past MaxTenantTools a
// *LimitError. validateOnly reports the outcomes and changes nothing.
func (c *Catalog) Register(tenant, by string, entries []*Entry, validateOnly bool) ([]Registered, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tenantLocked(tenant)
	now := c.cfg.Now()
	conflicts := &ConflictError{}
	added := 0
	for i, e := range entries {
		name := e.Name()
		old := t.tools[name]
		if old == nil {
			added++
		}
		o := t.owner(name, now)
		switch {
		case o != nil && len(o.sessions) > 0 && (old == nil || !old.SameDefinition(e)):
			conflicts.Add(fmt.Sprintf("tools[%d].name", i), "%q is served by connected tool hosts with a different definition; change it there", name)
		case o != nil && len(o.sessions) == 0 && old == nil && o.principal != by:
			conflicts.Add(fmt.Sprintf("tools[%d].name", i), "%q belongs to host principal %q, whose host left at %s; it keeps the name until %s", name, o.principal, o.left.UTC().Format(time.RFC3339), o.until().UTC().Format(time.RFC3339))
		}
	}
	if err := conflicts.Err(); err != nil {
		return nil, err
	}
	if n := len(t.tools) + added; n > c.cfg.MaxTenantTools {
		return nil, &LimitError{Field: "tools", Limit: "MaxTenantTools", Max: c.cfg.MaxTenantTools,
			Detail: fmt.Sprintf("tenant %q holds %d tools; %d more would make %d", tenant, len(t.tools), added, n)}
	}
	out := make([]Registered, len(entries))
	for i, e := range entries {
		r := &out[i]
		r.Loading = e.Loading()
		r.Outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED
		if old := t.tools[e.Name()]; old != nil {
			r.Outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED
			if old.Equal(e) {
				r.Outcome = tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED
			}
		}
		if validateOnly || r.Outcome == tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED {
			continue
		}
		delete(t.displaced, e.Name()) // a new registration supersedes a file's
		c.putLocked(t, e)
	}
	return out, nil
}

// Unregister removes a tenant's own tools by name for a frontend: all or
// none. A name hosts serve is a *ConflictError. It returns the names
// removed and those the tenant does not hold.
func (c *Catalog) Unregister(tenant string, names []string) (removed, notFound []string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tenantLocked(tenant)
	now := c.cfg.Now()
	conflicts := &ConflictError{}
	for i, n := range names {
		if o := t.owner(n, now); o != nil && len(o.sessions) > 0 {
			conflicts.Add(fmt.Sprintf("names[%d]", i), "%q is served by connected tool hosts; they remove their own tools", n)
		}
	}
	if err := conflicts.Err(); err != nil {
		return nil, nil, err
	}
	for _, n := range names {
		if t.tools[n] == nil {
			notFound = append(notFound, n)
			continue
		}
		delete(t.displaced, n)
		c.dropLocked(t, n)
		removed = append(removed, n)
	}
	return removed, notFound, nil
}

// putLocked stores e in t and updates the indexes that see it. The caller
// holds c.mu for writing.
func (c *Catalog) putLocked(t *tenant, e *Entry) {
	doc := c.docLocked(e)
	t.tools[e.Name()] = e
	if t.ix != nil {
		put(t.ix, e, doc)
	}
	if t.name == auth.SharedTenant {
		for _, o := range c.tenants {
			if o != t && o.ix != nil && o.tools[e.Name()] == nil {
				put(o.ix, e, doc)
			}
		}
	}
	if c.cfg.Changed != nil {
		c.cfg.Changed(t.name, e.Name(), e, doc)
	}
	e.paramText = "" // the indexes keep their terms, not the text
}

// dropLocked removes t's own tool name and updates the indexes that saw
// it: a shared tool it shadowed shows again. The caller holds c.mu for
// writing.
func (c *Catalog) dropLocked(t *tenant, name string) {
	delete(t.tools, name)
	if t.ix != nil {
		t.ix.Remove(name)
		if t.name != auth.SharedTenant {
			if s := c.shared.tools[name]; s != nil {
				put(t.ix, s, c.docLocked(s))
			}
		}
	}
	if t.name == auth.SharedTenant {
		for _, o := range c.tenants {
			if o != t && o.ix != nil && o.tools[name] == nil {
				o.ix.Remove(name)
			}
		}
	}
	if c.cfg.Changed != nil {
		c.cfg.Changed(t.name, name, nil, index.Doc{})
	}
}
