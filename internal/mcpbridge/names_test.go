package mcpbridge

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/internal/toolname"
)

func TestServerName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"fs", "fs"},
		{"my.server", "my_server"},
		{"a b/c", "a_b_c"},
		{"", "_"},
		{"ünï", "_n_"},
		{strings.Repeat("s", 32), strings.Repeat("s", 32)},
	}
	for _, tt := range tests {
		if got := ServerName(tt.in); got != tt.want {
			t.Errorf("ServerName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := ServerName(strings.Repeat("s", 40))
	if len(long) != 32 || !toolname.Valid(long) {
		t.Errorf("ServerName(40×s) = %q (len %d), want 32 legal characters", long, len(long))
	}
	if ServerName(strings.Repeat("s", 40)) == ServerName(strings.Repeat("s", 41)) {
		t.Errorf("long server names that differ map to one name")
	}
}

func TestToolName(t *testing.T) {
	tests := []struct{ server, tool, want string }{
		{"fs", "read_file", "mcp__fs__read_file"},
		{"fs", "read-file", "mcp__fs__read-file"},
		{"fs", "files.read", "mcp__fs__files_read"},
		{"fs", "a/b c", "mcp__fs__a_b_c"},
	}
	for _, tt := range tests {
		if got := ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
	long1 := ToolName("server", strings.Repeat("x", 80)+"1")
	long2 := ToolName("server", strings.Repeat("x", 80)+"2")
	for _, n := range []string{long1, long2} {
		if !toolname.Valid(n) || len(n) != 64 || !strings.HasPrefix(n, "mcp__server__xxx") {
			t.Errorf("long name %q (len %d): want 64 legal characters starting mcp__server__", n, len(n))
		}
	}
	if long1 == long2 {
		t.Errorf("long tool names that differ map to one name %q", long1)
	}
}

func TestMapTools(t *testing.T) {
	names := []string{"a.b", "a_b", "echo", "get/x", "get.x", "héllo"}
	m := mapTools("srv", names)
	wantTo := map[string]string{
		"mcp__srv__a_b":   "a_b", // the legal name wins over a.b
		"mcp__srv__echo":  "echo",
		"mcp__srv__get_x": "get/x", // first in order wins
		"mcp__srv__h_llo": "héllo",
	}
	if !reflect.DeepEqual(m.toOriginal, wantTo) {
		t.Errorf("toOriginal = %v, want %v", m.toOriginal, wantTo)
	}
	wantColl := map[string]string{"a.b": "a_b", "get.x": "get/x"}
	if !reflect.DeepEqual(m.collisions, wantColl) {
		t.Errorf("collisions = %v, want %v", m.collisions, wantColl)
	}
	// Reversible: every kept name maps back to a listed original whose
	// ToolName is the key.
	for name, orig := range m.toOriginal {
		if ToolName("srv", orig) != name {
			t.Errorf("ToolName(srv, %q) = %q, want %q", orig, ToolName("srv", orig), name)
		}
		if !toolname.Valid(name) {
			t.Errorf("%q is not legal", name)
		}
	}
}
