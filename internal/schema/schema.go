// Package schema checks tools' input schemas (JSON Schema) and the
// parameters of calls against them: compiling a schema, the bounds a
// registered schema must keep, a fast path for simple schemas, and the
// violations of invalid parameters with their JSON paths.
package schema

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// MaxDepth bounds how deeply an input schema nests JSON objects and
// arrays: compiling a schema takes time superlinear in its depth.
const MaxDepth = 128

// Check reports why doc (a decoded input schema) cannot be registered: it
// nests too deeply, holds a number JSON cannot represent, does not
// compile, or passes DefaultLimits (enum length, pattern size, subschemas,
// a $ref cycle). nil means it can. New does the same and keeps the
// compiled schema.
func Check(doc map[string]any) error {
	_, err := New(doc, Limits{})
	return err
}

// checkDoc is Check's part that needs no compiling.
func checkDoc(doc map[string]any, lim Limits) error {
	if Nesting(doc, MaxDepth+1) > MaxDepth {
		return fmt.Errorf("nests objects and arrays more than %d levels deep", MaxDepth)
	}
	if !Finite(doc) {
		return errors.New("holds a number that is not finite (NaN or infinite), which JSON cannot represent")
	}
	return checkPatterns(doc, lim)
}

// checkPatterns checks every pattern of doc against lim before compiling:
// the compiler would report a refused pattern only as a metaschema
// failure.
func checkPatterns(v any, lim Limits) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch p := e.(type) {
			case string:
				if k == "pattern" {
					if _, err := patternInsts(p, lim); err != nil {
						return err
					}
				}
			case map[string]any:
				if k == "patternProperties" {
					for re := range p {
						if _, err := patternInsts(re, lim); err != nil {
							return err
						}
					}
				}
			}
			if err := checkPatterns(e, lim); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := checkPatterns(e, lim); err != nil {
				return err
			}
		}
	}
	return nil
}

// Finite reports whether every number in v (a decoded Struct) is finite:
// a Struct can hold NaN and infinities, JSON cannot, and a schema is JSON
// (it is rendered as JSON text for models and for SCHEMA_VIEW_JSON).
func Finite(v any) bool {
	switch v := v.(type) {
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case map[string]any:
		for _, e := range v {
			if !Finite(e) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !Finite(e) {
				return false
			}
		}
	}
	return true
}

// Nesting returns how deeply v nests objects and arrays, looking no more
// than limit levels down.
func Nesting(v any, limit int) int {
	if limit == 0 {
		return 0
	}
	var elems []any
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			elems = append(elems, e)
		}
	case []any:
		elems = v
	default:
		return 0
	}
	depth := 0
	for _, e := range elems {
		depth = max(depth, Nesting(e, limit-1))
	}
	return depth + 1
}

// errRemoteRef refuses to fetch referenced schemas: a tool's schema must be
// self-contained.
var errRemoteRef = errors.New("schemas must be self-contained: external $ref is not loaded")

type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errRemoteRef }

// Compile compiles an input schema (JSON Schema 2020-12 unless it names
// its draft in $schema), its patterns bounded by DefaultLimits. The top
// level must describe an object.
func Compile(doc map[string]any) (*jsonschema.Schema, error) {
	return compile(doc, DefaultLimits)
}

func compile(doc map[string]any, lim Limits) (*jsonschema.Schema, error) {
	if typ, ok := doc["type"]; ok && typ != "object" {
		return nil, fmt.Errorf(`top-level "type" is %v; a tool's input must be "object"`, typ)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(patternEngine(lim))
	const url = "urn:tooldex:input_schema"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %w", err)
	}
	return sch, nil
}

// Violation is one way parameters fail their schema: Path is the failing
// value's JSON path under "params" (params.a.b[0]).
type Violation struct {
	Path, Description string
}

var printer = message.NewPrinter(language.English)

// Violations lists a validation error's failing leaves, sorted by path,
// at most DefaultLimits.MaxViolations of them: past that a last violation
// at "params" counts the rest. An error that is not a validation error is
// one violation at "params".
func Violations(err error) []Violation {
	var perr *ParamsError
	if errors.As(err, &perr) {
		vs := perr.Violations
		if more := perr.Total - len(vs); more > 0 {
			vs = append(vs[:len(vs):len(vs)], Violation{Path: "params", Description: printer.Sprintf("and %d more violations, not listed", more)})
		}
		return vs
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []Violation{{Path: "params", Description: err.Error()}}
	}
	all := violations(verr)
	n := min(len(all), DefaultLimits.MaxViolations)
	vs := make([]Violation, n, n+1)
	for i := range n {
		vs[i] = all[i].render()
	}
	if more := len(all) - n; more > 0 {
		vs = append(vs, Violation{Path: "params", Description: printer.Sprintf("and %d more violations, not listed", more)})
	}
	return vs
}

// violations returns err's failing leaves, sorted by path, not rendered.
func violations(err error) []leaf {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []leaf{{path: "params", kind: plainKind(err.Error())}}
	}
	var ls []leaf
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			ls = append(ls, leaf{path: jsonPath(e.InstanceLocation), kind: e.ErrorKind})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(verr)
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].path < ls[j].path })
	return ls
}

// plainKind is an error kind with a fixed message.
type plainKind string

func (k plainKind) KeywordPath() []string                   { return nil }
func (k plainKind) LocalizedString(*message.Printer) string { return string(k) }

func jsonPath(loc []string) string {
	var b strings.Builder
	b.WriteString("params")
	for _, p := range loc {
		if isIndex(p) {
			b.WriteString("[" + p + "]")
		} else {
			b.WriteString("." + p)
		}
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
