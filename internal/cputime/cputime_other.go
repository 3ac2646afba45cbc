//go:build !linux

package cputime

import "time"

// Thread is 0 where the thread's CPU time cannot be read.
func Thread() time.Duration { return 0 }
