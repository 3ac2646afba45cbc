// Package flagenv fills the flags of a command line that were not given from
// the environment: flag --max-items reads TOOLDEX_MAX_ITEMS, then an
// optional alternative name (the spec's TOOL_SEARCH_* variables).
package flagenv

import (
	"flag"
	"fmt"
	"strings"
)

// Apply sets every flag of the parsed fs not given on the command line from
// TOOLDEX_<NAME> (upper case, "-" as "_"), or else from the variable alt
// names for it. It returns the names of the flags given either way.
func Apply(fs *flag.FlagSet, getenv func(string) string, alt map[string]string) (map[string]bool, error) {
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := "TOOLDEX_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v := getenv(env)
		if v == "" && alt[f.Name] != "" {
			env = alt[f.Name]
			v = getenv(env)
		}
		if v == "" {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%s=%q: %w", env, v, e)
			return
		}
		set[f.Name] = true
	})
	return set, err
}
