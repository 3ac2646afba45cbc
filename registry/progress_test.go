package registry

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

// TestProgress routes a host's progress reports to the caller that asked
// for them, in order, before the result; a caller that did not ask gets
// none, and reports for answered calls are refused.
func TestProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{})
		s := attach(r, "h", 2, "tool")
		var mu sync.Mutex
		var got []any
		ch := callAsync(t.Context(), r, Call{Tool: "tool", Progress: func(p any) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, p)
		}})
		synctest.Wait()
		f := deliver(t, s)
		if !f.WantProgress {
			t.Errorf("Execute frame WantProgress = false, want true")
		}
		for _, p := range []any{1, 2} {
			if err := s.Progress(f.CallID, p); err != nil {
				t.Fatalf("Progress: %v", err)
			}
		}
		if err := s.Complete(f.CallID, "done"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if o := answer(t, ch); o.err != nil || o.res.Payload != "done" {
			t.Fatalf("Call = %+v, %v", o.res, o.err)
		}
		mu.Lock()
		if want := []any{1, 2}; !slices.Equal(got, want) {
			t.Errorf("progress = %v, want %v", got, want)
		}
		mu.Unlock()
		if err := s.Progress(f.CallID, 3); !errors.Is(err, ErrUnknownCall) {
			t.Errorf("Progress after the result: %v, want ErrUnknownCall", err)
		}

		ch = callAsync(t.Context(), r, Call{Tool: "tool"})
		synctest.Wait()
		f = deliver(t, s)
		if f.WantProgress {
			t.Errorf("Execute frame of a call without Progress: WantProgress = true")
		}
		if err := s.Progress(f.CallID, 1); err != nil {
			t.Errorf("Progress of a call without a callback: %v, want nil (dropped)", err)
		}
		_ = s.Complete(f.CallID, "x")
		synctest.Wait()
		answer(t, ch)
	})
}
