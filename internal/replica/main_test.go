package replica

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a watch, a NATS
// connection or the embedded server) outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
