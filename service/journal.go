package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
)

// Journal persists the frontend writes to the catalog and carries them to
// every replica (package replica implements it on JetStream key-value).
// Without one (the default, and --data-dir="") the catalog lives in this
// process's memory only.
//
// A write goes to the journal first and, once the journal holds it, to
// this replica's catalog: a registration acknowledged to a frontend is
// durable, and visible on the replica that took it (read-your-writes).
// Every replica, this one included, is then told of the write by the
// journal's watcher (ApplyJournal); the revision of each tool orders the
// writes, so a replica that already applied a write (or a later one)
// skips it.
type Journal interface {
	// Put stores tenant's tools, as the catalog stores them (source and
	// loading set), and returns the revision of each.
	Put(ctx context.Context, tenant string, tools []*tooldexv1.Tool) ([]uint64, error)
	// Remove records the removal of tenant's tools by name, and returns
	// the revision of each.
	Remove(ctx context.Context, tenant string, names []string) ([]uint64, error)
}

// ErrJournal: the journal did not take a write (UNAVAILABLE); nothing was
// changed on this replica.
var ErrJournal = errors.New("catalog journal unavailable")

// journaled is the journal of a Server and the revision of each tool it
// applied, so that writes apply in revision order whichever path (the
// write's own replica, or the watcher) brings them first.
type journaled struct {
	j Journal

	mu   sync.Mutex
	revs map[toolRef]uint64
	// refused holds, by tenant and name, the latest journaled registration
	// this catalog refused because a host holds the name (served, or in
	// its hold): it is applied once the name is free (retryRefused), so
	// that this replica ends as one that never had the host. A later write
	// or removal of the name drops it (newer). At most the catalog's
	// MaxTenantTools a tenant (perTenant counts them).
	refused   map[toolRef]refusedWrite
	perTenant map[string]int
	// retry, while refused is not empty, is the timer of the next retry.
	retry *time.Timer
}

// refusedWrite is a registration the catalog refused, and the principal
// it was registered as ("" from the journal).
type refusedWrite struct {
	e  *catalog.Entry
	by string
}

type toolRef struct{ tenant, name string }

// SetJournal makes the server write frontend registrations and removals
// through j. Call it before serving, after the catalog files are loaded:
// they are the operator's, loaded from the file at every start, never
// journaled.
func (s *Server) SetJournal(j Journal) {
	s.journal = &journaled{j: j, revs: make(map[toolRef]uint64),
		refused: make(map[toolRef]refusedWrite), perTenant: make(map[string]int)}
}

// newer records rev for ref and reports whether it is later than what was
// applied; a later write supersedes the refused one, if any. The caller
// holds jl.mu.
func (jl *journaled) newer(ref toolRef, rev uint64) bool {
	if rev <= jl.revs[ref] {
		return false
	}
	jl.revs[ref] = rev
	jl.forget(ref)
	return true
}

// forget drops the refused write of ref, if any. The caller holds jl.mu.
func (jl *journaled) forget(ref toolRef) {
	if _, ok := jl.refused[ref]; !ok {
		return
	}
	delete(jl.refused, ref)
	if jl.perTenant[ref.tenant]--; jl.perTenant[ref.tenant] == 0 {
		delete(jl.perTenant, ref.tenant)
	}
}

// applyLocked registers e, journaled as the newest write of its name, in
// the catalog as by. A refusal because a host holds the name is kept for
// retryRefused; any other is logged. The caller holds jl.mu.
func (s *Server) applyLocked(tenant, by string, e *catalog.Entry, rev uint64) {
	_, err := s.cat.Register(tenant, by, []*catalog.Entry{e}, false)
	if err == nil {
		return
	}
	jl := s.journal
	ref := toolRef{tenant, e.Name()}
	var conflict *catalog.ConflictError
	if errors.As(err, &conflict) {
		_, had := jl.refused[ref]
		if had || jl.perTenant[tenant] < s.cat.Config().MaxTenantTools {
			jl.refused[ref] = refusedWrite{e: e, by: by}
			if !had {
				jl.perTenant[tenant]++
			}
			s.armRetryLocked()
			s.log.Info("journal: registration waits for the name to be free", zap.String("tenant", tenant), zap.String("tool", e.Name()), zap.Uint64("revision", rev), zap.Error(err))
			return
		}
	}
	s.log.Warn("journal: registration not applied", zap.String("tenant", tenant), zap.String("tool", e.Name()), zap.Uint64("revision", rev), zap.Error(err))
}

// armRetryLocked starts the retry timer unless it runs. The caller holds
// jl.mu.
//
// The refused writes are retried periodically, every Config.Hold of the
// catalog, while any is left: a name becomes free when its last host
// leaves and then its hold passes, so a retry at that period applies a
// refused write at most two holds after the host left. That is simpler
// than a hook on every way a host stops serving a name (local, remote,
// a changed tool list) plus a timer at each hold's end, and as correct:
// the catalog alone says whether the name is free. One timer a Server;
// each retry costs one Register a refused write, at most MaxTenantTools a
// tenant.
func (s *Server) armRetryLocked() {
	jl := s.journal
	if jl.retry != nil || len(jl.refused) == 0 {
		return
	}
	jl.retry = time.AfterFunc(s.cat.Config().Hold, s.retryRefused)
}

// retryRefused applies the refused writes whose names are free now; the
// others wait for the next retry.
func (s *Server) retryRefused() {
	jl := s.journal
	jl.mu.Lock()
	defer jl.mu.Unlock()
	jl.retry = nil
	for ref, w := range jl.refused {
		_, err := s.cat.Register(ref.tenant, w.by, []*catalog.Entry{w.e}, false)
		var conflict *catalog.ConflictError
		if err != nil && errors.As(err, &conflict) {
			continue
		}
		jl.forget(ref)
		if err != nil {
			s.log.Warn("journal: registration not applied", zap.String("tenant", ref.tenant), zap.String("tool", ref.name), zap.Uint64("revision", jl.revs[ref]), zap.Error(err))
		} else {
			s.log.Info("journal: registration applied, its name free again", zap.String("tenant", ref.tenant), zap.String("tool", ref.name), zap.Uint64("revision", jl.revs[ref]))
		}
	}
	s.armRetryLocked()
}

// ApplyJournal applies one journaled write to this replica's catalog:
// tool is the tool stored under tenant and name, nil for a removal. A
// write at or before the revision already applied is skipped; a
// registration the catalog refuses because this replica's hosts hold the
// name (serve it, or within its hold) is applied once the name is free,
// unless a later write of the name comes first. It is the journal
// watcher's callback.
func (s *Server) ApplyJournal(tenant, name string, tool *tooldexv1.Tool, rev uint64) {
	jl := s.journal
	if jl == nil {
		return
	}
	jl.mu.Lock()
	defer jl.mu.Unlock()
	if !jl.newer(toolRef{tenant, name}, rev) {
		return
	}
	if tool == nil {
		if e := s.cat.Get(tenant, name); e == nil || e.Tenant() != tenant {
			return
		}
		if _, _, err := s.cat.Unregister(tenant, []string{name}); err != nil {
			s.log.Warn("journal: removal not applied", zap.String("tenant", tenant), zap.String("tool", name), zap.Uint64("revision", rev), zap.Error(err))
		}
		return
	}
	ve := &catalog.ValidationError{}
	e := catalog.NewEntry(ve, "tool", tool, tenant, tooldexv1.Origin_ORIGIN_FRONTEND, "", tool.GetLoading())
	if err := ve.Err(); err != nil || e == nil || e.Name() != name {
		s.log.Warn("journal: invalid tool skipped", zap.String("tenant", tenant), zap.String("tool", name), zap.Uint64("revision", rev), zap.Error(err))
		return
	}
	// Who registered it is not journaled: a name a host principal holds
	// refuses the replayed write, as it would refuse any other frontend's,
	// until the name is free.
	s.applyLocked(tenant, "", e, rev)
}

// journalRegister registers entries (checked by a validate-only Register
// that returned done) through the journal, then in the catalog. Only the
// entries whose revision is the newest applied go in (a later write from
// another replica may have come first).
func (s *Server) journalRegister(ctx context.Context, tenant, by string, entries []*catalog.Entry, done []catalog.Registered) error {
	var put []*catalog.Entry
	for i, e := range entries {
		if done[i].Outcome != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED {
			put = append(put, e)
		}
	}
	if len(put) == 0 {
		return nil
	}
	tools := make([]*tooldexv1.Tool, len(put))
	for i, e := range put {
		tools[i] = e.Tool()
	}
	revs, err := s.journal.j.Put(ctx, tenant, tools)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrJournal, err)
	}
	jl := s.journal
	jl.mu.Lock()
	defer jl.mu.Unlock()
	keep := put[:0]
	for i, e := range put {
		if jl.newer(toolRef{tenant, e.Name()}, revs[i]) {
			keep = append(keep, e)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	// The journal holds the batch: a refusal now (a host claimed a name
	// since the check) is the caller's error, but this replica must end
	// as the others, which apply the batch name by name (the watcher skips
	// it here: its revisions are applied). So its tools go in one by one,
	// a name a host holds once it is free.
	_, err = s.cat.Register(tenant, by, keep, false)
	if err != nil {
		for _, e := range keep {
			s.applyLocked(tenant, by, e, jl.revs[toolRef{tenant, e.Name()}])
		}
	}
	return err
}

// journalUnregister removes names through the journal, then from the
// catalog. Names the tenant does not hold of its own are not journaled;
// a name a later write (from another replica) brought back stays.
func (s *Server) journalUnregister(ctx context.Context, tenant string, names []string) (removed, notFound []string, err error) {
	var held []string
	for _, n := range names {
		if s.reg.Serving(tenant, n) {
			// Hosts here serve it: the catalog says so, nothing is journaled.
			return s.cat.Unregister(tenant, names)
		}
		if e := s.cat.Get(tenant, n); e != nil && e.Tenant() == tenant {
			held = append(held, n)
		}
	}
	if len(held) == 0 {
		return s.cat.Unregister(tenant, names)
	}
	revs, err := s.journal.j.Remove(ctx, tenant, held)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrJournal, err)
	}
	jl := s.journal
	jl.mu.Lock()
	defer jl.mu.Unlock()
	drop := held[:0]
	for i, n := range held {
		if jl.newer(toolRef{tenant, n}, revs[i]) {
			drop = append(drop, n)
		}
	}
	removed, _, err = s.cat.Unregister(tenant, drop)
	for _, n := range names {
		if !slices.Contains(removed, n) {
			notFound = append(notFound, n)
		}
	}
	return removed, notFound, err
}

// JournaledTool is a frontend registration this replica holds: what the
// journal should hold under Tenant and the tool's name.
type JournaledTool struct {
	Tenant string
	Tool   *tooldexv1.Tool
}

// JournaledTools returns the frontend registrations this replica holds
// that went through the journal (catalog-file and host tools never do),
// as the catalog stores them, and those waiting for a host's name to be
// free, for a journal that lost its store to be written back.
func (s *Server) JournaledTools() []JournaledTool {
	jl := s.journal
	if jl == nil {
		return nil
	}
	jl.mu.Lock()
	defer jl.mu.Unlock()
	var out []JournaledTool
	for ref := range jl.revs {
		e := s.cat.Get(ref.tenant, ref.name)
		if e == nil || e.Tenant() != ref.tenant || e.Source().GetOrigin() != tooldexv1.Origin_ORIGIN_FRONTEND {
			continue
		}
		out = append(out, JournaledTool{Tenant: ref.tenant, Tool: e.Tool()})
	}
	// A write refused while a host holds its name is this replica's too:
	// a replica without the host holds it.
	for ref, w := range jl.refused {
		out = append(out, JournaledTool{Tenant: ref.tenant, Tool: w.e.Tool()})
	}
	return out
}
