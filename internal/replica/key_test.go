package replica

import "testing"

func TestKeyRoundTrip(t *testing.T) {
	tests := []struct{ tenant, name string }{
		{"default", "alpha"},
		{"acme", "mcp__github__create_issue"},
		{"__shared__", "a.b/c d"},
		{"日本", "émoji 🎉"},
	}
	for _, tt := range tests {
		key := toolKey(tt.tenant, tt.name)
		gotT, gotN, err := parseKey(key)
		if err != nil || gotT != tt.tenant || gotN != tt.name {
			t.Errorf("parseKey(toolKey(%q, %q)) = %q, %q, %v", tt.tenant, tt.name, gotT, gotN, err)
		}
	}
}

func TestParseKeyRejects(t *testing.T) {
	for _, key := range []string{"", "t.", "t.YQ", "t.YQ.", "x.YQ.YQ", "t.!!.YQ", "t..YQ"} {
		if _, _, err := parseKey(key); err == nil {
			t.Errorf("parseKey(%q) = nil error, want one", key)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	f.Add("t.ZGVmYXVsdA.YWxwaGE")
	f.Add("t..")
	f.Fuzz(func(t *testing.T, key string) {
		tenant, name, err := parseKey(key)
		if err != nil {
			return
		}
		if got := toolKey(tenant, name); got != key {
			t.Fatalf("toolKey(parseKey(%q)) = %q", key, got)
		}
	})
}
