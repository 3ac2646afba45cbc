package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestWebFlags(t *testing.T) {
	env := func(string) string { return "" }
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--web-allowed-origins", "https://app.example"}, "needs --web-addr"},
		{[]string{"--web-addr", "127.0.0.1:0", "--web-allowed-origins", "*"}, "refused"},
		{[]string{"--web-addr", "127.0.0.1:0", "--web-allowed-origins", "https://app.example"}, ""},
	}
	for _, tt := range tests {
		c, err := parseFlags(tt.args, env, io.Discard)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseFlags(%q) error = %v, want one with %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || c.web.addr != "127.0.0.1:0" || len(c.web.origins) != 1 {
			t.Errorf("parseFlags(%q) = %+v, %v", tt.args, c.web, err)
		}
	}
	// The environment, through flagenv, like every flag.
	c, err := parseFlags(nil, func(k string) string {
		if k == "TOOLDEX_WEB_ADDR" {
			return "127.0.0.1:8080"
		}
		return ""
	}, io.Discard)
	if err != nil || c.web.addr != "127.0.0.1:8080" {
		t.Errorf("TOOLDEX_WEB_ADDR: web.addr = %q, %v", c.web.addr, err)
	}
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBoundedGzip(t *testing.T) {
	const max = 1000
	tests := []struct {
		name    string
		size    int
		wantErr error
	}{
		{"empty", 0, nil},
		{"under", 999, nil},
		{"at the bound", max, nil},
		{"one past", max + 1, errDecompressedTooLarge},
		{"a bomb", 50 << 20, errDecompressedTooLarge},
	}
	g := &boundedGzip{max: max}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The same decompressor each time: Reset must clear the count.
			if err := g.Reset(bytes.NewReader(gzipped(t, make([]byte, tt.size)))); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(g)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("read %d bytes: error %v, want %v", tt.size, err, tt.wantErr)
			}
			if tt.wantErr == nil && len(got) != tt.size {
				t.Errorf("read %d bytes, want %d", len(got), tt.size)
			}
			if len(got) > max {
				t.Errorf("read %d bytes, past the bound %d", len(got), max)
			}
		})
	}
	if err := g.Reset(strings.NewReader("not gzip")); err == nil {
		t.Error("Reset on a non-gzip stream: no error")
	}
}

// TestWebServesAndStops: with --web-addr, a Connect JSON Search is answered
// on the second listener, and run returns on cancel with no goroutine left.
func TestWebServesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncWriter{b: &bytes.Buffer{}}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--web-addr", "127.0.0.1:0", "--demo-catalog", "--log-format", "json", "--shutdown-grace", "1s", "--data-dir="}, func(string) string { return "" }, logs)
	}()
	var addr string
	for deadline := time.Now().Add(20 * time.Second); addr == "" && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		logs.mu.Lock()
		text := logs.b.String()
		logs.mu.Unlock()
		for _, line := range strings.Split(text, "\n") {
			var m struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &m) == nil && m.Msg == "web" {
				addr = m.Addr
			}
		}
		if addr != "" && !strings.Contains(text, `"msg":"serving"`) {
			addr = "" // wait for the catalog
		}
	}
	if addr == "" {
		cancel()
		<-done
		t.Fatal("no web log line in 20s")
	}
	tr := &http.Transport{}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/tooldex.v1.DiscoveryService/Search", strings.NewReader(`{"query": "slack send", "maxResults": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connect-Protocol-Version", "1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tr.CloseIdleConnections()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "mcp__slack__send_message") {
		t.Errorf("Connect Search: %d %s, want 200 with mcp__slack__send_message", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run() = %v, want nil after cancel", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return 15s after cancel")
	}
	if err := goleak.Find(); err != nil {
		t.Errorf("goroutines left after run() returned: %v", err)
	}
}
