package manifest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/internal/toolname"
)

func TestParseProvider(t *testing.T) {
	tests := []struct {
		in      string
		want    Provider
		wantErr bool
	}{
		{"anthropic", Anthropic, false},
		{"OpenAI", OpenAI, false},
		{" GEMINI ", Gemini, false},
		{"grok", Grok, false},
		{"", "", true},
		{"claude", "", true},
	}
	for _, tt := range tests {
		got, err := ParseProvider(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseProvider(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil {
			for _, p := range []string{"anthropic", "openai", "gemini", "grok"} {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("ParseProvider(%q) error %q does not list %q", tt.in, err, p)
				}
			}
		}
	}
}

func TestProviderName(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		p    Provider
		name string
		want string
	}{
		{Gemini, "Read", "Read"},
		{Gemini, "_private", "_private"},
		{Gemini, "mcp__github__create_issue", "mcp__github__create_issue"},
		{Gemini, "1password_lookup", "t.1password_lookup"},
		{Gemini, "-dash", "t.-dash"},
		{Gemini, "9", "t.9"},
		{Gemini, "t_1abc", "t_1abc"},
		{Gemini, long, long},
		{Anthropic, "1password_lookup", "1password_lookup"},
		{OpenAI, "-dash", "-dash"},
		{Grok, "9", "9"},
	}
	for _, tt := range tests {
		got := ProviderName(tt.p, tt.name)
		if got != tt.want {
			t.Errorf("ProviderName(%s, %q) = %q, want %q", tt.p, tt.name, got, tt.want)
		}
		if back := ToolName(tt.p, got); back != tt.name {
			t.Errorf("ToolName(%s, %q) = %q, want %q", tt.p, got, back, tt.name)
		}
	}
}

// TestNameMappingRoundTripAndCollisions runs every name built from the
// characters that matter (digits, '-', '_', 't', '.', letters) up to four
// characters long: ProviderName must give Gemini-legal names, never map two
// names to one, and ToolName must reverse it.
func TestNameMappingRoundTripAndCollisions(t *testing.T) {
	geminiName := regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.-]*$`)
	alphabet := []byte("0-_tT.a9")
	var names []string
	var gen func(prefix string)
	gen = func(prefix string) {
		if len(prefix) > 0 && toolname.Valid(prefix) {
			names = append(names, prefix)
		}
		if len(prefix) == 4 {
			return
		}
		for _, c := range alphabet {
			gen(prefix + string(c))
		}
	}
	gen("")
	names = append(names, strings.Repeat("9", 64), "-"+strings.Repeat("x", 63))
	for _, p := range providers {
		seen := make(map[string]string)
		for _, n := range names {
			pn := ProviderName(p, n)
			if other, dup := seen[pn]; dup {
				t.Errorf("%s: ProviderName(%q) = ProviderName(%q) = %q", p, n, other, pn)
			}
			seen[pn] = n
			if again := ProviderName(p, pn); again != pn {
				t.Errorf("%s: ProviderName is not idempotent: %q → %q → %q", p, n, pn, again)
			}
			if back := ToolName(p, pn); back != n {
				t.Errorf("%s: ToolName(ProviderName(%q)) = %q", p, n, back)
			}
			if p == Gemini {
				if !geminiName.MatchString(pn) {
					t.Errorf("ProviderName(gemini, %q) = %q, not a Gemini function name", n, pn)
				}
				if len(pn) > 66 {
					t.Errorf("ProviderName(gemini, %q) is %d characters", n, len(pn))
				}
			}
		}
	}
	// Names ProviderName never produces come back unchanged.
	for _, pn := range []string{"t.", "t.abc", "t._x", "x.1", "T.1"} {
		if got := ToolName(Gemini, pn); got != pn {
			t.Errorf("ToolName(gemini, %q) = %q, want it unchanged", pn, got)
		}
	}
}
