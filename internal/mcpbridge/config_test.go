package mcpbridge

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	got, err := ParseConfig([]byte(`{"mcpServers": {
		"fs": {"command": "node", "args": ["index.js", "/tmp"], "env": {"A": "1"}},
		"web": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
		"typed": {"type": "http", "url": "http://localhost:1/mcp"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{Servers: map[string]ServerConfig{
		"fs":    {Command: "node", Args: []string{"index.js", "/tmp"}, Env: map[string]string{"A": "1"}},
		"web":   {URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"}},
		"typed": {Type: "http", URL: "http://localhost:1/mcp"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseConfig = %+v, want %+v", got, want)
	}
	if got, want := got.names(), []string{"fs", "typed", "web"}; !reflect.DeepEqual(got, want) {
		t.Errorf("names = %v, want %v", got, want)
	}
	if !got.Servers["fs"].Stdio() || got.Servers["web"].Stdio() {
		t.Errorf("Stdio wrong")
	}

	got, err = ParseConfig([]byte(`{"mcpServers": {"a": {"command": "x", "sampling": true, "elicitation": true, "roots": [{"uri": "file:///a"}]}},
		"roots": [{"uri": "file:///home/me", "name": "home"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want = &Config{
		Servers: map[string]ServerConfig{"a": {Command: "x", Sampling: true, Elicitation: true, Roots: []Root{{URI: "file:///a"}}}},
		Roots:   []Root{{URI: "file:///home/me", Name: "home"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseConfig with roots and capabilities = %+v, want %+v", got, want)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"not json", `{`, "parsing config"},
		{"no servers", `{}`, `no "mcpServers"`},
		{"neither", `{"mcpServers": {"a": {}}}`, `needs "command" or "url"`},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}`, `both`},
		{"sse", `{"mcpServers": {"a": {"type": "sse", "url": "http://h"}}}`, `not supported`},
		{"bad type", `{"mcpServers": {"a": {"type": "ws", "url": "http://h"}}}`, `unknown type`},
		{"bad scheme", `{"mcpServers": {"a": {"url": "ftp://h"}}}`, `scheme`},
		{"headers on command", `{"mcpServers": {"a": {"command": "x", "headers": {"k": "v"}}}}`, `"headers"`},
		{"names both errors", `{"mcpServers": {"a": {}, "b": {}}}`, `mcpServers.b`},
		{"root not file", `{"mcpServers": {"a": {"command": "x"}}, "roots": [{"uri": "https://h/x"}]}`, `roots: [0]: uri "https://h/x" must be a file:// URI`},
		{"server root not file", `{"mcpServers": {"a": {"command": "x", "roots": [{"uri": "/tmp"}]}}}`, `mcpServers.a: roots: [0]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseConfig(%s) error = %v, want it to contain %q", tt.json, err, tt.want)
			}
		})
	}
}
