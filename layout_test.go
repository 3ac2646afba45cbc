package tooldex_test

import (
	"os"
	"strings"
	"testing"
)

// TestLayoutDocumented keeps the top level what a newcomer needs to see:
// every top-level folder has a row in the README's Layout table, so a new
// one is a decision written down (server internals go under internal/).
func TestLayoutDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == ".git" || name == "node_modules" {
			continue
		}
		if !strings.Contains(layout, "`"+name+"/") {
			t.Errorf("top-level folder %s/ has no row in README.md's Layout table", name)
		}
	}
}
