package demo

import (
	"encoding/json"
	"regexp"
	"testing"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestCatalog(t *testing.T) {
	var tools []map[string]any
	if err := json.Unmarshal(Catalog, &tools); err != nil {
		t.Fatalf("decoding %s: %v", Name, err)
	}
	if got, want := len(tools), 60; got < want {
		t.Errorf("%s has %d tools, want at least %d", Name, got, want)
	}
	seen := make(map[string]int)
	for i, tool := range tools {
		name, ok := tool["name"].(string)
		if !ok {
			t.Errorf("tool %d: name = %#v, want a string", i, tool["name"])
			continue
		}
		if !validName.MatchString(name) {
			t.Errorf("tool %d: name %q does not match %s", i, name, validName)
		}
		if j, dup := seen[name]; dup {
			t.Errorf("tool %d: name %q already used by tool %d", i, name, j)
		}
		seen[name] = i
		if desc, _ := tool["description"].(string); desc == "" {
			t.Errorf("tool %d (%s): description = %#v, want a non-empty string", i, name, tool["description"])
		}
		schema, ok := tool["input_schema"].(map[string]any)
		if !ok {
			t.Errorf("tool %d (%s): input_schema = %#v, want an object", i, name, tool["input_schema"])
			continue
		}
		if got, want := schema["type"], "object"; got != want {
			t.Errorf("tool %d (%s): input_schema.type = %#v, want %q", i, name, got, want)
		}
	}
}
