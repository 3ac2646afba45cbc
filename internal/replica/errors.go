package replica

import (
	"context"
	"fmt"

	"github.com/tooldex/tooldex/registry"
)

// The registry's errors, as a forwarded call's answer carries them.
var (
	errNoHost     = registry.ErrNoHost
	errHostGone   = registry.ErrHostGone
	errOverloaded = registry.ErrOverloaded
)

// remoteError is the error of a forwarded call's answer. A call canceled
// on the replica that ran it (it was shutting down) has an unknown
// outcome, as does an unknown kind.
func remoteError(kind, msg string) error {
	switch kind {
	case "no_host":
		return fmt.Errorf("replica: %s: %w", msg, errNoHost)
	case "overloaded":
		return fmt.Errorf("replica: %s: %w", msg, errOverloaded)
	case "deadline":
		return fmt.Errorf("replica: %s: %w", msg, context.DeadlineExceeded)
	}
	return fmt.Errorf("replica: %s: %w", msg, errHostGone)
}
