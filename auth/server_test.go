package auth

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func TestListen(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		flags    ServerFlags
		addr     string
		wantErr  string // a substring; "" means it listens
		wantWarn string
	}{
		{name: "loopback without credentials is anonymous, loudly", addr: "127.0.0.1:0", wantWarn: "NO AUTHENTICATION"},
		{name: "a key without its certificate", flags: ServerFlags{TLSKey: "key.pem"}, addr: "127.0.0.1:0", wantErr: "tls"},
		{name: "a client CA without TLS", flags: ServerFlags{ClientCAFile: "ca.pem"}, addr: "127.0.0.1:0", wantErr: "--client-ca"},
		{name: "a bad address", addr: "127.0.0.1:-1", wantErr: "listen"},
		{name: "anonymous and tokens together", flags: ServerFlags{Config: Config{TokensFile: "tokens"}, InsecureAnonymous: true}, addr: "127.0.0.1:0", wantErr: "--insecure-anonymous"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, warn, err := tt.flags.Listen(ctx, tt.addr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tt.wantErr)) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if l.Listener != nil {
					t.Errorf("a listener is returned with the error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Listen: %v", err)
			}
			defer l.Close()
			if !strings.Contains(warn, tt.wantWarn) {
				t.Errorf("warn = %q, want it to contain %q", warn, tt.wantWarn)
			}
			if l.Authn == nil || !l.Authn.Anonymous() {
				t.Errorf("Authn = %v, want an anonymous authenticator", l.Authn)
			}
			if l.TLS != nil {
				t.Errorf("TLS = %v, want none", l.TLS)
			}
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatalf("the listener does not accept: %v", err)
			}
			c.Close()
		})
	}
}

// TestListenClosesOnAuthenticatorError checks that a refused configuration
// leaves no socket open: the same address can be listened on right after.
func TestListenClosesOnAuthenticatorError(t *testing.T) {
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := probe.Addr().String()
	probe.Close()
	f := ServerFlags{Config: Config{TokensFile: "tokens"}, InsecureAnonymous: true}
	if _, _, err := f.Listen(context.Background(), addr); err == nil {
		t.Fatal("Listen with --insecure-anonymous and a tokens file: no error")
	}
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address is still held after a refused Listen: %v", err)
	}
	again.Close()
}

func TestCheckAddr(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8080}
	tests := []struct {
		name     string
		flags    ServerFlags
		addr     net.Addr
		wantErr  error
		wantWarn string
	}{
		{name: "loopback, no credentials", addr: loop, wantWarn: "NO AUTHENTICATION"},
		{name: "public, no credentials", addr: public, wantErr: ErrNoCredentials},
		{name: "public, --insecure-anonymous", flags: ServerFlags{InsecureAnonymous: true}, addr: public, wantWarn: "--insecure-anonymous"},
		{name: "public, tokens, plaintext", flags: ServerFlags{Config: Config{TokensFile: "tokens"}}, addr: public, wantWarn: "plaintext"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warn, err := tt.flags.CheckAddr(tt.addr)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(warn, tt.wantWarn) {
				t.Errorf("warn = %q, want it to contain %q", warn, tt.wantWarn)
			}
		})
	}
}
