package tooldex_test

import (
	"os"
	"os/exec"
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
	for _, name := range topFolders(t) {
		if !strings.Contains(layout, "`"+name+"/") {
			t.Errorf("top-level folder %s/ has no row in README.md's Layout table", name)
		}
	}
}

// topFolders lists the top-level folders git tracks (what a clone has, not
// a local build's output); without git, every top-level folder.
func topFolders(t *testing.T) []string {
	t.Helper()
	seen := make(map[string]bool)
	var names []string
	if out, err := exec.Command("git", "ls-files").Output(); err == nil && len(out) > 0 {
		for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if dir, _, ok := strings.Cut(f, "/"); ok && !seen[dir] {
				seen[dir] = true
				names = append(names, dir)
			}
		}
		return names
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" {
			names = append(names, e.Name())
		}
	}
	return names
}
