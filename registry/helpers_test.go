package registry

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// callOut is what one Call returned.
type callOut struct {
	res Result
	err error
}

// callAsync runs r.Call on a goroutine; its answer arrives on the channel.
func callAsync(ctx context.Context, r *Registry, c Call) <-chan callOut {
	ch := make(chan callOut, 1)
	go func() {
		res, err := r.Call(ctx, c)
		ch <- callOut{res, err}
	}()
	return ch
}

// frame takes the next frame of s, failing when there is none. In a
// synctest bubble, call synctest.Wait first.
func frame(t *testing.T, s *Session) Frame {
	t.Helper()
	select {
	case f := <-s.Outbound():
		return f
	default:
		t.Fatalf("session %s (%s): no frame queued", s.ID(), s.HostID())
		return Frame{}
	}
}

// noFrame fails when s has a frame queued.
func noFrame(t *testing.T, s *Session) {
	t.Helper()
	select {
	case f := <-s.Outbound():
		t.Fatalf("session %s (%s): got %v frame %+v, want none", s.ID(), s.HostID(), f.Kind, f)
	default:
	}
}

// deliver takes s's next frame, which must be an Execute frame, as a sender
// that sent it would.
func deliver(t *testing.T, s *Session) Frame {
	t.Helper()
	f := frame(t, s)
	if f.Kind != FrameExecute {
		t.Fatalf("session %s: got %v frame, want execute", s.ID(), f.Kind)
	}
	s.Delivered(f.CallID)
	return f
}

// answer returns the answer on ch, failing when there is none yet.
func answer(t *testing.T, ch <-chan callOut) callOut {
	t.Helper()
	select {
	case o := <-ch:
		return o
	default:
		t.Fatal("call not answered yet")
		return callOut{}
	}
}

// pendingCall fails when ch already has an answer.
func pendingCall(t *testing.T, ch <-chan callOut) {
	t.Helper()
	select {
	case o := <-ch:
		t.Fatalf("call answered early: %+v, %v", o.res, o.err)
	default:
	}
}

// attach opens a session serving tools.
func attach(r *Registry, hostID string, slots int, tools ...string) *Session {
	s := r.Attach(HostInfo{HostID: hostID, Version: "v1", Slots: slots})
	s.AddTools(tools...)
	return s
}

// fakeHost is a tool host that runs every call it gets, answering with the
// call's Params after delay(). It tracks how many calls it runs at once
// and which Params it ran.
type fakeHost struct {
	s     *Session
	delay func() time.Duration
	stop  chan struct{}
	wg    sync.WaitGroup // the loop and the running calls

	mu         sync.Mutex
	running    int
	maxRunning int
	ran        []any // Params of every Execute frame
	cancels    int
}

// startHost attaches a session and runs a fake host on it until Stop.
func startHost(r *Registry, hostID string, slots int, delay func() time.Duration, tools ...string) *fakeHost {
	h := &fakeHost{s: attach(r, hostID, slots, tools...), delay: delay, stop: make(chan struct{})}
	h.wg.Add(1)
	go h.loop()
	return h
}

func (h *fakeHost) loop() {
	defer h.wg.Done()
	for {
		select {
		case <-h.stop:
			return
		case <-h.s.Done():
			return
		case f := <-h.s.Outbound():
			switch f.Kind {
			case FrameExecute:
				h.s.Delivered(f.CallID)
				h.mu.Lock()
				h.running++
				h.maxRunning = max(h.maxRunning, h.running)
				h.ran = append(h.ran, f.Params)
				h.mu.Unlock()
				h.wg.Add(1)
				go h.run(f)
			case FrameCancel:
				h.mu.Lock()
				h.cancels++
				h.mu.Unlock()
			}
		}
	}
}

func (h *fakeHost) run(f Frame) {
	defer h.wg.Done()
	if h.delay != nil {
		if d := h.delay(); d > 0 {
			time.Sleep(d)
		}
	}
	h.mu.Lock()
	h.running--
	h.mu.Unlock()
	// Fails with ErrSessionClosed once the session ended: dropped, as the
	// service would.
	if err := h.s.Complete(f.CallID, f.Params); err != nil && !errors.Is(err, ErrUnknownCall) {
		panic(err)
	}
}

// Stop stops the host loop and waits for its running calls.
func (h *fakeHost) Stop() {
	close(h.stop)
	h.wg.Wait()
}

// randomDelay returns a delay function for up to max.
func randomDelay(maxDelay time.Duration) func() time.Duration {
	return func() time.Duration { return rand.N(maxDelay) }
}
