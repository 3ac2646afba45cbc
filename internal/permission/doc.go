// Package permission decides whether a caller may execute a tool, and
// whether the tool shows up in the caller's search results, by rules read
// from a policy file. Rules that answer "ask" are settled by approval
// tokens: the ask answer carries a token, and the call retried with that
// token runs without asking again.
//
// It is a plain library (standard library only, no gRPC, no logging); the
// service wires it in.
//
// # Policy file
//
// A policy is one JSON object:
//
//	{"default": "allow", "rules": [
//	  {"tool": "mcp__github__delete_*", "action": "deny", "reason": "deleting on GitHub is not allowed"},
//	  {"tool": "read_file", "caller": "guest-*", "action": "ask", "reason": "reading files needs the user's approval"},
//	  {"tool": "mcp__filesystem__*", "action": "ask"}
//	]}
//
// Fields:
//
//   - default: the action when no rule matches: "allow", "deny" or "ask".
//     Absent means "allow".
//   - rules: the rules, tried in file order; the first one that matches
//     the tool and every subject pattern it has decides. Absent or null
//     means no rules.
//   - rules[i].tool (required): a tool-name pattern. A name without
//     wildcards matches that tool only; otherwise the pattern is a
//     [path.Match] glob (*, ?, [a-z], \ to escape), so mcp__github__*
//     matches every tool of the github MCP server. The wildcards of
//     path.Match do not match '/', but the pattern "*" alone matches every
//     tool, '/' or not.
//   - rules[i].caller: a caller pattern, a glob like tool, matched against
//     the call's caller: the end user a trusted frontend (a principal with
//     the act-as scope) acts for, or else the authenticated principal's
//     name. Absent, "" or "*" matches any caller, including an unnamed one.
//   - rules[i].principal, rules[i].tenant, rules[i].group: globs matched
//     against the authenticated principal's name, its tenant and any of its
//     groups (JWT claims or the tokens file). Absent, "" or "*" matches any.
//   - rules[i].action (required): "allow", "deny" or "ask".
//   - rules[i].reason: a message shown to the caller when the rule denies
//     or asks.
//
// Parsing is strict: field names are case-sensitive, unknown and duplicate
// fields are errors, every value must be a JSON string (rules: an array of
// objects, or null), actions must be one of the three lower-case words,
// patterns must be valid globs, and nothing may follow the object. Errors
// name the place, e.g.
//
//	permission: rules[1].tool: bad pattern "[": syntax error in pattern
//
// and [Load] puts the file name after "permission: ".
//
// # Decisions
//
// [Policy.Decide] returns the action and the rule that decided it (nil for
// the default). [Policy.Visible] hides only denied tools from search: a tool
// that needs approval is still found, and asking happens when it is called.
// A nil *Policy allows everything, like [AllowAll].
//
// # Approvals
//
// When a call is answered "ask", the server shows the rule's reason and a
// [Summary] of the parameters, and hands out [Approver.Token] for exactly
// that tool, caller and parameters ([CanonicalJSON]). The retried call
// carries the token; [Approver.Check] accepts it until it expires (10
// minutes by default) and the call runs. A token is
//
//	base64url(expiry || HMAC-SHA256(key, label, len(tool), tool, len(caller), caller, sha256(params), expiry))
//
// without padding, where expiry is 8 bytes of big-endian Unix seconds and
// the lengths are 8 bytes big-endian, so that no two (tool, caller) pairs
// give the same MAC input. A token for another tool, caller or parameters,
// or with any byte changed, is [ErrBadToken]; a genuine token past its
// expiry is [ErrExpiredToken]. A token may be used any number of times
// before it expires. Tokens from an Approver with a random key (the
// default) do not survive a restart and are not accepted by other
// replicas; give the replicas one shared key for that.
//
// A token proves that this server asked, not that a person answered: it
// must reach the user through the client's own interface, not through the
// model's context, or the agent can approve itself by retrying.
package permission
