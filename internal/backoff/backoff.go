// Package backoff computes the delays of reconnect and retry loops
// (toolhost, mcpbridge, replica): Min doubled once per failed attempt, at
// most Max, optionally with jitter, back to Min after a Reset.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is the delay schedule of one loop. The zero value of its
// attempt count is the first attempt; it is not safe for concurrent use
// (a loop owns its Backoff).
type Backoff struct {
	Min, Max time.Duration
	// Jitter takes each delay down by up to half, at random, so that
	// clients restarted together do not retry in step.
	Jitter bool

	n int // attempts since the last Reset
}

// Next returns the delay before the next attempt and counts the attempt:
// Min doubled once per attempt since the last Reset, at most Max.
func (b *Backoff) Next() time.Duration {
	d := b.Min
	for i := 0; i < b.n && d > 0 && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if b.n < maxAttempts {
		b.n++
	}
	if !b.Jitter || d <= 0 {
		return max(d, 0)
	}
	half := d / 2
	return d - half + rand.N(half+1)
}

// maxAttempts caps the count past where any schedule reaches Max (64
// doublings of a nanosecond overflow a Duration), so it never overflows.
const maxAttempts = 64

// Reset starts the schedule again from Min, after a success.
func (b *Backoff) Reset() { b.n = 0 }

// Sleep waits d, or until ctx is done; it reports whether it waited d in
// full.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
