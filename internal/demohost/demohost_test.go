package demohost

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tooldex/tooldex/toolhost"
)

// run calls a handler directly, as a host would.
func run(t *testing.T, fn toolhost.Handler, params map[string]any) (*toolhost.Result, error) {
	t.Helper()
	return fn(context.Background(), &toolhost.Call{ID: "c1", Params: params, Attempt: 1})
}

// mustRun is run for calls that must not fail outright (error results are
// fine).
func mustRun(t *testing.T, fn toolhost.Handler, params map[string]any) *toolhost.Result {
	t.Helper()
	res, err := run(t, fn, params)
	if err != nil {
		t.Fatalf("handler(%v) error = %v, want a result", params, err)
	}
	if res == nil {
		t.Fatalf("handler(%v) = nil result", params)
	}
	return res
}

// resultText is the text of a result's text blocks, or the JSON of its JSON
// blocks.
// checkOutcome checks that res is an error containing wantErr, or a
// success when wantErr is "", and reports whether it is a success to check
// further.
func checkOutcome(t *testing.T, res *toolhost.Result, wantErr string) bool {
	t.Helper()
	if wantErr != "" {
		if !res.IsError || !strings.Contains(resultText(t, res), wantErr) {
			t.Errorf("result = %q (is_error %v), want an error containing %q", resultText(t, res), res.IsError, wantErr)
		}
		return false
	}
	if res.IsError {
		t.Fatalf("result = %q, want success", resultText(t, res))
	}
	return true
}

func resultText(t *testing.T, res *toolhost.Result) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if c.GetJson() != nil {
			j, err := c.GetJson().MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			b.Write(j)
			continue
		}
		b.WriteString(c.GetText())
	}
	return b.String()
}

// decode decodes a result's structured content into v.
func decode(t *testing.T, res *toolhost.Result, v any) {
	t.Helper()
	b, err := json.Marshal(res.Structured)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}

func TestTools(t *testing.T) {
	legal := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	if got, want := len(Tools("")), 4; got != want {
		t.Errorf("len(Tools(\"\")) = %d, want %d", got, want)
	}
	tools := Tools("/any")
	var names []string
	for _, tool := range tools {
		names = append(names, tool.GetName())
	}
	if want := []string{TimeNow, TimeConvert, Calculate, TextStats, ReadFile, ListFiles}; !slices.Equal(names, want) {
		t.Errorf("Tools(dir) names = %v, want %v", names, want)
	}
	for _, tool := range tools {
		t.Run(tool.GetName(), func(t *testing.T) {
			if !legal.MatchString(tool.GetName()) {
				t.Errorf("name %q is not provider-legal", tool.GetName())
			}
			if tool.GetDescription() == "" || tool.GetSearchHint() == "" {
				t.Errorf("description %q, search_hint %q: want both", tool.GetDescription(), tool.GetSearchHint())
			}
			if a := tool.GetAnnotations(); !a.GetReadOnly() || !a.GetIdempotent() || a.GetDestructive() || a.GetTitle() == "" {
				t.Errorf("annotations = %v, want a title, read_only and idempotent", a)
			}
			s := tool.GetInputSchema().AsMap()
			if s["type"] != "object" || s["additionalProperties"] != false {
				t.Errorf("schema type = %v, additionalProperties = %v, want object, false", s["type"], s["additionalProperties"])
			}
			props, _ := s["properties"].(map[string]any)
			if len(props) == 0 {
				t.Fatal("schema has no properties")
			}
			for name, p := range props {
				if d, _ := p.(map[string]any)["description"].(string); d == "" {
					t.Errorf("property %s has no description", name)
				}
			}
			req, _ := s["required"].([]any)
			for _, r := range req {
				if _, ok := props[r.(string)]; !ok {
					t.Errorf("required %v is not a property", r)
				}
			}
			if h := handlers("/any")[tool.GetName()]; h == nil {
				t.Error("no handler")
			}
		})
	}
}

func TestRegister(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     string
		wantErr bool
	}{
		{name: "no file tools", dir: ""},
		{name: "directory", dir: dir},
		{name: "missing", dir: filepath.Join(dir, "missing"), wantErr: true},
		{name: "file", dir: file, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Register(toolhost.New(toolhost.Config{HostID: "h"}), tt.dir)
			if (err != nil) != tt.wantErr {
				t.Errorf("Register(%q) = %v, want error %v", tt.dir, err, tt.wantErr)
			}
		})
	}
}

func TestTimeNow(t *testing.T) {
	now := time.Date(2025, 3, 1, 23, 30, 0, 0, time.UTC) // a Saturday
	tests := []struct {
		name        string
		params      map[string]any
		wantTime    string
		wantWeekday string
		wantOffset  string
		wantErr     string
	}{
		{name: "default UTC", params: nil, wantTime: "2025-03-01T23:30:00Z", wantWeekday: "Saturday", wantOffset: "+00:00"},
		{name: "tokyo next day", params: map[string]any{"zone": "Asia/Tokyo"}, wantTime: "2025-03-02T08:30:00+09:00", wantWeekday: "Sunday", wantOffset: "+09:00"},
		{name: "new york", params: map[string]any{"zone": "America/New_York"}, wantTime: "2025-03-01T18:30:00-05:00", wantWeekday: "Saturday", wantOffset: "-05:00"},
		{name: "kolkata half hour", params: map[string]any{"zone": "Asia/Kolkata"}, wantTime: "2025-03-02T05:00:00+05:30", wantWeekday: "Sunday", wantOffset: "+05:30"},
		{name: "unknown zone", params: map[string]any{"zone": "Mars/Olympus"}, wantErr: "Europe/Paris"},
		{name: "local refused", params: map[string]any{"zone": "Local"}, wantErr: "unknown time zone"},
		{name: "path-like zone", params: map[string]any{"zone": "../../etc/passwd"}, wantErr: "unknown time zone"},
		{name: "wrong type", params: map[string]any{"zone": 3.0}, wantErr: "must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := timeNowAt(now, &toolhost.Call{Params: tt.params})
			if err != nil {
				t.Fatalf("error = %v", err)
			}
			if tt.wantErr != "" {
				if !res.IsError || !strings.Contains(resultText(t, res), tt.wantErr) {
					t.Errorf("result = %q (is_error %v), want an error containing %q", resultText(t, res), res.IsError, tt.wantErr)
				}
				return
			}
			var got struct {
				Time, Weekday, Zone string
				Offset              string `json:"utc_offset"`
				Unix                int64
			}
			decode(t, res, &got)
			if got.Time != tt.wantTime || got.Weekday != tt.wantWeekday || got.Offset != tt.wantOffset || got.Unix != now.Unix() {
				t.Errorf("got %+v, want time %s, weekday %s, offset %s, unix %d", got, tt.wantTime, tt.wantWeekday, tt.wantOffset, now.Unix())
			}
		})
	}
	// The real handler answers with the real time.
	res := mustRun(t, timeNow, nil)
	var got struct{ Unix int64 }
	decode(t, res, &got)
	if d := time.Now().Unix() - got.Unix; d < 0 || d > 5 {
		t.Errorf("time_now unix = %d, want about %d", got.Unix, time.Now().Unix())
	}
}

func TestTimeConvert(t *testing.T) {
	tests := []struct {
		name     string
		params   map[string]any
		wantTime string
		wantErr  string
	}{
		{name: "to tokyo", params: map[string]any{"time": "2025-03-01T09:30:00+01:00", "to_zone": "Asia/Tokyo"}, wantTime: "2025-03-01T17:30:00+09:00"},
		{name: "to utc", params: map[string]any{"time": "2025-07-01T12:00:00-07:00", "to_zone": "UTC"}, wantTime: "2025-07-01T19:00:00Z"},
		{name: "dst summer paris", params: map[string]any{"time": "2025-07-01T12:00:00Z", "to_zone": "Europe/Paris"}, wantTime: "2025-07-01T14:00:00+02:00"},
		{name: "fractional seconds", params: map[string]any{"time": "2025-01-01T00:00:00.5Z", "to_zone": "UTC"}, wantTime: "2025-01-01T00:00:00Z"},
		{name: "not rfc3339", params: map[string]any{"time": "March 1 2025", "to_zone": "UTC"}, wantErr: "RFC 3339"},
		{name: "no offset", params: map[string]any{"time": "2025-03-01T09:30:00", "to_zone": "UTC"}, wantErr: "RFC 3339"},
		{name: "unknown zone", params: map[string]any{"time": "2025-03-01T09:30:00Z", "to_zone": "Nowhere/City"}, wantErr: "unknown time zone"},
		{name: "missing time", params: map[string]any{"to_zone": "UTC"}, wantErr: "time is required"},
		{name: "missing zone", params: map[string]any{"time": "2025-03-01T09:30:00Z"}, wantErr: "to_zone is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, timeConvert, tt.params)
			if !checkOutcome(t, res, tt.wantErr) {
				return
			}
			if got := res.Structured["time"]; got != tt.wantTime {
				t.Errorf("time = %v, want %s", got, tt.wantTime)
			}
		})
	}
}

func TestTextStats(t *testing.T) {
	tests := []struct {
		name string
		text string
		want stats
	}{
		{name: "empty", text: "", want: stats{TopWords: []wordCount{}}},
		{
			name: "sentences and lines",
			text: "The cat sat. The cat ran!\nDid the dog bark? Yes",
			want: stats{Characters: 47, Words: 11, Lines: 2, Sentences: 4, AverageWordLength: 3.09,
				TopWords: []wordCount{{"cat", 2}, {"bark", 1}, {"dog", 1}, {"ran", 1}, {"sat", 1}}},
		},
		{
			name: "decimal is one word and no sentence end, final newline is not a line",
			text: "Pi is 3.14 today.\n",
			want: stats{Characters: 18, Words: 4, Lines: 1, Sentences: 1, AverageWordLength: 3.25,
				TopWords: []wordCount{{"3.14", 1}, {"pi", 1}, {"today", 1}}},
		},
		{
			name: "apostrophes and unicode",
			text: "Don't panic, café owners' café.",
			want: stats{Characters: 31, Words: 5, Lines: 1, Sentences: 1, AverageWordLength: 4.8,
				TopWords: []wordCount{{"café", 2}, {"owners", 1}, {"panic", 1}}},
		},
		{
			name: "top five of many",
			text: "alpha beta beta gamma gamma gamma delta epsilon zeta eta",
			want: stats{Characters: 56, Words: 10, Lines: 1, Sentences: 1, AverageWordLength: 4.7,
				TopWords: []wordCount{{"gamma", 3}, {"beta", 2}, {"alpha", 1}, {"delta", 1}, {"epsilon", 1}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := analyse(tt.text)
			if got.Characters != tt.want.Characters || got.Words != tt.want.Words || got.Lines != tt.want.Lines ||
				got.Sentences != tt.want.Sentences || got.AverageWordLength != tt.want.AverageWordLength ||
				!slices.Equal(got.TopWords, tt.want.TopWords) {
				t.Errorf("analyse(%q) = %+v, want %+v", tt.text, got, tt.want)
			}
		})
	}
	res := mustRun(t, textStats, map[string]any{"text": "Hello world. Hello again."})
	var got stats
	decode(t, res, &got)
	if got.Words != 4 || got.Sentences != 2 || len(got.TopWords) == 0 || got.TopWords[0] != (wordCount{"hello", 2}) {
		t.Errorf("text_stats = %+v, want 4 words, 2 sentences, top word hello×2", got)
	}
	if res := mustRun(t, textStats, map[string]any{"text": strings.Repeat("a", maxTextLen+1)}); !res.IsError {
		t.Error("text_stats of an over-long text succeeded, want an error result")
	}
}
