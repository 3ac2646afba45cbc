package tooldex_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageDocs checks that every package of the module (generated code
// aside) has exactly one package doc comment, in a non-test file, in the
// conventional form: "Package <name> ..." or, for a main package,
// "Command <name> ...".
func TestPackageDocs(t *testing.T) {
	const mod = "github.com/tooldex/tooldex"
	for _, line := range runGoList(t, "-f", "{{.ImportPath}}\t{{.Name}}\t{{.Dir}}", "./...") {
		importPath, rest, _ := strings.Cut(line, "\t")
		name, dir, _ := strings.Cut(rest, "\t")
		if inTree(importPath, mod+"/gen") {
			continue
		}
		sub := strings.TrimPrefix(strings.TrimPrefix(importPath, mod), "/")
		if sub == "" {
			sub = "root"
		}
		t.Run(sub, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			var withDoc []string
			nonTest := 0
			for _, path := range files {
				if strings.HasSuffix(path, "_test.go") {
					continue
				}
				nonTest++
				f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
				if err != nil {
					t.Errorf("parsing %s: %v", path, err)
					continue
				}
				if f.Doc == nil {
					continue
				}
				base := filepath.Base(path)
				withDoc = append(withDoc, base)
				want := "Package " + name + " "
				if name == "main" {
					want = "Command "
				}
				if text := strings.ReplaceAll(f.Doc.Text(), "\n", " "); !strings.HasPrefix(text, want) {
					t.Errorf("%s: package doc starts %q, want it to start %q", base, firstLine(f.Doc.Text()), want)
				}
			}
			switch {
			case nonTest == 0:
				t.Skipf("%s has only test files", importPath)
			case len(withDoc) == 0:
				t.Errorf("%s (package %s) has no package doc comment in its %d non-test files", importPath, name, nonTest)
			case len(withDoc) > 1:
				t.Errorf("%s has package doc comments in %d files, want one: %s", importPath, len(withDoc), strings.Join(withDoc, ", "))
			}
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
