package index

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseQuery(t *testing.T) {
	many := make([]string, MaxSelect+1)
	for i := range many {
		many[i] = fmt.Sprintf("T%d", i)
	}
	tests := []struct {
		name    string
		in      string
		want    Query
		wantErr bool
	}{
		{name: "keyword", in: "slack send", want: Query{Kind: KindKeyword, Text: "slack send"}},
		{name: "keyword trimmed", in: "  cron  \n", want: Query{Kind: KindKeyword, Text: "cron"}},
		{name: "required", in: "+slack send", want: Query{Kind: KindKeyword, Text: "+slack send"}},
		{name: "select", in: "select:Read,Edit", want: Query{Kind: KindSelect, Names: []string{"Read", "Edit"}}},
		{name: "select case-insensitive prefix", in: "SeLeCt:Read", want: Query{Kind: KindSelect, Names: []string{"Read"}}},
		{name: "select dedup and spaces", in: "select: Read , Edit,Read,,  ,Edit", want: Query{Kind: KindSelect, Names: []string{"Read", "Edit"}}},
		{name: "select names keep their case", in: "select:read,Read", want: Query{Kind: KindSelect, Names: []string{"read", "Read"}}},
		{name: "select only empties", in: "select: , ,", wantErr: true},
		{name: "select nothing", in: "select:", wantErr: true},
		{name: "select at limit", in: "select:" + strings.Join(many[:MaxSelect], ","), want: Query{Kind: KindSelect, Names: many[:MaxSelect]}},
		{name: "select over limit", in: "select:" + strings.Join(many, ","), wantErr: true},
		{name: "select over limit after dedup is fine", in: "select:" + strings.Join(many[:MaxSelect], ",") + ",T0", want: Query{Kind: KindSelect, Names: many[:MaxSelect]}},
		{name: "discover", in: "discover: send a file to the user ", want: Query{Kind: KindDiscover, Text: "send a file to the user"}},
		{name: "discover upper", in: "DISCOVER:cron", want: Query{Kind: KindDiscover, Text: "cron"}},
		{name: "discover empty", in: "discover:", wantErr: true},
		{name: "discover blank", in: "discover:   ", wantErr: true},
		{name: "prefix", in: "mcp__github", want: Query{Kind: KindPrefix, Prefix: "mcp__github", Text: "mcp__github"}},
		{name: "prefix lower-cased", in: "MCP__GitHub__", want: Query{Kind: KindPrefix, Prefix: "mcp__github__", Text: "MCP__GitHub__"}},
		{name: "bare mcp__ is a keyword", in: "mcp__", want: Query{Kind: KindKeyword, Text: "mcp__"}},
		{name: "prefix with space is a keyword", in: "mcp__slack send", want: Query{Kind: KindKeyword, Text: "mcp__slack send"}},
		{name: "max bytes", in: strings.Repeat("a", MaxQueryBytes), want: Query{Kind: KindKeyword, Text: strings.Repeat("a", MaxQueryBytes)}},
		{name: "too long", in: strings.Repeat("a", MaxQueryBytes+1), wantErr: true},
		{name: "too long before trimming", in: strings.Repeat(" ", MaxQueryBytes) + "x", wantErr: true},
		{name: "invalid UTF-8", in: "cron \xff", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "blank", in: " \t\n", wantErr: true},
		{name: "CJK", in: "定时任务", want: Query{Kind: KindKeyword, Text: "定时任务"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseQuery(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidQuery) {
					t.Fatalf("ParseQuery(%.40q) error = %v, want ErrInvalidQuery", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseQuery(%.40q) error = %v, want nil", tt.in, err)
			}
			if got.Kind != tt.want.Kind || got.Text != tt.want.Text || got.Prefix != tt.want.Prefix || !slices.Equal(got.Names, tt.want.Names) {
				t.Errorf("ParseQuery(%.40q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSearchInvalidQuery(t *testing.T) {
	ix := New(Config{Shards: 2})
	ix.Upsert(Doc{Name: "CronCreate", Description: "schedule a prompt"})
	for _, q := range []string{"", "  ", "select:", "discover:", "\xff", strings.Repeat("x", MaxQueryBytes+1)} {
		if res, err := ix.Search(q, Options{}); !errors.Is(err, ErrInvalidQuery) || len(res.Hits) != 0 {
			t.Errorf("Search(%.40q) = %v, %v, want no hits and ErrInvalidQuery", q, res.Hits, err)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"", "cron", "+slack send", "select:Read,Edit", "SELECT:a,,a", "discover:send a file",
		"Discover:", "mcp__github", "MCP__slack__send", "mcp__", "mcp__ x", "定时任务", "\xff",
		"find_symbol", "select:find symbol", "  select:Read  ", "+", "+++", "mcp__serena__find_symbol",
	} {
		f.Add(s)
	}
	ix := New(Config{Shards: 3})
	for _, d := range []Doc{
		{Name: "Read", Core: true},
		{Name: "CronCreate", Description: "Schedules a prompt on a cron schedule.", SearchHint: "schedule a job"},
		{Name: "mcp__slack__send_message", Description: "Posts a message to a Slack channel."},
		{Name: "mcp__serena__find_symbol", Description: "Finds a symbol in code.", Params: "name_path\n"},
		{Name: "mcp__dingshi__add_job", Description: "定时任务调度"},
	} {
		ix.Upsert(d)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		res, serr := ix.Search(s, Options{Max: 3})
		if (err == nil) != (serr == nil) {
			t.Fatalf("ParseQuery(%q) error = %v but Search error = %v", s, err, serr)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidQuery) {
				t.Fatalf("ParseQuery(%q) error = %v, want ErrInvalidQuery", s, err)
			}
			return
		}
		if len(s) > MaxQueryBytes || !utf8.ValidString(s) {
			t.Fatalf("ParseQuery(%q) accepted an over-long or invalid query", s)
		}
		trimmed := strings.TrimSpace(s)
		lower := strings.ToLower(trimmed)
		var want QueryKind
		switch {
		case strings.HasPrefix(lower, "select:"):
			want = KindSelect
		case strings.HasPrefix(lower, "discover:"):
			want = KindDiscover
		case len(lower) > len("mcp__") && strings.HasPrefix(lower, "mcp__") && !strings.ContainsAny(lower, " \t\r\n"):
			want = KindPrefix
		default:
			want = KindKeyword
		}
		if q.Kind != want {
			t.Fatalf("ParseQuery(%q).Kind = %v, want %v", s, q.Kind, want)
		}
		switch q.Kind {
		case KindSelect:
			if len(q.Names) == 0 || len(q.Names) > MaxSelect {
				t.Fatalf("ParseQuery(%q).Names = %q, want 1..%d names", s, q.Names, MaxSelect)
			}
			seen := map[string]bool{}
			for _, n := range q.Names {
				if n == "" || n != strings.TrimSpace(n) || seen[n] {
					t.Fatalf("ParseQuery(%q).Names = %q, want distinct non-empty trimmed names", s, q.Names)
				}
				seen[n] = true
			}
		case KindDiscover, KindKeyword:
			if strings.TrimSpace(q.Text) == "" {
				t.Fatalf("ParseQuery(%q).Text is empty", s)
			}
		case KindPrefix:
			if q.Prefix != lower {
				t.Fatalf("ParseQuery(%q).Prefix = %q, want %q", s, q.Prefix, lower)
			}
		}
		if len(res.Hits) > 3 && q.Kind != KindSelect {
			t.Fatalf("Search(%q) = %d hits, want at most 3", s, len(res.Hits))
		}
		for i, h := range res.Hits {
			if h.Score <= 0 || h.Score > 1+1e-9 || h.Name == "" {
				t.Fatalf("Search(%q) hit %d = %+v, want a named hit with score in (0, 1]", s, i, h)
			}
		}
	})
}
