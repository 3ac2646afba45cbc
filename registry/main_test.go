package registry

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a caller, a fake
// host, a reaper) outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
