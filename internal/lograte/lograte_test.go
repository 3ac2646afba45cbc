package lograte

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func TestLogsBounded(t *testing.T) {
	var buf bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zapcore.InfoLevel))
	l := NewLogs(log, 10, time.Minute)
	now := time.Unix(0, 0)
	l.now = func() time.Time { return now }
	for range 100000 {
		l.Warn("peer-1", "result dropped", zap.String("call", "x"))
	}
	l.Warn("peer-2", "result dropped")
	if n := strings.Count(buf.String(), "\n"); n != 11 {
		t.Errorf("%d lines for 100,001 warnings, want 11", n)
	}
	now = now.Add(time.Minute)
	l.Warn("peer-1", "result dropped")
	if !strings.Contains(buf.String(), `"repeats_dropped":99990`) {
		t.Errorf("the next line does not count the dropped: %s", buf.String()[strings.LastIndex(buf.String()[:buf.Len()-1], "\n")+1:])
	}
	// Keys are bounded too.
	for i := range 100000 {
		l.Warn(fmt.Sprint("peer-", i), "m")
	}
	if len(l.slots) > defaultLogKeys+2 {
		t.Errorf("%d log slots, want at most %d", len(l.slots), defaultLogKeys+2)
	}
}
