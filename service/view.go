package service

import (
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// Schema views (SearchRequest.schema_view, and Discover's and Prefetch's):
// how results carry each tool's input schema.
//
//   - STRUCT (the default): the light tool as stored (catalog.go), whose
//     schema goes out as the Struct's stored wire bytes.
//   - JSON: a copy of the tool without those bytes and with
//     input_schema_json set to the entry's JSON, rendered once per entry
//     (entry.schemaJSON) and shared by every response and by the
//     select:/Discover text. A client decodes one string instead of a
//     Struct tree: for the Go client, a Struct of five schemas cost more
//     than a whole health-check round trip (docs/BENCHMARKS.md).
//   - NONE: a copy without the schema.
//
// The copies are made per response, all in one allocation, and share the
// stored tool's strings, annotations, source and aliases: nothing modifies
// them (the gRPC handlers marshal them; in-process callers get clones,
// fullResults).

// checkView reports an unknown schema view.
func checkView(ve *ValidationError, v tooldexv1.SchemaView) {
	switch v {
	case tooldexv1.SchemaView_SCHEMA_VIEW_UNSPECIFIED, tooldexv1.SchemaView_SCHEMA_VIEW_STRUCT,
		tooldexv1.SchemaView_SCHEMA_VIEW_JSON, tooldexv1.SchemaView_SCHEMA_VIEW_NONE:
		return
	}
	ve.add("schema_view", "is %d, not a SchemaView; use SCHEMA_VIEW_STRUCT (the default), SCHEMA_VIEW_JSON or SCHEMA_VIEW_NONE", int32(v))
}

// applyView gives results the view's tools; entries[i] is results[i]'s
// entry. The view must have passed checkView.
func applyView(results []*tooldexv1.SearchResult, entries []*entry, v tooldexv1.SchemaView) {
	if v == tooldexv1.SchemaView_SCHEMA_VIEW_UNSPECIFIED || v == tooldexv1.SchemaView_SCHEMA_VIEW_STRUCT || len(results) == 0 {
		return
	}
	tools := make([]tooldexv1.Tool, len(results))
	for i, r := range results {
		t := &tools[i]
		withoutSchemaCopy(t, r.GetTool())
		if v == tooldexv1.SchemaView_SCHEMA_VIEW_JSON {
			t.InputSchemaJson = entries[i].schemaJSON()
		}
		r.Tool = t
	}
}

// withoutSchemaCopy sets dst (a zero Tool) to a shallow copy of the light
// tool src without its input schema. TestViewCopiesEveryField fails when
// Tool gains a field this does not copy.
func withoutSchemaCopy(dst, src *tooldexv1.Tool) {
	dst.Name = src.Name
	dst.Description = src.Description
	dst.SearchHint = src.SearchHint
	dst.AlwaysLoad = src.AlwaysLoad
	dst.Annotations = src.Annotations
	dst.Source = src.Source
	dst.Aliases = src.Aliases
	dst.Loading = src.Loading
	if u := withoutSchema(src.ProtoReflect().GetUnknown()); len(u) > 0 {
		dst.ProtoReflect().SetUnknown(u)
	}
}
