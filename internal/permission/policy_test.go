package permission

import (
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, js string) *Policy {
	t.Helper()
	p, err := Parse([]byte(js))
	if err != nil {
		t.Fatalf("Parse(%s): %v", js, err)
	}
	return p
}

func TestActionString(t *testing.T) {
	tests := []struct {
		a    Action
		want string
	}{
		{Allow, "allow"},
		{Deny, "deny"},
		{Ask, "ask"},
		{Action(3), "Action(3)"},
		{Action(-1), "Action(-1)"},
	}
	for _, tt := range tests {
		if got := tt.a.String(); got != tt.want {
			t.Errorf("Action(%d).String() = %q, want %q", int(tt.a), got, tt.want)
		}
	}
}

func TestDecide(t *testing.T) {
	const policy = `{"default": "deny", "rules": [
		{"tool": "mcp__github__delete_*", "action": "deny", "reason": "no deleting"},
		{"tool": "read_file", "caller": "guest-*", "action": "ask", "reason": "approve reads"},
		{"tool": "read_file", "caller": "*", "action": "allow"},
		{"tool": "mcp__github__*", "action": "allow"},
		{"tool": "mcp__filesystem__*", "caller": "", "action": "ask"},
		{"tool": "write_file", "caller": "admin", "action": "allow"},
		{"tool": "dir/*", "action": "allow"},
		{"tool": "*", "caller": "root", "action": "allow", "reason": "root may"}
	]}`
	p := mustParse(t, policy)
	tests := []struct {
		tool, caller string
		want         Action
		wantRule     int // index into p.Rules, -1 for the default
	}{
		// First match wins: delete_* is denied although mcp__github__* allows.
		{"mcp__github__delete_repo", "alice", Deny, 0},
		{"mcp__github__delete_repo", "root", Deny, 0},
		{"mcp__github__create_issue", "alice", Allow, 3},
		// Caller patterns: guest-* asks, everyone else is allowed by rule 2.
		{"read_file", "guest-42", Ask, 1},
		{"read_file", "guest-", Ask, 1},
		{"read_file", "alice", Allow, 2},
		{"read_file", "", Allow, 2},
		{"read_file", "Guest-1", Allow, 2},
		// Empty caller pattern means any caller, including the unnamed one.
		{"mcp__filesystem__read", "alice", Ask, 4},
		{"mcp__filesystem__read", "", Ask, 4},
		// An exact caller.
		{"write_file", "admin", Allow, 5},
		{"write_file", "admin2", Deny, -1},
		// A glob's * does not cross '/', "*" alone does.
		{"dir/x", "alice", Allow, 6},
		{"dir/x/y", "alice", Deny, -1},
		{"dir/x/y", "root", Allow, 7},
		{"", "root", Allow, 7},
		// Exact names do not match prefixes or other cases.
		{"read_file2", "alice", Deny, -1},
		{"Read_file", "alice", Deny, -1},
		// No rule: the default, with a nil rule.
		{"unknown_tool", "alice", Deny, -1},
		{"unknown_tool", "", Deny, -1},
	}
	for _, tt := range tests {
		got, rule := p.Decide(tt.tool, tt.caller)
		var wantRule *Rule
		if tt.wantRule >= 0 {
			wantRule = &p.Rules[tt.wantRule]
		}
		if got != tt.want || rule != wantRule {
			t.Errorf("Decide(%q, %q) = %v, %+v; want %v, %+v", tt.tool, tt.caller, got, rule, tt.want, wantRule)
		}
	}
}

func TestDecideDefaults(t *testing.T) {
	badRule := &Policy{Rules: []Rule{{Tool: "[", Action: Deny}, {Tool: "x", Caller: "[", Action: Deny}}}
	tests := []struct {
		name string
		p    *Policy
		want Action
	}{
		{"nil policy", nil, Allow},
		{"AllowAll", AllowAll(), Allow},
		{"zero policy", &Policy{}, Allow},
		{"absent default", mustParse(t, `{"rules": [{"tool": "other", "action": "deny"}]}`), Allow},
		{"default ask", mustParse(t, `{"default": "ask"}`), Ask},
		{"default deny", mustParse(t, `{"default": "deny"}`), Deny},
		{"malformed patterns match nothing", badRule, Allow},
	}
	for _, tt := range tests {
		got, rule := tt.p.Decide("x", "alice")
		if got != tt.want || rule != nil {
			t.Errorf("%s: Decide = %v, %+v; want %v, nil", tt.name, got, rule, tt.want)
		}
	}
}

func TestVisible(t *testing.T) {
	p := mustParse(t, `{"default": "deny", "rules": [
		{"tool": "gone", "action": "deny"},
		{"tool": "asked", "action": "ask"},
		{"tool": "open", "action": "allow"},
		{"tool": "guests_only", "caller": "guest-*", "action": "allow"}
	]}`)
	tests := []struct {
		p            *Policy
		tool, caller string
		want         bool
	}{
		{p, "gone", "alice", false},
		{p, "asked", "alice", true},
		{p, "open", "alice", true},
		{p, "guests_only", "guest-1", true},
		{p, "guests_only", "alice", false},
		{p, "other", "alice", false},
		{mustParse(t, `{"default": "ask"}`), "other", "alice", true},
		{AllowAll(), "anything", "", true},
		{nil, "anything", "", true},
	}
	for _, tt := range tests {
		if got := tt.p.Visible(tt.tool, tt.caller); got != tt.want {
			t.Errorf("Visible(%q, %q) = %v, want %v", tt.tool, tt.caller, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		js   string
		want *Policy
	}{
		{"empty object", `{}`, &Policy{Default: Allow}},
		{"null rules", `{"rules": null}`, &Policy{Default: Allow}},
		{"empty rules", ` {"rules": [], "default": "ask"} `, &Policy{Rules: []Rule{}, Default: Ask}},
		{"all fields", `{"rules": [{"reason": "r", "action": "deny", "caller": "c?", "tool": "t\\*"}]}`,
			&Policy{Rules: []Rule{{Tool: `t\*`, Caller: "c?", Action: Deny, Reason: "r"}}}},
		{"file order", `{"rules": [{"tool": "b", "action": "ask"}, {"tool": "a", "action": "allow"}]}`,
			&Policy{Rules: []Rule{{Tool: "b", Action: Ask}, {Tool: "a", Action: Allow}}}},
		{"non-ASCII text", `{"rules": [{"tool": "outil_é", "action": "allow", "reason": "ok ✓"}]}`,
			&Policy{Rules: []Rule{{Tool: "outil_é", Action: Allow, Reason: "ok ✓"}}}},
	}
	for _, tt := range tests {
		got, err := Parse([]byte(tt.js))
		if err != nil {
			t.Errorf("%s: Parse error %v, want %+v", tt.name, err, tt.want)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Parse = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		js   string
		want string // a substring of the error
	}{
		{"empty input", ``, "empty input"},
		{"blank input", " \n", "empty input"},
		{"not an object", `[]`, "want a JSON object, got an array"},
		{"null", `null`, "want a JSON object, got null"},
		{"syntax error", "{\n  \"rules\": [}", "invalid JSON at line 2, column 13"},
		{"truncated", `{"rules": [`, "unexpected end"},
		{"byte order mark", "\ufeff{}", "invalid JSON at line 1, column 1"},
		{"trailing data", `{} {}`, "invalid JSON at line 1, column 4: invalid character '{' after top-level value"},
		{"trailing garbage", `{}x`, "invalid JSON"},
		{"unknown top-level field", `{"rulez": []}`, `unknown field "rulez"`},
		{"top-level field in the wrong case", `{"Rules": []}`, `unknown field "Rules"`},
		{"duplicate field", `{"default": "deny", "default": "allow"}`, `duplicate field "default"`},
		{"bad default", `{"default": "maybe"}`, `default: unknown action "maybe"`},
		{"default not a string", `{"default": 1}`, "default: want a string, got a number"},
		{"rules not an array", `{"rules": {}}`, "rules: want an array, got an object"},
		{"rules a string", `{"rules": "x"}`, "rules: want an array, got a string"},
		{"rule not an object", `{"rules": ["x"]}`, "rules[0]: want a JSON object, got a string"},
		{"unknown rule field", `{"rules": [{"tool": "a", "action": "allow"}, {"tool": "a", "action": "allow", "tools": "b"}]}`, `rules[1]: unknown field "tools"`},
		{"rule field in the wrong case", `{"rules": [{"Tool": "a", "action": "allow"}]}`, `rules[0]: unknown field "Tool"`},
		{"duplicate rule field", `{"rules": [{"tool": "a", "action": "deny", "action": "allow"}]}`, `rules[0]: duplicate field "action"`},
		{"bad tool glob", `{"rules": [{"tool": "ok", "action": "allow"}, {"tool": "[", "action": "deny"}]}`, `rules[1].tool: bad pattern "["`},
		{"bad tool glob later in the pattern", `{"rules": [{"tool": "a*[", "action": "deny"}]}`, `rules[0].tool: bad pattern "a*["`},
		{"trailing backslash", `{"rules": [{"tool": "a\\", "action": "deny"}]}`, `rules[0].tool: bad pattern`},
		{"bad caller glob", `{"rules": [{"tool": "a", "caller": "[z-", "action": "deny"}]}`, `rules[0].caller: bad pattern "[z-"`},
		{"bad action", `{"rules": [{"tool": "a", "action": "block"}]}`, `rules[0].action: unknown action "block"`},
		{"action in upper case", `{"rules": [{"tool": "a", "action": "Deny"}]}`, `rules[0].action: unknown action "Deny"`},
		{"action as a number", `{"rules": [{"tool": "a", "action": 1}]}`, "rules[0].action: want a string, got a number"},
		{"missing action", `{"rules": [{"tool": "a"}]}`, "rules[0].action: missing"},
		{"empty tool", `{"rules": [{"tool": "", "action": "deny"}]}`, "rules[0].tool: empty pattern"},
		{"missing tool", `{"rules": [{"action": "deny"}]}`, "rules[0].tool: missing"},
		{"null tool", `{"rules": [{"tool": null, "action": "deny"}]}`, "rules[0].tool: want a string, got null"},
		{"reason not a string", `{"rules": [{"tool": "a", "action": "deny", "reason": ["x"]}]}`, "rules[0].reason: want a string, got an array"},
	}
	for _, tt := range tests {
		p, err := Parse([]byte(tt.js))
		if err == nil {
			t.Errorf("%s: Parse(%q) = %+v, want an error containing %q", tt.name, tt.js, p, tt.want)
			continue
		}
		if p != nil {
			t.Errorf("%s: Parse(%q) returned %+v with error %v, want nil", tt.name, tt.js, p, err)
		}
		if got := err.Error(); !strings.Contains(got, tt.want) || !strings.HasPrefix(got, "permission: ") || strings.Contains(got, "\n") {
			t.Errorf("%s: Parse(%q) error = %q, want one line starting \"permission: \" and containing %q", tt.name, tt.js, got, tt.want)
		}
	}
}

func TestParseBadPatternWraps(t *testing.T) {
	_, err := Parse([]byte(`{"rules": [{"tool": "[", "action": "deny"}]}`))
	if got, want := errors.Is(err, path.ErrBadPattern), true; got != want {
		t.Errorf("errors.Is(%v, path.ErrBadPattern) = %v, want %v", err, got, want)
	}
}

// TestMarshalRoundTrip checks that a Policy encoded with encoding/json is
// in the file format.
func TestMarshalRoundTrip(t *testing.T) {
	want := &Policy{
		Rules: []Rule{
			{Tool: "mcp__x__*", Caller: "guest-*", Action: Ask, Reason: "why"},
			{Tool: "*", Action: Deny},
		},
		Default: Ask,
	}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(%s): %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(json.Marshal(p)) = %+v, want %+v", got, want)
	}
	var viaJSON Policy
	if err := json.Unmarshal(data, &viaJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&viaJSON, want) {
		t.Errorf("json.Unmarshal(json.Marshal(p)) = %+v, want %+v", viaJSON, want)
	}
	if _, err := json.Marshal(Rule{Tool: "x", Action: Action(9)}); err == nil {
		t.Errorf("json.Marshal of Action(9): no error, want one")
	}
	var a Action
	if err := json.Unmarshal([]byte(`"nope"`), &a); err == nil {
		t.Errorf(`json.Unmarshal("nope") into Action: no error, want one`)
	}
}

func TestLoadExample(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, caller string
		want         Action
		wantReason   string
	}{
		{"mcp__github__delete_repo", "alice", Deny, "deleting on GitHub is not allowed"},
		{"mcp__github__create_issue", "alice", Allow, ""},
		{"read_file", "guest-7", Ask, "reading files needs the user's approval"},
		{"read_file", "alice", Allow, ""},
		{"mcp__filesystem__write_file", "alice", Ask, ""},
		{"web_search", "guest-7", Allow, ""},
	}
	for _, tt := range tests {
		got, rule := p.Decide(tt.tool, tt.caller)
		var reason string
		if rule != nil {
			reason = rule.Reason
		}
		if got != tt.want || reason != tt.wantReason {
			t.Errorf("Decide(%q, %q) = %v, reason %q; want %v, reason %q", tt.tool, tt.caller, got, reason, tt.want, tt.wantReason)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"rules": [{"tool": "", "action": "deny"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name string
		want string
	}{
		{bad, "permission: " + bad + ": rules[0].tool: empty pattern"},
		{missing, "permission: open " + missing},
	}
	for _, tt := range tests {
		p, err := Load(tt.name)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Load(%q) = %v, %v; want an error starting %q", tt.name, p, err, tt.want)
		}
	}
}

func TestDecideForSubject(t *testing.T) {
	p, err := Parse([]byte(`{"default": "allow", "rules": [
		{"tool": "read_file", "principal": "bob", "action": "deny"},
		{"tool": "read_file", "tenant": "acme", "group": "contractors", "action": "ask"},
		{"tool": "mcp__github__*", "tenant": "globex", "action": "deny"},
		{"tool": "*", "caller": "guest", "action": "deny"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tool string
		sub  Subject
		want Action
	}{
		{"principal rule", "read_file", Subject{Principal: "bob", Tenant: "acme", Caller: "bob"}, Deny},
		{"principal rule is not a caller rule", "read_file", Subject{Principal: "frontend", Tenant: "acme", Caller: "bob"}, Allow},
		{"tenant and group", "read_file", Subject{Principal: "carol", Tenant: "acme", Groups: []string{"staff", "contractors"}}, Ask},
		{"group in another tenant", "read_file", Subject{Principal: "carol", Tenant: "globex", Groups: []string{"contractors"}}, Allow},
		{"tenant glob", "mcp__github__push", Subject{Principal: "dave", Tenant: "globex"}, Deny},
		{"other tenant", "mcp__github__push", Subject{Principal: "dave", Tenant: "acme"}, Allow},
		{"caller exact", "x", Subject{Principal: "frontend", Caller: "guest"}, Deny},
		{"caller case differs", "x", Subject{Principal: "frontend", Caller: "Guest"}, Allow},
	}
	for _, tt := range tests {
		got, _ := p.DecideFor(tt.tool, &tt.sub)
		if got != tt.want {
			t.Errorf("%s: DecideFor(%q, %+v) = %v, want %v", tt.name, tt.tool, tt.sub, got, tt.want)
		}
		if vis := p.VisibleFor(tt.tool, &tt.sub); vis != (tt.want != Deny) {
			t.Errorf("%s: VisibleFor = %v, want %v", tt.name, vis, tt.want != Deny)
		}
	}
}
