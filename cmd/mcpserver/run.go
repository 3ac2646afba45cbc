package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/flagenv"
	"github.com/tooldex/tooldex/limit"
	"github.com/tooldex/tooldex/mcpfacade"
)

// mcpPath is the streamable HTTP endpoint's path, the one MCP clients are
// configured with (http://host:port/mcp).
const mcpPath = "/mcp"

// config is the command's configuration after flags and environment.
type config struct {
	addr        string
	http        string
	caller      string
	passThrough bool
	logLevel    string
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
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if _, err := flagenv.Apply(fs, getenv, nil); err != nil {
		return nil, err
	}
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
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	conn, err := grpc.NewClient(c.addr, append(limit.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
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

	lis, err := net.Listen("tcp", c.http)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	// A request body takes what a gRPC message behind it may (the SDK's
	// default is 4 MiB, a quarter of it).
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Logger: log, MaxRequestBodyBytes: limit.MaxMessageBytes})
	// MCP at /mcp only: any other path is 404, not a second endpoint.
	mux := http.NewServeMux()
	mux.Handle(mcpPath, handler)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lis) }()
	log.Info("serving MCP over streamable HTTP", "url", "http://"+lis.Addr().String()+mcpPath, "port", strconv.Itoa(lis.Addr().(*net.TCPAddr).Port), "tooldex", c.addr)
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
