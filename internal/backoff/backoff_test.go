package backoff

import (
	"context"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	tests := []struct {
		name string
		b    Backoff
		want []time.Duration
	}{
		{"doubles to max", Backoff{Min: 100 * time.Millisecond, Max: 2 * time.Second},
			[]time.Duration{100e6, 200e6, 400e6, 800e6, 1600e6, 2000e6, 2000e6}},
		{"min above max", Backoff{Min: 3 * time.Second, Max: time.Second},
			[]time.Duration{1e9, 1e9}},
		{"zero", Backoff{}, []time.Duration{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			for i, want := range tt.want {
				if got := b.Next(); got != want {
					t.Errorf("attempt %d: Next() = %v, want %v", i, got, want)
				}
			}
			b.Reset()
			if got := b.Next(); got != tt.want[0] {
				t.Errorf("after Reset: Next() = %v, want %v", got, tt.want[0])
			}
		})
	}
}

func TestNextJitter(t *testing.T) {
	b := Backoff{Min: 100 * time.Millisecond, Max: time.Second, Jitter: true}
	for i, full := range []time.Duration{100e6, 200e6, 400e6, 800e6, 1e9, 1e9} {
		got := b.Next()
		if got < full-full/2 || got > full {
			t.Errorf("attempt %d: Next() = %v, want in [%v, %v]", i, got, full-full/2, full)
		}
	}
}

func TestNextManyAttempts(t *testing.T) {
	b := Backoff{Min: time.Nanosecond, Max: time.Hour}
	var got time.Duration
	for range 1000 {
		got = b.Next()
	}
	if got != time.Hour {
		t.Errorf("after 1000 attempts Next() = %v, want %v", got, time.Hour)
	}
}

func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("Sleep(background, 1ms) = false, want true")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep(cancelled, 1h) = true, want false")
	}
}
