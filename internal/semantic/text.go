package semantic

import (
	"strings"
	"unicode/utf8"
)

// MaxToolText bounds the text embedded for a tool: embedding models read
// a few hundred tokens at most, and some servers refuse longer input.
const MaxToolText = 2000

// ToolText is what is embedded for a tool: its name as words
// ("mcp__github__create_issue" reads "github create issue"), its search
// hint, its description and its parameter text (the index's ParamText:
// parameter names, descriptions and enum values, read as "Parameters: a;
// b; ..."), cut to MaxToolText bytes on a rune boundary. With the
// parameters, fusing a sentence embedder no longer lost 1.2 NDCG@10
// points on long multi-tool tasks (docs/BENCHMARKS.md).
func ToolText(name, hint, description, params string) string {
	name = strings.TrimPrefix(name, "mcp__")
	var b strings.Builder
	b.Grow(len(name) + len(hint) + len(description) + len(params) + 18)
	space := false
	for _, r := range name {
		if r == '_' || r == '-' || r == '.' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	for _, part := range []string{hint, description} {
		if part = strings.TrimSpace(part); part != "" {
			b.WriteString(". ")
			b.WriteString(part)
		}
	}
	// ParamText puts each name, description and enum value on a line of
	// its own: "; " separates them here.
	if strings.TrimSpace(params) != "" {
		p := strings.Join(strings.Fields(strings.ReplaceAll(params, "\n", "; ")), " ")
		b.WriteString(". Parameters: ")
		b.WriteString(p)
	}
	s := b.String()
	if len(s) > MaxToolText {
		s = s[:MaxToolText]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}
