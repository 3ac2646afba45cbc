package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{
			name: "zero",
			want: Config{HeartbeatInterval: 5 * time.Second, DeadAfter: 15 * time.Second, QueueWait: 2 * time.Second,
				CancelGrace: 10 * time.Second, DefaultSlots: 16, MaxAttempts: 3, StallAfter: time.Second, MaxSlots: 1024},
		},
		{
			name: "dead after follows the heartbeat",
			in:   Config{HeartbeatInterval: time.Second},
			want: Config{HeartbeatInterval: time.Second, DeadAfter: 3 * time.Second, QueueWait: 2 * time.Second,
				CancelGrace: 10 * time.Second, DefaultSlots: 16, MaxAttempts: 3, StallAfter: time.Second, MaxSlots: 1024},
		},
		{
			name: "explicit values kept, negative queue wait too",
			in: Config{HeartbeatInterval: time.Second, DeadAfter: 7 * time.Second, QueueWait: -1,
				CancelGrace: time.Minute, DefaultSlots: 2, MaxAttempts: 1, StallAfter: time.Minute, MaxSlots: 5},
			want: Config{HeartbeatInterval: time.Second, DeadAfter: 7 * time.Second, QueueWait: -1,
				CancelGrace: time.Minute, DefaultSlots: 2, MaxAttempts: 1, StallAfter: time.Minute, MaxSlots: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(tt.in)
			got := r.Config()
			if got.Logger == nil || got.Now == nil {
				t.Fatalf("Config(): Logger nil %v, Now nil %v; want both set", got.Logger == nil, got.Now == nil)
			}
			got.Logger, got.Now = nil, nil
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("Config() = %+v, want %+v", got, tt.want)
			}
			if got, want := r.HeartbeatInterval(), tt.want.HeartbeatInterval; got != want {
				t.Errorf("HeartbeatInterval() = %v, want %v", got, want)
			}
		})
	}
}

func TestAttachSlots(t *testing.T) {
	r := New(Config{DefaultSlots: 7})
	for _, tt := range []struct{ slots, want int }{{0, 7}, {-1, 7}, {3, 3}} {
		if got := r.Attach(HostInfo{HostID: "h", Slots: tt.slots}).Slots(); got != tt.want {
			t.Errorf("Attach(Slots: %d).Slots() = %d, want %d", tt.slots, got, tt.want)
		}
	}
}

func TestRoutesToLeastLoaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		r := New(Config{})
		a := attach(r, "a", 4, "t")
		b := attach(r, "b", 2, "t")
		other := attach(r, "other", 8, "u")
		byID := map[string]*Session{a.ID(): a, b.ID(): b}

		// Loads before each call (in flight / slots), a vs b:
		// 0/4=0/2 (tie: a attached first), 1/4>0/2, 1/4<1/2, 2/4=1/2 (tie),
		// 3/4>1/2, 3/4 and b full.
		want := []*Session{a, b, a, a, b, a}
		var calls []<-chan callOut
		var frames []Frame
		for i, w := range want {
			calls = append(calls, callAsync(ctx, r, Call{Tool: "t", Params: i}))
			synctest.Wait()
			var got *Session
			for _, s := range []*Session{a, b} {
				select {
				case f := <-s.Outbound():
					if got != nil {
						t.Fatalf("call %d: frames on two sessions", i)
					}
					got = s
					s.Delivered(f.CallID)
					frames = append(frames, f)
				default:
				}
			}
			if got != w {
				t.Fatalf("call %d went to %v, want %s", i, got, w.HostID())
			}
			if f := frames[i]; f.Params != i || f.Tool != "t" || f.Attempt != 1 || f.Kind != FrameExecute {
				t.Errorf("call %d: frame %+v, want execute of t with params %d, attempt 1", i, f, i)
			}
		}
		noFrame(t, other)

		// Both full: the next call waits, then takes the slot b frees.
		late := callAsync(ctx, r, Call{Tool: "t", Params: "late"})
		synctest.Wait()
		noFrame(t, a)
		noFrame(t, b)
		pendingCall(t, late)
		if err := b.Complete(frames[1].CallID, "done-1"); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		synctest.Wait()
		lf := deliver(t, b)
		frames = append(frames, lf)
		calls = append(calls, late)
		for i, f := range frames {
			if i == 1 {
				continue
			}
			s := byID[f.CallID[:len(a.ID())]]
			if err := s.Complete(f.CallID, fmt.Sprint("done-", i)); err != nil {
				t.Fatalf("Complete(%s): %v", f.CallID, err)
			}
		}
		synctest.Wait()
		seen := make(map[string]bool)
		for i, ch := range calls {
			o := answer(t, ch)
			if o.err != nil {
				t.Fatalf("call %d: %v", i, o.err)
			}
			if got, want := o.res.Payload, fmt.Sprint("done-", i); got != want {
				t.Errorf("call %d: payload %v, want %v", i, got, want)
			}
			if o.res.CallID != frames[i].CallID || o.res.Attempts != 1 {
				t.Errorf("call %d: result %+v, want call id %s, 1 attempt", i, o.res, frames[i].CallID)
			}
			if s := byID[o.res.SessionID]; s == nil || s.HostID() != o.res.HostID {
				t.Errorf("call %d: result session %s host %s, want a matching session", i, o.res.SessionID, o.res.HostID)
			}
			if seen[o.res.CallID] {
				t.Errorf("call id %s used twice", o.res.CallID)
			}
			seen[o.res.CallID] = true
		}
	})
}

// TestSlotLimitsUnderLoad: 200 concurrent calls over hosts of 1, 2 and 5
// slots; no host ever runs more calls than its slots.
func TestSlotLimitsUnderLoad(t *testing.T) {
	r := New(Config{QueueWait: time.Minute})
	slots := []int{1, 2, 5}
	var hosts []*fakeHost
	for i, n := range slots {
		hosts = append(hosts, startHost(r, fmt.Sprint("h", i), n, randomDelay(300*time.Microsecond), "t"))
	}
	defer func() {
		for _, h := range hosts {
			h.Stop()
		}
	}()

	// Watch the registry's own view while the calls run.
	stopWatch := make(chan struct{})
	watchErr := make(chan error, 1)
	go func() {
		for {
			for _, hs := range r.Hosts() {
				if hs.InFlight > hs.Slots {
					watchErr <- fmt.Errorf("host %s: %d in flight, %d slots", hs.HostID, hs.InFlight, hs.Slots)
					return
				}
			}
			select {
			case <-stopWatch:
				watchErr <- nil
				return
			default:
			}
		}
	}()

	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			res, err := r.Call(t.Context(), Call{Tool: "t", Params: i})
			switch {
			case err != nil:
				errs <- fmt.Errorf("call %d: %w", i, err)
			case res.Payload != i:
				errs <- fmt.Errorf("call %d: payload %v, want %d", i, res.Payload, i)
			}
		})
	}
	wg.Wait()
	close(stopWatch)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := <-watchErr; err != nil {
		t.Error(err)
	}
	var completed int64
	for _, hs := range r.Hosts() {
		completed += hs.Completed
		if hs.InFlight != 0 {
			t.Errorf("host %s: %d in flight after all calls, want 0", hs.HostID, hs.InFlight)
		}
	}
	if completed != n {
		t.Errorf("completed %d calls, want %d", completed, n)
	}
	for i, h := range hosts {
		h.mu.Lock()
		if h.maxRunning > slots[i] {
			t.Errorf("host h%d ran %d calls at once, want at most %d", i, h.maxRunning, slots[i])
		}
		h.mu.Unlock()
	}
}

func TestNoHost(t *testing.T) {
	tests := []struct {
		name  string
		setup func(r *Registry)
	}{
		{"no session", func(r *Registry) {}},
		{"other tools only", func(r *Registry) { attach(r, "h", 1, "u") }},
		{"tool removed", func(r *Registry) { attach(r, "h", 1, "t").RemoveTools("t") }},
		{"host detached", func(r *Registry) { attach(r, "h", 1, "t").Detach() }},
		{"only draining hosts", func(r *Registry) { attach(r, "h", 1, "t"); r.Drain(time.Second) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := New(Config{})
				tt.setup(r)
				start := time.Now()
				_, err := r.Call(t.Context(), Call{Tool: "t"})
				if !errors.Is(err, ErrNoHost) {
					t.Fatalf("Call: %v, want ErrNoHost", err)
				}
				if waited := time.Since(start); waited != 0 {
					t.Errorf("Call waited %v, want an immediate answer", waited)
				}
			})
		})
	}
}

func TestOverloaded(t *testing.T) {
	tests := []struct {
		name      string
		queueWait time.Duration
		wantWait  time.Duration
	}{
		{"waits QueueWait", 2 * time.Second, 2 * time.Second},
		{"negative QueueWait: no wait", -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := New(Config{QueueWait: tt.queueWait})
				a := attach(r, "a", 1, "t")
				b := attach(r, "b", 1, "t")
				first := callAsync(t.Context(), r, Call{Tool: "t"})
				second := callAsync(t.Context(), r, Call{Tool: "t"})
				synctest.Wait()
				fa, fb := deliver(t, a), deliver(t, b)

				start := time.Now()
				_, err := r.Call(t.Context(), Call{Tool: "t"})
				if !errors.Is(err, ErrOverloaded) {
					t.Fatalf("Call: %v, want ErrOverloaded", err)
				}
				if waited := time.Since(start); waited != tt.wantWait {
					t.Errorf("Call waited %v, want %v", waited, tt.wantWait)
				}
				noFrame(t, a)
				noFrame(t, b)
				a.Complete(fa.CallID, nil)
				b.Complete(fb.CallID, nil)
				for _, ch := range []<-chan callOut{first, second} {
					if o := <-ch; o.err != nil {
						t.Errorf("in-flight call: %v", o.err)
					}
				}
			})
		})
	}
}

func TestWaitingCall(t *testing.T) {
	t.Run("proceeds when a slot frees", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := New(Config{QueueWait: 5 * time.Second})
			s := attach(r, "a", 1, "t")
			first := callAsync(t.Context(), r, Call{Tool: "t", Params: 1})
			synctest.Wait()
			f1 := deliver(t, s)
			start := time.Now()
			second := callAsync(t.Context(), r, Call{Tool: "t", Params: 2})
			time.Sleep(3 * time.Second)
			synctest.Wait()
			noFrame(t, s)
			pendingCall(t, second)
			if err := s.Complete(f1.CallID, "r1"); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			f2 := deliver(t, s)
			if f2.Params != 2 {
				t.Errorf("second frame params %v, want 2", f2.Params)
			}
			s.Complete(f2.CallID, "r2")
			synctest.Wait()
			if o := answer(t, first); o.err != nil || o.res.Payload != "r1" {
				t.Errorf("first call: %v, %v; want r1", o.res.Payload, o.err)
			}
			if o := answer(t, second); o.err != nil || o.res.Payload != "r2" {
				t.Errorf("second call: %v, %v; want r2", o.res.Payload, o.err)
			}
			if waited := time.Since(start); waited != 3*time.Second {
				t.Errorf("second call took %v, want 3s", waited)
			}
		})
	})
	t.Run("a tool added on a new host", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := New(Config{QueueWait: 5 * time.Second})
			a := attach(r, "a", 1, "t")
			first := callAsync(t.Context(), r, Call{Tool: "t"})
			synctest.Wait()
			deliver(t, a)
			second := callAsync(t.Context(), r, Call{Tool: "t"})
			time.Sleep(time.Second)
			b := attach(r, "b", 1, "t")
			synctest.Wait()
			f := deliver(t, b)
			b.Complete(f.CallID, "b")
			synctest.Wait()
			if o := answer(t, second); o.err != nil || o.res.HostID != "b" {
				t.Errorf("second call: host %q, %v; want host b", o.res.HostID, o.err)
			}
			a.Detach()
			synctest.Wait()
			if o := answer(t, first); !errors.Is(o.err, ErrHostGone) {
				t.Errorf("first call: %v, want ErrHostGone", o.err)
			}
		})
	})
	t.Run("fails at once when its last host goes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := New(Config{QueueWait: 5 * time.Second})
			s := attach(r, "a", 1, "t")
			first := callAsync(t.Context(), r, Call{Tool: "t"})
			synctest.Wait()
			deliver(t, s)
			second := callAsync(t.Context(), r, Call{Tool: "t"})
			time.Sleep(time.Second)
			start := time.Now()
			if got, want := s.Detach(), []string{"t"}; !slices.Equal(got, want) {
				t.Errorf("Detach() = %v, want %v", got, want)
			}
			synctest.Wait()
			if o := answer(t, second); !errors.Is(o.err, ErrNoHost) {
				t.Errorf("waiting call: %v, want ErrNoHost", o.err)
			}
			if o := answer(t, first); !errors.Is(o.err, ErrHostGone) {
				t.Errorf("in-flight call: %v, want ErrHostGone", o.err)
			}
			if d := time.Since(start); d != 0 {
				t.Errorf("answers took %v after Detach, want none", d)
			}
		})
	})
	t.Run("ctx ends the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := New(Config{QueueWait: 5 * time.Second})
			s := attach(r, "a", 1, "t")
			first := callAsync(t.Context(), r, Call{Tool: "t"})
			synctest.Wait()
			f := deliver(t, s)
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			_, err := r.Call(ctx, Call{Tool: "t"})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Call: %v, want context.DeadlineExceeded", err)
			}
			noFrame(t, s)
			s.Complete(f.CallID, nil)
			<-first
		})
	})
}

func TestCancel(t *testing.T) {
	const grace = 10 * time.Second
	tests := []struct {
		name     string
		deliver  bool // the Execute frame is sent before the caller gives up
		lateDone bool // the host answers after the cancel; else it never does
	}{
		{"delivered, host answers late", true, true},
		{"delivered, host never answers", true, false},
		{"undelivered, host answers late", false, true},
		{"undelivered, host never answers", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := New(Config{CancelGrace: grace, QueueWait: time.Minute})
				s := attach(r, "a", 1, "t")
				ctx, cancel := context.WithCancel(t.Context())
				ch := callAsync(ctx, r, Call{Tool: "t", Params: "x"})
				synctest.Wait()
				var exec Frame
				if tt.deliver {
					exec = deliver(t, s)
				}
				cancel()
				synctest.Wait()
				if o := answer(t, ch); !errors.Is(o.err, context.Canceled) {
					t.Fatalf("Call: %v, want context.Canceled", o.err)
				}
				if !tt.deliver {
					// The Cancel frame waits for the Execute frame's send.
					exec = deliver(t, s)
				}
				c := frame(t, s)
				if c.Kind != FrameCancel || c.CallID != exec.CallID || c.Reason != "caller canceled" {
					t.Errorf("got frame %+v, want cancel of %s, reason %q", c, exec.CallID, "caller canceled")
				}
				if got := r.Hosts()[0].InFlight; got != 1 {
					t.Errorf("InFlight after cancel = %d, want 1 (slot reserved)", got)
				}

				// A new call waits for the reserved slot.
				start := time.Now()
				next := callAsync(t.Context(), r, Call{Tool: "t", Params: "next"})
				time.Sleep(time.Second)
				synctest.Wait()
				noFrame(t, s)
				if tt.lateDone {
					err := s.Complete(exec.CallID, "late")
					if !errors.Is(err, ErrUnknownCall) {
						t.Errorf("late Complete: %v, want ErrUnknownCall", err)
					}
				} else {
					time.Sleep(grace - time.Second - time.Nanosecond)
					synctest.Wait()
					noFrame(t, s)
					time.Sleep(time.Nanosecond)
				}
				synctest.Wait()
				f := deliver(t, s)
				if f.Params != "next" {
					t.Errorf("next frame params %v, want next", f.Params)
				}
				want := time.Second
				if !tt.lateDone {
					want = grace
				}
				if waited := time.Since(start); waited != want {
					t.Errorf("next call waited %v for the slot, want %v", waited, want)
				}
				if err := s.Complete(exec.CallID, "later"); !errors.Is(err, ErrUnknownCall) {
					t.Errorf("Complete after the slot was freed: %v, want ErrUnknownCall", err)
				}
				s.Complete(f.CallID, "ok")
				synctest.Wait()
				if o := answer(t, next); o.err != nil || o.res.Payload != "ok" {
					t.Errorf("next call: %v, %v; want ok", o.res.Payload, o.err)
				}
				if got := r.Hosts()[0].Completed; got != 1 {
					t.Errorf("Completed = %d, want 1 (the late result is not counted)", got)
				}
			})
		})
	}
}

func TestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{})
		s := attach(r, "a", 1, "t")
		ctxDeadline := time.Now().Add(time.Minute)
		ctx, cancel := context.WithDeadline(t.Context(), ctxDeadline)
		defer cancel()
		callDeadline := time.Now().Add(5 * time.Second)
		ch := callAsync(ctx, r, Call{Tool: "t", Deadline: callDeadline, Caller: "alice"})
		synctest.Wait()
		f := deliver(t, s)
		if !f.Deadline.Equal(callDeadline) || f.Caller != "alice" {
			t.Errorf("frame deadline %v caller %q, want %v, alice", f.Deadline, f.Caller, callDeadline)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if o := answer(t, ch); !errors.Is(o.err, context.DeadlineExceeded) {
			t.Errorf("Call: %v, want context.DeadlineExceeded", o.err)
		}
		if c := frame(t, s); c.Kind != FrameCancel || c.Reason != "deadline exceeded" {
			t.Errorf("got %+v, want cancel with reason %q", c, "deadline exceeded")
		}

		// Without Call.Deadline the ctx deadline goes to the host.
		ch = callAsync(ctx, r, Call{Tool: "t"})
		s.Complete(f.CallID, nil)
		synctest.Wait()
		f = deliver(t, s)
		if !f.Deadline.Equal(ctxDeadline) {
			t.Errorf("frame deadline %v, want the ctx deadline %v", f.Deadline, ctxDeadline)
		}
		s.Complete(f.CallID, nil)
		<-ch
	})
}

func TestHostGone(t *testing.T) {
	tests := []struct {
		name       string
		idempotent bool
		taken      bool // the sender took the Execute frame from the queue
		delivered  bool // ... and reported it sent
		wantRetry  bool
	}{
		{name: "queued, not idempotent: retried", wantRetry: true},
		{name: "queued, idempotent: retried", idempotent: true, wantRetry: true},
		{name: "taken, not reported sent: outcome unknown", taken: true},
		{name: "delivered, not idempotent: outcome unknown", taken: true, delivered: true},
		{name: "delivered, idempotent: retried", idempotent: true, taken: true, delivered: true, wantRetry: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := New(Config{})
				a := attach(r, "a", 1, "t")
				b := attach(r, "b", 1, "t")
				ch := callAsync(t.Context(), r, Call{Tool: "t", Params: "p", Idempotent: tt.idempotent})
				synctest.Wait()
				if tt.taken {
					f := frame(t, a)
					if tt.delivered {
						a.Delivered(f.CallID)
					}
				}
				start := time.Now()
				a.Detach()
				synctest.Wait()
				if !tt.wantRetry {
					o := answer(t, ch)
					if !errors.Is(o.err, ErrHostGone) {
						t.Fatalf("Call: %v, want ErrHostGone", o.err)
					}
					if d := time.Since(start); d != 0 {
						t.Errorf("answer took %v, want none", d)
					}
					noFrame(t, b)
					return
				}
				pendingCall(t, ch)
				f := deliver(t, b)
				if f.Attempt != 2 || f.Params != "p" {
					t.Errorf("retry frame %+v, want attempt 2 with params p", f)
				}
				b.Complete(f.CallID, "done")
				synctest.Wait()
				o := answer(t, ch)
				if o.err != nil {
					t.Fatalf("Call: %v", o.err)
				}
				if o.res.HostID != "b" || o.res.Attempts != 2 || o.res.CallID != f.CallID || o.res.Payload != "done" {
					t.Errorf("result %+v, want host b, 2 attempts, call %s, payload done", o.res, f.CallID)
				}
			})
		})
	}
}

func TestRetryLimits(t *testing.T) {
	t.Run("max attempts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := New(Config{MaxAttempts: 2})
			a := attach(r, "a", 1, "t")
			b := attach(r, "b", 1, "t")
			c := attach(r, "c", 1, "t")
			ch := callAsync(t.Context(), r, Call{Tool: "t", Idempotent: true})
			synctest.Wait()
			deliver(t, a)
			a.Detach()
			synctest.Wait()
			if f := deliver(t, b); f.Attempt != 2 {
				t.Errorf("attempt %d on b, want 2", f.Attempt)
			}
			b.Detach()
			synctest.Wait()
			if o := answer(t, ch); !errors.Is(o.err, ErrHostGone) {
				t.Errorf("Call after 2 lost attempts: %v, want ErrHostGone", o.err)
			}
			noFrame(t, c)
		})
	})
	t.Run("no other host", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := New(Config{})
			a := attach(r, "a", 1, "t")
			ch := callAsync(t.Context(), r, Call{Tool: "t", Idempotent: true})
			synctest.Wait()
			deliver(t, a)
			a.Detach()
			synctest.Wait()
			o := answer(t, ch)
			if !errors.Is(o.err, ErrNoHost) || errors.Is(o.err, ErrHostGone) {
				t.Errorf("Call: %v, want ErrNoHost and not ErrHostGone", o.err)
			}
		})
	})
}

func TestReaper(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const hb = time.Second
		r := New(Config{HeartbeatInterval: hb}) // dead after 3s
		ctx, stop := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- r.Run(ctx) }()

		live := attach(r, "live", 1, "t", "shared")
		silent := attach(r, "silent", 1, "only-silent", "shared")
		attachedAt := time.Now()
		// The live host heartbeats; the silent one stops after 1s.
		beat := make(chan struct{})
		go func() {
			tk := time.NewTicker(hb)
			defer tk.Stop()
			for {
				select {
				case <-beat:
					return
				case <-tk.C:
					live.Touch()
				}
			}
		}()
		time.Sleep(time.Second)
		silent.Touch()
		lastTouch := time.Now()

		ch := callAsync(t.Context(), r, Call{Tool: "only-silent"})
		synctest.Wait()
		f := deliver(t, silent)
		<-silent.Done()
		died := time.Since(lastTouch)
		if died < 3*time.Second || died > 3*time.Second+hb {
			t.Errorf("silent host declared dead %v after its last frame, want within [3s, 4s]", died)
		}
		synctest.Wait()
		if o := answer(t, ch); !errors.Is(o.err, ErrHostGone) {
			t.Errorf("call on the dead host: %v, want ErrHostGone", o.err)
		}
		err := silent.Complete(f.CallID, "late")
		if !errors.Is(err, ErrSessionClosed) || !errors.Is(err, ErrUnknownCall) {
			t.Errorf("Complete on a dead session: %v, want ErrSessionClosed and ErrUnknownCall", err)
		}
		silent.Touch() // no effect
		if r.Serving("", "only-silent") {
			t.Error("Serving(only-silent) = true after its host died")
		}
		if !r.Serving("", "shared") {
			t.Error("Serving(shared) = false, want true (live serves it)")
		}
		hosts := r.Hosts()
		if len(hosts) != 1 || hosts[0].HostID != "live" {
			t.Errorf("Hosts() = %+v, want only live", hosts)
		}
		if got, want := silent.Detach(), []string{"only-silent"}; !slices.Equal(got, want) {
			t.Errorf("Detach() after death = %v, want %v", got, want)
		}
		if got := silent.Detach(); got != nil {
			t.Errorf("second Detach() = %v, want nil", got)
		}

		time.Sleep(time.Minute)
		select {
		case <-live.Done():
			t.Error("heartbeating host declared dead")
		default:
		}
		if got := r.Hosts()[0].LastSeen; time.Since(got) > hb {
			t.Errorf("LastSeen %v, want within %v of now (%v)", got.Sub(attachedAt), hb, time.Since(attachedAt))
		}
		close(beat)
		stop()
		if err := <-runErr; err != nil {
			t.Errorf("Run: %v, want nil", err)
		}
	})
}

func TestCompleteUnknown(t *testing.T) {
	tests := []struct {
		name       string
		run        func(t *testing.T, r *Registry, s *Session) string // returns the id to complete
		wantClosed bool
	}{
		{"never sent", func(t *testing.T, r *Registry, s *Session) string { return "nope" }, false},
		{"already answered", func(t *testing.T, r *Registry, s *Session) string {
			ch := callAsync(t.Context(), r, Call{Tool: "t"})
			synctest.Wait()
			f := deliver(t, s)
			if err := s.Complete(f.CallID, nil); err != nil {
				t.Fatal(err)
			}
			<-ch
			return f.CallID
		}, false},
		{"caller timed out, grace over", func(t *testing.T, r *Registry, s *Session) string {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			ch := callAsync(ctx, r, Call{Tool: "t"})
			synctest.Wait()
			f := deliver(t, s)
			<-ch
			time.Sleep(r.Config().CancelGrace)
			r.Hosts() // sweeps
			return f.CallID
		}, false},
		{"session detached", func(t *testing.T, r *Registry, s *Session) string {
			ch := callAsync(t.Context(), r, Call{Tool: "t"})
			synctest.Wait()
			f := deliver(t, s)
			s.Detach()
			<-ch
			return f.CallID
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := New(Config{})
				s := attach(r, "a", 1, "t")
				id := tt.run(t, r, s)
				err := s.Complete(id, "x")
				if !errors.Is(err, ErrUnknownCall) {
					t.Errorf("Complete(%s): %v, want ErrUnknownCall", id, err)
				}
				if got := errors.Is(err, ErrSessionClosed); got != tt.wantClosed {
					t.Errorf("Complete(%s): %v; ErrSessionClosed %v, want %v", id, err, got, tt.wantClosed)
				}
			})
		})
	}
}

// TestManyCallsHostsLost: 1,000 concurrent calls over 4 hosts, 2 of which
// go away mid-run. Every call is answered exactly once, and no host ever
// gets a non-idempotent call that another host got too.
func TestManyCallsHostsLost(t *testing.T) {
	r := New(Config{QueueWait: time.Minute})
	var hosts []*fakeHost
	for i := range 4 {
		hosts = append(hosts, startHost(r, fmt.Sprint("h", i), 8, randomDelay(time.Millisecond), "t"))
	}
	const n = 1000
	var answered atomic.Int64
	lose := make(chan struct{})
	var loseOnce sync.Once

	type key struct{ i int }
	var wg sync.WaitGroup
	results := make([]callOut, n)
	for i := range n {
		wg.Go(func() {
			res, err := r.Call(t.Context(), Call{Tool: "t", Params: key{i}, Idempotent: i%2 == 0})
			results[i] = callOut{res, err}
			if answered.Add(1) == n/4 {
				loseOnce.Do(func() { close(lose) })
			}
		})
	}
	<-lose
	for _, h := range hosts[:2] {
		h.s.Detach()
	}
	wg.Wait()
	for _, h := range hosts {
		h.Stop()
	}

	if got := answered.Load(); got != n {
		t.Fatalf("%d calls answered, want %d", got, n)
	}
	ok, gone, retried := 0, 0, 0
	for i, o := range results {
		switch {
		case o.err == nil:
			ok++
			if o.res.Attempts > 1 {
				retried++
			}
			if o.res.Payload != (key{i}) {
				t.Errorf("call %d: payload %v, want its own params", i, o.res.Payload)
			}
		case errors.Is(o.err, ErrHostGone) && i%2 == 1:
			gone++
		default:
			// Idempotent calls survive: 2 hosts lost, 3 attempts.
			t.Errorf("call %d (idempotent %v): %v, want success (or ErrHostGone when not idempotent)", i, i%2 == 0, o.err)
		}
	}
	ran := make(map[any]int)
	for _, h := range hosts {
		for _, p := range h.ran {
			ran[p]++
		}
	}
	for p, k := range ran {
		if i := p.(key).i; i%2 == 1 && k > 1 {
			t.Errorf("non-idempotent call %d sent to hosts %d times, want at most once", i, k)
		}
	}
	t.Logf("%d ok (%d retried), %d host gone, %d calls run", ok, retried, gone, len(ran))
	if retried+gone == 0 {
		t.Error("no call was retried or lost: the hosts went away with nothing in flight")
	}
	if ok+gone != n {
		t.Errorf("ok %d + host gone %d = %d, want %d", ok, gone, ok+gone, n)
	}
	if hs := r.Hosts(); len(hs) != 2 {
		t.Errorf("%d live hosts, want 2", len(hs))
	}
}

// TestCancelsAndLossUnderLoad mixes callers that give up, a host that goes
// away and one that joins while calls run: every call gets one answer,
// and every slot is free at the end.
func TestCancelsAndLossUnderLoad(t *testing.T) {
	r := New(Config{QueueWait: time.Minute})
	var hosts []*fakeHost
	for i := range 3 {
		hosts = append(hosts, startHost(r, fmt.Sprint("h", i), 4, randomDelay(time.Millisecond), "t"))
	}
	const n = 600
	var answered atomic.Int64
	midway := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			ctx := t.Context()
			if i%3 == 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, randomDelay(2*time.Millisecond)())
				defer cancel()
			}
			res, err := r.Call(ctx, Call{Tool: "t", Params: i, Idempotent: i%2 == 0})
			switch {
			case err == nil && res.Payload != i:
				errs <- fmt.Errorf("call %d: payload %v", i, res.Payload)
			case err == nil, errors.Is(err, context.DeadlineExceeded):
			case errors.Is(err, ErrHostGone) && i%2 == 1:
			default:
				errs <- fmt.Errorf("call %d: %w", i, err)
			}
			if answered.Add(1) == n/3 {
				once.Do(func() { close(midway) })
			}
		})
	}
	<-midway
	hosts[0].s.Detach()
	hosts = append(hosts, startHost(r, "h3", 2, randomDelay(time.Millisecond), "t"))
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := answered.Load(); got != n {
		t.Errorf("%d calls answered, want %d", got, n)
	}
	// Stop waits for every call the hosts run: late results free the
	// slots of abandoned calls.
	for _, h := range hosts {
		h.Stop()
		h.mu.Lock()
		if h.maxRunning > h.s.Slots() {
			t.Errorf("host %s ran %d calls at once, want at most %d", h.s.HostID(), h.maxRunning, h.s.Slots())
		}
		h.mu.Unlock()
	}
	for _, hs := range r.Hosts() {
		if hs.InFlight != 0 {
			t.Errorf("host %s: %d slots held after all calls and results, want 0", hs.HostID, hs.InFlight)
		}
	}
}

func TestHostsSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		r := New(Config{})
		b1 := attach(r, "b", 2, "z", "x")
		time.Sleep(time.Second)
		a := attach(r, "a", 0, "y")
		time.Sleep(time.Second)
		b2 := attach(r, "b", 1, "x")

		ch := callAsync(t.Context(), r, Call{Tool: "z"})
		synctest.Wait()
		f := deliver(t, b1)
		b1.Complete(f.CallID, nil)
		<-ch
		ch = callAsync(t.Context(), r, Call{Tool: "z"})
		synctest.Wait()
		f = deliver(t, b1)

		got := r.Hosts()
		want := []HostStatus{
			{HostID: "a", SessionID: a.ID(), Version: "v1", Tools: []string{"y"}, Slots: 16, ConnectedAt: t0.Add(time.Second), LastSeen: t0.Add(time.Second)},
			{HostID: "b", SessionID: b1.ID(), Version: "v1", Tools: []string{"x", "z"}, Slots: 2, InFlight: 1, Completed: 1, ConnectedAt: t0, LastSeen: t0},
			{HostID: "b", SessionID: b2.ID(), Version: "v1", Tools: []string{"x"}, Slots: 1, ConnectedAt: t0.Add(2 * time.Second), LastSeen: t0.Add(2 * time.Second)},
		}
		if len(got) != len(want) {
			t.Fatalf("Hosts() = %+v, want %+v", got, want)
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.HostID != w.HostID || g.SessionID != w.SessionID || g.Version != w.Version || !slices.Equal(g.Tools, w.Tools) ||
				g.Slots != w.Slots || g.InFlight != w.InFlight || g.Completed != w.Completed ||
				!g.ConnectedAt.Equal(w.ConnectedAt) || !g.LastSeen.Equal(w.LastSeen) || g.Draining != w.Draining {
				t.Errorf("Hosts()[%d] = %+v, want %+v", i, g, w)
			}
		}
		b1.Complete(f.CallID, nil)
		<-ch
	})
}

func TestServingAndOrphans(t *testing.T) {
	tests := []struct {
		name         string
		run          func(r *Registry, a, b *Session) []string
		wantOrphaned []string
		wantServing  map[string]bool
	}{
		{
			name:         "remove a replicated tool",
			run:          func(r *Registry, a, b *Session) []string { return a.RemoveTools("shared") },
			wantOrphaned: nil,
			wantServing:  map[string]bool{"shared": true, "a-only": true, "b-only": true},
		},
		{
			name:         "remove an unreplicated tool, an unknown one and a duplicate",
			run:          func(r *Registry, a, b *Session) []string { return a.RemoveTools("a-only", "nope", "a-only") },
			wantOrphaned: []string{"a-only"},
			wantServing:  map[string]bool{"shared": true, "a-only": false, "b-only": true},
		},
		{
			name: "remove from both replicas",
			run: func(r *Registry, a, b *Session) []string {
				a.RemoveTools("shared")
				return b.RemoveTools("shared")
			},
			wantOrphaned: []string{"shared"},
			wantServing:  map[string]bool{"shared": false, "a-only": true, "b-only": true},
		},
		{
			name:         "detach with a replica",
			run:          func(r *Registry, a, b *Session) []string { return a.Detach() },
			wantOrphaned: []string{"a-only"},
			wantServing:  map[string]bool{"shared": true, "a-only": false, "b-only": true},
		},
		{
			name: "detach both",
			run: func(r *Registry, a, b *Session) []string {
				a.Detach()
				return b.Detach()
			},
			wantOrphaned: []string{"b-only", "shared"},
			wantServing:  map[string]bool{"shared": false, "a-only": false, "b-only": false},
		},
		{
			name: "detach twice",
			run: func(r *Registry, a, b *Session) []string {
				a.Detach()
				return a.Detach()
			},
			wantOrphaned: nil,
			wantServing:  map[string]bool{"shared": true, "a-only": false, "b-only": true},
		},
		{
			name: "tools added after death are reported by Detach",
			run: func(r *Registry, a, b *Session) []string {
				r.mu.Lock()
				r.endLocked(a, "declared dead")
				r.mu.Unlock()
				a.AddTools("late")
				return a.Detach()
			},
			wantOrphaned: []string{"a-only", "late"},
			wantServing:  map[string]bool{"shared": true, "a-only": false, "late": false},
		},
		{
			name: "draining hosts still serve",
			run: func(r *Registry, a, b *Session) []string {
				r.Drain(time.Second)
				return nil
			},
			wantServing: map[string]bool{"shared": true, "a-only": true, "b-only": true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(Config{})
			a := attach(r, "a", 1, "shared", "a-only", "shared")
			b := attach(r, "b", 1, "shared", "b-only")
			got := tt.run(r, a, b)
			if !slices.Equal(got, tt.wantOrphaned) {
				t.Errorf("orphaned = %v, want %v", got, tt.wantOrphaned)
			}
			for tool, want := range tt.wantServing {
				if got := r.Serving("", tool); got != want {
					t.Errorf("Serving(%q) = %v, want %v", tool, got, want)
				}
			}
		})
	}
}

func TestDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{})
		a := attach(r, "a", 2, "t")
		b := attach(r, "b", 2, "t")
		ch := callAsync(t.Context(), r, Call{Tool: "t"})
		synctest.Wait()
		exec := frame(t, a) // taken by the sender, not yet reported sent

		r.Drain(5 * time.Second)
		for _, s := range []*Session{a, b} {
			f := frame(t, s)
			if f.Kind != FrameDrain || f.Grace != 5*time.Second {
				t.Errorf("session %s: frame %+v, want drain with 5s grace", s.HostID(), f)
			}
		}
		if _, err := r.Call(t.Context(), Call{Tool: "t"}); !errors.Is(err, ErrNoHost) {
			t.Errorf("Call after Drain: %v, want ErrNoHost", err)
		}
		for _, hs := range r.Hosts() {
			if !hs.Draining {
				t.Errorf("host %s: Draining false after Drain", hs.HostID)
			}
		}
		// The call in flight finishes.
		a.Delivered(exec.CallID)
		if err := a.Complete(exec.CallID, "done"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if o := answer(t, ch); o.err != nil || o.res.Payload != "done" {
			t.Errorf("in-flight call: %v, %v; want done", o.res.Payload, o.err)
		}
		// A second Drain sends nothing new; a session attached later is
		// told at once and takes no calls.
		r.Drain(time.Second)
		noFrame(t, a)
		c := attach(r, "c", 1, "t")
		if f := frame(t, c); f.Kind != FrameDrain || f.Grace != time.Second {
			t.Errorf("late session: frame %+v, want drain with 1s grace", f)
		}
		if _, err := r.Call(t.Context(), Call{Tool: "t"}); !errors.Is(err, ErrNoHost) {
			t.Errorf("Call after Drain: %v, want ErrNoHost", err)
		}
	})
}

func TestDrainWakesWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{QueueWait: time.Minute})
		a := attach(r, "a", 1, "t")
		first := callAsync(t.Context(), r, Call{Tool: "t"})
		synctest.Wait()
		f := deliver(t, a)
		waiting := callAsync(t.Context(), r, Call{Tool: "t"})
		synctest.Wait()
		r.Drain(time.Second)
		synctest.Wait()
		if o := answer(t, waiting); !errors.Is(o.err, ErrNoHost) {
			t.Errorf("waiting call after Drain: %v, want ErrNoHost", o.err)
		}
		a.Complete(f.CallID, nil)
		<-first
	})
}

func TestFrameKindString(t *testing.T) {
	for k, want := range map[FrameKind]string{FrameExecute: "execute", FrameCancel: "cancel", FrameDrain: "drain", 0: "FrameKind(0)"} {
		if got := k.String(); got != want {
			t.Errorf("FrameKind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

func BenchmarkCall(b *testing.B) {
	r := New(Config{})
	h := startHost(r, "h", 16, nil, "t")
	defer h.Stop()
	ctx := context.Background()
	for b.Loop() {
		if _, err := r.Call(ctx, Call{Tool: "t", Params: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestOutcome(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("registry: tool %q: %w", "t", ErrNoHost), "no_host"},
		{ErrOverloaded, "overloaded"},
		{fmt.Errorf("x: %w", ErrHostGone), "host_gone"},
		{context.DeadlineExceeded, "deadline"},
		{context.Canceled, "canceled"},
		{errors.New("other"), "error"},
	}
	for _, tt := range tests {
		if got := Outcome(tt.err); got != tt.want {
			t.Errorf("Outcome(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
