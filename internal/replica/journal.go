package replica

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"

	"github.com/tooldex/tooldex/internal/backoff"
)

// CatalogBucket is the key-value bucket of the catalog journal.
const CatalogBucket = "TOOLDEX_CATALOG"

// Journal is the catalog journal on a Node: it implements service.Journal.
type Journal struct {
	n   *Node
	kv  jetstream.KeyValue
	pre string // subject prefix of the bucket's keys
	log *zap.Logger
}

// OpenJournal creates the catalog bucket, or binds to it, waiting until
// ctx is done for NATS to be reachable.
func (n *Node) OpenJournal(ctx context.Context) (*Journal, error) {
	kv, err := n.bucket(ctx, CatalogBucket, "tooldex: frontend-registered tools, by tenant and name", 0)
	if err != nil {
		return nil, err
	}
	return &Journal{n: n, kv: kv, pre: "$KV." + CatalogBucket + ".", log: n.cfg.Logger.Named("journal")}, nil
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

func (j *Journal) publish(ctx context.Context, msgs []*nats.Msg) ([]uint64, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, writeTimeout)
		defer cancel()
	}
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
// for a removal. service.Server implements it.
type Applier interface {
	ApplyJournal(tenant, name string, tool *tooldexv1.Tool, rev uint64)
}

// Watch delivers every write in the journal to a, in revision order: first
// the bucket as it is (the latest value of each key; removals are
// skipped, as nothing of a removed tool is left to remove on a starting
// replica), then ready is called (once), then each later write as it
// comes. When the watch breaks (NATS restarted) it resumes after the last
// revision seen. It returns when ctx is done.
func (j *Journal) Watch(ctx context.Context, a Applier, ready func()) error {
	var last uint64
	replaying := true
	bo := retryBackoff()
	for {
		var opts []jetstream.WatchOpt
		if last > 0 {
			opts = append(opts, jetstream.ResumeFromRevision(last+1))
		}
		w, err := j.kv.WatchAll(ctx, opts...)
		if err == nil {
			bo.Reset()
			last, replaying = j.drain(ctx, w, a, last, replaying, ready)
			_ = w.Stop()
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

// stallAfter: a watch that delivers nothing for this long while NATS says
// the connection is down, or reconnected, is made anew.
const stallAfter = 5 * time.Second

func (j *Journal) drain(ctx context.Context, w jetstream.KeyWatcher, a Applier, last uint64, replaying bool, ready func()) (uint64, bool) {
	tick := time.NewTicker(stallAfter)
	defer tick.Stop()
	reconnects := j.n.nc.Stats().Reconnects
	for {
		select {
		case <-ctx.Done():
			return last, replaying
		case <-tick.C:
			// A NATS server that restarted may have lost the watch's
			// consumer: start again after the last revision.
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
			last = e.Revision()
			j.apply(a, e, replaying)
		}
	}
}

func (j *Journal) apply(a Applier, e jetstream.KeyValueEntry, replaying bool) {
	tenant, name, err := parseKey(e.Key())
	if err != nil {
		j.log.Warn("journal: foreign key skipped", zap.Error(err))
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		if !replaying {
			a.ApplyJournal(tenant, name, nil, e.Revision())
		}
		return
	}
	t := &tooldexv1.Tool{}
	if err := proto.Unmarshal(e.Value(), t); err != nil {
		j.log.Warn("journal: undecodable tool skipped", zap.String("key", e.Key()), zap.Uint64("revision", e.Revision()), zap.Error(err))
		return
	}
	a.ApplyJournal(tenant, name, t, e.Revision())
}
