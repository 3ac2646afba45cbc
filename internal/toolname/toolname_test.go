package toolname

import (
	"regexp"
	"strings"
	"testing"
)

// spec is the rule as the providers write it.
var spec = regexp.MustCompile(Pattern)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"get_weather", ""},
		{"a-B_9", ""},
		{strings.Repeat("x", 64), ""},
		{"", "is empty"},
		{strings.Repeat("x", 65), "is 65 bytes long, at most 64"},
		{"has space", "must match " + Pattern + " (letters, digits, _ and -)"},
		{"dot.ted", "must match " + Pattern + " (letters, digits, _ and -)"},
		{"é", "must match " + Pattern + " (letters, digits, _ and -)"},
	}
	for _, tt := range tests {
		if got := Check(tt.name); got != tt.want {
			t.Errorf("Check(%q) = %q, want %q", tt.name, got, tt.want)
		}
		if got, want := Valid(tt.name), tt.want == ""; got != want {
			t.Errorf("Valid(%q) = %v, want %v", tt.name, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{"", "a", "mcp__s__t", "a b", strings.Repeat("z", 65), "\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s), spec.MatchString(s); got != want {
			t.Errorf("Valid(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}

func TestSanitize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"get_weather-2", "get_weather-2"},
		{"API/get user", "API_get_user"},
		{"café", "caf_"},
		{"a\xffb", "a_b"},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
