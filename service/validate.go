package service

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// Limits on registered tools, documented in the proto.
const (
	MaxBatch          = 10000
	MaxDescription    = 16384
	MaxSearchHint     = 512
	MaxSchemaBytes    = 256 << 10
	MaxAliases        = 16
	maxViolationsSent = 100
)

// MaxSchemaDepth bounds how deeply an input schema nests JSON objects and
// arrays: compiling a schema takes time superlinear in its depth.
const MaxSchemaDepth = 128

// nameRE is the provider-legal tool name (Anthropic, OpenAI); MCP's
// mcp__server__tool fits it.
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Violation is one invalid field.
type Violation struct {
	Field, Description string
}

// ValidationError lists every invalid field of a request.
type ValidationError struct {
	Violations []Violation
}

func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		parts = append(parts, v.Field+": "+v.Description)
	}
	return strings.Join(parts, "; ")
}

func (e *ValidationError) add(field, format string, args ...any) {
	e.Violations = append(e.Violations, Violation{Field: field, Description: fmt.Sprintf(format, args...)})
}

func (e *ValidationError) err() error {
	if len(e.Violations) == 0 {
		return nil
	}
	return e
}

// ConflictError lists tools that another registrant owns with a different
// definition.
type ConflictError struct {
	ValidationError
}

func (e *ConflictError) err() error {
	if len(e.Violations) == 0 {
		return nil
	}
	return e
}

// checkName reports whether name is provider-legal, and why not.
func checkName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > 64:
		return fmt.Sprintf("is %d bytes long, at most 64", len(name))
	case !nameRE.MatchString(name):
		return "must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, _ and -)"
	}
	return ""
}

// validateTool checks one tool and compiles its input schema to check it.
// It returns the schema decoded (nil when the tool has none or it is
// invalid), for the index (prepareTool): decoding it again would make the
// same garbage twice.
func validateTool(ve *ValidationError, field string, t *tooldexv1.Tool) map[string]any {
	if why := checkName(t.GetName()); why != "" {
		ve.add(field+".name", "%s", why)
	}
	if n := len(t.GetDescription()); n > MaxDescription {
		ve.add(field+".description", "is %d bytes, at most %d", n, MaxDescription)
	}
	if n := len(t.GetSearchHint()); n > MaxSearchHint {
		ve.add(field+".search_hint", "is %d bytes, at most %d", n, MaxSearchHint)
	}
	if n := len(t.GetAliases()); n > MaxAliases {
		ve.add(field+".aliases", "has %d entries, at most %d", n, MaxAliases)
	}
	for i, a := range t.GetAliases() {
		if why := checkName(a); why != "" {
			ve.add(fmt.Sprintf("%s.aliases[%d]", field, i), "%s", why)
		}
	}
	if t.GetInputSchemaJson() != "" {
		ve.add(field+".input_schema_json", "is output only (Search, Discover and Prefetch fill it for SCHEMA_VIEW_JSON); register the schema as input_schema")
	}
	if t.GetInputSchema() == nil {
		return nil
	}
	if n := proto.Size(t.GetInputSchema()); n > MaxSchemaBytes {
		ve.add(field+".input_schema", "is %d bytes, at most %d", n, MaxSchemaBytes)
		return nil
	}
	doc := t.GetInputSchema().AsMap()
	if nesting(doc, MaxSchemaDepth+1) > MaxSchemaDepth {
		ve.add(field+".input_schema", "nests objects and arrays more than %d levels deep", MaxSchemaDepth)
		return nil
	}
	if !finite(doc) {
		ve.add(field+".input_schema", "holds a number that is not finite (NaN or infinite), which JSON cannot represent")
		return nil
	}
	if _, err := compileSchema(doc); err != nil {
		ve.add(field+".input_schema", "%v", err)
		return nil
	}
	return doc
}

// finite reports whether every number in v (a decoded Struct) is finite:
// a Struct can hold NaN and infinities, JSON cannot, and a schema is JSON
// (it is rendered as JSON text for models and for SCHEMA_VIEW_JSON).
func finite(v any) bool {
	switch v := v.(type) {
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case map[string]any:
		for _, e := range v {
			if !finite(e) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !finite(e) {
				return false
			}
		}
	}
	return true
}

// nesting returns how deeply v nests objects and arrays, looking no more
// than limit levels down.
func nesting(v any, limit int) int {
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
		depth = max(depth, nesting(e, limit-1))
	}
	return depth + 1
}

// errRemoteRef refuses to fetch referenced schemas: a tool's schema must be
// self-contained.
var errRemoteRef = errors.New("schemas must be self-contained: external $ref is not loaded")

type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errRemoteRef }

// compileSchema compiles an input schema (JSON Schema 2020-12 unless it
// names its draft in $schema). The top level must describe an object.
func compileSchema(doc map[string]any) (*jsonschema.Schema, error) {
	if typ, ok := doc["type"]; ok && typ != "object" {
		return nil, fmt.Errorf(`top-level "type" is %v; a tool's input must be "object"`, typ)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
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
