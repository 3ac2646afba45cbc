package tooldex_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestPlainProtoc: the protos carry their go_package, so plain
// `protoc --go_out=DIR` (no buf, no M options) compiles them, into the
// import path, and writes what gen/ holds (protoc's version line aside).
// scripts/test installs protoc (Debian's protobuf-compiler) when it is
// missing; without it the test skips, and fails when CI is set.
func TestPlainProtoc(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("protoc not found and CI is set: scripts/test installs protobuf-compiler")
		}
		t.Skip("protoc not found (scripts/test installs Debian's protobuf-compiler)")
	}
	dir := t.TempDir()
	plugin := filepath.Join(dir, "protoc-gen-go")
	if out, err := exec.Command("go", "build", "-modfile=tools/go.mod", "-o", plugin, "google.golang.org/protobuf/cmd/protoc-gen-go").CombinedOutput(); err != nil {
		t.Fatalf("go build protoc-gen-go: %v\n%s", err, out)
	}
	protos, err := filepath.Glob("proto/tooldex/v1/*.proto")
	if err != nil || len(protos) == 0 {
		t.Fatalf("no protos: %v", err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-I", "proto", "--plugin=protoc-gen-go=" + plugin, "--go_out=" + out}, protos...)
	if msg, err := exec.Command(protoc, args...).CombinedOutput(); err != nil {
		t.Fatalf("protoc %v: %v\n%s", args, err, msg)
	}
	version := regexp.MustCompile(`(?m)^// \tprotoc .*$`)
	for _, p := range protos {
		name := filepath.Base(p[:len(p)-len(".proto")]) + ".pb.go"
		got, err := os.ReadFile(filepath.Join(out, "github.com/tooldex/tooldex/gen/tooldex/v1", name))
		if err != nil {
			t.Errorf("protoc did not write %s at its go_package path: %v", name, err)
			continue
		}
		want, err := os.ReadFile(filepath.Join("gen/tooldex/v1", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(version.ReplaceAll(got, nil), version.ReplaceAll(want, nil)) {
			t.Errorf("protoc --go_out wrote a %s that differs from gen/%s", name, name)
		}
	}
}
