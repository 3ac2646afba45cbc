package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	def := defaultSettings()
	if def != (settings{Hints: true, MinScore: 0.15, DebounceMS: 300}) {
		t.Fatalf("defaults = %+v", def)
	}
	tests := []struct {
		name    string
		path    string
		want    settings
		wantErr string
	}{
		{"missing file", filepath.Join(dir, "nope", "settings.json"), def, ""},
		{"no path", "", def, ""},
		{"full", write("full.json", `{"hints": false, "min_score": 0.3, "debounce_ms": 120}`), settings{false, 0.3, 120}, ""},
		{"partial keeps defaults", write("partial.json", `{"debounce_ms": 50}`), settings{true, 0.15, 50}, ""},
		{"unknown fields ignored", write("extra.json", `{"hints": false, "theme": "dark"}`), settings{false, 0.15, 300}, ""},
		{"invalid JSON", write("bad.json", "{\"hints\": tru\n}"), def, "bad.json"},
		{"wrong type", write("type.json", `{"hints": "yes"}`), def, "type.json"},
		{"min_score out of range", write("range.json", `{"min_score": 2}`), def, "min_score"},
		{"negative debounce", write("neg.json", `{"debounce_ms": -1}`), def, "debounce_ms"},
		{"a directory", dir, def, "settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadSettings(tt.path)
			if got != tt.want {
				t.Errorf("settings = %+v, want %+v", got, tt.want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error = %v, want one mentioning %q", err, tt.wantErr)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestDefaultSettingsPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	t.Setenv("HOME", "/home/u")
	dir, err := os.UserConfigDir()
	if err != nil {
		t.Skip(err)
	}
	if got, want := defaultSettingsPath(), filepath.Join(dir, "tooldex", "settings.json"); got != want {
		t.Errorf("defaultSettingsPath = %q, want %q", got, want)
	}
}

func TestREPLSettingsNoHintsAndNotice(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, notices := replSettings(bad, false)
	if s != defaultSettings() || len(notices) != 1 || !strings.HasSuffix(notices[0], "; using defaults") || strings.Contains(notices[0], "\n") {
		t.Errorf("bad file: settings %+v, notices %q", s, notices)
	}
	s, notices = replSettings(filepath.Join(t.TempDir(), "missing.json"), true)
	if s.Hints || len(notices) != 0 {
		t.Errorf("--no-hints: settings %+v, notices %q", s, notices)
	}
}
