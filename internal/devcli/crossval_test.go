package devcli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/eval"
)

func TestSettingConfig(t *testing.T) {
	d := index.DefaultConfig()
	tests := []struct {
		s       eval.Setting
		check   func(c index.Config) bool
		wantErr string
	}{
		{s: nil, check: func(c index.Config) bool { return reflect.DeepEqual(c, d) }},
		{s: eval.Setting{{Name: "request", Value: -1}}, check: func(c index.Config) bool { return c.RequestDamping == -1 }},
		{s: eval.Setting{{Name: "keyword", Value: 0.3}}, check: func(c index.Config) bool { return c.KeywordWeight == 0.3 && c.TFIDFWeight == 0.7 }},
		{s: eval.Setting{{Name: "keyword", Value: 0.3}, {Name: "text", Value: 2}}, check: func(c index.Config) bool { return c.KeywordWeight == 0.3 && c.TFIDFWeight == 2 }},
		{s: eval.Setting{{Name: "k1", Value: 2}, {Name: "b", Value: -1}, {Name: "param", Value: 1}}, check: func(c index.Config) bool { return c.K1 == 2 && c.B == -1 && c.ParamWeight == 1 }},
		{s: eval.Setting{{Name: "nope", Value: 1}}, wantErr: "unknown grid parameter"},
		{s: eval.Setting{{Name: "k1", Value: -1}}, wantErr: "negative"},
		{s: eval.Setting{{Name: "keyword", Value: 0}, {Name: "text", Value: 0}}, wantErr: "both zero"},
	}
	for _, tt := range tests {
		c, err := settingConfig(tt.s)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("settingConfig(%v) error = %v, want %q", tt.s, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !tt.check(c) {
			t.Errorf("settingConfig(%v) = %+v, %v", tt.s, c, err)
		}
	}
}

func TestDefaultGridParses(t *testing.T) {
	g, err := eval.ParseGrid(defaultGrid)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Settings() {
		if _, err := settingConfig(s); err != nil {
			t.Fatalf("default grid: %v", err)
		}
	}
}

func TestDatasetDirs(t *testing.T) {
	if _, err := datasetDirs(t.TempDir()); err == nil {
		t.Error("empty folder: no error")
	}
}
