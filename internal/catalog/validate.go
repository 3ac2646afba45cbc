package catalog

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/schema"
	"github.com/tooldex/tooldex/internal/toolname"
)

// Limits on registered tools, documented in the proto.
const (
	MaxBatch       = 10000
	MaxDescription = 16384
	MaxSearchHint  = 512
	MaxSchemaBytes = 256 << 10
	MaxAliases     = 16
)

// CheckName reports why name is not a provider-legal tool name ("" when it
// is).
func CheckName(name string) string {
	return toolname.Check(name)
}

// validate checks one tool, compiling its input schema to check it, and
// returns the schema decoded (nil when the tool has none or it is
// invalid). Violations go to ve under field.
func validate(ve *ValidationError, field string, t *tooldexv1.Tool) map[string]any {
	if why := CheckName(t.GetName()); why != "" {
		ve.Add(field+".name", "%s", why)
	}
	if n := len(t.GetDescription()); n > MaxDescription {
		ve.Add(field+".description", "is %d bytes, at most %d", n, MaxDescription)
	}
	if n := len(t.GetSearchHint()); n > MaxSearchHint {
		ve.Add(field+".search_hint", "is %d bytes, at most %d", n, MaxSearchHint)
	}
	if n := len(t.GetAliases()); n > MaxAliases {
		ve.Add(field+".aliases", "has %d entries, at most %d", n, MaxAliases)
	}
	for i, a := range t.GetAliases() {
		if why := CheckName(a); why != "" {
			ve.Add(fmt.Sprintf("%s.aliases[%d]", field, i), "%s", why)
		}
	}
	checkToolMCPFields(ve, field, t)
	if t.GetInputSchemaJson() != "" {
		ve.Add(field+".input_schema_json", "is output only (Search, Discover and Prefetch fill it for SCHEMA_VIEW_JSON); register the schema as input_schema")
	}
	if t.GetInputSchema() == nil {
		return nil
	}
	if n := proto.Size(t.GetInputSchema()); n > MaxSchemaBytes {
		ve.Add(field+".input_schema", "is %d bytes, at most %d", n, MaxSchemaBytes)
		return nil
	}
	doc := t.GetInputSchema().AsMap()
	if err := schema.Check(doc); err != nil {
		ve.Add(field+".input_schema", "%v", err)
		return nil
	}
	return doc
}
