package cputime

import (
	"syscall"
	"time"
)

// Thread returns the CPU time (user and system) the calling thread has
// used; lock the goroutine to its thread first (runtime.LockOSThread).
func Thread() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
