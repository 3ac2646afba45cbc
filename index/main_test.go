package index

import (
	"testing"

	"go.uber.org/goleak"
)

// Search scores shards on goroutines above parallelMin documents; none may
// outlive it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
