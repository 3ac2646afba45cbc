package mcpbridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
)

// Config is an MCP client configuration in the usual mcpServers form:
//
//	{"mcpServers": {
//	  "fs":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"K": "V"}},
//	  "web": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}}
//	},
//	 "roots": [{"uri": "file:///home/me/project", "name": "project"}]}
//
// Roots are what the bridge answers roots/list with: the top-level list for
// every server without roots of its own.
type Config struct {
	Servers map[string]ServerConfig `json:"mcpServers"`
	Roots   []Root                  `json:"roots,omitempty"`
}

// Root is an MCP root: a file:// URI the servers may work under.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// maxRoots bounds a roots list.
const maxRoots = 64

// ServerConfig is one MCP server: a stdio command (Command, Args, Env, Cwd)
// or a streamable HTTP endpoint (URL, Headers).
type ServerConfig struct {
	// Type is optional: "stdio", "http" or "streamable-http"; inferred from
	// Command or URL when empty. "sse" is not supported.
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled servers are skipped.
	Disabled bool `json:"disabled,omitempty"`
	// Roots replace the top-level roots for this server.
	Roots []Root `json:"roots,omitempty"`
	// Sampling and Elicitation declare those client capabilities to the
	// server (as Options.Sampling and Options.Elicitation do for every
	// server), so that it offers the tools it keeps for such clients. The
	// requests themselves are answered with an error: tooldex has no way
	// yet to forward a server's request to the frontend's user or model.
	Sampling    bool `json:"sampling,omitempty"`
	Elicitation bool `json:"elicitation,omitempty"`
}

// Stdio reports whether s is a stdio (subprocess) server.
func (s ServerConfig) Stdio() bool { return s.Command != "" }

// LoadConfig reads and parses the configuration file at path.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: reading config: %w", err)
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig parses and validates an mcpServers configuration.
func ParseConfig(data []byte) (*Config, error) {
	var cfg Config
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("mcpbridge: parsing config: %w", err)
	}
	if cfg.Servers == nil {
		return nil, errors.New("mcpbridge: config has no \"mcpServers\" object")
	}
	var errs []error
	if err := validRoots(cfg.Roots); err != nil {
		errs = append(errs, fmt.Errorf("roots: %w", err))
	}
	for _, name := range cfg.names() {
		if err := cfg.Servers[name].validate(); err != nil {
			errs = append(errs, fmt.Errorf("mcpServers.%s: %w", name, err))
		}
		if name == "" {
			errs = append(errs, errors.New("mcpServers: empty server name"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("mcpbridge: invalid config: %w", err)
	}
	return &cfg, nil
}

// names returns the server names, sorted.
func (c *Config) names() []string {
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// validRoots checks a roots list: at most maxRoots file:// URIs.
func validRoots(roots []Root) error {
	if len(roots) > maxRoots {
		return fmt.Errorf("has %d roots, at most %d", len(roots), maxRoots)
	}
	for i, r := range roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" {
			return fmt.Errorf("[%d]: uri %q must be a file:// URI", i, r.URI)
		}
	}
	return nil
}

func (s ServerConfig) validate() error {
	if err := validRoots(s.Roots); err != nil {
		return fmt.Errorf("roots: %w", err)
	}
	switch {
	case s.Command != "" && s.URL != "":
		return errors.New("has both \"command\" and \"url\"")
	case s.Command == "" && s.URL == "":
		return errors.New("needs \"command\" or \"url\"")
	}
	switch s.Type {
	case "", "stdio", "http", "streamable-http", "streamableHttp":
	case "sse":
		return errors.New("type \"sse\" is not supported (use streamable HTTP)")
	default:
		return fmt.Errorf("unknown type %q", s.Type)
	}
	if s.Command != "" && s.Type != "" && s.Type != "stdio" {
		return fmt.Errorf("type %q with a \"command\"", s.Type)
	}
	if s.URL != "" {
		if s.Type == "stdio" {
			return errors.New("type \"stdio\" with a \"url\"")
		}
		u, err := url.Parse(s.URL)
		if err != nil {
			return fmt.Errorf("url: %w", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("url %q: scheme must be http or https", s.URL)
		}
		if len(s.Args) > 0 || len(s.Env) > 0 {
			return errors.New("\"args\"/\"env\" only apply to a \"command\"")
		}
	}
	if s.Command != "" && len(s.Headers) > 0 {
		return errors.New("\"headers\" only apply to a \"url\"")
	}
	return nil
}
