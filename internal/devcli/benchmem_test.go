package devcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchMemory runs bench memory on a two-dataset corpus: names are made
// legal and distinct across datasets, a tool RegisterTools rejects is
// skipped, and the report has its rows.
func TestBenchMemory(t *testing.T) {
	dir := t.TempDir()
	write := func(ds, tools string) {
		if err := os.MkdirAll(filepath.Join(dir, ds), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ds, "tools.jsonl"), []byte(tools), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ds, "queries.jsonl"), []byte(`{"id":1,"query":"q","relevant":[]}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", `{"name":"get.weather","description":"Weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}
{"name":"bad","description":"not an object schema","input_schema":{"type":"string"}}
`)
	write("b", `{"name":"get_weather","description":"Another weather tool"}
{"name":"`+strings.Repeat("x", 70)+`","description":"a long name"}
`)
	var out strings.Builder
	if err := run(t.Context(), []string{"bench", "memory", "--tools", "30", "--datasets", dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"30 tools replicated from 3 dataset tools", "(1 skipped", "catalog as JSON", "RSS grown (service)", "index (built alone)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
