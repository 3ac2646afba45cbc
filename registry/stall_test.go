package registry

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestStalledReplicaSkipped reproduces the row: a replica that
// takes calls and never answers held 19 of 20 callers until their
// deadlines. After one call's timeout it is skipped; its first answer
// makes it routable again.
func TestStalledReplicaSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		r := New(Config{StallAfter: 100 * time.Millisecond, HeartbeatInterval: time.Hour})
		mute := attach(r, "mute", 16, "t") // attached first: wins ties
		good := startHost(r, "good", 16, func() time.Duration { return 10 * time.Millisecond }, "t")
		defer good.Stop()

		// The first call lands on mute and times out.
		timeout := 500 * time.Millisecond
		first := callAsync(ctx, r, Call{Tool: "t", Params: "first", Deadline: time.Now().Add(timeout)})
		synctest.Wait()
		stuck := deliver(t, mute)
		time.Sleep(timeout)
		synctest.Wait()
		if o := answer(t, first); !errors.Is(o.err, context.DeadlineExceeded) {
			t.Fatalf("first call: %v, want DeadlineExceeded", o.err)
		}
		if h := hostByID(r, "mute"); !h.Stalled {
			t.Fatalf("mute after a timed-out call: %+v, want Stalled", h)
		}

		// 20 callers: none goes to mute, every one is answered.
		var calls []<-chan callOut
		for i := range 20 {
			calls = append(calls, callAsync(ctx, r, Call{Tool: "t", Params: i, Deadline: time.Now().Add(timeout)}))
		}
		synctest.Wait()
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		failed := 0
		for _, ch := range calls {
			if o := answer(t, ch); o.err != nil || o.res.HostID != "good" {
				failed++
			}
		}
		if failed != 0 {
			t.Errorf("%d of 20 calls failed or went to the stalled host", failed)
		}
		for {
			f, ok := tryFrame(mute)
			if !ok {
				break
			}
			if f.Kind == FrameExecute {
				t.Errorf("stalled host got a call: %+v", f)
			}
		}

		// The late answer proves mute alive: it is routed again.
		_ = mute.Complete(stuck.CallID, "late")
		if h := hostByID(r, "mute"); h.Stalled {
			t.Fatalf("mute after answering: %+v, want not Stalled", h)
		}
		next := callAsync(ctx, r, Call{Tool: "t", Params: "next"})
		synctest.Wait()
		f := deliver(t, mute)
		if err := mute.Complete(f.CallID, "ok"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if o := answer(t, next); o.err != nil || o.res.HostID != "mute" {
			t.Errorf("next call: %+v %v, want answered by mute", o.res, o.err)
		}
	})
}

// TestStalledOnlyHostProbed: when only a stalled host serves the tool, it
// gets one call at a time; the other callers fail fast (ErrOverloaded
// after QueueWait) instead of waiting for their deadlines.
func TestStalledOnlyHostProbed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		r := New(Config{StallAfter: 100 * time.Millisecond, QueueWait: 200 * time.Millisecond, HeartbeatInterval: time.Hour})
		mute := attach(r, "mute", 16, "t")
		first := callAsync(ctx, r, Call{Tool: "t", Deadline: time.Now().Add(time.Second)})
		synctest.Wait()
		deliver(t, mute)
		time.Sleep(time.Second)
		synctest.Wait()
		answer(t, first)

		deadline := time.Now().Add(30 * time.Second)
		var calls []<-chan callOut
		for range 10 {
			calls = append(calls, callAsync(ctx, r, Call{Tool: "t", Deadline: deadline}))
		}
		synctest.Wait()
		executes := 0
		for {
			f, ok := tryFrame(mute)
			if !ok {
				break
			}
			if f.Kind == FrameExecute {
				mute.Delivered(f.CallID)
				executes++
			}
		}
		if executes != 1 {
			t.Errorf("stalled host got %d calls at once, want 1 (a probe)", executes)
		}
		time.Sleep(300 * time.Millisecond) // past QueueWait, long before the deadline
		synctest.Wait()
		overloaded := 0
		for _, ch := range calls {
			select {
			case o := <-ch:
				if errors.Is(o.err, ErrOverloaded) {
					overloaded++
				}
			default:
			}
		}
		if overloaded != 9 {
			t.Errorf("%d callers failed fast with ErrOverloaded, want 9", overloaded)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
	})
}

// TestShortDeadlineDoesNotStall: a caller's deadline shorter than
// StallAfter never marks a host stalled.
func TestShortDeadlineDoesNotStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{StallAfter: time.Second, HeartbeatInterval: time.Hour})
		h := attach(r, "h", 4, "t")
		c := callAsync(t.Context(), r, Call{Tool: "t", Deadline: time.Now().Add(time.Millisecond)})
		synctest.Wait()
		deliver(t, h)
		time.Sleep(time.Millisecond)
		synctest.Wait()
		answer(t, c)
		if hostByID(r, "h").Stalled {
			t.Error("a 1ms deadline stalled the host")
		}
	})
}

func TestMaxSlots(t *testing.T) {
	r := New(Config{MaxSlots: 8})
	if got := r.Attach(HostInfo{HostID: "h", Slots: 1 << 30}).Slots(); got != 8 {
		t.Errorf("Slots = %d, want the cap 8", got)
	}
}

func hostByID(r *Registry, id string) HostStatus {
	for _, h := range r.Hosts() {
		if h.HostID == id {
			return h
		}
	}
	return HostStatus{}
}

func tryFrame(s *Session) (Frame, bool) {
	select {
	case f := <-s.Outbound():
		return f, true
	default:
		return Frame{}, false
	}
}
