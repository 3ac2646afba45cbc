package limit

import (
	"container/list"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Errors of Keyed.Acquire; both match ErrLimited.
var (
	// ErrLimited: a key went past one of its limits.
	ErrLimited = errors.New("limit exceeded")
	// ErrRate: the key's requests per second.
	ErrRate = fmt.Errorf("request rate %w", ErrLimited)
	// ErrInFlight: the key's requests in flight at once.
	ErrInFlight = fmt.Errorf("requests in flight %w", ErrLimited)
)

// LimitError says which limit a key passed and when to retry.
type LimitError struct {
	Key        string
	Err        error // ErrRate or ErrInFlight
	Limit      float64
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	switch e.Err {
	case ErrRate:
		return fmt.Sprintf("%s: more than %g requests per second; retry after %v", e.Key, e.Limit, e.RetryAfter)
	default:
		return fmt.Sprintf("%s: more than %g requests in flight; retry after %v", e.Key, e.Limit, e.RetryAfter)
	}
}

func (e *LimitError) Unwrap() error { return e.Err }

// Defaults of KeyedConfig, chosen to never bother a normal client: loopback
// clients without credentials all share one key (their address).
const (
	DefaultRate        = 2000
	DefaultBurst       = 4000
	DefaultMaxInFlight = 2048
	DefaultMaxKeys     = 10000
)

// KeyedConfig configures a Keyed. Negative Rate or MaxInFlight turns that
// limit off; zero means its default.
type KeyedConfig struct {
	// Rate is each key's sustained requests per second; Burst how many it
	// may send at once above it.
	Rate  float64
	Burst int
	// MaxInFlight bounds each key's requests running at once.
	MaxInFlight int
	// MaxKeys bounds the keys remembered; the least recently used idle key
	// is forgotten first (and starts afresh when it comes back).
	MaxKeys int
}

func (c KeyedConfig) withDefaults() KeyedConfig {
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Burst <= 0 {
		// Two seconds' worth (DefaultBurst at DefaultRate).
		c.Burst = max(1, int(math.Min(c.Rate*2, math.MaxInt32)))
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxKeys <= 0 {
		c.MaxKeys = DefaultMaxKeys
	}
	return c
}

// Keyed enforces rate and concurrency limits per key (a principal, a
// peer address) over a bounded set of keys. Create it with NewKeyed; its
// methods are safe for concurrent use.
//
// Its LRU is written by hand (on container/list) because a key with
// requests in flight must never be forgotten, which would let its client
// shed its in-flight limit, and golang-lru's caches evict without letting
// the caller refuse.
type Keyed struct {
	cfg KeyedConfig

	mu   sync.Mutex
	keys map[string]*list.Element // of *keyState
	lru  *list.List               // front: most recently used
}

type keyState struct {
	key      string
	lim      *rate.Limiter // nil: no rate limit
	inFlight int
}

// NewKeyed returns a Keyed with cfg, zero fields replaced by defaults.
func NewKeyed(cfg KeyedConfig) *Keyed {
	return &Keyed{cfg: cfg.withDefaults(), keys: make(map[string]*list.Element), lru: list.New()}
}

// Config returns the configuration in force, defaults filled in.
func (k *Keyed) Config() KeyedConfig { return k.cfg }

// Acquire admits one request of key at now, or returns a *LimitError. An
// admitted request must call release exactly once when it ends.
func (k *Keyed) Acquire(key string, now time.Time) (release func(), err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	st := k.stateLocked(key)
	if k.cfg.MaxInFlight > 0 && st.inFlight >= k.cfg.MaxInFlight {
		return nil, &LimitError{Key: key, Err: ErrInFlight, Limit: float64(k.cfg.MaxInFlight), RetryAfter: 100 * time.Millisecond}
	}
	if st.lim != nil {
		r := st.lim.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			return nil, &LimitError{Key: key, Err: ErrRate, Limit: k.cfg.Rate, RetryAfter: d}
		}
	}
	st.inFlight++
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			st.inFlight--
			k.mu.Unlock()
		})
	}, nil
}

// Len returns how many keys are remembered.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lru.Len()
}

// stateLocked returns key's state, creating it and forgetting the least
// recently used idle keys past MaxKeys. Keys with requests in flight are
// never forgotten (they are at most the requests running), so a
// forgotten key cannot shed its concurrency limit; one met at the least
// recently used end moves to the front, so that busy keys held for hours
// (host streams) never stop the idle ones behind them from going.
func (k *Keyed) stateLocked(key string) *keyState {
	if e, ok := k.keys[key]; ok {
		k.lru.MoveToFront(e)
		return e.Value.(*keyState)
	}
	st := &keyState{key: key}
	if k.cfg.Rate > 0 {
		st.lim = rate.NewLimiter(rate.Limit(k.cfg.Rate), k.cfg.Burst)
	}
	k.keys[key] = k.lru.PushFront(st)
	// Bounded work per call: at most 64 keys looked at.
	for scanned := 0; k.lru.Len() > k.cfg.MaxKeys && scanned < 64; scanned++ {
		e := k.lru.Back()
		old := e.Value.(*keyState)
		if old == st {
			break // every other key is busy
		}
		if old.inFlight > 0 {
			k.lru.MoveToFront(e)
			continue
		}
		k.lru.Remove(e)
		delete(k.keys, old.key)
	}
	return st
}
