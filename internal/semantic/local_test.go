package semantic

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/internal/semantic/static"
	"github.com/tooldex/tooldex/internal/semantic/uselite"
)

// TestLocalNamesHoldDigests: the cache names of the embedded models carry
// a digest of their files, so a new model.bin changes the name.
func TestLocalNamesHoldDigests(t *testing.T) {
	tests := []struct {
		mode Mode
		want string
	}{
		{ModeStatic, "static-" + static.Digest()},
		{ModeFull, "uselite-" + uselite.Digest()},
	}
	hex := regexp.MustCompile(`^[a-z]+-[0-9a-f]{12}$`)
	for _, tt := range tests {
		got := CacheName(tt.mode)
		if got != tt.want || !hex.MatchString(got) {
			t.Errorf("CacheName(%s) = %q, want %q (name-12 hex digits)", tt.mode, got, tt.want)
		}
	}
	if got := CacheName(ModeOff); got != "" {
		t.Errorf("CacheName(off) = %q, want none", got)
	}
	if _, err := Local(ModeOff); err == nil {
		t.Error("Local(off): no error")
	}
}

func TestExternalCacheName(t *testing.T) {
	a := ExternalCacheName("http://a/v1", "nomic/embed:v1.5 ü")
	if !regexp.MustCompile(`^external-nomic_embed_v1\.5__-[0-9a-f]{12}$`).MatchString(a) {
		t.Errorf("ExternalCacheName = %q", a)
	}
	if b := ExternalCacheName("http://b/v1", "nomic/embed:v1.5 ü"); b == a {
		t.Errorf("two servers' models of one name share %q", a)
	}
	if long := ExternalCacheName("u", strings.Repeat("m", 500)); len(long) > 100 {
		t.Errorf("a long model name gives a %d-byte name", len(long))
	}
}
