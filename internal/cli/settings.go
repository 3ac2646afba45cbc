package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// settings are the REPL's preferences, read from a JSON file:
//
//	{"hints": true, "min_score": 0.15, "debounce_ms": 300}
//
// Fields left out keep their defaults.
type settings struct {
	// Hints shows the tool hint bar above the input.
	Hints bool `json:"hints"`
	// MinScore hides hints scored under it; the bar is hidden when the best
	// hint is under it.
	MinScore float64 `json:"min_score"`
	// DebounceMS is how long after the last keystroke Prefetch runs.
	DebounceMS int `json:"debounce_ms"`
}

func defaultSettings() settings {
	return settings{Hints: true, MinScore: 0.15, DebounceMS: 300}
}

// defaultSettingsPath is os.UserConfigDir()/tooldex/settings.json, or ""
// when there is no config directory (no $HOME).
func defaultSettingsPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "tooldex", "settings.json")
}

// loadSettings reads path. A missing file (or an empty path) gives the
// defaults and no error; an unreadable or invalid file gives the defaults
// and a one-line error naming the file.
func loadSettings(path string) (settings, error) {
	s := defaultSettings()
	if path == "" {
		return s, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("settings: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return defaultSettings(), fmt.Errorf("settings %s: %w", path, err)
	}
	switch {
	case s.MinScore < 0 || s.MinScore > 1:
		return defaultSettings(), fmt.Errorf("settings %s: min_score must be in [0, 1], not %g", path, s.MinScore)
	case s.DebounceMS < 0 || s.DebounceMS > 10000:
		return defaultSettings(), fmt.Errorf("settings %s: debounce_ms must be in [0, 10000], not %d", path, s.DebounceMS)
	}
	return s, nil
}
