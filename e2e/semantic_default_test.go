package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestEmbeddedSemanticByDefault: the server as it starts with no flag
// fuses the embedded static model's dense retrieval, so a query that
// shares no word with a tool finds it (once its vector exists: it is
// computed in the background); with --semantic=off the same query finds
// nothing, and an unrelated tool never answers.
func TestEmbeddedSemanticByDefault(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"resize_image","description":"Scale an image to a new width and height.","parameters":{"type":"object","properties":{"width":{"type":"integer"}}}}},
{"type":"function","function":{"name":"send_email","description":"Send an email message to a recipient.","parameters":{"type":"object","properties":{"to":{"type":"string"}}}}}]`
	query := []string{"search", "make", "the", "picture", "bigger"}
	for _, tc := range []struct {
		name  string
		args  []string
		found bool
	}{
		{"default", []string{"--demo-host=false"}, true},
		{"off", []string{"--demo-host=false", "--semantic=off"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, tc.args...)
			if out, err := s.client(t, strings.NewReader(tools), "register", "-"); err != nil {
				t.Fatalf("register: %v\n%s", err, out)
			}
			var out string
			for deadline := time.Now().Add(20 * time.Second); ; {
				var err error
				if out, err = s.client(t, nil, query...); err != nil {
					t.Fatalf("search: %v\n%s", err, out)
				}
				if strings.Contains(out, "resize_image") || !tc.found || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if tc.found && !strings.Contains(out, "resize_image") {
				t.Errorf("%v: the paraphrase does not find resize_image:\n%s", tc.args, out)
			}
			if !tc.found && !strings.Contains(out, "0 result(s)") {
				t.Errorf("%v: want no result without dense retrieval:\n%s", tc.args, out)
			}
			if strings.Contains(out, "send_email") {
				t.Errorf("%v: an unrelated tool answers:\n%s", tc.args, out)
			}
		})
	}
}
