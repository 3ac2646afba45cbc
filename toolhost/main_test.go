package toolhost

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a host's sender,
// receiver or call, a gRPC server or client) outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
