package service

import (
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/schema"
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
	checkToolMCPFields(ve, field, t)
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
	if err := schema.Check(doc); err != nil {
		ve.add(field+".input_schema", "%v", err)
		return nil
	}
	return doc
}
