package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/internal/logging"
	"github.com/tooldex/tooldex/internal/mcpbridge"
)

// run parses args and runs the bridge until ctx is done.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpbridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "tooldex server address (default $TOOLDEX_ADDR or localhost:50051)")
	config := fs.String("config", "", "MCP servers config file ({\"mcpServers\": {...}}), required")
	slots := fs.Int("slots", 0, "max concurrent calls per MCP server (0: the toolhost default)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	sampling := fs.Bool("sampling", false, "declare the sampling capability to every MCP server, so it offers its sampling tools (their requests are refused: tooldex cannot forward them to the frontend)")
	elicitation := fs.Bool("elicitation", false, "declare the elicitation capability to every MCP server (its requests are refused, as with --sampling)")
	var creds auth.ClientConfig
	creds.RegisterFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *config == "" {
		return errors.New("--config is required")
	}
	if *addr == "" {
		*addr = getenv("TOOLDEX_ADDR")
	}
	if *addr == "" {
		*addr = "localhost:50051"
	}
	log, err := logging.New(*logLevel, "json", stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	cfg, err := mcpbridge.LoadConfig(*config)
	if err != nil {
		return err
	}
	b, err := mcpbridge.New(cfg, mcpbridge.Options{Addr: *addr, Auth: creds, Logger: log, Slots: *slots, Sampling: *sampling, Elicitation: *elicitation})
	if err != nil {
		return err
	}
	log.Info("mcpbridge starting", zap.String("addr", *addr), zap.Int("servers", len(cfg.Servers)))
	err = b.Run(ctx)
	log.Info("mcpbridge stopped")
	return err
}
