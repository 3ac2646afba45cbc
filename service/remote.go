package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/registry"
)

// HostAnnouncement is a host session one replica holds, as the others
// learn of it (package replica carries them).
type HostAnnouncement struct {
	Session, HostID, Tenant, Principal, Version string
	// Tools are the tools the session serves, as the catalog stores them.
	Tools []*tooldexv1.Tool
	// Slots and InFlight are the session's calls at once and in flight;
	// Completed the calls it completed.
	Slots, InFlight int
	Completed       int64
}

// RemoteHost is a host session another replica holds.
type RemoteHost struct {
	Replica string
	HostAnnouncement
}

// Forwarder sends an Execute this replica cannot serve (no host here
// serves the tool) to a replica whose host does; package replica
// implements it on NATS request-reply.
type Forwarder interface {
	// Serves reports whether another replica's host serves tenant's tool.
	Serves(tenant, tool string) bool
	// Forward runs c on a host of another replica, at most once. Errors
	// wrap registry.ErrNoHost (no replica took it: it never ran),
	// registry.ErrOverloaded, registry.ErrHostGone (the replica or its
	// host went away during the call: outcome unknown) or ctx's error.
	Forward(ctx context.Context, c ForwardCall) (ForwardResult, error)
	// Hosts returns the host sessions the other replicas hold, as they
	// last announced them.
	Hosts() []RemoteHost
}

// ForwardCall is an Execute call checked by the replica that took it
// (permissions, approval, parameters), for a host on another replica.
type ForwardCall struct {
	Tenant, Tool, Caller string
	Params               *structpb.Struct
	ParamsJSON           string
	Deadline             time.Time
	Idempotent           bool
}

// ForwardResult is the host's answer to a forwarded call.
type ForwardResult struct {
	Result         *tooldexv1.CallResult
	HostID, CallID string
}

// remote is what a Server knows of other replicas' hosts.
type remote struct {
	fwd Forwarder

	mu     sync.Mutex
	served map[string][]string // remote session -> names it serves here
}

// SetForwarder makes Execute forward calls for tools only other replicas'
// hosts serve through f. Call it before serving.
func (s *Server) SetForwarder(f Forwarder) {
	s.remote = &remote{fwd: f, served: make(map[string][]string)}
}

// LocalHosts returns the host sessions this replica holds, with the tools
// each serves, for announcing to the others.
func (s *Server) LocalHosts() []HostAnnouncement {
	hosts := s.reg.Hosts()
	out := make([]HostAnnouncement, 0, len(hosts))
	for _, h := range hosts {
		a := HostAnnouncement{
			Session: h.SessionID, HostID: h.HostID, Tenant: h.Tenant, Principal: h.Principal, Version: h.Version,
			Slots: h.Slots, InFlight: h.InFlight, Completed: h.Completed,
		}
		for _, name := range h.Tools {
			if e := s.cat.Get(h.Tenant, name); e != nil && e.HostOwned() && e.Tenant() == h.Tenant {
				a.Tools = append(a.Tools, e.Tool())
			}
		}
		out = append(out, a)
	}
	return out
}

// hostsFor returns the host sessions serving tenant or the shared
// catalog, this replica's and (with replicas) the other replicas', sorted
// by host id, session id and replica (this replica's first).
func (s *Server) hostsFor(tenant string) []*tooldexv1.HostInfo {
	visible := func(t string) bool { return t == tenant || t == auth.SharedTenant }
	var out []*tooldexv1.HostInfo
	for _, h := range s.reg.Hosts() {
		if visible(h.Tenant) {
			out = append(out, &tooldexv1.HostInfo{
				HostId: h.HostID, SessionId: h.SessionID, Version: h.Version, Tools: h.Tools,
				Slots: int32(h.Slots), InFlight: int32(h.InFlight), Completed: h.Completed,
				Tenant: h.Tenant, Principal: h.Principal,
			})
		}
	}
	if s.remote != nil {
		for _, h := range s.remote.fwd.Hosts() {
			if !visible(h.Tenant) {
				continue
			}
			names := make([]string, 0, len(h.Tools))
			for _, t := range h.Tools {
				names = append(names, t.GetName())
			}
			slices.Sort(names)
			out = append(out, &tooldexv1.HostInfo{
				HostId: h.HostID, SessionId: h.Session, Version: h.Version, Tools: names,
				Slots: int32(h.Slots), InFlight: int32(h.InFlight), Completed: h.Completed,
				Tenant: h.Tenant, Principal: h.Principal, Replica: h.Replica,
			})
		}
	}
	slices.SortFunc(out, func(a, b *tooldexv1.HostInfo) int { return strings.Compare(hostKey(a), hostKey(b)) })
	return out
}

// hostKey orders ListHosts and keys its pages.
func hostKey(h *tooldexv1.HostInfo) string {
	return h.GetHostId() + "\x00" + h.GetSessionId() + "\x00" + h.GetReplica()
}

// remoteSession names another replica's session in this catalog.
func remoteSession(replica, session string) string { return "remote/" + replica + "/" + session }

// ServeRemote puts the tools another replica's host session serves in
// this catalog, as that host's principal (the replica holding it checked
// the principal may serve them): Search finds them here, marked with the
// replica in their source, and Execute forwards their calls. Tools it no
// longer serves leave.
func (s *Server) ServeRemote(replica string, h HostAnnouncement) {
	if s.remote == nil {
		return
	}
	sess := remoteSession(replica, h.Session)
	entries := make([]*catalog.Entry, len(h.Tools))
	names := make([]string, 0, len(h.Tools))
	for i, t := range h.Tools {
		ve := &catalog.ValidationError{}
		entries[i] = catalog.NewEntry(ve, "tool", t, h.Tenant, tooldexv1.Origin_ORIGIN_HOST, h.HostID+"@"+replica, t.GetLoading())
		names = append(names, t.GetName())
	}
	p := &auth.Principal{Name: h.Principal, Tenant: h.Tenant, Scopes: []auth.Scope{auth.ScopeHost}, HostPatterns: names, Method: "internal"}
	_, servedNow := s.cat.Serve(p, sess, entries)
	s.remote.mu.Lock()
	old := s.remote.served[sess]
	s.remote.served[sess] = servedNow
	s.remote.mu.Unlock()
	var gone []string
	for _, n := range old {
		if !slices.Contains(servedNow, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		s.cat.Release(h.Tenant, sess, gone)
	}
}

// LeaveRemote removes what another replica's session served (its stream
// ended, or the replica went away).
func (s *Server) LeaveRemote(replica, tenant, hostID, session string) {
	if s.remote == nil {
		return
	}
	sess := remoteSession(replica, session)
	s.remote.mu.Lock()
	delete(s.remote.served, sess)
	s.remote.mu.Unlock()
	s.cat.Leave(tenant, hostID+"@"+replica, sess)
}

// CallLocal runs a call another replica forwarded on a host of this one.
// Errors are the registry's (see Forwarder.Forward).
func (s *Server) CallLocal(ctx context.Context, c ForwardCall) (ForwardResult, error) {
	st := c.Params
	if st == nil {
		st = &structpb.Struct{}
	}
	deadline := time.Now().Add(s.maxExecute)
	if !c.Deadline.IsZero() && c.Deadline.Before(deadline) {
		deadline = c.Deadline
	}
	res, err := s.reg.Call(ctx, registry.Call{
		Tenant: c.Tenant, Tool: c.Tool, Params: &callParams{structured: st, json: c.ParamsJSON},
		Caller: c.Caller, Deadline: deadline, Idempotent: c.Idempotent,
	})
	if err != nil {
		return ForwardResult{}, err
	}
	r, _ := res.Payload.(*tooldexv1.CallResult)
	return ForwardResult{Result: r, HostID: res.HostID, CallID: res.CallID}, nil
}

// serving reports whether a host here, or on another replica, serves
// tenant's tool; local says which.
func (s *Server) serving(tenant, tool string) (ok, local bool) {
	if s.reg.Serving(tenant, tool) {
		return true, true
	}
	return s.remote != nil && s.remote.fwd.Serves(tenant, tool), false
}

// callHost runs c on a host here, or forwards it to another replica's.
func (s *Server) callHost(ctx context.Context, local bool, c registry.Call) (registry.Result, error) {
	if local {
		return s.reg.Call(ctx, c)
	}
	p, _ := c.Params.(*callParams)
	fc := ForwardCall{Tenant: c.Tenant, Tool: c.Tool, Caller: c.Caller, Deadline: c.Deadline, Idempotent: c.Idempotent}
	if p != nil {
		fc.Params, fc.ParamsJSON = p.structured, p.json
	}
	res, err := s.remote.fwd.Forward(ctx, fc)
	if err != nil {
		return registry.Result{}, fmt.Errorf("forwarded: %w", err)
	}
	return registry.Result{Payload: res.Result, HostID: res.HostID, CallID: res.CallID, Attempts: 1}, nil
}
