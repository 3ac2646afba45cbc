package main

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestNATSFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    natsConfig // checked fields: dataDir, url, replicas
		wantErr string
	}{
		{name: "state dir default", env: map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, want: natsConfig{dataDir: filepath.Join("/s", "tooldex"), replicas: 1}},
		{name: "home default", env: map[string]string{"HOME": "/h"}, want: natsConfig{dataDir: filepath.Join("/h", ".local", "state", "tooldex"), replicas: 1}},
		{name: "memory only", args: []string{"--data-dir="}, env: map[string]string{"HOME": "/h"}, want: natsConfig{replicas: 1}},
		{name: "data dir from env", env: map[string]string{"TOOLDEX_DATA_DIR": "/d"}, want: natsConfig{dataDir: "/d", replicas: 1}},
		{name: "external cluster", args: []string{"--nats-url", "nats://a:4222,nats://b:4222", "--nats-replicas", "3", "--data-dir="}, want: natsConfig{url: "nats://a:4222,nats://b:4222", replicas: 3}},
		{name: "creds without url", args: []string{"--nats-creds", "x.creds"}, wantErr: "need --nats-url"},
		{name: "cert without key", args: []string{"--nats-url", "nats://a:4222", "--nats-cert", "c.pem"}, wantErr: "go together"},
		{name: "replicas out of range", args: []string{"--nats-replicas", "0"}, wantErr: "--nats-replicas"},
		{name: "replay timeout", args: []string{"--replay-timeout", "0s"}, wantErr: "--replay-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.HasSuffix(tt.name, "default") && runtime.GOOS != "linux" {
				t.Skip("the home default is Linux's")
			}
			getenv := func(k string) string { return tt.env[k] }
			c, err := parseFlags(tt.args, getenv, &bytes.Buffer{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFlags(%v) error = %v, want one mentioning %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags(%v) = %v", tt.args, err)
			}
			got := c.nats
			if got.dataDir != tt.want.dataDir || got.url != tt.want.url || got.replicas != tt.want.replicas {
				t.Errorf("parseFlags(%v): data dir %q, url %q, replicas %d; want %q, %q, %d", tt.args,
					got.dataDir, got.url, got.replicas, tt.want.dataDir, tt.want.url, tt.want.replicas)
			}
		})
	}
}

func TestVectorCacheFlag(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"--data-dir", "/d"}, want: filepath.Join("/d", "vectors")},
		{args: []string{"--data-dir="}, want: ""},
		{args: []string{"--data-dir", "/d", "--vector-cache", "/v"}, want: "/v"},
		{args: []string{"--data-dir", "/d", "--vector-cache="}, want: ""},
		{args: []string{"--data-dir="}, env: map[string]string{"TOOLDEX_VECTOR_CACHE": "/e"}, want: "/e"},
	}
	for _, tt := range tests {
		c, err := parseFlags(tt.args, func(k string) string { return tt.env[k] }, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("parseFlags(%v) = %v", tt.args, err)
		}
		if c.vectorCache != tt.want {
			t.Errorf("parseFlags(%v, %v): vector cache %q, want %q", tt.args, tt.env, c.vectorCache, tt.want)
		}
	}
}
