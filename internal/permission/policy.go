package permission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
)

// Action is what a policy says about a call.
type Action int

const (
	// Allow lets the call run.
	Allow Action = iota
	// Deny refuses the call and hides the tool from search.
	Deny
	// Ask runs the call only with the user's approval (an approval token).
	Ask
)

var actionNames = [...]string{Allow: "allow", Deny: "deny", Ask: "ask"}

// String returns "allow", "deny" or "ask", or "Action(N)" for any other
// value.
func (a Action) String() string {
	if a >= 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// parseAction reads an action name; only the exact lower-case names count.
func parseAction(s string) (Action, bool) {
	for i, name := range actionNames {
		if s == name {
			return Action(i), true
		}
	}
	return 0, false
}

// MarshalText encodes the action as its name, so that a Policy encodes with
// encoding/json in the file format. Values other than Allow, Deny and Ask
// are an error.
func (a Action) MarshalText() ([]byte, error) {
	if a < 0 || int(a) >= len(actionNames) {
		return nil, fmt.Errorf("permission: no such action %v", a)
	}
	return []byte(actionNames[a]), nil
}

// UnmarshalText decodes "allow", "deny" or "ask".
func (a *Action) UnmarshalText(text []byte) error {
	v, ok := parseAction(string(text))
	if !ok {
		return fmt.Errorf(`permission: unknown action %q (want "allow", "deny" or "ask")`, text)
	}
	*a = v
	return nil
}

// Rule is one line of a policy: the action for the tools and subjects that
// match its patterns.
type Rule struct {
	// Tool is a tool-name pattern: an exact name, or a path.Match glob
	// such as mcp__github__*; "*" matches every tool.
	Tool string `json:"tool"`
	// Caller is a caller pattern (a glob) matched against the subject's
	// caller: the end user a trusted frontend acts for, or else the
	// principal's name. "" or "*" matches any caller.
	Caller string `json:"caller,omitempty"`
	// Principal, Tenant and Group are globs matched against the
	// authenticated principal's name, its tenant and any of its groups;
	// "" or "*" matches any.
	Principal string `json:"principal,omitempty"`
	Tenant    string `json:"tenant,omitempty"`
	Group     string `json:"group,omitempty"`
	// Action is what happens to a matching call.
	Action Action `json:"action"`
	// Reason is shown to the caller when the rule denies or asks.
	Reason string `json:"reason"`
}

// Subject is who a call is for: the authenticated principal, its tenant
// and groups, and the caller (the end user a trusted frontend acts for, or
// else the principal's name).
type Subject struct {
	Principal, Tenant string
	Groups            []string
	Caller            string
}

// matches reports whether the rule applies to tool called by sub. A
// malformed pattern (possible only in a Rule built in code; Parse rejects
// them) matches nothing.
func (r *Rule) matches(tool string, sub *Subject) bool {
	return match(r.Tool, tool) &&
		(r.Caller == "" || match(r.Caller, sub.Caller)) &&
		(r.Principal == "" || match(r.Principal, sub.Principal)) &&
		(r.Tenant == "" || match(r.Tenant, sub.Tenant)) &&
		(r.Group == "" || slices.ContainsFunc(sub.Groups, func(g string) bool { return match(r.Group, g) }))
}

// match reports whether name matches the glob pattern; "*" matches any
// name, even one with a '/'.
func match(pattern, name string) bool {
	if pattern == "*" {
		return true
	}
	ok, err := path.Match(pattern, name)
	return ok && err == nil
}

// Policy is a parsed policy file: rules tried in order, and the action when
// none matches. A Policy is not changed by its methods and may be used from
// several goroutines at once.
type Policy struct {
	Rules   []Rule `json:"rules"`
	Default Action `json:"default"`
}

// AllowAll returns a policy without rules that allows everything.
func AllowAll() *Policy {
	return &Policy{Default: Allow}
}

// Decide returns the action for tool called by caller: that of the first
// rule (in file order) that matches both, with a pointer to that rule in
// p.Rules; or, when no rule matches, p.Default and a nil rule. A nil policy
// allows everything.
func (p *Policy) Decide(tool, caller string) (Action, *Rule) {
	return p.DecideFor(tool, &Subject{Caller: caller})
}

// DecideFor is Decide for a whole subject: rules naming a principal, tenant
// or group match only subjects with a matching one.
func (p *Policy) DecideFor(tool string, sub *Subject) (Action, *Rule) {
	if p == nil {
		return Allow, nil
	}
	for i := range p.Rules {
		if p.Rules[i].matches(tool, sub) {
			return p.Rules[i].Action, &p.Rules[i]
		}
	}
	return p.Default, nil
}

// Visible reports whether tool may show up in caller's search results: it
// is false only when the call would be denied. Tools that need approval
// stay visible.
func (p *Policy) Visible(tool, caller string) bool {
	return p.VisibleFor(tool, &Subject{Caller: caller})
}

// VisibleFor is Visible for a whole subject (see DecideFor).
func (p *Policy) VisibleFor(tool string, sub *Subject) bool {
	a, _ := p.DecideFor(tool, sub)
	return a != Deny
}

// Load reads and parses the policy file at name (see Parse).
func Load(name string) (*Policy, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("permission: %w", err)
	}
	p, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("permission: %s: %w", name, err)
	}
	return p, nil
}

// Parse parses a policy file; see the package documentation for the format.
// It is strict: unknown or duplicate fields, values of the wrong type,
// unknown actions, empty or missing tool patterns and malformed globs are
// errors naming the place, such as rules[2].tool. A bad glob's error wraps
// path.ErrBadPattern.
func Parse(data []byte) (*Policy, error) {
	p, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("permission: %w", err)
	}
	return p, nil
}

func parse(data []byte) (*Policy, error) {
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		return nil, errors.New("empty input, want a JSON object")
	}
	// Validating the whole input first gives syntax errors (trailing data
	// included) with their offset in the input.
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, syntaxError(data, err)
	}
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	p := &Policy{Default: Allow}
	for _, f := range fields {
		switch f.key {
		case "default":
			if p.Default, err = actionValue(f.value, "default"); err != nil {
				return nil, err
			}
		case "rules":
			if p.Rules, err = decodeRules(f.value); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown field %q (want default or rules)", f.key)
		}
	}
	return p, nil
}

func decodeRules(data json.RawMessage) ([]Rule, error) {
	if string(data) == "null" { // what encoding/json writes for nil Rules
		return nil, nil
	}
	elems, err := decodeArray(data)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	rules := make([]Rule, 0, len(elems))
	for i, elem := range elems {
		where := "rules[" + strconv.Itoa(i) + "]"
		fields, err := decodeObject(elem)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		var r Rule
		var hasTool, hasAction bool
		for _, f := range fields {
			at := where + "." + f.key
			switch f.key {
			case "tool":
				hasTool = true
				if r.Tool, err = patternValue(f.value, at); err != nil {
					return nil, err
				}
				if r.Tool == "" {
					return nil, fmt.Errorf(`%s: empty pattern (use "*" for every tool)`, at)
				}
			case "caller":
				if r.Caller, err = patternValue(f.value, at); err != nil {
					return nil, err
				}
			case "principal":
				if r.Principal, err = patternValue(f.value, at); err != nil {
					return nil, err
				}
			case "tenant":
				if r.Tenant, err = patternValue(f.value, at); err != nil {
					return nil, err
				}
			case "group":
				if r.Group, err = patternValue(f.value, at); err != nil {
					return nil, err
				}
			case "action":
				hasAction = true
				if r.Action, err = actionValue(f.value, at); err != nil {
					return nil, err
				}
			case "reason":
				if r.Reason, err = stringValue(f.value, at); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("%s: unknown field %q (want tool, caller, principal, tenant, group, action or reason)", where, f.key)
			}
		}
		if !hasTool {
			return nil, fmt.Errorf("%s.tool: missing", where)
		}
		if !hasAction {
			return nil, fmt.Errorf(`%s.action: missing (want "allow", "deny" or "ask")`, where)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func stringValue(data json.RawMessage, at string) (string, error) {
	var s string
	if len(data) == 0 || data[0] != '"' {
		return "", fmt.Errorf("%s: want a string, got %s", at, kind(data))
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return "", fmt.Errorf("%s: %w", at, err)
	}
	return s, nil
}

func patternValue(data json.RawMessage, at string) (string, error) {
	s, err := stringValue(data, at)
	if err != nil {
		return "", err
	}
	if _, err := path.Match(s, ""); err != nil {
		return "", fmt.Errorf("%s: bad pattern %q: %w", at, s, err)
	}
	return s, nil
}

func actionValue(data json.RawMessage, at string) (Action, error) {
	s, err := stringValue(data, at)
	if err != nil {
		return 0, err
	}
	a, ok := parseAction(s)
	if !ok {
		return 0, fmt.Errorf(`%s: unknown action %q (want "allow", "deny" or "ask")`, at, s)
	}
	return a, nil
}

// kind names the JSON type of a value, for errors.
func kind(data json.RawMessage) string {
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

type field struct {
	key   string
	value json.RawMessage
}

// decodeObject splits a JSON object, already known to be valid JSON, into
// its fields in order, rejecting duplicate keys.
func decodeObject(data []byte) ([]field, error) {
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", kind(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the opening '{'
		return nil, err
	}
	var fields []field
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string) // object keys are always strings
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate field %q", key)
		}
		seen[key] = true
		fields = append(fields, field{key, value})
	}
	return fields, nil
}

// decodeArray splits a JSON array, already known to be valid JSON, into
// its elements.
func decodeArray(data []byte) ([]json.RawMessage, error) {
	if len(data) == 0 || data[0] != '[' {
		return nil, fmt.Errorf("want an array, got %s", kind(data))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		return nil, err
	}
	return elems, nil
}

// syntaxError describes an error of json.Unmarshal on the whole input as
// "invalid JSON at line L, column C: ...".
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read, the offending one included.
		return fmt.Errorf("invalid JSON at %s: %w", position(data, se.Offset-1), err)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// position gives a byte offset as "line L, column C" (both from 1, the
// column in bytes).
func position(data []byte, offset int64) string {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// Restricts reports whether the policy can deny anything: if not, search
// need not filter by caller at all.
func (p *Policy) Restricts() bool {
	if p == nil {
		return false
	}
	if p.Default == Deny {
		return true
	}
	for _, r := range p.Rules {
		if r.Action == Deny {
			return true
		}
	}
	return false
}
