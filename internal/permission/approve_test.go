package permission

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// clock is a settable clock for NewApprover.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var (
	testKey = []byte("0123456789abcdef0123456789abcdef")
	t0      = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
)

func TestTokenCheck(t *testing.T) {
	clk := &clock{t0}
	a := NewApprover(testKey, 5*time.Minute, clk.now)
	params := CanonicalJSON(map[string]any{"path": "/etc/hosts", "max_bytes": 100})
	token := a.Token("read_file", "guest-1", params)

	other := NewApprover([]byte("another key, just as long as it1"), 5*time.Minute, clk.now)
	longer := NewApprover(testKey, time.Hour, clk.now)

	tests := []struct {
		name         string
		a            *Approver
		token        string
		tool, caller string
		params       []byte
		at           time.Time
		want         error
	}{
		{"valid", a, token, "read_file", "guest-1", params, t0, nil},
		{"valid just before expiry", a, token, "read_file", "guest-1", params, t0.Add(5*time.Minute - time.Nanosecond), nil},
		{"same key, other approver", longer, token, "read_file", "guest-1", params, t0, nil},
		{"other tool", a, token, "write_file", "guest-1", params, t0, ErrBadToken},
		{"other caller", a, token, "read_file", "guest-2", params, t0, ErrBadToken},
		{"empty caller", a, token, "read_file", "", params, t0, ErrBadToken},
		{"other params", a, token, "read_file", "guest-1", CanonicalJSON(map[string]any{"path": "/etc/shadow", "max_bytes": 100}), t0, ErrBadToken},
		{"nil params", a, token, "read_file", "guest-1", nil, t0, ErrBadToken},
		{"tool/caller boundary moved", a, token, "read_fileg", "uest-1", params, t0, ErrBadToken},
		{"other key", other, token, "read_file", "guest-1", params, t0, ErrBadToken},
		{"at expiry", a, token, "read_file", "guest-1", params, t0.Add(5 * time.Minute), ErrExpiredToken},
		{"long expired", a, token, "read_file", "guest-1", params, t0.Add(48 * time.Hour), ErrExpiredToken},
		{"expired and for another tool", a, token, "write_file", "guest-1", params, t0.Add(time.Hour), ErrBadToken},
		{"empty token", a, "", "read_file", "guest-1", params, t0, ErrBadToken},
		{"garbage", a, "not a token", "read_file", "guest-1", params, t0, ErrBadToken},
		{"right length, not base64", a, strings.Repeat("!", len(token)), "read_file", "guest-1", params, t0, ErrBadToken},
		{"right length, zeros", a, strings.Repeat("A", len(token)), "read_file", "guest-1", params, t0, ErrBadToken},
		{"truncated", a, token[:len(token)-1], "read_file", "guest-1", params, t0, ErrBadToken},
		{"extended", a, token + "A", "read_file", "guest-1", params, t0, ErrBadToken},
		{"padded", a, token + "==", "read_file", "guest-1", params, t0, ErrBadToken},
		{"newline inside", a, token[:10] + "\n" + token[11:], "read_file", "guest-1", params, t0, ErrBadToken},
		{"newline added", a, token[:10] + "\n" + token[10:], "read_file", "guest-1", params, t0, ErrBadToken},
	}
	for _, tt := range tests {
		clk.t = tt.at
		if got := tt.a.Check(tt.token, tt.tool, tt.caller, tt.params); got != tt.want {
			t.Errorf("%s: Check = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func mustDecode(t *testing.T, token string) []byte {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatalf("token %q is not unpadded base64url: %v", token, err)
	}
	return raw
}

// TestTamperedTokens changes every bit of a token (as bytes and as text)
// and checks that none of the results is accepted.
func TestTamperedTokens(t *testing.T) {
	clk := &clock{t0}
	a := NewApprover(testKey, 0, clk.now)
	params := []byte(`{"x":1}`)
	token := a.Token("t", "c", params)
	if err := a.Check(token, "t", "c", params); err != nil {
		t.Fatalf("Check(genuine token) = %v, want nil", err)
	}
	raw := mustDecode(t, token)
	for i := range raw {
		for bit := range 8 {
			b := bytes.Clone(raw)
			b[i] ^= 1 << bit
			tampered := base64.RawURLEncoding.EncodeToString(b)
			if got := a.Check(tampered, "t", "c", params); got != ErrBadToken {
				t.Errorf("byte %d bit %d flipped: Check = %v, want %v", i, bit, got, ErrBadToken)
			}
		}
	}
	// Changing the text, including the low bits of the last character,
	// which a lenient decoder would ignore, and to characters outside the
	// base64url alphabet (standard base64, padding, newlines).
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. \n\r\x00"
	for i := range len(token) {
		for _, c := range alphabet {
			if byte(c) == token[i] {
				continue
			}
			tampered := token[:i] + string(c) + token[i+1:]
			if got := a.Check(tampered, "t", "c", params); got != ErrBadToken {
				t.Errorf("character %d changed to %q: Check = %v, want %v", i, c, got, ErrBadToken)
			}
		}
	}
}

func TestTokenFormat(t *testing.T) {
	clk := &clock{t0}
	tests := []struct {
		ttl        time.Duration
		wantExpiry time.Time
	}{
		{0, t0.Add(10 * time.Minute)},
		{-time.Second, t0.Add(10 * time.Minute)},
		{time.Minute, t0.Add(time.Minute)},
		{1500 * time.Millisecond, t0.Add(time.Second)}, // to the second
	}
	for _, tt := range tests {
		a := NewApprover(testKey, tt.ttl, clk.now)
		token := a.Token("t", "c", nil)
		if got, want := len(token), 54; got != want {
			t.Errorf("ttl %v: token %q has %d characters, want %d", tt.ttl, token, got, want)
		}
		if strings.ContainsAny(token, "+/=") {
			t.Errorf("ttl %v: token %q is not unpadded base64url", tt.ttl, token)
		}
		raw := mustDecode(t, token)
		var exp int64
		for _, b := range raw[:8] {
			exp = exp<<8 | int64(b)
		}
		if got := time.Unix(exp, 0).UTC(); !got.Equal(tt.wantExpiry) {
			t.Errorf("ttl %v: expiry %v, want %v", tt.ttl, got, tt.wantExpiry)
		}
	}
}

func TestApproverTTL(t *testing.T) {
	clk := &clock{t0}
	tests := []struct {
		ttl, after time.Duration
		want       error
	}{
		{0, 10*time.Minute - time.Second, nil},
		{0, 10 * time.Minute, ErrExpiredToken},
		{time.Minute, 59 * time.Second, nil},
		{time.Minute, time.Minute, ErrExpiredToken},
	}
	for _, tt := range tests {
		clk.t = t0
		a := NewApprover(testKey, tt.ttl, clk.now)
		token := a.Token("t", "c", nil)
		clk.t = t0.Add(tt.after)
		if got := a.Check(token, "t", "c", nil); got != tt.want {
			t.Errorf("ttl %v, checked %v later: Check = %v, want %v", tt.ttl, tt.after, got, tt.want)
		}
	}
}

func TestNewApproverDefaults(t *testing.T) {
	// Random keys: two approvers do not accept each other's tokens.
	a, b := NewApprover(nil, 0, nil), NewApprover([]byte{}, 0, nil)
	params := CanonicalJSON(nil)
	ta := a.Token("t", "c", params)
	tests := []struct {
		name string
		a    *Approver
		want error
	}{
		{"issuer, real clock", a, nil},
		{"other random key", b, ErrBadToken},
	}
	for _, tt := range tests {
		if got := tt.a.Check(ta, "t", "c", params); got != tt.want {
			t.Errorf("%s: Check = %v, want %v", tt.name, got, tt.want)
		}
	}

	// The key is copied.
	key := bytes.Clone(testKey)
	c := NewApprover(key, 0, nil)
	tc := c.Token("t", "c", params)
	key[0] ^= 1
	if got := c.Check(tc, "t", "c", params); got != nil {
		t.Errorf("after changing the caller's key slice: Check = %v, want nil", got)
	}
}

func TestErrors(t *testing.T) {
	if errors.Is(ErrBadToken, ErrExpiredToken) || ErrBadToken.Error() == ErrExpiredToken.Error() {
		t.Errorf("ErrBadToken (%v) and ErrExpiredToken (%v) are not distinct", ErrBadToken, ErrExpiredToken)
	}
}

func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"nil", nil, `{}`},
		{"empty", map[string]any{}, `{}`},
		{"sorted keys", map[string]any{"b": 1, "a": "x", "c": true}, `{"a":"x","b":1,"c":true}`},
		{"nested maps sorted", map[string]any{"o": map[string]any{"z": nil, "y": []any{2.5, "s"}}}, `{"o":{"y":[2.5,"s"],"z":null}}`},
	}
	for _, tt := range tests {
		if got := string(CanonicalJSON(tt.params)); got != tt.want {
			t.Errorf("%s: CanonicalJSON = %s, want %s", tt.name, got, tt.want)
		}
	}

	// Maps encoding/json cannot encode never give the same bytes twice.
	bad := map[string]any{"ch": make(chan int)}
	x, y := CanonicalJSON(bad), CanonicalJSON(bad)
	if bytes.Equal(x, y) || len(x) == 0 || x[0] != 0 {
		t.Errorf("CanonicalJSON(unencodable) = %q then %q, want distinct values starting with byte 0", x, y)
	}
}
