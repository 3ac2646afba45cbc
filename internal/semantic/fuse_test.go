package semantic

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFuse(t *testing.T) {
	tests := []struct {
		name  string
		in    []Scored
		ratio float64
		want  []string
	}{
		{
			name: "ratio 0 keeps the lexical order",
			in: []Scored{
				{Name: "a", Lexical: 0.9, Dense: 0.1, HasDense: true},
				{Name: "b", Lexical: 0.5, Dense: 0.9, HasDense: true},
				{Name: "c", Dense: 0.95, HasDense: true},
			},
			ratio: 0,
			want:  []string{"a", "b", "c"},
		},
		{
			name: "ratio 1 is the dense order",
			in: []Scored{
				{Name: "a", Lexical: 0.9, Dense: 0.1, HasDense: true},
				{Name: "b", Lexical: 0.5, Dense: 0.9, HasDense: true},
				{Name: "c", Dense: 0.95, HasDense: true},
			},
			ratio: 1,
			want:  []string{"c", "b", "a"},
		},
		{
			name: "half and half: found by both wins",
			in: []Scored{
				{Name: "lex-only", Lexical: 1},
				{Name: "both", Lexical: 0.8, Dense: 0.8, HasDense: true},
				{Name: "dense-only", Dense: 0.85, HasDense: true},
				{Name: "weak", Lexical: 0.1, Dense: 0.2, HasDense: true},
			},
			ratio: 0.5,
			want:  []string{"both", "lex-only", "dense-only", "weak"}, // 0.87, 0.5, 0.5 (lexical breaks the tie), 0.17
		},
		{
			// Stretched between the lowest and highest similarity, 0.80
			// against 0.81 would be 0 against 1 and put b first.
			name: "near duplicates keep the lexical order",
			in: []Scored{
				{Name: "a", Lexical: 1, Dense: 0.80, HasDense: true},
				{Name: "b", Lexical: 0.98, Dense: 0.81, HasDense: true},
			},
			ratio: 0.1,
			want:  []string{"a", "b"}, // 0.9988, 0.982
		},
		{
			name: "no positive similarity says nothing",
			in: []Scored{
				{Name: "a", Lexical: 0.5, Dense: -0.2, HasDense: true},
				{Name: "b", Lexical: 0.6, Dense: -0.4, HasDense: true},
			},
			ratio: 0.9,
			want:  []string{"b", "a"},
		},
		{
			name: "pinned stay first in their order",
			in: []Scored{
				{Name: "z", Lexical: 0.1, Pinned: true},
				{Name: "a", Lexical: 0.2, Pinned: true},
				{Name: "b", Lexical: 0.9, Dense: 0.9, HasDense: true},
			},
			ratio: 0.5,
			want:  []string{"z", "a", "b"},
		},
		{
			name: "ties: lexical, then name",
			in: []Scored{
				{Name: "b", Lexical: 0.5, Dense: 0.5, HasDense: true},
				{Name: "a", Lexical: 0.5, Dense: 0.5, HasDense: true},
				{Name: "c", Lexical: 0.6},
			},
			ratio: 2, // clamped to 1: all dense scores equal → 1, c has none
			want:  []string{"a", "b", "c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := slices.Clone(tt.in)
			Fuse(c, tt.ratio)
			var got []string
			for _, x := range c {
				got = append(got, x.Name)
				if x.Score < 0 || x.Score > 1 {
					t.Errorf("%s: score %v outside [0, 1]", x.Name, x.Score)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Fuse order = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToolText(t *testing.T) {
	tests := []struct{ name, hint, desc, params, want string }{
		{"mcp__github__create_issue", "", "Create an issue.", "", "github create issue. Create an issue."},
		{"WebFetch", "fetch url", "  Fetches a page.  ", "", "WebFetch. fetch url. Fetches a page."},
		{"a--b", "", "", "", "a b"},
		{"get_weather", "", "Weather now.", "city\nThe  city name\nunit\ncelsius\nfahrenheit\n", "get weather. Weather now.. Parameters: city; The city name; unit; celsius; fahrenheit;"},
		{"ping", "", "", " \n ", "ping"},
	}
	for _, tt := range tests {
		if got := ToolText(tt.name, tt.hint, tt.desc, tt.params); got != tt.want {
			t.Errorf("ToolText(%q, %q, %q, %q) = %q, want %q", tt.name, tt.hint, tt.desc, tt.params, got, tt.want)
		}
	}
	long := ToolText("x", "", strings.Repeat("é", MaxToolText), "")
	if len(long) > MaxToolText || !utf8.ValidString(long) {
		t.Errorf("long text: %d bytes, valid UTF-8 %v; want ≤ %d and valid", len(long), utf8.ValidString(long), MaxToolText)
	}
}

func TestFusePinnedOutsideScales(t *testing.T) {
	c := []Scored{
		{Name: "exact", Lexical: 1, Dense: 0.99, HasDense: true, Pinned: true},
		{Name: "a", Lexical: 0.4, Dense: 0.5, HasDense: true},
		{Name: "b", Lexical: 0.2, Dense: 0.3, HasDense: true},
	}
	Fuse(c, 0.5)
	// a is the best unpinned on both scales: 0.5·1 + 0.5·1.
	if c[1].Name != "a" || c[1].Score != 1 {
		t.Errorf("after the pinned hit: %+v, want a with score 1", c[1])
	}
}
