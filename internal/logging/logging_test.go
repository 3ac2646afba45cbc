package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		level, format string
		wantErr       string
		wantJSON      bool
	}{
		{level: "info", format: "json", wantJSON: true},
		{level: "debug", format: "console"},
		{level: "loud", format: "json", wantErr: "--log-level"},
		{level: "info", format: "xml", wantErr: `--log-format must be console or json, not "xml"`},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		log, err := New(tt.level, tt.format, &buf)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New(%q, %q) error = %v, want one containing %q", tt.level, tt.format, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("New(%q, %q): %v", tt.level, tt.format, err)
		}
		log.Debug("hidden at info")
		log.Info("hello")
		out := buf.String()
		if !strings.Contains(out, "hello") {
			t.Errorf("New(%q, %q) wrote %q, want the message", tt.level, tt.format, out)
		}
		if got, want := strings.Contains(out, "hidden at info"), tt.level == "debug"; got != want {
			t.Errorf("New(%q, %q): debug line written = %v, want %v", tt.level, tt.format, got, want)
		}
		if tt.wantJSON {
			var m map[string]any
			if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m["msg"] != "hello" {
				t.Errorf("json output %q: %v, msg %v", out, err, m["msg"])
			}
		}
	}
}

func TestNewSlog(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewSlog("warn", &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("quiet")
	log.Warn("loud")
	if got := buf.String(); strings.Contains(got, "quiet") || !strings.Contains(got, "msg=loud") {
		t.Errorf("NewSlog(warn) wrote %q, want only the warning, as text", got)
	}
	if _, err := NewSlog("chatty", &buf); err == nil || !strings.HasPrefix(err.Error(), "--log-level: ") {
		t.Errorf("NewSlog(chatty) error = %v, want a --log-level error", err)
	}
}
