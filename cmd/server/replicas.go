package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tooldex/tooldex/internal/replica"
	"github.com/tooldex/tooldex/service"
)

// natsConfig is the replication part of the configuration.
type natsConfig struct {
	dataDir       string
	url           string
	creds         string
	ca, cert, key string
	replicas      int
	replayTimeout time.Duration
}

// defaultDataDir is where an embedded NATS keeps the catalog when
// --data-dir is not given: $XDG_STATE_HOME/tooldex, else
// ~/.local/state/tooldex (on macOS and Windows, the user config dir's
// tooldex); "" when no home is known.
func defaultDataDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "tooldex")
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "freebsd" || runtime.GOOS == "openbsd" {
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, ".local", "state", "tooldex")
		}
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "tooldex")
	}
	return ""
}

func natsFlags(fs *flag.FlagSet, n *natsConfig, getenv func(string) string) {
	fs.StringVar(&n.dataDir, "data-dir", defaultDataDir(getenv), `directory of the embedded NATS's JetStream store, which keeps the registered catalog across restarts ("": memory only, as one process without NATS)`)
	fs.StringVar(&n.url, "nats-url", "", "join an external NATS cluster (nats://host:4222, comma-separated for several) instead of the embedded server (--data-dir is then unused): replicas on one cluster share the catalog and each other's hosts")
	fs.StringVar(&n.creds, "nats-creds", "", "NATS credentials file (with --nats-url)")
	fs.StringVar(&n.ca, "nats-ca", "", "CA certificate file verifying the NATS servers (with --nats-url)")
	fs.StringVar(&n.cert, "nats-cert", "", "client certificate file for NATS TLS (with --nats-key)")
	fs.StringVar(&n.key, "nats-key", "", "client key file for NATS TLS (with --nats-cert)")
	fs.IntVar(&n.replicas, "nats-replicas", 1, "NATS servers keeping each bucket (3 on a 3-node cluster)")
	fs.DurationVar(&n.replayTimeout, "replay-timeout", 30*time.Second, "longest wait at start for the catalog's replay before serving (then it goes on while serving)")
}

func (n *natsConfig) check() error {
	if n.url == "" && (n.creds != "" || n.ca != "" || n.cert != "" || n.key != "") {
		return errors.New("--nats-creds, --nats-ca, --nats-cert and --nats-key need --nats-url")
	}
	if (n.cert == "") != (n.key == "") {
		return errors.New("--nats-cert and --nats-key go together")
	}
	if n.replicas < 1 || n.replicas > 5 {
		return fmt.Errorf("--nats-replicas must be 1 to 5, not %d", n.replicas)
	}
	if n.replayTimeout <= 0 {
		return fmt.Errorf("--replay-timeout must be positive, not %v", n.replayTimeout)
	}
	return nil
}

// startReplica connects to NATS (embedded or external), journals the
// catalog there and replays it into svc: it returns once the replay of the
// bucket as it was is done, or --replay-timeout passed (the replay goes
// on while serving). stop ends the watch and the connection. Without
// --nats-url and with --data-dir="" it does nothing.
func startReplica(ctx context.Context, n *natsConfig, svc *service.Server, log *zap.Logger) (stop func(), err error) {
	if n.url == "" && n.dataDir == "" {
		log.Info("catalog in memory only (--data-dir is empty)")
		return func() {}, nil
	}
	name, _ := os.Hostname()
	node, err := replica.Start(replica.Config{
		URL: n.url, DataDir: n.dataDir, Creds: n.creds, CA: n.ca, Cert: n.cert, Key: n.key,
		Name: "tooldex " + name, Replicas: n.replicas, Logger: log.Named("nats"),
	})
	if err != nil {
		return nil, err
	}
	openCtx, cancel := context.WithTimeout(ctx, n.replayTimeout)
	j, err := node.OpenJournal(openCtx)
	cancel()
	if err != nil {
		node.Close()
		return nil, err
	}
	svc.SetJournal(j)
	// Presence (hosts across replicas, forwarded calls) only on a shared
	// NATS: an embedded server listens on no port, so no other replica
	// can join it.
	id := replica.NewID()
	var pres *replica.Presence
	if !node.Embedded() {
		openCtx, cancel = context.WithTimeout(ctx, n.replayTimeout)
		pres, err = node.OpenPresence(openCtx, id, svc)
		cancel()
		if err != nil {
			node.Close()
			return nil, err
		}
		svc.SetForwarder(pres)
	}
	start := time.Now()
	ready := make(chan struct{})
	watchCtx, stopWatch := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = j.Watch(watchCtx, svc, sync.OnceFunc(func() { close(ready) })) })
	if pres != nil {
		wg.Go(func() { _ = pres.Run(watchCtx) })
	}
	timer := time.NewTimer(n.replayTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		log.Info("catalog replayed", zap.String("replica", id), zap.Bool("embedded", node.Embedded()), zap.String("data_dir", n.dataDir), zap.Duration("took", time.Since(start)))
	case <-timer.C:
		log.Warn("catalog replay still going on; serving meanwhile", zap.Duration("waited", n.replayTimeout))
	case <-ctx.Done():
	}
	return func() {
		stopWatch()
		wg.Wait()
		node.Close()
	}, nil
}
