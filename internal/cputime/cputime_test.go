package cputime

import (
	"runtime"
	"testing"
	"time"
)

func TestThreadCounts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread CPU time is read on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := Thread()
	for deadline := time.Now().Add(20 * time.Millisecond); time.Now().Before(deadline); {
	}
	if got := Thread() - start; got <= 0 {
		t.Errorf("20 ms of spinning used %v of the thread's CPU time, want more than 0", got)
	}
}
