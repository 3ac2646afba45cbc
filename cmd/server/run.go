package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/apidesc"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/demo"
	"github.com/tooldex/tooldex/internal/demohost"
	"github.com/tooldex/tooldex/internal/flagenv"
	"github.com/tooldex/tooldex/internal/limit"
	"github.com/tooldex/tooldex/internal/logging"
	"github.com/tooldex/tooldex/internal/permission"
	"github.com/tooldex/tooldex/internal/semantic"
	"github.com/tooldex/tooldex/internal/toolfile"
	"github.com/tooldex/tooldex/registry"
	"github.com/tooldex/tooldex/service"
	"github.com/tooldex/tooldex/toolhost"
)

// config is the server's configuration after flags and environment.
type config struct {
	addr         string
	catalogs     []string
	shards       int
	coreTools    string
	exclude      string
	includeForce string
	scorer       index.Scorer
	wKeyword     float64
	wTFIDF       float64
	damping      float64
	logLevel     string
	logFormat    string
	maxMsgBytes  int
	grace        time.Duration
	demoHost     bool
	demoCatalog  bool
	filesDir     string
	permissions  string
	approvalKey  string
	metricsAddr  string
	pprofAddr    string
	maxExecute   time.Duration
	heartbeat    time.Duration

	limits service.LimitsConfig
	// catalog takes the tenant cap and the name hold.
	catalog catalog.Config

	semantic        semantic.Mode
	embedderURL     string
	embedderModel   string
	embedderKeyEnv  string
	semanticRatio   float64
	semanticTimeout time.Duration
	vectorCache     string // folder of the dense store's vector file ("": none)

	auth auth.ServerFlags
	nats natsConfig
	web  webConfig
}

// specEnv maps flags to the spec's environment variable names, read when
// neither the flag nor its TOOLDEX_ variable is set.
var specEnv = map[string]string{
	"exclude":        "TOOL_SEARCH_EXCLUDE",
	"include-force":  "TOOL_SEARCH_INCLUDE_FORCE",
	"weight-keyword": "TOOL_SEARCH_WEIGHT_KEYWORD",
	"weight-tfidf":   "TOOL_SEARCH_WEIGHT_TFIDF",
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("tooldex-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "localhost:50051", "listen address (host:port; port 0 picks a free one)")
	catalogs := fs.String("catalog", "", "comma-separated tool files to load at start (MCP tools/list, OpenAI or Anthropic tools arrays, tooldex JSON/JSONL)")
	fs.BoolVar(&c.demoHost, "demo-host", true, "run the built-in demo tool host (time, calculator, text statistics, files under --files-dir)")
	fs.BoolVar(&c.demoCatalog, "demo-catalog", false, "also load the embedded demo catalog (Claude Code and MCP tool definitions, search only) when no --catalog is given")
	fs.StringVar(&c.filesDir, "files-dir", "", "directory the demo host's read_file and list_files tools may read (empty: those tools are off)")
	fs.StringVar(&c.permissions, "permissions", "", "permission rules file (JSON: allow / deny / ask by tool-name pattern)")
	fs.StringVar(&c.approvalKey, "approval-key-file", "", "file holding the key (at least 32 bytes) that signs approval tokens, so tokens survive a restart and every replica accepts them (empty: a random key per process)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address at /metrics (empty: off)")
	fs.StringVar(&c.pprofAddr, "pprof-addr", "", "serve Go profiles (net/http/pprof) on this address at /debug/pprof/ (empty: off; never expose it)")
	fs.DurationVar(&c.maxExecute, "max-execute-timeout", 60*time.Second, "longest an Execute call may run, whatever the caller's deadline")
	fs.DurationVar(&c.heartbeat, "heartbeat", 5*time.Second, "host heartbeat interval; a host silent for three intervals is declared dead")
	fs.IntVar(&c.shards, "shards", 0, "index shards (0: one below 32,768 tools, GOMAXPROCS at most 4 from there, where they are scored in parallel)")
	fs.StringVar(&c.coreTools, "core-tools", "", "comma-separated core tool names, replacing the default 31")
	fs.StringVar(&c.exclude, "exclude", "", "comma-separated names or patterns (mcp__x__*) kept out of search")
	fs.StringVar(&c.includeForce, "include-force", "", "comma-separated names or patterns forced into search even when core")
	scorer := fs.String("scorer", "bm25f", "text scorer: bm25f, or cosine (the spec's TF-IDF, with its 0.4/0.6 weights and name boost)")
	fs.Float64Var(&c.wKeyword, "weight-keyword", 0, "weight of the keyword score in the hybrid (0: the scorer's default, 0.2 for bm25f, 0.4 for cosine)")
	fs.Float64Var(&c.wTFIDF, "weight-tfidf", 0, "weight of the text score in the hybrid (0: the scorer's default, 0.8 for bm25f, 0.6 for cosine)")
	fs.Float64Var(&c.damping, "request-damping", 0, "weigh down the words people ask with (help, find, please): a query word of request share g weighs (1 − g)^this (0: the scorer's default, 48 for bm25f, none for cosine; negative: none)")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "console", "console or json")
	fs.IntVar(&c.maxMsgBytes, "max-message-bytes", limit.MaxMessageBytes, "largest gRPC message accepted or sent (hosts, the bridge, the façade and the CLI take at most 16 MiB; a larger call to a host fails alone)")
	fs.DurationVar(&c.grace, "shutdown-grace", 10*time.Second, "how long in-flight calls may finish at shutdown")
	mode := fs.String("semantic", "", "dense retrieval fused into Search and Discover ranking: off, static (the embedded distilled model), full (the embedded sentence encoder) or external (--embedder-url) (default: "+string(semantic.DefaultMode)+", or external with --embedder-url)")
	fs.StringVar(&c.embedderURL, "embedder-url", "", "OpenAI-compatible embeddings API base (http://localhost:11434/v1 for Ollama), for --semantic=external")
	fs.StringVar(&c.embedderModel, "embedder-model", "", "embedding model name, required with --embedder-url")
	fs.StringVar(&c.embedderKeyEnv, "embedder-key-env", "", "environment variable holding the embedder's API key (sent as a bearer token)")
	fs.Float64Var(&c.semanticRatio, "semantic-ratio", 0, "dense share of the fused ranking score, in (0, 1] (default: the mode's, 0.1 static, 0.25 full, 0.2 external)")
	fs.StringVar(&c.vectorCache, "vector-cache", "", `folder of the file that keeps the tools' dense vectors across restarts, by model, so a restart embeds only the tools that changed (default: --data-dir's "vectors"; "" with --data-dir "": none)`)
	fs.DurationVar(&c.semanticTimeout, "semantic-timeout", 250*time.Millisecond, "longest wait for a query's embedding; past it the lexical ranking answers alone")
	fs.Float64Var(&c.limits.Calls.Rate, "limit-rate", limit.DefaultRate, "each client's RPCs per second (a client: its principal, else its IP address; negative: no limit)")
	fs.IntVar(&c.limits.Calls.Burst, "limit-burst", 0, "RPCs a client may send at once above --limit-rate (0: two seconds' worth)")
	fs.IntVar(&c.limits.Calls.MaxInFlight, "limit-in-flight", limit.DefaultMaxInFlight, "each client's RPCs running at once (negative: no limit)")
	fs.IntVar(&c.limits.Streams.MaxInFlight, "limit-streams", service.DefaultStreamLimits.MaxInFlight, "each client's open streams (host sessions) (negative: no limit)")
	fs.BoolVar(&c.limits.Loopback, "limit-loopback", false, "also limit unauthenticated clients on this machine (loopback), who all share one address")
	fs.IntVar(&c.limits.Calls.MaxKeys, "limit-clients", limit.DefaultMaxKeys, "clients whose limits are remembered; the least recently seen idle one is forgotten first")
	fs.IntVar(&c.catalog.MaxTenantTools, "max-tenant-tools", catalog.DefaultMaxTenantTools, "tools a tenant may hold of its own (RESOURCE_EXHAUSTED past it)")
	fs.DurationVar(&c.catalog.Hold, "name-hold", catalog.DefaultHold, "how long a tool name and a host id stay their principal's after its last host leaves, so a stream blip never hands them to another principal")
	c.auth.RegisterFlags(fs, "")
	natsFlags(fs, &c.nats, getenv)
	checkWeb := webFlags(fs, &c.web)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	set, err := flagenv.Apply(fs, getenv, specEnv)
	if err != nil {
		return nil, err
	}
	c.catalogs = service.SplitList(*catalogs)
	if c.scorer, err = index.ParseScorer(*scorer); err != nil {
		return nil, fmt.Errorf("--scorer: %w", err)
	}
	// A weight not given takes the scorer's default; one given alone
	// keeps the other at its default too.
	def := index.ScorerConfig(c.scorer)
	if !set["weight-keyword"] && c.wKeyword == 0 {
		c.wKeyword = def.KeywordWeight
	}
	if !set["weight-tfidf"] && c.wTFIDF == 0 {
		c.wTFIDF = def.TFIDFWeight
	}
	if c.wKeyword < 0 || c.wTFIDF < 0 || c.wKeyword+c.wTFIDF == 0 {
		return nil, fmt.Errorf("weights must be non-negative and not both zero (keyword %v, tfidf %v)", c.wKeyword, c.wTFIDF)
	}
	if c.semantic, err = parseSemantic(*mode, c.embedderURL, c.embedderModel); err != nil {
		return nil, err
	}
	if !set["semantic-ratio"] {
		c.semanticRatio = semantic.DefaultRatio(c.semantic)
	}
	if !(c.semanticRatio > 0 && c.semanticRatio <= 1) {
		return nil, fmt.Errorf("--semantic-ratio must be in (0, 1], not %v", c.semanticRatio)
	}
	if c.catalog.MaxTenantTools <= 0 {
		return nil, fmt.Errorf("--max-tenant-tools must be positive, not %d", c.catalog.MaxTenantTools)
	}
	if c.catalog.Hold < 0 {
		return nil, fmt.Errorf("--name-hold must not be negative, not %v", c.catalog.Hold)
	}
	if c.semanticTimeout <= 0 {
		return nil, fmt.Errorf("--semantic-timeout must be positive, not %v", c.semanticTimeout)
	}
	if err := c.nats.check(); err != nil {
		return nil, err
	}
	if !set["vector-cache"] && c.nats.dataDir != "" {
		c.vectorCache = filepath.Join(c.nats.dataDir, "vectors")
	}
	if err := checkWeb(); err != nil {
		return nil, err
	}
	return c, nil
}

// run starts the server and blocks until ctx is done or serving fails.
// Shutdown order: health NOT_SERVING, the demo host leaves, hosts drain,
// host streams are cancelled, the web listener stops, GracefulStop within
// --shutdown-grace, Stop,
// then the registry loop and the metrics server.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	c, err := parseFlags(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log, err := logging.New(c.logLevel, c.logFormat, stderr)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck // nothing to do about a failed flush

	policy := service.Policy{
		Exclude:      service.SplitList(c.exclude),
		IncludeForce: service.SplitList(c.includeForce),
	}
	if c.coreTools != "" {
		policy.Core = service.SplitList(c.coreTools)
	}
	perms := permission.AllowAll()
	if c.permissions != "" {
		if perms, err = permission.Load(c.permissions); err != nil {
			return fmt.Errorf("--permissions: %w", err)
		}
	}
	approvalKey, err := readApprovalKey(c.approvalKey)
	if err != nil {
		return err
	}
	var metrics *service.Metrics
	if c.metricsAddr != "" {
		metrics = service.NewMetrics()
	}
	store, err := newSemanticStore(c, getenv, log)
	if err != nil {
		return err
	}
	svc := service.New(service.Config{
		Policy:          policy,
		Index:           index.Config{Shards: c.shards, Scorer: c.scorer, KeywordWeight: c.wKeyword, TFIDFWeight: c.wTFIDF, RequestDamping: c.damping},
		Logger:          log,
		Registry:        registry.Config{HeartbeatInterval: c.heartbeat},
		Permissions:     perms,
		ApprovalKey:     approvalKey,
		MaxExecute:      c.maxExecute,
		Metrics:         metrics,
		Semantic:        store,
		SemanticRatio:   c.semanticRatio,
		SemanticTimeout: c.semanticTimeout,
		Catalog:         c.catalog,
	})
	if err := loadCatalogs(ctx, svc, c, log); err != nil {
		return err
	}
	// The catalog files first, then the journal's replay over them.
	stopReplica, err := startReplica(ctx, &c.nats, svc, log)
	if err != nil {
		return err
	}
	defer stopReplica()

	lis, warn, err := c.auth.Listen(ctx, c.addr)
	if err != nil {
		return err
	}
	tlsConf, authn := lis.TLS, lis.Authn
	if warn != "" {
		log.Warn(warn)
	}
	// Outermost first: metrics (only when on: they cost 1-2 µs per RPC,
	// docs/BENCHMARKS.md) count every call; the log records each call's
	// code, refused ones too, and recovers panics of everything inside it;
	// authentication puts the principal in the context; the per-client
	// limits, keyed by that principal, refuse before any work is done.
	limits := service.NewLimits(c.limits, log)
	unary := []grpc.UnaryServerInterceptor{service.UnaryInterceptor(log), service.AuthUnary(authn), limits.UnaryInterceptor()}
	stream := []grpc.StreamServerInterceptor{service.StreamRecoverInterceptor(log), service.AuthStream(authn), limits.StreamInterceptor()}
	if metrics != nil {
		unary = append([]grpc.UnaryServerInterceptor{metrics.UnaryInterceptor()}, unary...)
		stream = append([]grpc.StreamServerInterceptor{metrics.StreamInterceptor()}, stream...)
	}
	serverOpts := service.CodecOptions()
	if tlsConf != nil {
		serverOpts = append(serverOpts, grpc.Creds(credentials.NewTLS(tlsConf)))
	}
	gs := grpc.NewServer(append(serverOpts,
		grpc.MaxRecvMsgSize(c.maxMsgBytes),
		grpc.MaxSendMsgSize(c.maxMsgBytes),
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
		// Hosts hold streams for hours: ping idle ones, never cap their age.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: time.Minute, Timeout: 20 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	)...)
	service.RegisterDiscoveryService(gs, svc)
	tooldexv1.RegisterHostServiceServer(gs, svc.Hosts())
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	hs.SetServingStatus(tooldexv1.DiscoveryService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	apidesc.RegisterReflection(gs) // descriptors with the proto's comments
	metrics.InitializeMetrics(gs)  // every method's grpc_server_* series, at zero

	// Goroutines owned here, each stopped in the shutdown below.
	var wg sync.WaitGroup
	regCtx, stopReg := context.WithCancel(context.Background())
	defer stopReg()
	wg.Go(func() { _ = svc.Run(regCtx) })
	wg.Go(func() {
		authn.Watch(regCtx, func(err error) {
			if err != nil {
				log.Error("tokens file not reloaded; the previous one stays in force", zap.Error(err))
				return
			}
			log.Info("tokens file reloaded", zap.String("file", c.auth.TokensFile), zap.Int("entries", authn.Tokens().Len()))
		})
	})
	serveErr := make(chan error, 1)
	go func() { serveErr <- gs.Serve(lis) }()
	var metricsSrv, pprofSrv *http.Server
	var web *webServer
	// abort stops what was started so far, for a return before serving.
	abort := func() {
		web.stop(0)
		gs.Stop()
		for _, srv := range []*http.Server{metricsSrv, pprofSrv} {
			if srv != nil {
				srv.Close()
			}
		}
		stopReg()
		wg.Wait()
	}
	if metrics != nil {
		mlis, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			abort()
			return fmt.Errorf("metrics listen: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", requireScope(authn, promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}), auth.ScopeMetrics, auth.ScopeAdmin))
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, TLSConfig: tlsConf}
		wg.Go(func() { _ = serveHTTP(metricsSrv, mlis) })
		log.Info("metrics", zap.String("addr", mlis.Addr().String()))
	}
	if c.pprofAddr != "" {
		plis, err := net.Listen("tcp", c.pprofAddr)
		if err != nil {
			abort()
			return fmt.Errorf("pprof listen: %w", err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		pprofSrv = &http.Server{Handler: requireScope(authn, mux, auth.ScopeAdmin), ReadHeaderTimeout: 5 * time.Second, TLSConfig: tlsConf}
		wg.Go(func() { _ = serveHTTP(pprofSrv, plis) })
		log.Info("pprof", zap.String("addr", plis.Addr().String()))
	}
	if c.web.addr != "" {
		if web, err = startWeb(c, gs, tlsConf, log); err != nil {
			abort()
			return err
		}
	}
	hostCtx, stopHost := context.WithCancel(context.Background())
	defer stopHost()
	if c.demoHost {
		dialOpts, credErr := demoHostCredentials(authn, tlsConf)
		if credErr != nil {
			return fmt.Errorf("demo host: %w", credErr)
		}
		host := toolhost.New(toolhost.Config{Addr: lis.Addr().String(), HostID: "demo", Version: "tooldex-demo", Logger: log.Named("demohost"), DialOptions: dialOpts})
		if err := demohost.Register(host, c.filesDir); err != nil {
			abort()
			return fmt.Errorf("demo host: %w", err)
		}
		wg.Go(func() { _ = host.Run(hostCtx) })
		readyCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := host.WaitReady(readyCtx)
		cancel()
		if err != nil {
			log.Warn("demo host not ready", zap.Error(err))
		}
	}
	log.Info("serving", zap.String("addr", lis.Addr().String()), zap.Int("tools", svc.Index().Len()), zap.Int("deferred", svc.Index().Deferred()))

	select {
	case err = <-serveErr:
		err = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", zap.Duration("grace", c.grace))
	// 1. Health says NOT_SERVING, so balancers stop sending new work.
	hs.Shutdown()
	// 2. The in-process demo host drains and leaves.
	stopHost()
	// 3. Hosts are told to drain: no new calls; in-flight calls may finish
	// within half the grace period.
	svc.DrainHosts(c.grace)
	drainCtx, cancelDrain := context.WithTimeout(context.Background(), c.grace/2)
	svc.WaitCalls(drainCtx)
	cancelDrain()
	// 4. Host streams are cancelled (they never end by themselves).
	svc.CloseHosts()
	// 5. The web listener's calls finish within the grace period (gs's
	// GracefulStop would cut them: they are not its own transport's);
	web.stop(c.grace)
	// 6. GracefulStop waits for in-flight RPCs, within the grace period;
	// 7. then Stop cuts what is left.
	stopped := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(stopped)
	}()
	timer := time.NewTimer(c.grace)
	defer timer.Stop()
	select {
	case <-stopped:
	case <-timer.C:
		log.Warn("grace period over, stopping in-flight calls")
		gs.Stop()
		<-stopped
	}
	if err == nil {
		<-serveErr
	}
	// 8. The registry's liveness loop and the metrics server stop last.
	stopReg()
	for _, srv := range []*http.Server{metricsSrv, pprofSrv} {
		if srv != nil {
			shutCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = srv.Shutdown(shutCtx)
			cancel()
		}
	}
	wg.Wait()
	log.Info("stopped")
	return err
}

// minApprovalKey is the shortest approval key accepted: HMAC-SHA256 keys
// shorter than the hash are weaker than the MAC.
const minApprovalKey = 32

// readApprovalKey reads the --approval-key-file key (surrounding white space
// dropped, so `openssl rand -hex 32 > key` works); "" means none.
func readApprovalKey(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--approval-key-file: %w", err)
	}
	key := bytes.TrimSpace(data)
	if len(key) < minApprovalKey {
		return nil, fmt.Errorf("--approval-key-file: %s holds %d bytes, at least %d are needed (e.g. openssl rand -hex 32)", path, len(key), minApprovalKey)
	}
	return key, nil
}

// catalogBatch is how many tools of a catalog file are decoded and
// registered at a time. Measured at 100k tools (docs/BENCHMARKS.md): the
// server's resident memory is 229 MB with batches of 10,000 (the most a
// RegisterTools request takes), 199 MB with 1,000 and the same with 250;
// the peak 360, 305 and 305 MB.
const catalogBatch = 1000

// loadCatalogs registers the --catalog files, or the demo catalog. Each
// file is registered a batch at a time as it is decoded (toolfile.Batches),
// so that a large catalog never exists whole as messages.
func loadCatalogs(ctx context.Context, svc *service.Server, c *config, log *zap.Logger) error {
	type file struct {
		name string
		read func(fn func([]*tooldexv1.Tool) error) error
	}
	var files []file
	if len(c.catalogs) > 0 {
		// Catalog files are loaded before serving: collect garbage more
		// often meanwhile (registering makes garbage, and the fewer pages
		// it spreads the kept objects over, the less stays resident), then
		// hand what was freed back to the OS.
		old := debug.SetGCPercent(25)
		defer func() {
			debug.SetGCPercent(old)
			debug.FreeOSMemory()
		}()
	}
	for _, path := range c.catalogs {
		files = append(files, file{path, func(fn func([]*tooldexv1.Tool) error) error {
			return toolfile.ReadFileBatches(path, catalogBatch, fn)
		}})
	}
	if len(files) == 0 && c.demoCatalog {
		files = append(files, file{demo.Name, func(fn func([]*tooldexv1.Tool) error) error {
			return toolfile.Batches(demo.Name, demo.Catalog, catalogBatch, fn)
		}})
	}
	for _, f := range files {
		n := 0
		err := f.read(func(batch []*tooldexv1.Tool) error {
			for _, t := range batch {
				t.Source = &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_CATALOG, Id: f.name}
			}
			// Catalog files are offered to every tenant: the shared catalog.
			if _, err := svc.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: batch, Tenant: auth.SharedTenant}); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			n += len(batch)
			return nil
		})
		if err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		log.Info("catalog loaded", zap.String("file", f.name), zap.Int("tools", n))
	}
	return nil
}
