package service

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a gRPC server or
// client, or an index search) outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
