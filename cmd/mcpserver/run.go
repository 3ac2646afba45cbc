package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/flagenv"
	"github.com/tooldex/tooldex/internal/limit"
	"github.com/tooldex/tooldex/internal/logging"
	"github.com/tooldex/tooldex/internal/mcpfacade"
	"github.com/tooldex/tooldex/internal/origin"
)

// config is the command's configuration after flags and environment.
type config struct {
	addr        string
	http        string
	caller      string
	passThrough bool
	logLevel    string

	creds          auth.ClientConfig // to the tooldex server
	httpAuth       auth.ServerFlags  // of the --http listener
	resource       string
	allowedOrigins []string
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("mcpserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "localhost:50051", "tooldex gRPC server address (env TOOLDEX_ADDR)")
	fs.StringVar(&c.http, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio (env TOOLDEX_HTTP)")
	fs.StringVar(&c.caller, "caller", "", "caller identity sent to tooldex, matched by its permission rules (env TOOLDEX_CALLER)")
	fs.BoolVar(&c.passThrough, "pass-through", false, "also expose the core tools of the manifest as MCP tools (env TOOLDEX_PASS_THROUGH)")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error (env TOOLDEX_LOG_LEVEL)")
	c.creds.RegisterFlags(fs, getenv)
	c.httpAuth.RegisterFlags(fs, "http-")
	fs.StringVar(&c.resource, "resource-url", "", "public URL of the --http endpoint, its OAuth resource identifier (default http(s)://<--http address>/)")
	origins := fs.String("allowed-origins", "", "comma-separated browser origins (scheme://host[:port]) allowed besides loopback ones")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if _, err := flagenv.Apply(fs, getenv, nil); err != nil {
		return nil, err
	}
	allowed, err := origin.ParseList(*origins)
	if err != nil {
		return nil, fmt.Errorf("--allowed-origins: %w", err)
	}
	c.allowedOrigins = allowed
	return c, nil
}

// run serves MCP until ctx is done, the stdio client goes away, or the
// HTTP server fails.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log, err := logging.NewSlog(c.logLevel, stderr)
	if err != nil {
		return err
	}

	dialOpts, err := c.creds.DialOptions()
	if err != nil {
		return fmt.Errorf("tooldex client: %w", err)
	}
	conn, err := grpc.NewClient(c.addr, dialOpts...)
	if err != nil {
		return fmt.Errorf("tooldex client: %w", err)
	}
	defer conn.Close()
	client := tooldexv1.NewDiscoveryServiceClient(conn)
	server := mcpfacade.New(client, mcpfacade.Options{Caller: c.caller, PassThrough: c.passThrough, Logger: log})

	if c.http == "" {
		log.Info("serving MCP over stdio", "tooldex", c.addr)
		err := server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
		if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}

	lis, warn, err := c.httpAuth.Listen(ctx, c.http)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	tlsConf, authn := lis.TLS, lis.Authn
	if warn != "" {
		log.Warn(warn)
	}
	if !authn.Anonymous() && !c.creds.UsesTLS() && !c.creds.Insecure {
		if host, _, err := net.SplitHostPort(c.addr); err != nil || !auth.IsLoopbackHost(host) {
			lis.Close()
			return fmt.Errorf("users' bearer tokens would be forwarded over plaintext to %s: give --tls-ca (or --tls), or --insecure-token behind a trusted TLS-terminating proxy", c.addr)
		}
	}
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	resource := c.resource
	if resource == "" {
		resource = scheme + "://" + lis.Addr().String() + "/"
	}
	var issuers []string
	if c.httpAuth.Issuer != "" {
		issuers = []string{c.httpAuth.Issuer}
	}
	handler := mcpfacade.HTTPHandler(server, mcpfacade.HTTPOptions{
		Auth: authn, Resource: resource, AuthorizationServers: issuers, AllowedOrigins: c.allowedOrigins,
		// A request body takes what a gRPC message behind it may (the
		// SDK's default is 4 MiB, a quarter of it).
		Options: &mcp.StreamableHTTPOptions{Logger: log, MaxRequestBodyBytes: limit.MaxMessageBytes},
	})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, TLSConfig: tlsConf}
	serveErr := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			serveErr <- srv.ServeTLS(lis, "", "")
			return
		}
		serveErr <- srv.Serve(lis)
	}()
	watchCtx, stopWatch := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		authn.Watch(watchCtx, func(err error) {
			if err != nil {
				log.Error("tokens file not reloaded; the previous one stays in force", "error", err)
			}
		})
	}()
	defer func() { stopWatch(); <-watched }()
	log.Info("serving MCP over streamable HTTP", "url", scheme+"://"+lis.Addr().String()+mcpfacade.MCPPath, "port", strconv.Itoa(lis.Addr().(*net.TCPAddr).Port), "tooldex", c.addr)
	select {
	case err := <-serveErr:
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		_ = srv.Close()
	}
	<-serveErr
	log.Info("stopped")
	return nil
}

// nopWriteCloser keeps run from closing the caller's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
