package flagenv

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    string
		wantSet bool
		wantErr string
	}{
		{name: "default", want: "d"},
		{name: "flag", args: []string{"--max-items", "f"}, env: map[string]string{"TOOLDEX_MAX_ITEMS": "e"}, want: "f", wantSet: true},
		{name: "env", env: map[string]string{"TOOLDEX_MAX_ITEMS": "e", "ALT_MAX": "a"}, want: "e", wantSet: true},
		{name: "alternative", env: map[string]string{"ALT_MAX": "a"}, want: "a", wantSet: true},
		{name: "bad value", env: map[string]string{"TOOLDEX_COUNT": "many"}, wantErr: "TOOLDEX_COUNT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			v := fs.String("max-items", "d", "")
			fs.Int("count", 1, "")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			set, err := Apply(fs, func(k string) string { return tt.env[k] }, map[string]string{"max-items": "ALT_MAX"})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Apply error = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if *v != tt.want || set["max-items"] != tt.wantSet {
				t.Errorf("max-items = %q, set %v; want %q, %v", *v, set["max-items"], tt.want, tt.wantSet)
			}
		})
	}
}
