package registry

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps the registry transport-agnostic: no gRPC, no generated
// protobuf code, no service.
func TestImports(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go command not found: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/tooldex/tooldex"
	forbidden := []string{"google.golang.org/grpc", mod + "/gen", mod + "/service"}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range forbidden {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("registry depends on %s; want no dependency on %s", dep, bad)
			}
		}
	}
}
