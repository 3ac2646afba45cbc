package static

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling thread has used (lock the
// goroutine to its thread first): on a shared machine, what an operation
// costs, whatever else runs.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
