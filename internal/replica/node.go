package replica

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/tooldex/tooldex/internal/backoff"
)

// Config says where the NATS of the replicas is.
type Config struct {
	// URL joins an external NATS cluster (nats://host:4222, several
	// comma-separated); empty starts an embedded server on DataDir.
	URL string
	// DataDir is the embedded server's JetStream store (made when absent).
	DataDir string
	// Creds is a NATS credentials file; CA, Cert and Key configure TLS to
	// an external cluster (CA alone: verify the servers; Cert and Key: a
	// client certificate).
	Creds, CA, Cert, Key string
	// Name names the connection (the replica), for NATS monitoring.
	Name string
	// Replicas is how many NATS servers keep each bucket (1 for the
	// embedded server; 3 in a 3-node cluster). 0 means 1.
	Replicas int
	// Logger receives connection events; nil means none.
	Logger *zap.Logger
}

// maxPayload is the embedded server's largest message: a tool definition
// with its schema fits (an external cluster's own max_payload applies
// there).
const maxPayload = 8 << 20

// Node is a connection to the replicas' NATS, and the embedded server
// when there is one.
type Node struct {
	cfg Config
	ns  *server.Server // nil when external
	// lock holds the data directory (one embedded server per directory:
	// JetStream's store does not lock it itself).
	lock *flock.Flock
	nc   *nats.Conn
	js   jetstream.JetStream
}

// Start connects to NATS as cfg says: it starts the embedded server
// (listening on no port: the connection is in-process) or connects to the
// external cluster, retrying in the background when it is not up yet.
func Start(cfg Config) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	n := &Node{cfg: cfg}
	log := cfg.Logger
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DrainTimeout(2 * time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("nats disconnected", zap.Error(err)) }),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats reconnected", zap.String("url", c.ConnectedUrlRedacted())) }),
	}
	if cfg.URL == "" {
		if cfg.DataDir == "" {
			return nil, errors.New("replica: neither a NATS URL nor a data directory")
		}
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("replica: data directory: %w", err)
		}
		lock := flock.New(filepath.Join(cfg.DataDir, "tooldex.lock"))
		if ok, err := lock.TryLock(); err != nil || !ok {
			return nil, fmt.Errorf("replica: data directory %s is in use by another tooldex process (%v): give each its own --data-dir, or join them on one NATS with --nats-url", cfg.DataDir, err)
		}
		n.lock = lock
		ns, err := server.NewServer(&server.Options{
			ServerName: "tooldex-embedded",
			DontListen: true,
			JetStream:  true,
			StoreDir:   cfg.DataDir,
			MaxPayload: maxPayload,
			NoSigs:     true,
			NoLog:      true,
		})
		if err != nil {
			_ = lock.Unlock()
			return nil, fmt.Errorf("replica: embedded NATS: %w", err)
		}
		ns.Start()
		if !ns.ReadyForConnections(30 * time.Second) {
			ns.Shutdown()
			_ = lock.Unlock()
			return nil, errors.New("replica: embedded NATS not ready within 30s")
		}
		n.ns = ns
		opts = append(opts, nats.InProcessServer(ns))
	} else {
		opts = append(opts, nats.RetryOnFailedConnect(true))
		if cfg.Creds != "" {
			opts = append(opts, nats.UserCredentials(cfg.Creds))
		}
		if cfg.CA != "" {
			opts = append(opts, nats.RootCAs(cfg.CA))
		}
		if cfg.Cert != "" || cfg.Key != "" {
			opts = append(opts, nats.ClientCert(cfg.Cert, cfg.Key))
		}
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("replica: connecting to NATS: %w", err)
	}
	n.nc = nc
	if n.js, err = jetstream.New(nc); err != nil {
		n.Close()
		return nil, fmt.Errorf("replica: JetStream: %w", err)
	}
	return n, nil
}

// Embedded reports whether the node runs its own NATS server.
func (n *Node) Embedded() bool { return n.ns != nil }

// Conn returns the NATS connection.
func (n *Node) Conn() *nats.Conn { return n.nc }

// bucket creates the key-value bucket name, or binds to it, with history
// 1 and file storage, retrying until ctx is done while NATS is not
// reachable.
func (n *Node) bucket(ctx context.Context, name, desc string, ttl time.Duration) (jetstream.KeyValue, error) {
	cfg := n.bucketConfig(name, desc, ttl)
	bo := retryBackoff()
	for {
		kv, err := n.js.CreateOrUpdateKeyValue(ctx, cfg)
		if err == nil {
			return kv, nil
		}
		delay := bo.Next()
		n.cfg.Logger.Warn("bucket not ready, retrying", zap.String("bucket", name), zap.Error(err), zap.Duration("backoff", delay))
		if !backoff.Sleep(ctx, delay) {
			return nil, fmt.Errorf("replica: bucket %s: %w (last error: %v)", name, ctx.Err(), err)
		}
	}
}

// bucketConfig is the configuration of the bucket name: history 1, file
// storage, on the configured number of NATS servers.
func (n *Node) bucketConfig(name, desc string, ttl time.Duration) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket: name, Description: desc, History: 1, TTL: ttl,
		Storage: jetstream.FileStorage, Replicas: n.cfg.Replicas,
	}
}

// retryBackoff is the schedule of the replica's retry loops (a bucket
// not ready, a broken watch): 100ms doubled up to 2s, no jitter.
func retryBackoff() backoff.Backoff {
	return backoff.Backoff{Min: 100 * time.Millisecond, Max: 2 * time.Second}
}

// Close drains the connection and stops the embedded server.
func (n *Node) Close() {
	if n.nc != nil {
		_ = n.nc.Drain()
		for n.nc.IsDraining() {
			time.Sleep(5 * time.Millisecond)
		}
		n.nc.Close()
	}
	if n.ns != nil {
		n.ns.Shutdown()
		n.ns.WaitForShutdown()
	}
	if n.lock != nil {
		_ = n.lock.Unlock()
	}
}
