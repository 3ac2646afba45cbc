//go:build !unix

package service

import "time"

// processCPU is not measured here: benchmarks report no cpu-µs/op.
func processCPU() time.Duration { return 0 }
