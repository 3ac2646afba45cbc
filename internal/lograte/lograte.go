// Package lograte limits repeated log lines, per peer and message: the one
// helper for every place that logs what a remote party can make it log.
package lograte

import (
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Logs limits repeated log lines: per key (a peer, a host session) and
// message, at most Burst lines per Interval are written; the lines
// dropped are counted and reported with the next line written. A peer
// that sends 100,000 bogus frames then costs a few log lines, not
// megabytes. Create it with NewLogs; its methods are safe for concurrent
// use. The set of keys is bounded (MaxKeys): past it, all new keys share
// one budget.
type Logs struct {
	log      *zap.Logger
	burst    int
	interval time.Duration
	maxKeys  int
	now      func() time.Time

	mu        sync.Mutex
	slots     map[logKey]*logSlot
	lastSweep time.Time
}

type logKey struct{ key, msg string }

type logSlot struct {
	start   time.Time
	written int
	dropped int
}

// Defaults of NewLogs' zero arguments.
const (
	DefaultLogBurst    = 10
	DefaultLogInterval = 10 * time.Second
	defaultLogKeys     = 4096
)

// NewLogs returns a Logs writing to log, at most burst lines per key and
// message per interval (0: 10 per 10s).
func NewLogs(log *zap.Logger, burst int, interval time.Duration) *Logs {
	if burst <= 0 {
		burst = DefaultLogBurst
	}
	if interval <= 0 {
		interval = DefaultLogInterval
	}
	return &Logs{log: log, burst: burst, interval: interval, maxKeys: defaultLogKeys, now: time.Now, slots: make(map[logKey]*logSlot)}
}

// Warn logs msg at warn level for key, unless key wrote msg burst times
// this interval already.
func (l *Logs) Warn(key, msg string, fields ...zap.Field) {
	l.write(zapcore.WarnLevel, key, msg, fields)
}

// Info is Warn at info level.
func (l *Logs) Info(key, msg string, fields ...zap.Field) {
	l.write(zapcore.InfoLevel, key, msg, fields)
}

func (l *Logs) write(level zapcore.Level, key, msg string, fields []zap.Field) {
	if l == nil || !l.log.Core().Enabled(level) {
		return
	}
	now := l.now()
	l.mu.Lock()
	k := logKey{key, msg}
	s := l.slots[k]
	if s == nil {
		if len(l.slots) >= l.maxKeys && now.Sub(l.lastSweep) >= l.interval {
			// Forget windows that ended, at most once an interval.
			l.lastSweep = now
			for kk, ss := range l.slots {
				if now.Sub(ss.start) >= l.interval && ss.dropped == 0 {
					delete(l.slots, kk)
				}
			}
		}
		if len(l.slots) >= l.maxKeys {
			// Full: new keys share one slot.
			k = logKey{"(others)", msg}
			s = l.slots[k]
		}
		if s == nil {
			s = &logSlot{start: now}
			l.slots[k] = s
		}
	}
	if now.Sub(s.start) >= l.interval {
		s.start, s.written = now, 0
	}
	if s.written >= l.burst {
		s.dropped++
		l.mu.Unlock()
		return
	}
	s.written++
	dropped := s.dropped
	s.dropped = 0
	l.mu.Unlock()
	if ce := l.log.Check(level, msg); ce != nil {
		if dropped > 0 {
			fields = append(fields[:len(fields):len(fields)], zap.Int("repeats_dropped", dropped))
		}
		ce.Write(fields...)
	}
}
