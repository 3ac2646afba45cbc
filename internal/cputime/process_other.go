//go:build !unix

package cputime

import "time"

// Process is 0 where the process's CPU time cannot be read.
func Process() time.Duration { return 0 }
