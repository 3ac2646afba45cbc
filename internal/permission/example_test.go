package permission_test

import (
	"fmt"
	"time"

	"github.com/tooldex/tooldex/internal/permission"
)

func Example() {
	p, err := permission.Load("testdata/example.json")
	if err != nil {
		panic(err)
	}
	for _, call := range []struct{ tool, caller string }{
		{"mcp__github__delete_repo", "alice"},
		{"read_file", "guest-7"},
		{"read_file", "alice"},
	} {
		action, rule := p.Decide(call.tool, call.caller)
		reason := "(default)"
		if rule != nil {
			reason = rule.Reason
		}
		fmt.Printf("%s by %s: %v, visible %v: %s\n", call.tool, call.caller, action, p.Visible(call.tool, call.caller), reason)
	}
	// Output:
	// mcp__github__delete_repo by alice: deny, visible false: deleting on GitHub is not allowed
	// read_file by guest-7: ask, visible true: reading files needs the user's approval
	// read_file by alice: allow, visible true: (default)
}

func ExampleApprover() {
	a := permission.NewApprover(nil, 10*time.Minute, nil)
	params := map[string]any{"path": "/etc/hosts", "max_bytes": 100}

	// The call is answered "ask": show the user what it does, hand out a token.
	fmt.Println("read_file", permission.Summary(params, 60))
	token := a.Token("read_file", "guest-7", permission.CanonicalJSON(params))

	// The approved call comes back with the token.
	fmt.Println(a.Check(token, "read_file", "guest-7", permission.CanonicalJSON(params)))
	// It is for these parameters only.
	params["path"] = "/etc/shadow"
	fmt.Println(a.Check(token, "read_file", "guest-7", permission.CanonicalJSON(params)))
	// Output:
	// read_file max_bytes=100, path="/etc/hosts"
	// <nil>
	// permission: bad approval token
}

func ExampleParse() {
	_, err := permission.Parse([]byte(`{"rules": [{"tool": "mcp__github__*", "action": "block"}]}`))
	fmt.Println(err)
	// Output:
	// permission: rules[0].action: unknown action "block" (want "allow", "deny" or "ask")
}
