package mcpfacade

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The entry tools check their arguments against their schemas (manifest's
// EntryTools) by hand, so that every refusal says in plain words which
// field is wrong and what it should be: a model reads these messages, and a
// Go decoding error ("cannot unmarshal array into Go value of type …")
// tells it nothing.

// maxQuoted bounds how much of a bad value a message quotes.
const maxQuoted = 40

// args decodes a tool call's arguments, a JSON object; absent or null is
// {}. The problem, when there is one, is a sentence for the model.
func args(raw json.RawMessage) (map[string]json.RawMessage, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]json.RawMessage{}, ""
	}
	if k := kind(raw); k != "an object" {
		return nil, fmt.Sprintf("the arguments must be a JSON object, not %s", k)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "the arguments are not valid JSON"
	}
	return m, ""
}

// kind names a JSON value's type for a message: "a string", "a number"...
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// quote is raw for a message, cut to maxQuoted runes.
func quote(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if utf8.RuneCountInString(s) <= maxQuoted {
		return s
	}
	r := []rune(s)
	return string(r[:maxQuoted]) + "…"
}

// stringArg returns the string field name of a; ok false when it is
// absent or null. A value of another type is a problem.
func stringArg(a map[string]json.RawMessage, name string) (v string, ok bool, problem string) {
	raw, present := a[name]
	if !present || kind(raw) == "null" {
		return "", false, ""
	}
	if kind(raw) != "a string" || json.Unmarshal(raw, &v) != nil {
		return "", false, fmt.Sprintf("%q must be a string, not %s (%s)", name, kind(raw), quote(raw))
	}
	return v, true, ""
}

// intArg returns the integer field name of a, from lo to hi; ok false when
// it is absent or null.
func intArg(a map[string]json.RawMessage, name string, lo, hi int) (v int, ok bool, problem string) {
	raw, present := a[name]
	if !present || kind(raw) == "null" {
		return 0, false, ""
	}
	bad := fmt.Sprintf("%q must be an integer from %d to %d, not %s (%s)", name, lo, hi, kind(raw), quote(raw))
	var f float64
	if kind(raw) != "a number" || json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) {
		return 0, false, bad
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, false, fmt.Sprintf("%q must be an integer from %d to %d, not %s", name, lo, hi, quote(raw))
	}
	return int(f), true, ""
}

// objectArg returns the object field name of a as compact JSON text; ok
// false when it is absent. null and other types are a problem.
func objectArg(a map[string]json.RawMessage, name string) (js string, ok bool, problem string) {
	raw, present := a[name]
	if !present {
		return "", false, ""
	}
	if k := kind(raw); k != "an object" {
		msg := fmt.Sprintf("%q must be a JSON object, not %s (%s)", name, k, quote(raw))
		if k == "a string" {
			var s string
			if json.Unmarshal(raw, &s) == nil && strings.HasPrefix(strings.TrimSpace(s), "{") {
				msg += ": pass the object itself, not its JSON text in a string"
			}
		}
		return "", false, msg
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", false, fmt.Sprintf("%q is not valid JSON", name)
	}
	return b.String(), true, ""
}

// inputError is the tool error for a bad input of tool: what is wrong, and
// the form expected.
func inputError(tool, problem, expected string) *mcp.CallToolResult {
	return toolError(fmt.Sprintf("Invalid %s input: %s. Expected %s.", tool, problem, expected))
}
