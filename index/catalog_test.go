package index

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// specCore is the spec's 31 core tools, the server's default core set.
var specCore = []string{
	"Bash", "Read", "Edit", "Write", "Glob", "Grep", "Agent", "AskUserQuestion", "SendMessage", "ListPeers",
	"TeamCreate", "TeamDelete", "TaskOutput", "TaskStop", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList",
	"TodoWrite", "EnterPlanMode", "ExitPlanMode", "VerifyPlanExecution", "WebFetch", "WebSearch",
	"NotebookEdit", "LSP", "Skill", "Sleep", "Monitor", "ToolSearch", "ExecuteTool",
}

// toolFileIndex indexes the tools of JSON arrays of tools (name,
// description, search_hint, input_schema), core by the spec's list. It
// skips the test when a file is missing (the shared catalogs are not in
// the repository).
func toolFileIndex(t *testing.T, paths ...string) *Index {
	t.Helper()
	ix := New(Config{})
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Skip(err)
		}
		var tools []catalogTool
		if err := json.Unmarshal(b, &tools); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, tl := range tools {
			ix.Upsert(Doc{Name: tl.Name, Description: tl.Description, SearchHint: tl.SearchHint,
				Params: ParamText(tl.InputSchema), Core: slices.Contains(specCore, tl.Name)})
		}
	}
	return ix
}

// The spec's most basic query ranks the tool that schedules first, on the
// demo catalog and on the reference's corpus (Claude Code's tools and the
// synthetic MCP tools of its parity cases): CronCreate has both words as
// written ("schedule" in its hint), CronDelete only "scheduled".
func TestCronScheduleRanksCronCreateFirst(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "catalogs")
	for _, c := range []struct {
		name  string
		paths []string
	}{
		{"demo", []string{filepath.Join("..", "internal", "demo", "catalog.json")}},
		{"reference corpus", []string{filepath.Join(shared, "claude-code-tools.json"), filepath.Join(shared, "synthetic-mcp-tools.json")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := toolFileIndex(t, c.paths...)
			res, err := ix.Search("cron schedule", Options{})
			if err != nil {
				t.Fatal(err)
			}
			names := hitNames(res.Hits)
			if len(names) < 3 || names[0] != "CronCreate" {
				t.Fatalf("cron schedule = %v, want CronCreate first", names)
			}
			for _, want := range []string{"CronDelete", "CronList"} {
				if !slices.Contains(names[1:3], want) {
					t.Errorf("cron schedule = %v, want %s in the top 3", names, want)
				}
			}
		})
	}
}
