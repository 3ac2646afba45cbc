package permission

import (
	"encoding/json"
	"os"
	"path"
	"reflect"
	"testing"
	"time"
)

func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("testdata/example.json"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		``,
		`{}`,
		`{"default": "ask", "rules": []}`,
		`{"rules": [{"tool": "*", "caller": "guest-*", "action": "deny", "reason": "r"}]}`,
		`{"rules": [{"tool": "a[b-c]?\\*", "action": "allow"}]}`,
		`{"rules": [{"tool": "", "action": "deny"}]}`,
		`{"rules": [{"tool": "[", "action": "deny"}]}`,
		`{"rules": [{"tool": "a", "action": "block"}]}`,
		`{"rules": [{"tool": "a", "action": "deny", "extra": 1}]}`,
		`{"rules": [{"tool": "a", "action": "deny", "tool": "b"}]}`,
		`{"rules": null}`,
		`{"rules": null, "default": null}`,
		`{"rules": [null, 1, "x", []]}`,
		"{\"rules\": [{\"tool\": \"\xff\", \"action\": \"deny\"}]}",
		`{} {}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if p != nil {
				t.Fatalf("Parse returned %+v and error %v", p, err)
			}
			return
		}
		if p == nil {
			t.Fatal("Parse returned neither a policy nor an error")
		}
		if p.Default != Allow && p.Default != Deny && p.Default != Ask {
			t.Fatalf("default %v is not an action", p.Default)
		}
		for i, r := range p.Rules {
			if r.Tool == "" {
				t.Fatalf("rules[%d] has an empty tool pattern", i)
			}
			if _, err := path.Match(r.Tool, ""); err != nil {
				t.Fatalf("rules[%d].tool %q: %v", i, r.Tool, err)
			}
			if _, err := path.Match(r.Caller, ""); err != nil {
				t.Fatalf("rules[%d].caller %q: %v", i, r.Caller, err)
			}
			if r.Action != Allow && r.Action != Deny && r.Action != Ask {
				t.Fatalf("rules[%d].action %v is not an action", i, r.Action)
			}
			// Decide on the patterns read as names: a matching rule's
			// action, else the default.
			if a, rule := p.Decide(r.Tool, r.Caller); (rule == nil && a != p.Default) || (rule != nil && a != rule.Action) {
				t.Fatalf("Decide(%q, %q) = %v, %+v: action and rule disagree", r.Tool, r.Caller, a, rule)
			}
		}
		// A parsed policy encodes back to an equal one.
		data2, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("json.Marshal(%+v): %v", p, err)
		}
		p2, err := Parse(data2)
		if err != nil {
			t.Fatalf("Parse(json.Marshal(p)) = %v; data %s", err, data2)
		}
		if len(p.Rules) == 0 && len(p2.Rules) == 0 {
			p.Rules, p2.Rules = nil, nil // [], null and absent are the same policy
		}
		if !reflect.DeepEqual(p, p2) {
			t.Fatalf("Parse(json.Marshal(p)) = %+v, want %+v", p2, p)
		}
	})
}

func FuzzCheck(f *testing.F) {
	now := func() time.Time { return t0 }
	a := NewApprover(testKey, time.Minute, now)
	params := CanonicalJSON(map[string]any{"path": "/etc/hosts"})
	genuine := a.Token("read_file", "guest-1", params)
	f.Add(genuine, "read_file", "guest-1", params)
	f.Add(genuine, "read_file", "guest-2", params)
	f.Add(genuine, "read_filu", "guest-1", params)
	f.Add(genuine, "read_file", "guest-1", []byte(`{"path":"/etc/shadow"}`))
	f.Add(genuine[:53]+"B", "read_file", "guest-1", params)
	f.Add(genuine[:20]+"\n"+genuine[21:], "read_file", "guest-1", params)
	f.Add(genuine+"==", "read_file", "guest-1", params)
	f.Add("", "", "", []byte(nil))
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "t", "c", []byte("{}"))
	f.Fuzz(func(t *testing.T, token, tool, caller string, params []byte) {
		err := a.Check(token, tool, caller, params)
		// With a fixed clock, Token is a function of its arguments: the
		// one token this call accepts is the one Token makes for it.
		want := a.Token(tool, caller, params)
		switch {
		case token == want && err != nil:
			t.Fatalf("Check(Token(%q, %q, %q)) = %v, want nil", tool, caller, params, err)
		case token != want && err != ErrBadToken:
			t.Fatalf("Check(%q, %q, %q, %q) = %v, want %v (the genuine token is %q)", token, tool, caller, params, err, ErrBadToken, want)
		}
	})
}
