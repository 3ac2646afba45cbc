package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/backoff"
	"github.com/tooldex/tooldex/registry"
	"github.com/tooldex/tooldex/service"
)

// HostsBucket is the key-value bucket of the replicas and the host
// sessions each holds.
const HostsBucket = "TOOLDEX_HOSTS"

const hostsDesc = "tooldex: replicas and the host sessions each holds"

// Timings of presence. A replica refreshes its own key every Beat; one
// not refreshed for Stale is gone (its sessions leave every other
// replica's catalog and its forwarded calls are answered UNAVAILABLE).
// Session keys are put again every Refresh; the bucket forgets any key
// not written for bucketTTL (those of a replica that died).
const (
	Beat      = 500 * time.Millisecond
	Stale     = 3 * time.Second
	Refresh   = 10 * time.Second
	bucketTTL = 30 * time.Second
)

// Hosts is the service a Presence announces and forwards for:
// service.Server implements it.
type Hosts interface {
	LocalHosts() []service.HostAnnouncement
	ServeRemote(replica string, h service.HostAnnouncement)
	LeaveRemote(replica, tenant, hostID, session string)
	CallLocal(ctx context.Context, c service.ForwardCall) (service.ForwardResult, error)
}

// Presence announces this replica's host sessions, learns the others',
// and forwards calls between replicas: it implements service.Forwarder.
type Presence struct {
	n   *Node
	kv  jetstream.KeyValue
	id  string
	h   Hosts
	log *zap.Logger

	mu       sync.Mutex
	peers    map[string]*peer              // other replicas, by id
	sessions map[string]*remoteSession     // other replicas' sessions, by key
	byTool   map[toolRef]map[*peer]int     // sessions serving a tool, by replica
	inbound  map[string]context.CancelFunc // calls forwarded here, by forward id
	inWG     sync.WaitGroup
}

type toolRef struct{ tenant, name string }

type peer struct {
	id       string
	seen     time.Time
	inFlight int
	slots    int
	// ctx is cancelled when the replica is gone.
	ctx  context.Context
	gone context.CancelFunc
}

type remoteSession struct {
	peer  *peer
	ann   service.HostAnnouncement
	tools []toolRef
}

// liveness is a replica's own key: its load.
type liveness struct {
	InFlight int `json:"in_flight"`
	Slots    int `json:"slots"`
}

// announcement is a session key's value.
type announcement struct {
	Session   string   `json:"session"`
	HostID    string   `json:"host_id"`
	Tenant    string   `json:"tenant"`
	Principal string   `json:"principal"`
	Version   string   `json:"version,omitempty"`
	Slots     int      `json:"slots"`
	Tools     [][]byte `json:"tools"` // protobuf tooldex.v1.Tool
	// InFlight and Completed are as of the put: a change of theirs alone
	// does not put the key again (it waits for the next Refresh).
	InFlight  int   `json:"in_flight,omitempty"`
	Completed int64 `json:"completed,omitempty"`
}

// NewID returns a fresh replica id.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// OpenPresence creates the hosts bucket, or binds to it, for replica id
// serving h.
func (n *Node) OpenPresence(ctx context.Context, id string, h Hosts) (*Presence, error) {
	kv, err := n.bucket(ctx, HostsBucket, hostsDesc, bucketTTL)
	if err != nil {
		return nil, err
	}
	return &Presence{
		n: n, kv: kv, id: id, h: h, log: n.cfg.Logger.Named("presence").With(zap.String("replica", id)),
		peers: make(map[string]*peer), sessions: make(map[string]*remoteSession),
		byTool: make(map[toolRef]map[*peer]int), inbound: make(map[string]context.CancelFunc),
	}, nil
}

// ID returns this replica's id.
func (p *Presence) ID() string { return p.id }

func callSubject(id string) string   { return "tooldex.call." + id }
func cancelSubject(id string) string { return "tooldex.cancel." + id }

// Run announces, watches and serves forwarded calls until ctx is done;
// then it withdraws this replica's keys and answers the calls forwarded
// here that are still running (canceled: UNAVAILABLE to their callers).
func (p *Presence) Run(ctx context.Context) error {
	callSub, err := p.n.nc.Subscribe(callSubject(p.id), p.serveCall)
	if err != nil {
		return fmt.Errorf("replica: subscribe: %w", err)
	}
	cancelSub, err := p.n.nc.Subscribe(cancelSubject(p.id), func(m *nats.Msg) {
		p.mu.Lock()
		cancel := p.inbound[string(m.Data)]
		p.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	})
	if err != nil {
		_ = callSub.Unsubscribe()
		return fmt.Errorf("replica: subscribe: %w", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { p.announce(ctx) })
	wg.Go(func() { p.watch(ctx) })
	wg.Wait()
	_ = callSub.Unsubscribe()
	_ = cancelSub.Unsubscribe()
	p.mu.Lock()
	for _, cancel := range p.inbound {
		cancel()
	}
	p.mu.Unlock()
	p.inWG.Wait()
	// Withdraw: the others drop this replica's sessions at once rather
	// than after Stale.
	wctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if keys, err := p.kv.ListKeysFiltered(wctx, "s."+p.id+".*"); err == nil {
		for k := range keys.Keys() {
			_ = p.kv.Delete(wctx, k)
		}
	}
	_ = p.kv.Delete(wctx, "r."+p.id)
	return ctx.Err()
}

// announce writes this replica's liveness every Beat, a session's key when
// what it serves changes (and every Refresh), and deletes the key of a
// session that ended.
func (p *Presence) announce(ctx context.Context) {
	tick := time.NewTicker(Beat)
	defer tick.Stop()
	last := make(map[string][]byte) // session -> value last put
	lastPut := time.Time{}
	reconnects := p.n.nc.Stats().Reconnects
	for {
		if r := p.n.nc.Stats().Reconnects; r != reconnects {
			// NATS restarted, perhaps without its store (the bucket
			// made again by another replica): announce every session.
			reconnects = r
			clear(last)
		}
		hosts := p.h.LocalHosts()
		var live liveness
		now := time.Now()
		refresh := now.Sub(lastPut) >= Refresh
		seen := make(map[string]bool, len(hosts))
		for _, h := range hosts {
			live.InFlight += h.InFlight
			live.Slots += h.Slots
			a := announcement{Session: h.Session, HostID: h.HostID, Tenant: h.Tenant, Principal: h.Principal, Version: h.Version, Slots: h.Slots}
			for _, t := range h.Tools {
				b, err := proto.Marshal(t)
				if err == nil {
					a.Tools = append(a.Tools, b)
				}
			}
			what, _ := json.Marshal(a) // without the counters
			seen[h.Session] = true
			if refresh || string(last[h.Session]) != string(what) {
				a.InFlight, a.Completed = h.InFlight, h.Completed
				v, _ := json.Marshal(a)
				if _, err := p.kv.Put(ctx, "s."+p.id+"."+h.Session, v); err == nil {
					last[h.Session] = what
				}
			}
		}
		for s := range last {
			if !seen[s] {
				if err := p.kv.Delete(ctx, "s."+p.id+"."+s); err == nil || errors.Is(err, context.Canceled) {
					delete(last, s)
				}
			}
		}
		if refresh {
			lastPut = now
		}
		v, _ := json.Marshal(live)
		if _, err := p.kv.Put(ctx, "r."+p.id, v); p.bucketGone(ctx, err) {
			// A NATS that came back without its store: the bucket is
			// made again, and every session announced anew.
			clear(last)
		}
		p.sweep(now)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// bucketGone reports whether err says the hosts bucket is gone (a NATS
// that came back without its store), and then creates it again
// (idempotent: the other replicas race to do the same).
func (p *Presence) bucketGone(ctx context.Context, err error) bool {
	if !errors.Is(err, jetstream.ErrNoStreamResponse) && !errors.Is(err, nats.ErrNoResponders) {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, Beat)
	defer cancel()
	if _, cerr := p.n.js.CreateOrUpdateKeyValue(cctx, p.n.bucketConfig(HostsBucket, hostsDesc, bucketTTL)); cerr != nil {
		p.log.Warn("hosts bucket gone; creating it again failed", zap.Error(cerr))
		return false
	}
	p.log.Warn("hosts bucket gone (NATS without its store): created again, sessions announced anew")
	return true
}

// watch applies the other replicas' keys as they change, resuming after
// a broken watch.
func (p *Presence) watch(ctx context.Context) {
	bo := retryBackoff()
	for ctx.Err() == nil {
		w, err := p.kv.WatchAll(ctx)
		if err == nil {
			p.drain(ctx, w)
			_ = w.Stop()
			bo.Reset()
		} else {
			delay := bo.Next()
			p.log.Warn("presence watch failed, retrying", zap.Error(err), zap.Duration("backoff", delay))
			backoff.Sleep(ctx, delay)
		}
	}
}

func (p *Presence) drain(ctx context.Context, w jetstream.KeyWatcher) {
	tick := time.NewTicker(stallAfter)
	defer tick.Stop()
	reconnects := p.n.nc.Stats().Reconnects
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if p.n.nc.Stats().Reconnects != reconnects {
				return // the replay from the start puts back what a restart lost
			}
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e != nil {
				p.apply(e)
			}
		}
	}
}

// apply handles one key of another replica: r.<id> its liveness,
// s.<id>.<session> a session.
func (p *Presence) apply(e jetstream.KeyValueEntry) {
	kind, rest, _ := strings.Cut(e.Key(), ".")
	id, session, _ := strings.Cut(rest, ".")
	if id == p.id || id == "" {
		return
	}
	del := e.Operation() != jetstream.KeyValuePut
	now := time.Now()
	if !del && (kind == "r" && now.Sub(e.Created()) > Stale || kind == "s" && now.Sub(e.Created()) > Refresh+Stale) {
		return // left by a replica gone (the bucket forgets it soon)
	}
	switch kind {
	case "r":
		var l liveness
		if !del && json.Unmarshal(e.Value(), &l) != nil {
			return
		}
		p.mu.Lock()
		if del {
			p.mu.Unlock()
			p.dropPeer(id)
			return
		}
		pr := p.peerLocked(id)
		pr.seen, pr.inFlight, pr.slots = now, l.InFlight, l.Slots
		p.mu.Unlock()
	case "s":
		if session == "" {
			return
		}
		if del {
			p.dropSession(e.Key())
			return
		}
		var a announcement
		if err := json.Unmarshal(e.Value(), &a); err != nil {
			p.log.Warn("undecodable session skipped", zap.String("key", e.Key()), zap.Error(err))
			return
		}
		ann := service.HostAnnouncement{
			Session: a.Session, HostID: a.HostID, Tenant: a.Tenant, Principal: a.Principal, Version: a.Version,
			Slots: a.Slots, InFlight: a.InFlight, Completed: a.Completed,
		}
		var refs []toolRef
		for _, b := range a.Tools {
			t := &tooldexv1.Tool{}
			if proto.Unmarshal(b, t) == nil {
				ann.Tools = append(ann.Tools, t)
				refs = append(refs, toolRef{a.Tenant, t.GetName()})
			}
		}
		p.mu.Lock()
		pr := p.peerLocked(id)
		if now.Sub(pr.seen) > Stale && !pr.seen.IsZero() {
			p.mu.Unlock()
			return // an old key of a replica gone
		}
		if pr.seen.IsZero() {
			pr.seen = now // its liveness key comes next, or it is swept
		}
		if old := p.sessions[e.Key()]; old != nil {
			p.unindexLocked(old)
		}
		rs := &remoteSession{peer: pr, ann: ann, tools: refs}
		p.sessions[e.Key()] = rs
		for _, r := range refs {
			m := p.byTool[r]
			if m == nil {
				m = make(map[*peer]int)
				p.byTool[r] = m
			}
			m[pr]++
		}
		p.mu.Unlock()
		p.h.ServeRemote(id, ann)
	}
}

func (p *Presence) peerLocked(id string) *peer {
	pr := p.peers[id]
	if pr == nil {
		pr = &peer{id: id}
		pr.ctx, pr.gone = context.WithCancel(context.Background())
		p.peers[id] = pr
	}
	return pr
}

func (p *Presence) unindexLocked(rs *remoteSession) {
	for _, r := range rs.tools {
		if m := p.byTool[r]; m != nil {
			if m[rs.peer]--; m[rs.peer] <= 0 {
				delete(m, rs.peer)
			}
			if len(m) == 0 {
				delete(p.byTool, r)
			}
		}
	}
}

func (p *Presence) dropSession(key string) {
	p.mu.Lock()
	rs := p.sessions[key]
	if rs != nil {
		delete(p.sessions, key)
		p.unindexLocked(rs)
	}
	p.mu.Unlock()
	if rs != nil {
		p.h.LeaveRemote(rs.peer.id, rs.ann.Tenant, rs.ann.HostID, rs.ann.Session)
	}
}

// dropPeer forgets a replica gone: its sessions leave, and the calls
// forwarded to it are answered UNAVAILABLE.
func (p *Presence) dropPeer(id string) {
	p.mu.Lock()
	pr := p.peers[id]
	if pr == nil {
		p.mu.Unlock()
		return
	}
	delete(p.peers, id)
	pr.gone()
	var gone []*remoteSession
	for k, rs := range p.sessions {
		if rs.peer == pr {
			delete(p.sessions, k)
			p.unindexLocked(rs)
			gone = append(gone, rs)
		}
	}
	p.mu.Unlock()
	p.log.Info("replica gone", zap.String("peer", id), zap.Int("sessions", len(gone)))
	for _, rs := range gone {
		p.h.LeaveRemote(rs.peer.id, rs.ann.Tenant, rs.ann.HostID, rs.ann.Session)
	}
}

// sweep drops the replicas not seen for Stale.
func (p *Presence) sweep(now time.Time) {
	var stale []string
	p.mu.Lock()
	for id, pr := range p.peers {
		if now.Sub(pr.seen) > Stale {
			stale = append(stale, id)
		}
	}
	p.mu.Unlock()
	for _, id := range stale {
		p.dropPeer(id)
	}
}

// Serves reports whether another replica's host serves tenant's tool.
func (p *Presence) Serves(tenant, tool string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byTool[toolRef{tenant, tool}]) > 0
}

// Hosts returns the host sessions of the other replicas alive, as they
// last announced them.
func (p *Presence) Hosts() []service.RemoteHost {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]service.RemoteHost, 0, len(p.sessions))
	for _, rs := range p.sessions {
		out = append(out, service.RemoteHost{Replica: rs.peer.id, HostAnnouncement: rs.ann})
	}
	return out
}

// pick returns the least-loaded replica (in flight over slots) serving the
// tool, skipping those in skip.
func (p *Presence) pick(r toolRef, skip map[*peer]bool) *peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	var best *peer
	var bestLoad float64
	for pr := range p.byTool[r] {
		if skip[pr] {
			continue
		}
		load := float64(pr.inFlight) / float64(max(pr.slots, 1))
		if best == nil || load < bestLoad || load == bestLoad && pr.id < best.id {
			best, bestLoad = pr, load
		}
	}
	if best != nil {
		best.inFlight++ // until its next beat says otherwise
	}
	return best
}

// errReplicaGone is the cause of a forwarded call's end when its replica
// went away.
var errReplicaGone = errors.New("replica gone")

// Wire headers of a forwarded call and its answer.
const (
	hTenant     = "Tooldex-Tenant"
	hIdempotent = "Tooldex-Idempotent"
	hForward    = "Tooldex-Forward"
	hHost       = "Tooldex-Host"
	hCall       = "Tooldex-Call"
	hError      = "Tooldex-Error"
	hErrorKind  = "Tooldex-Error-Kind"
)

// Forward sends c to the least-loaded replica whose host serves the tool,
// once: a replica that did not run it (no subscriber: gone before the
// call reached it; or no free host there) is skipped for the next; one
// that goes away during the call makes it fail with registry.ErrHostGone,
// never a second attempt.
func (p *Presence) Forward(ctx context.Context, c service.ForwardCall) (service.ForwardResult, error) {
	call := &tooldexv1.ExecuteCall{ToolName: c.Tool, Params: c.Params, ParamsJson: c.ParamsJSON, Caller: c.Caller}
	if !c.Deadline.IsZero() {
		call.Deadline = timestamppb.New(c.Deadline)
	}
	data, err := proto.Marshal(call)
	if err != nil {
		return service.ForwardResult{}, fmt.Errorf("replica: forward: %w", err)
	}
	fid := NewID() + NewID()
	skip := make(map[*peer]bool)
	for {
		pr := p.pick(toolRef{c.Tenant, c.Tool}, skip)
		if pr == nil {
			return service.ForwardResult{}, fmt.Errorf("replica: no replica serves %q: %w", c.Tool, errNoHost)
		}
		skip[pr] = true
		m := nats.NewMsg(callSubject(pr.id))
		m.Data = data
		m.Header.Set(hTenant, c.Tenant)
		m.Header.Set(hForward, fid)
		if c.Idempotent {
			m.Header.Set(hIdempotent, "1")
		}
		res, err := p.request(ctx, pr, m, c.Deadline)
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, errNoHost) || errors.Is(err, errOverloaded) {
			// Nobody took it (the replica is gone, or its host left or is
			// full): it never ran, another replica may run it.
			if ctx.Err() == nil {
				continue
			}
		}
		return res, err
	}
}

func (p *Presence) request(ctx context.Context, pr *peer, m *nats.Msg, deadline time.Time) (service.ForwardResult, error) {
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if !deadline.IsZero() {
		var c2 context.CancelFunc
		rctx, c2 = context.WithDeadline(rctx, deadline)
		defer c2()
	}
	stop := context.AfterFunc(pr.ctx, func() { cancel(errReplicaGone) })
	defer stop()
	reply, err := p.n.nc.RequestMsgWithContext(rctx, m)
	if err != nil {
		switch {
		case errors.Is(err, nats.ErrNoResponders):
			return service.ForwardResult{}, err
		case errors.Is(context.Cause(rctx), errReplicaGone):
			return service.ForwardResult{}, fmt.Errorf("replica: replica %s went away during the call; outcome unknown: %w", pr.id, errHostGone)
		case ctx.Err() != nil || rctx.Err() != nil:
			// The caller gave up, or the deadline passed: tell the
			// replica to cancel the call on its host.
			_ = p.n.nc.Publish(cancelSubject(pr.id), []byte(m.Header.Get(hForward)))
			if ctx.Err() != nil {
				return service.ForwardResult{}, ctx.Err()
			}
			return service.ForwardResult{}, context.DeadlineExceeded
		}
		return service.ForwardResult{}, fmt.Errorf("replica: forward to %s: %v; outcome unknown: %w", pr.id, err, errHostGone)
	}
	if kind := reply.Header.Get(hErrorKind); kind != "" {
		return service.ForwardResult{}, remoteError(kind, reply.Header.Get(hError))
	}
	r := &tooldexv1.CallResult{}
	if err := proto.Unmarshal(reply.Data, r); err != nil {
		return service.ForwardResult{}, fmt.Errorf("replica: forwarded answer undecodable: %v; outcome unknown: %w", err, errHostGone)
	}
	return service.ForwardResult{Result: r, HostID: reply.Header.Get(hHost), CallID: reply.Header.Get(hCall)}, nil
}

// serveCall runs a call another replica forwarded here, on a goroutine of
// its own, and answers it once.
func (p *Presence) serveCall(m *nats.Msg) {
	call := &tooldexv1.ExecuteCall{}
	if err := proto.Unmarshal(m.Data, call); err != nil {
		p.respondErr(m, "error", "undecodable call")
		return
	}
	fc := service.ForwardCall{
		Tenant: m.Header.Get(hTenant), Tool: call.GetToolName(), Caller: call.GetCaller(),
		Params: call.GetParams(), ParamsJSON: call.GetParamsJson(), Idempotent: m.Header.Get(hIdempotent) == "1",
	}
	ctx, cancel := context.WithCancel(context.Background())
	if d := call.GetDeadline(); d != nil {
		fc.Deadline = d.AsTime()
		var c2 context.CancelFunc
		ctx, c2 = context.WithDeadline(ctx, fc.Deadline)
		prev := cancel
		cancel = func() { c2(); prev() }
	}
	fid := m.Header.Get(hForward)
	p.mu.Lock()
	p.inbound[fid] = cancel
	p.mu.Unlock()
	p.inWG.Go(func() {
		defer func() {
			p.mu.Lock()
			delete(p.inbound, fid)
			p.mu.Unlock()
			cancel()
		}()
		res, err := p.h.CallLocal(ctx, fc)
		if err != nil {
			p.respondErr(m, registry.Outcome(err), err.Error())
			return
		}
		out := nats.NewMsg(m.Reply)
		out.Data, _ = proto.Marshal(res.Result)
		out.Header.Set(hHost, res.HostID)
		out.Header.Set(hCall, res.CallID)
		_ = m.RespondMsg(out)
	})
}

func (p *Presence) respondErr(m *nats.Msg, kind, msg string) {
	out := nats.NewMsg(m.Reply)
	out.Header.Set(hErrorKind, kind)
	out.Header.Set(hError, strings.ToValidUTF8(strings.ReplaceAll(msg, "\n", " "), "?"))
	_ = m.RespondMsg(out)
}
