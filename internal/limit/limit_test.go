package limit

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestKeyedRate(t *testing.T) {
	k := NewKeyed(KeyedConfig{Rate: 10, Burst: 5, MaxInFlight: -1})
	now := time.Unix(1000, 0)
	admitted := 0
	var lerr *LimitError
	for range 20 {
		release, err := k.Acquire("alice", now)
		if err != nil {
			if !errors.As(err, &lerr) || !errors.Is(err, ErrRate) || !errors.Is(err, ErrLimited) {
				t.Fatalf("err = %v, want a *LimitError matching ErrRate", err)
			}
			continue
		}
		admitted++
		release()
	}
	if admitted != 5 {
		t.Errorf("admitted %d at once, want the burst 5", admitted)
	}
	if lerr.RetryAfter <= 0 || lerr.RetryAfter > 100*time.Millisecond {
		t.Errorf("RetryAfter = %v, want (0, 100ms] at 10/s", lerr.RetryAfter)
	}
	// Another key has its own budget.
	if _, err := k.Acquire("bob", now); err != nil {
		t.Errorf("bob: %v", err)
	}
	// A second later alice has 5 again (burst), not 10.
	now = now.Add(time.Second)
	admitted = 0
	for range 20 {
		if release, err := k.Acquire("alice", now); err == nil {
			admitted++
			release()
		}
	}
	if admitted != 5 {
		t.Errorf("after 1s: admitted %d, want 5", admitted)
	}
}

func TestKeyedInFlight(t *testing.T) {
	k := NewKeyed(KeyedConfig{Rate: -1, MaxInFlight: 3})
	now := time.Now()
	var releases []func()
	for range 3 {
		r, err := k.Acquire("a", now)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	if _, err := k.Acquire("a", now); !errors.Is(err, ErrInFlight) {
		t.Fatalf("4th in flight: %v, want ErrInFlight", err)
	}
	releases[0]()
	releases[0]() // twice: counts once
	if _, err := k.Acquire("a", now); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	if _, err := k.Acquire("a", now); !errors.Is(err, ErrInFlight) {
		t.Fatalf("double release freed two: %v", err)
	}
}

// TestKeyedBoundedKeys: a client inventing keys cannot grow the set past
// MaxKeys, and a key with requests in flight is never forgotten (it would
// shed its concurrency limit).
func TestKeyedBoundedKeys(t *testing.T) {
	k := NewKeyed(KeyedConfig{MaxKeys: 100, MaxInFlight: 1})
	now := time.Now()
	held, err := k.Acquire("held", now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		r, err := k.Acquire(fmt.Sprint("k", i), now)
		if err != nil {
			t.Fatal(err)
		}
		r()
	}
	if n := k.Len(); n > 100 {
		t.Errorf("%d keys remembered, want at most 100", n)
	}
	if _, err := k.Acquire("held", now); !errors.Is(err, ErrInFlight) {
		t.Errorf("held key forgotten: %v", err)
	}
	held()
}

// TestKeyedBusyKeysUnderPressure: keys with requests in flight (host
// streams held for hours) at the least recently used end, more of them
// than one eviction looks at, all survive a flood of new keys, and the
// flood is still forgotten: the set stays within MaxKeys plus the busy
// keys.
func TestKeyedBusyKeysUnderPressure(t *testing.T) {
	const maxKeys, busy = 100, 300
	k := NewKeyed(KeyedConfig{MaxKeys: maxKeys, MaxInFlight: 1})
	now := time.Now()
	var releases []func()
	for i := range busy {
		r, err := k.Acquire(fmt.Sprint("busy", i), now)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	for i := range 20000 {
		r, err := k.Acquire(fmt.Sprint("k", i), now)
		if err != nil {
			t.Fatal(err)
		}
		r()
		if n := k.Len(); n > maxKeys+busy {
			t.Fatalf("after %d new keys: %d keys remembered, want at most %d (MaxKeys and the busy ones)", i+1, n, maxKeys+busy)
		}
	}
	for i := range busy {
		if _, err := k.Acquire(fmt.Sprint("busy", i), now); !errors.Is(err, ErrInFlight) {
			t.Fatalf("busy%d forgotten while in flight (its limit shed): %v", i, err)
		}
	}
	for _, r := range releases {
		r()
	}
	// Idle again, they may go: new keys bring the set back to MaxKeys.
	for i := range 2 * (maxKeys + busy) {
		r, err := k.Acquire(fmt.Sprint("new", i), now)
		if err != nil {
			t.Fatal(err)
		}
		r()
	}
	if n := k.Len(); n > maxKeys {
		t.Errorf("all idle: %d keys remembered, want at most %d", n, maxKeys)
	}
}

func TestCheckParams(t *testing.T) {
	big := strings.Repeat("x", MaxParamsBytes)
	st, _ := structpb.NewStruct(map[string]any{"a": big})
	tests := []struct {
		name  string
		st    *structpb.Struct
		js    string
		field string
	}{
		{"small", &structpb.Struct{}, `{}`, ""},
		{"json too long", nil, big + "x", "params_json"},
		{"struct too large", st, "", "params"},
		{"decoded json too large", st, `{"a":"…"}`, "params_json"},
	}
	for _, tt := range tests {
		err := CheckParams(tt.st, tt.js)
		var se *SizeError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.field != "" && (!errors.As(err, &se) || se.Field != tt.field || !errors.Is(err, ErrTooLarge)):
			t.Errorf("%s: err = %v, want a SizeError on %s", tt.name, err, tt.field)
		}
	}
}
