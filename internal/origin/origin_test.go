package origin

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{" https://App.Example/ , http://localhost:3000", []string{"https://app.example", "http://localhost:3000"}, ""},
		{"*", nil, "refused"},
		{"null", nil, "refused"},
		{"app.example", nil, "not an origin"},
		{"https://app.example/path", nil, "not an origin"},
		{"ftp://app.example", nil, "not an origin"},
		{"https://user@app.example", nil, "not an origin"},
		{"http://*0", nil, "not an origin"},
		{"https://app.example?", nil, "not an origin"},
		{"http://[::1]:8080", []string{"http://[::1]:8080"}, ""},
	}
	for _, tt := range tests {
		got, err := ParseList(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseList(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("ParseList(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSet(t *testing.T) {
	s := NewSet([]string{"https://App.example/", "http://localhost:3000"})
	tests := []struct {
		origin string
		want   bool
	}{
		{"https://app.example", true},
		{"HTTPS://APP.EXAMPLE/", true},
		{"http://localhost:3000", true},
		{"http://localhost:3001", false},
		{"https://app.example.evil", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := s.Has(tt.origin); got != tt.want {
			t.Errorf("Has(%q) = %v, want %v", tt.origin, got, tt.want)
		}
	}
}

// FuzzParse: whatever the list, an accepted origin is scheme://host[:port]
// over http or https, normalised, never a wildcard.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "https://app.example", "http://localhost:3000, https://A.example/", "*", "null", "https://a.example/x", "http://[::1]:80", "https://%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got, err := ParseList(list)
		if err != nil {
			return
		}
		for _, o := range got {
			u, perr := url.Parse(o)
			if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || !validHost(u.Hostname()) || o != u.Scheme+"://"+u.Host || o != Normalize(o) {
				t.Errorf("ParseList(%q) accepted %q", list, o)
			}
		}
	})
}
