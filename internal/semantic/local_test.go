package semantic

import (
	"regexp"
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
