package replica

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"

	"github.com/tooldex/tooldex/internal/backoff"
	"github.com/tooldex/tooldex/service"
)

// CatalogBucket is the key-value bucket of the catalog journal.
const CatalogBucket = "TOOLDEX_CATALOG"

// Journal is the catalog journal on a Node: it implements service.Journal.
type Journal struct {
	n   *Node
	kv  jetstream.KeyValue
	pre string // subject prefix of the bucket's keys
	log *zap.Logger

	// mu guards the generation: the bucket's stream as this replica knows
	// it. A NATS that came back without its store holds a new stream
	// (another creation time) whose sequences start again at 1: the
	// revisions handed out are base plus the stream's sequence, base the
	// highest revision of the streams before, so that every write to the
	// new stream is later than anything this replica applied before.
	mu      sync.Mutex
	created time.Time // the stream's creation time; zero until known
	base    uint64
	top     uint64 // the highest revision handed out
	seqTop  uint64 // the highest sequence seen on the current stream
	gen     uint64 // how many new streams this replica found
	// regen is signalled when a write found a new stream: the watch
	// starts again from its beginning and writes back what this replica
	// holds.
	regen chan struct{}
}

const catalogDesc = "tooldex: frontend-registered tools, by tenant and name"

// OpenJournal creates the catalog bucket, or binds to it, waiting until
// ctx is done for NATS to be reachable.
func (n *Node) OpenJournal(ctx context.Context) (*Journal, error) {
	kv, err := n.bucket(ctx, CatalogBucket, catalogDesc, 0)
	if err != nil {
		return nil, err
	}
	j := &Journal{n: n, kv: kv, pre: "$KV." + CatalogBucket + ".", log: n.cfg.Logger.Named("journal"), regen: make(chan struct{}, 1)}
	if _, err := j.checkStream(ctx); err != nil {
		return nil, err
	}
	return j, nil
}

// checkStream finds the bucket's stream, creating the bucket when it is
// gone (a NATS that came back without its store: several replicas may
// race, creating a bucket that exists with the same configuration is a
// no-op), and reports whether it is another stream than the one this
// replica knew.
func (j *Journal) checkStream(ctx context.Context) (bool, error) {
	s, err := j.n.js.Stream(ctx, "KV_"+CatalogBucket)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		j.log.Warn("journal bucket gone (NATS without its store): creating it again")
		if _, err = j.n.js.CreateOrUpdateKeyValue(ctx, j.n.bucketConfig(CatalogBucket, catalogDesc, 0)); err == nil {
			s, err = j.n.js.Stream(ctx, "KV_"+CatalogBucket)
		}
	}
	if err != nil {
		return false, fmt.Errorf("replica: journal bucket: %w", err)
	}
	created := s.CachedInfo().Created
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.created.IsZero() {
		j.created = created
		return false, nil
	}
	if created.Equal(j.created) {
		return false, nil
	}
	j.created, j.base, j.seqTop = created, j.top, 0
	j.gen++
	j.log.Warn("journal bucket is a new one (NATS came back without its store): writing back this replica's registrations", zap.Uint64("base", j.base))
	return true, nil
}

// revisionLocked returns the revision of the current stream's sequence
// seq, recording it. The caller holds j.mu.
func (j *Journal) revisionLocked(seq uint64) uint64 {
	j.seqTop = max(j.seqTop, seq)
	rev := j.base + seq
	j.top = max(j.top, rev)
	return rev
}

var b64 = base64.RawURLEncoding.Strict()

// toolKey returns the key of tenant's tool name.
func toolKey(tenant, name string) string {
	return "t." + b64.EncodeToString([]byte(tenant)) + "." + b64.EncodeToString([]byte(name))
}

// parseKey returns the tenant and name of a key made by toolKey.
func parseKey(key string) (tenant, name string, err error) {
	rest, ok := strings.CutPrefix(key, "t.")
	te, ne, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || te == "" || ne == "" {
		return "", "", fmt.Errorf("replica: key %q is not t.<tenant>.<name>", key)
	}
	t, err1 := b64.DecodeString(te)
	n, err2 := b64.DecodeString(ne)
	if err := errors.Join(err1, err2); err != nil {
		return "", "", fmt.Errorf("replica: key %q: %w", key, err)
	}
	return string(t), string(n), nil
}

// Put stores tenant's tools and returns the revision of each once the
// bucket holds them all. The writes are pipelined: a batch costs about one
// round trip.
func (j *Journal) Put(ctx context.Context, tenant string, tools []*tooldexv1.Tool) ([]uint64, error) {
	msgs := make([]*nats.Msg, len(tools))
	for i, t := range tools {
		data, err := proto.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("replica: tool %q: %w", t.GetName(), err)
		}
		msgs[i] = &nats.Msg{Subject: j.pre + toolKey(tenant, t.GetName()), Data: data}
	}
	return j.publish(ctx, msgs)
}

// Remove records the removal of tenant's tools by name.
func (j *Journal) Remove(ctx context.Context, tenant string, names []string) ([]uint64, error) {
	msgs := make([]*nats.Msg, len(names))
	for i, name := range names {
		m := nats.NewMsg(j.pre + toolKey(tenant, name))
		m.Header.Set("KV-Operation", "DEL")
		msgs[i] = m
	}
	return j.publish(ctx, msgs)
}

// writeTimeout bounds a write when the caller's ctx has no deadline.
const writeTimeout = 10 * time.Second

// publish writes msgs and returns their revisions. A write that finds no
// stream (a NATS that came back without its store) creates the bucket
// again and is made once more; one acknowledged at a sequence this replica
// had already seen on its stream before the write went to a new stream,
// found before the revisions are handed out.
func (j *Journal) publish(ctx context.Context, msgs []*nats.Msg) ([]uint64, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, writeTimeout)
		defer cancel()
	}
	// Every write to the stream this replica knows gets a sequence above
	// those it saw before the write: one at or below them went to a new
	// stream.
	j.mu.Lock()
	seen := j.seqTop
	j.mu.Unlock()
	seqs, err := j.publishOnce(ctx, msgs)
	if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
		if _, cerr := j.checkStream(ctx); cerr != nil {
			return nil, fmt.Errorf("replica: journal write: %w (%v)", err, cerr)
		}
		j.signalRegen()
		seqs, err = j.publishOnce(ctx, msgs)
	}
	if err != nil {
		return nil, err
	}
	if len(seqs) > 0 && slices.Min(seqs) <= seen {
		if fresh, cerr := j.checkStream(ctx); cerr == nil && fresh {
			j.signalRegen()
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	revs := make([]uint64, len(seqs))
	for i, seq := range seqs {
		revs[i] = j.revisionLocked(seq)
	}
	return revs, nil
}

// signalRegen tells the watch to start again from the stream's beginning.
func (j *Journal) signalRegen() {
	select {
	case j.regen <- struct{}{}:
	default:
	}
}

func (j *Journal) publishOnce(ctx context.Context, msgs []*nats.Msg) ([]uint64, error) {
	futures := make([]jetstream.PubAckFuture, len(msgs))
	for i, m := range msgs {
		f, err := j.n.js.PublishMsgAsync(m)
		if err != nil {
			return nil, fmt.Errorf("replica: journal write: %w", err)
		}
		futures[i] = f
	}
	revs := make([]uint64, len(msgs))
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			revs[i] = ack.Sequence
		case err := <-f.Err():
			return nil, fmt.Errorf("replica: journal write: %w", err)
		case <-ctx.Done():
			return nil, fmt.Errorf("replica: journal write: %w", ctx.Err())
		}
	}
	return revs, nil
}

// Applier applies journaled writes to a replica's catalog: tool is nil
// for a removal. JournaledTools is what the replica holds that the
// journal should hold, written back to a bucket that lost its store.
// service.Server implements it.
type Applier interface {
	ApplyJournal(tenant, name string, tool *tooldexv1.Tool, rev uint64)
	JournaledTools() []service.JournaledTool
}

// Watch delivers every write in the journal to a, in revision order: first
// the bucket as it is (the latest value of each key; removals are
// skipped, as nothing of a removed tool is left to remove on a starting
// replica), then ready is called (once), then each later write as it
// comes. When the watch breaks (NATS restarted) it resumes after the last
// revision seen. When the bucket is a new one (a NATS that came back
// without its store), it writes back what a holds that the bucket lacks
// (create-if-absent: a key another replica wrote meanwhile, or removed,
// wins) and watches the new bucket from its beginning, removals
// included. It returns when ctx is done.
func (j *Journal) Watch(ctx context.Context, a Applier, ready func()) error {
	var last uint64 // the last sequence seen on the stream watched
	replaying := true
	j.mu.Lock()
	gen := j.gen
	j.mu.Unlock()
	writeBack := false
	bo := retryBackoff()
	for {
		_, err := j.checkStream(ctx)
		if err == nil {
			j.mu.Lock()
			if j.gen != gen {
				gen, last, replaying, writeBack = j.gen, 0, false, true
			}
			j.mu.Unlock()
			if writeBack {
				if err = j.writeBack(ctx, a); err == nil {
					writeBack = false
				}
			}
		}
		if err == nil {
			var opts []jetstream.WatchOpt
			if last > 0 {
				opts = append(opts, jetstream.ResumeFromRevision(last+1))
			}
			var w jetstream.KeyWatcher
			if w, err = j.kv.WatchAll(ctx, opts...); err == nil {
				bo.Reset()
				last, replaying = j.drain(ctx, w, a, gen, last, replaying, ready)
				_ = w.Stop()
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		delay := bo.Next()
		j.log.Warn("journal watch broken, resuming", zap.Uint64("after", last), zap.Error(err), zap.Duration("backoff", delay))
		if !backoff.Sleep(ctx, delay) {
			return ctx.Err()
		}
	}
}

// writeBack writes to a new bucket what a holds, each key only where the
// bucket has no entry (no value, no removal marker) for it.
func (j *Journal) writeBack(ctx context.Context, a Applier) error {
	held := a.JournaledTools()
	wrote, kept := 0, 0
	for _, jt := range held {
		data, err := proto.Marshal(jt.Tool)
		if err != nil {
			continue
		}
		_, err = j.kv.Update(ctx, toolKey(jt.Tenant, jt.Tool.GetName()), data, 0)
		switch {
		case err == nil:
			wrote++
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists):
			kept++ // written (or removed) meanwhile: the bucket's entry wins
		default:
			return fmt.Errorf("replica: journal write-back: %w", err)
		}
	}
	j.log.Info("journal written back to a new bucket", zap.Int("written", wrote), zap.Int("newer_in_bucket", kept))
	return nil
}

// stallAfter: a watch that delivers nothing for this long while NATS says
// the connection is down, or reconnected, is made anew.
const stallAfter = 5 * time.Second

func (j *Journal) drain(ctx context.Context, w jetstream.KeyWatcher, a Applier, gen, last uint64, replaying bool, ready func()) (uint64, bool) {
	tick := time.NewTicker(stallAfter)
	defer tick.Stop()
	reconnects := j.n.nc.Stats().Reconnects
	for {
		select {
		case <-ctx.Done():
			return last, replaying
		case <-j.regen:
			return last, replaying // a write found a new stream
		case <-tick.C:
			// A NATS server that restarted may have lost the watch's
			// consumer (or its whole store): start again after the last
			// revision, or from the beginning of a new stream.
			if j.n.nc.Stats().Reconnects != reconnects {
				return last, replaying
			}
		case e, ok := <-w.Updates():
			if !ok {
				return last, replaying
			}
			if e == nil {
				if replaying {
					replaying = false
					ready()
				}
				continue
			}
			if e.Revision() <= last {
				continue
			}
			j.mu.Lock()
			if j.gen != gen {
				j.mu.Unlock()
				return last, replaying // the stream changed under the watch
			}
			rev := j.revisionLocked(e.Revision())
			j.mu.Unlock()
			last = e.Revision()
			j.apply(a, e, rev, replaying)
		}
	}
}

func (j *Journal) apply(a Applier, e jetstream.KeyValueEntry, rev uint64, replaying bool) {
	tenant, name, err := parseKey(e.Key())
	if err != nil {
		j.log.Warn("journal: foreign key skipped", zap.Error(err))
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		if !replaying {
			a.ApplyJournal(tenant, name, nil, rev)
		}
		return
	}
	t := &tooldexv1.Tool{}
	if err := proto.Unmarshal(e.Value(), t); err != nil {
		j.log.Warn("journal: undecodable tool skipped", zap.String("key", e.Key()), zap.Uint64("revision", e.Revision()), zap.Error(err))
		return
	}
	a.ApplyJournal(tenant, name, t, rev)
}
