package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReflectionComments: grpcurl, with no .proto at hand, shows the
// proto's comments, because the server's reflection serves descriptors with
// their source info (internal/apidesc).
func TestReflectionComments(t *testing.T) {
	s := startServer(t)
	grpcurl := filepath.Join(binaries(t), "grpcurl")
	tests := []struct{ symbol, want string }{
		{"tooldex.v1.DiscoveryService.Search", "Search runs a ToolSearch query"},
		{"tooldex.v1.ExecuteRequest", "How the response carries JSON values"},
		{"tooldex.v1.HostService", "HostService is where tool hosts"},
	}
	for _, tt := range tests {
		out, err := exec.Command(grpcurl, "-plaintext", s.addr, "describe", tt.symbol).CombinedOutput()
		if err != nil {
			t.Errorf("grpcurl describe %s: %v\n%s", tt.symbol, err, out)
			continue
		}
		if !strings.Contains(string(out), tt.want) {
			t.Errorf("grpcurl describe %s:\n%s\nwant the proto's comment %q", tt.symbol, out, tt.want)
		}
	}
	// Services outside the API still resolve.
	if out, err := exec.Command(grpcurl, "-plaintext", s.addr, "describe", "grpc.health.v1.Health").CombinedOutput(); err != nil {
		t.Errorf("grpcurl describe grpc.health.v1.Health: %v\n%s", err, out)
	}
}
