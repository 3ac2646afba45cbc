package static

import (
	"fmt"
	"github.com/tooldex/tooldex/internal/cputime"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"CronCreate", []string{"cron", "create"}},
		{"HTTPServer get_JSON v2Api", []string{"http", "server", "get", "json", "v2", "api"}},
		{"mcp__github__create_issue", []string{"mcp", "github", "create", "issue"}},
		{"Café naïve — 日本語", []string{"café", "naïve", "日本語"}},
		{"", nil},
		{strings.Repeat("a", 70), []string{strings.Repeat("a", 64), strings.Repeat("a", 6)}},
	}
	for _, tt := range tests {
		var got []string
		Words(tt.in, func(w string) { got = append(got, w) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestVector: unit vectors, zero for a text without words, related texts
// nearer than unrelated ones.
func TestVector(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	v := m.Vector("Get the weather forecast for a city")
	if n := cos(v, v); math.Abs(n-1) > 1e-5 {
		t.Errorf("|v|² = %v, want 1", n)
	}
	if z := m.Vector(" ... "); cos(z, z) != 0 {
		t.Errorf("a text without words has a non-zero vector")
	}
	for _, tc := range []struct{ q, near, far string }{
		{"make the picture bigger", "resize image: scale an image to a new width and height", "send an email message to a recipient"},
		{"weather outlook", "get the forecast: temperature and rain for a city", "convert an amount between currencies"},
	} {
		q := m.Vector(tc.q)
		if n, f := cos(q, m.Vector(tc.near)), cos(q, m.Vector(tc.far)); !(n > f+0.2) {
			t.Errorf("%q: similarity %.3f to %q, %.3f to %q: want the first clearly higher", tc.q, n, tc.near, f, tc.far)
		}
	}
}

// TestDecodeRejectsCorrupt: a truncated model file is an error.
func TestDecodeRejectsCorrupt(t *testing.T) {
	for _, n := range []int{0, 8, 19, len(modelBin) / 2, len(modelBin) - 1} {
		if _, err := Decode(modelBin[:n]); err == nil {
			t.Errorf("Decode of %d of %d bytes: no error", n, len(modelBin))
		}
	}
}

// query25 is a task query of 25 words.
const query25 = "Find the cheapest direct flight from Berlin to Lisbon next Friday morning, then book a hotel near the old town for three nights with free cancellation"

// toolText is a tool text of the usual length (about 60 words).
const toolText = "github create issue. Create a new issue in a GitHub repository. Use it to report bugs, request features or track tasks; the issue gets a number and a URL. Parameters: owner The account owner of the repository; repo The name of the repository; title The title of the issue; body The contents of the issue; labels Labels to associate with this issue; assignees Logins for users to assign to this issue"

// BenchmarkQuery is one 25-word query.
func BenchmarkQuery(b *testing.B) {
	m, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, m.Dim())
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	cpu := cputime.Thread()
	for b.Loop() {
		m.VectorTo(dst, query25)
	}
	b.ReportMetric(float64((cputime.Thread()-cpu).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

// BenchmarkTools100k embeds 100k tool texts (distinct: a counter is
// appended to each), one core.
func BenchmarkTools100k(b *testing.B) {
	m, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	texts := make([]string, 100000)
	for i := range texts {
		texts[i] = fmt.Sprintf("%s tool%d", toolText, i)
	}
	dst := make([]float32, m.Dim())
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := cputime.Thread()
	for b.Loop() {
		for _, t := range texts {
			m.VectorTo(dst, t)
		}
	}
	b.ReportMetric((cputime.Thread()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}

// TestRows: a text's vector is the normalised sum of its rows.
func TestRows(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"CronCreate schedules a cron job", "zxqvbnm unknownword", "", "résumé naïve"} {
		rows := m.Rows(nil, text)
		sum := make([]float32, m.Dim())
		for _, r := range rows {
			m.addRow(sum, int(r))
		}
		var n float64
		for _, x := range sum {
			n += float64(x) * float64(x)
		}
		v := m.Vector(text)
		if n == 0 {
			if cos(v, v) != 0 {
				t.Errorf("%q: no rows but a non-zero vector", text)
			}
			continue
		}
		if c := cos(v, sum) / math.Sqrt(n); math.Abs(c-1) > 1e-5 {
			t.Errorf("%q: cosine of Vector and the sum of Rows = %v, want 1", text, c)
		}
	}
	if got := m.Rows(nil, "cron cron"); len(got) != 2 || got[0] != got[1] {
		t.Errorf("Rows(cron cron) = %v, want one row twice", got)
	}
}
