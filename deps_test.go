package tooldex_test

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// runGoList runs `go list` with args in the module root and returns its
// output lines.
func runGoList(t *testing.T, args ...string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go command not found: %v", err)
	}
	cmd := exec.Command(gobin, append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// inTree reports whether pkg is root or a package under it.
func inTree(pkg, root string) bool {
	return pkg == root || strings.HasPrefix(pkg, root+"/")
}

// TestDependencies keeps the layering: the index is a plain library that
// knows nothing of gRPC, logging or the rest of the module, and the service
// does not reach into the commands.
func TestDependencies(t *testing.T) {
	const mod = "github.com/tooldex/tooldex"
	tests := []struct {
		pattern   string
		forbidden []string
	}{
		{
			pattern: "./index/...",
			forbidden: []string{
				"google.golang.org/grpc",
				"go.uber.org/zap",
				mod + "/service",
				mod + "/gen",
				mod + "/toolfile",
				mod + "/demo",
			},
		},
		{
			pattern:   "./service",
			forbidden: []string{mod + "/cmd"},
		},
		{
			// Storage of definitions: no logging, nothing above it (gen's
			// gRPC stubs bring grpc in; the catalog chooses no status codes).
			pattern: "./catalog/...",
			forbidden: []string{
				"go.uber.org/zap",
				mod + "/service",
				mod + "/registry",
				mod + "/cmd",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			// Each line: a dependency followed by its direct imports, so that
			// a failure can say who pulls the forbidden package in.
			lines := runGoList(t, "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, tt.pattern)
			importers := make(map[string][]string)
			var deps []string
			for _, line := range lines {
				f := strings.Fields(line)
				if len(f) == 0 {
					continue
				}
				deps = append(deps, f[0])
				for _, imp := range f[1:] {
					importers[imp] = append(importers[imp], f[0])
				}
			}
			if len(deps) == 0 {
				t.Fatalf("go list -deps %s listed nothing", tt.pattern)
			}
			for _, dep := range deps {
				for _, bad := range tt.forbidden {
					if inTree(dep, bad) {
						by := importers[dep]
						slices.Sort(by)
						t.Errorf("%s depends on %s (imported by %s); want no dependency on %s", tt.pattern, dep, strings.Join(by, ", "), bad)
					}
				}
			}
		})
	}
}

// TestNoBleve keeps bleve, which bench/bleve (a separate module) compares
// the index with, out of the main module: not required in go.mod or go.sum,
// and no package of the module or its tests imports it. The nested module's
// go.mod also keeps go test ./... and go vet ./... out of bench/bleve.
func TestNoBleve(t *testing.T) {
	const bleve = "github.com/blevesearch/bleve" // also bleve/v2, bleve_index_api; not blevesearch/segment
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, bleve) {
				t.Errorf("%s:%d: %s; bleve belongs only in bench/bleve/go.mod", f, i+1, strings.TrimSpace(line))
			}
		}
	}
	for _, pkg := range runGoList(t, "-deps", "-test", "./...") {
		if strings.HasPrefix(pkg, bleve) {
			t.Errorf("the main module's build depends on %s", pkg)
		}
		if strings.HasPrefix(pkg, "github.com/tooldex/tooldex/bench/bleve") {
			t.Errorf("go list ./... descends into the nested module: %s", pkg)
		}
	}
}
