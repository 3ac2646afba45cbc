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

// TestDependencies keeps the layering, for every package of the module: the
// index is a plain library that knows nothing of gRPC, logging or the rest
// of the module; the pure-Go libraries know no gRPC; the wire-level
// libraries (gen, the SDKs, renderings, the MCP adapters) know nothing of
// the server's insides; the service does not reach into the commands. A
// package no rule covers fails the test: a new package gets its row here.
func TestDependencies(t *testing.T) {
	const mod = "github.com/tooldex/tooldex"
	server := []string{mod + "/service", mod + "/registry", mod + "/index", mod + "/cmd", mod + "/internal/cli", mod + "/internal/devcli"}
	tests := []struct {
		patterns  []string
		forbidden []string
	}{
		{
			patterns: []string{"./index/..."},
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
			// Pure Go: no gRPC, no generated API.
			patterns:  []string{"./registry", "./internal/semantic/...", "./internal/permission", "./internal/eval", "./internal/demo", "./internal/schema", "./internal/flagenv", "./internal/benchcorpus", "./internal/textcut", "./internal/toolname", "./internal/backoff", "./internal/jsonl", "./internal/logging", "./internal/lograte", "./internal/cputime", "./internal/origin", "./bench/..."},
			forbidden: []string{"google.golang.org/grpc", mod + "/gen", mod + "/service", mod + "/cmd", mod + "/internal/cli", mod + "/internal/devcli"},
		},
		{
			// The wire: what speaks the API without the server's insides.
			patterns:  []string{"./gen/...", "./internal/apidesc", "./internal/dialtarget", "./internal/mcpconv", "./internal/limit", "./internal/manifest", "./internal/toolfile", "./toolhost", "./internal/demohost", "./internal/mcpbridge", "./internal/mcpfacade"},
			forbidden: server,
		},
		{
			// The service knows replicas only through its Journal and
			// Forwarder interfaces.
			patterns:  []string{"./service/..."},
			forbidden: []string{mod + "/cmd", mod + "/internal/cli", mod + "/internal/devcli", mod + "/mcpfacade", mod + "/mcpbridge", mod + "/replica", "github.com/nats-io/nats.go"},
		},
		{
			// The user CLI speaks only the wire API: what runs the server's
			// insides in-process (eval, bench memory) is the developer
			// command's (internal/devcli, cmd/tooldex-dev).
			patterns: []string{"./internal/cli", "./cmd/tooldex", "./cmd/client"},
			forbidden: []string{
				mod + "/service",
				mod + "/catalog",
				mod + "/index",
				mod + "/semantic",
				mod + "/eval",
				mod + "/registry",
				mod + "/e2e",
			},
		},
		{
			// The other commands, the developer command, and the replicas
			// they wire in, may use anything but the tests.
			patterns:  []string{"./cmd/server", "./cmd/mcpbridge", "./cmd/mcpserver", "./cmd/tooldex-dev", "./internal/devcli", "./internal/replica/..."},
			forbidden: []string{mod + "/e2e"},
		},
		{
			// Who a caller is: gRPC for credentials and metadata, nothing of
			// the server's insides.
			patterns:  []string{"./auth/..."},
			forbidden: server,
		},
		{
			// Tests only (no code of their own to layer): listed so that
			// every package is covered.
			patterns: []string{"./e2e", "."},
		},
		{
			// Storage of definitions: no logging, nothing above it (gen's
			// gRPC stubs bring grpc in; the catalog chooses no status codes).
			patterns: []string{"./internal/catalog/..."},
			forbidden: []string{
				"go.uber.org/zap",
				mod + "/service",
				mod + "/registry",
				mod + "/cmd",
			},
		},
	}
	covered := make(map[string]bool)
	for _, tt := range tests {
		for _, pkg := range runGoList(t, tt.patterns...) {
			covered[pkg] = true
		}
	}
	for _, pkg := range runGoList(t, "./...") {
		if !covered[pkg] {
			t.Errorf("package %s is in no rule of TestDependencies: add it to the layer it belongs to", pkg)
		}
	}
	for _, tt := range tests {
		name := strings.Join(tt.patterns, ",")
		t.Run(name, func(t *testing.T) {
			// Each line: a dependency followed by its direct imports, so that
			// a failure can say who pulls the forbidden package in.
			lines := runGoList(t, append([]string{"-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}, tt.patterns...)...)
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
				t.Fatalf("go list -deps %s listed nothing", name)
			}
			for _, dep := range deps {
				for _, bad := range tt.forbidden {
					if inTree(dep, bad) {
						by := importers[dep]
						slices.Sort(by)
						t.Errorf("%s depends on %s (imported by %s); want no dependency on %s", name, dep, strings.Join(by, ", "), bad)
					}
				}
			}
		})
	}
}

// TestModuleGraph keeps the developer tools (tools/go.mod) and the provider
// SDKs (internal/manifest/sdkjudge/go.mod) out of the server's module graph, and the
// server on a tagged protobuf release.
func TestModuleGraph(t *testing.T) {
	banned := []string{
		"github.com/bufbuild/buf",
		"github.com/fullstorydev/grpcurl",
		"google.golang.org/grpc/cmd/protoc-gen-go-grpc",
		"github.com/anthropics/anthropic-sdk-go",
		"github.com/openai/openai-go",
		"google.golang.org/genai",
	}
	for _, line := range runGoList(t, "-m", "all") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for _, b := range banned {
			if inTree(f[0], b) || strings.HasPrefix(f[0], b+"/") || f[0] == b {
				t.Errorf("the server's module graph holds %s; developer tools belong in tools/go.mod, the SDKs in internal/manifest/sdkjudge/go.mod", line)
			}
		}
	}
	pb := runGoList(t, "-m", "-f", "{{.Version}}", "google.golang.org/protobuf")
	if len(pb) != 1 || strings.Contains(pb[0], "-0.") || strings.Contains(pb[0], "-devel") {
		t.Errorf("google.golang.org/protobuf is %q, want a tagged release", pb)
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
