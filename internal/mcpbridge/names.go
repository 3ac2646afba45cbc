package mcpbridge

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/tooldex/tooldex/internal/toolname"
)

const (
	// Prefix starts every bridged tool's name: mcp__<server>__<tool>.
	Prefix = "mcp__"
	sep    = "__"
	// maxName is the longest provider-legal name.
	maxName = toolname.MaxLen
	// hashLen is the length of the hash suffix added to names that had to
	// be shortened.
	hashLen = 8
)

// sanitize is toolname.Sanitize, with an empty name made "_".
func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	return toolname.Sanitize(s)
}

// shortHash is a short stable hash of s.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// ServerName is the sanitized form of an MCP server's configured name, as
// it appears in mcp__<server>__<tool>. Names longer than 32 characters are
// cut and given a hash of the original, so that tools keep room.
func ServerName(name string) string {
	s := sanitize(name)
	if len(s) > 32 {
		s = s[:32-hashLen-1] + "_" + shortHash(name)
	}
	return s
}

// ToolName is the tooldex name of an MCP server's tool:
// mcp__<server>__<tool>, where server is ServerName's result and tool the
// sanitized MCP tool name. When the result would be longer than 64
// characters the tool part is cut and ends in a hash of the original tool
// name. Sanitizing can map distinct names to one: callers keep a map from
// the result back to the original name and skip collisions.
func ToolName(server, tool string) string {
	head := Prefix + server + sep
	t := sanitize(tool)
	if len(head)+len(t) <= maxName {
		return head + t
	}
	room := maxName - len(head) - hashLen - 1
	if room < 1 {
		// The server part is at most 32, so this cannot happen with
		// ServerName's result; keep the name legal anyway.
		return (head + t)[:maxName]
	}
	return head + t[:room] + "_" + shortHash(tool)
}

// toolMapping maps an MCP server's tool names to tooldex names and back.
type toolMapping struct {
	// toOriginal maps each tooldex name to the MCP tool name.
	toOriginal map[string]string
	// collisions lists MCP tool names skipped because another tool of the
	// server already took their tooldex name: skipped → the name kept.
	collisions map[string]string
}

// mapTools maps the tool names of server (already ServerName'd). Names are
// taken in the order given; a name whose tooldex name is already taken is
// a collision and skipped. A tool whose original name is already legal and
// equal to its sanitized form wins over one that had to be sanitized.
func mapTools(server string, names []string) toolMapping {
	m := toolMapping{toOriginal: make(map[string]string), collisions: make(map[string]string)}
	// Exact names first, so that sanitizing never steals a legal name.
	var later []string
	for _, n := range names {
		if sanitize(n) == n && len(Prefix+server+sep+n) <= maxName {
			m.add(server, n)
		} else {
			later = append(later, n)
		}
	}
	for _, n := range later {
		m.add(server, n)
	}
	return m
}

func (m *toolMapping) add(server, orig string) {
	name := ToolName(server, orig)
	if prev, ok := m.toOriginal[name]; ok {
		if prev != orig {
			m.collisions[orig] = prev
		}
		return
	}
	m.toOriginal[name] = orig
}
