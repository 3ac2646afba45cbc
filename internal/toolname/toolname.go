// Package toolname holds the provider-legal tool name rule,
// ^[a-zA-Z0-9_-]{1,64}$ (Anthropic, OpenAI; MCP's mcp__server__tool fits
// it), once for every package that checks or builds names: the catalog,
// which cannot be imported by the wire-level packages, and those packages
// (manifest, toolhost, mcpbridge).
package toolname

import (
	"fmt"
	"strings"
)

// MaxLen is the longest legal name, in bytes.
const MaxLen = 64

// Pattern is the rule, for messages.
const Pattern = `^[a-zA-Z0-9_-]{1,64}$`

// LegalByte reports whether c may appear in a name.
func LegalByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// Valid reports whether name matches Pattern.
func Valid(name string) bool {
	return Check(name) == ""
}

// Check reports why name does not match Pattern ("" when it does).
func Check(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > MaxLen:
		return fmt.Sprintf("is %d bytes long, at most %d", len(name), MaxLen)
	}
	for i := 0; i < len(name); i++ {
		if !LegalByte(name[i]) {
			return "must match " + Pattern + " (letters, digits, _ and -)"
		}
	}
	return ""
}

// Sanitize replaces every character (rune; each byte of invalid UTF-8)
// that may not appear in a name with '_'. It does not truncate, and ""
// stays "".
func Sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && LegalByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
