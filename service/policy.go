package service

import (
	"path"
	"strings"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// DefaultCoreTools is the spec's CORE_TOOLS: the tools a frontend loads up
// front. Everything else registered is deferred and found by search.
var DefaultCoreTools = []string{
	"Bash", "Read", "Edit", "Write", "Glob", "Grep", "Agent", "AskUserQuestion",
	"SendMessage", "ListPeers", "TeamCreate", "TeamDelete", "TaskOutput", "TaskStop",
	"TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "TodoWrite", "EnterPlanMode",
	"ExitPlanMode", "VerifyPlanExecution", "WebFetch", "WebSearch", "NotebookEdit",
	"LSP", "Skill", "Sleep", "Monitor", "ToolSearch", "ExecuteTool",
}

// Policy decides how each tool is loaded. Precedence: Exclude, then
// IncludeForce, then core (always_load or a core name), else deferred.
// Exclude and IncludeForce entries are names or path.Match patterns such
// as mcp__github__*.
type Policy struct {
	Core         []string
	Exclude      []string
	IncludeForce []string
}

// loading returns how t is loaded under p.
func (p Policy) loading(t *tooldexv1.Tool) tooldexv1.Loading {
	name := t.GetName()
	switch {
	case matchAny(p.Exclude, name):
		return tooldexv1.Loading_LOADING_EXCLUDED
	case matchAny(p.IncludeForce, name):
		return tooldexv1.Loading_LOADING_DEFERRED
	case t.GetAlwaysLoad() || matchAny(p.Core, name):
		return tooldexv1.Loading_LOADING_CORE
	}
	return tooldexv1.Loading_LOADING_DEFERRED
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if p == name {
			return true
		}
		if strings.ContainsAny(p, "*?[") {
			if ok, err := path.Match(p, name); err == nil && ok {
				return true
			}
		}
	}
	return false
}

// SplitList splits a comma-separated list, trimming spaces and dropping
// empty entries.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
