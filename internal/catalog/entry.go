package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/schema"
	"github.com/tooldex/tooldex/internal/textcut"
)

// Entry is one registered tool. Everything but the lazily made views and
// validator is set by NewEntry and never changes; the views are made once
// and never change either, so an Entry and every message it returns but
// Tool's may be read (marshalled) concurrently. Callers must not modify
// those messages.
//
// The tool is kept with its input schema marshalled (the field's wire
// bytes, as unknown fields after the tool's own): a google.protobuf.Struct
// tree costs about ten times the schema's JSON on the heap, which made a
// catalog cost 14x its JSON against 4.5x (bench memory, docs/BENCHMARKS.md
// "The catalog package"), and marshalling the tree again for every Search
// result was its largest cost.
type Entry struct {
	tool   *tooldexv1.Tool // as registered, with source and loading set, its schema marshalled
	tenant string
	// own is the length of the tool's own unknown fields; the schema's
	// bytes follow them (when wired).
	own       int
	wired     bool // the schema is marshalled in tool's unknown fields
	hasSchema bool
	doc       index.Doc // without Params
	// paramText is the index's parameter text (index.ParamText), kept
	// only until the entry is first stored: the index keeps its terms,
	// not the text. Guarded by the Catalog's lock once the entry is
	// registered (see Catalog.docLocked).
	paramText string
	// oneLine and params are Search's texts: the description's first
	// line, and the parameter summary (ParamSummary).
	oneLine, params string

	views struct {
		once sync.Once
		json string          // the schema as compact JSON; "" without one
		js   *tooldexv1.Tool // the tool without input_schema, with input_schema_json
		bare *tooldexv1.Tool // the tool without input_schema
	}
	check struct {
		fastOnce sync.Once
		fast     *schema.Fast
		once     sync.Once
		sch      *schema.Compiled
		err      error
	}
}

// inputSchemaField is Tool.input_schema's field number.
const inputSchemaField = 4

// NewEntry validates t (compiling its input schema to check it) and makes
// its entry for tenant. The stored source is t's with origin (and id, when
// not empty) replacing an unset origin, and a host's always; a tool that
// claims ORIGIN_HOST but is not a host's is given origin. Violations go
// to ve under field; the entry is nil when there are any. t is not kept.
func NewEntry(ve *ValidationError, field string, t *tooldexv1.Tool, tenant string, origin tooldexv1.Origin, id string, loading tooldexv1.Loading) *Entry {
	before := len(ve.Violations)
	doc := validate(ve, field, t)
	if len(ve.Violations) > before {
		return nil
	}
	in := t.GetInputSchema()
	tool := proto.CloneOf(t)
	tool.InputSchema = nil
	tool.Source = source(t.GetSource(), origin, id)
	tool.Loading = loading
	e := &Entry{tool: tool, tenant: tenant, oneLine: oneLine(tool.GetDescription()), hasSchema: in != nil}
	e.own = len(tool.ProtoReflect().GetUnknown())
	var paramText string
	if in != nil {
		paramText = index.ParamText(doc)
		e.params = schema.ParamSummary(in)
		opts := proto.MarshalOptions{Deterministic: true} // equal schemas, equal bytes
		n := opts.Size(in)
		b := make([]byte, 0, e.own+protowire.SizeTag(inputSchemaField)+protowire.SizeVarint(uint64(n))+n) // what is kept, exactly
		b = append(b, tool.ProtoReflect().GetUnknown()...)
		b = protowire.AppendTag(b, inputSchemaField, protowire.BytesType)
		if b, err := opts.MarshalAppend(protowire.AppendVarint(b, uint64(n)), in); err == nil {
			tool.ProtoReflect().SetUnknown(b)
			e.wired = true
		} else {
			tool.InputSchema = proto.CloneOf(in) // not UTF-8: only in-process callers send such schemas
		}
	}
	e.paramText = paramText
	e.doc = index.Doc{
		Name:        tool.GetName(),
		Aliases:     tool.GetAliases(),
		Description: tool.GetDescription(),
		SearchHint:  tool.GetSearchHint(),
		Core:        loading == tooldexv1.Loading_LOADING_CORE,
	}
	return e
}

// sources holds the stored sources without unknown fields, shared by the
// tools that have the same (a source is never modified): most tools of a
// catalog have one of a few, and a ToolSource costs 80 bytes a tool.
var sources = struct {
	sync.Mutex
	m map[[2]string]*tooldexv1.ToolSource
}{m: make(map[[2]string]*tooldexv1.ToolSource)}

// source returns the stored source of a tool registered with src (nil
// when absent) by origin; see NewEntry.
func source(src *tooldexv1.ToolSource, origin tooldexv1.Origin, id string) *tooldexv1.ToolSource {
	s := makeSource(src, origin, id)
	if s == nil || len(s.ProtoReflect().GetUnknown()) > 0 {
		return s
	}
	k := [2]string{s.GetOrigin().String(), s.GetId()}
	sources.Lock()
	defer sources.Unlock()
	if v := sources.m[k]; v != nil {
		return v
	}
	if len(sources.m) < 4096 { // a bound: sources are few, ids should not be
		sources.m[k] = s
	}
	return s
}

func makeSource(src *tooldexv1.ToolSource, origin tooldexv1.Origin, id string) *tooldexv1.ToolSource {
	o := src.GetOrigin()
	if o == tooldexv1.Origin_ORIGIN_HOST {
		o = tooldexv1.Origin_ORIGIN_UNSPECIFIED // only a host's own registration says HOST
	}
	if o != tooldexv1.Origin_ORIGIN_UNSPECIFIED && origin != tooldexv1.Origin_ORIGIN_HOST {
		return proto.CloneOf(src) // not the caller's
	}
	if src == nil && origin == tooldexv1.Origin_ORIGIN_UNSPECIFIED {
		return nil
	}
	out := &tooldexv1.ToolSource{Origin: origin, Id: src.GetId()}
	if src != nil {
		out = proto.CloneOf(src)
		out.Origin = origin
	}
	if id != "" {
		out.Id = id
	}
	return out
}

// Name returns the tool's name.
func (e *Entry) Name() string { return e.tool.GetName() }

// Tenant returns the tenant the tool belongs to.
func (e *Entry) Tenant() string { return e.tenant }

// Tool returns the tool as registered, with its source and loading,
// decoded anew: the caller owns it.
func (e *Entry) Tool() *tooldexv1.Tool {
	if e.wired {
		t := &tooldexv1.Tool{}
		if b, err := proto.Marshal(e.tool); err == nil && proto.Unmarshal(b, t) == nil {
			return t
		}
	}
	return proto.CloneOf(e.tool)
}

// WireTool returns a message that marshals to what Tool does, holding its
// input schema marshalled: only to be marshalled (it is shared), never read.
func (e *Entry) WireTool() *tooldexv1.Tool { return e.tool }

// inputSchema decodes the tool's input schema; nil when it has none.
func (e *Entry) inputSchema() *structpb.Struct {
	if !e.wired {
		return e.tool.InputSchema
	}
	b := e.tool.ProtoReflect().GetUnknown()[e.own:]
	_, _, n := protowire.ConsumeTag(b)
	v, m := protowire.ConsumeBytes(b[n:])
	s := &structpb.Struct{}
	if n < 0 || m < 0 || proto.Unmarshal(v, s) != nil {
		panic(fmt.Sprintf("catalog: the stored schema of %q does not decode", e.Name())) // NewEntry encoded it
	}
	return s
}

// Loading returns how the tool is loaded.
func (e *Entry) Loading() tooldexv1.Loading { return e.tool.GetLoading() }

// Source returns the tool's stored source.
func (e *Entry) Source() *tooldexv1.ToolSource { return e.tool.GetSource() }

// HostOwned reports whether a tool host registered the tool: it leaves the
// catalog with its last host.
func (e *Entry) HostOwned() bool { return e.Source().GetOrigin() == tooldexv1.Origin_ORIGIN_HOST }

// Preloaded reports whether the tool came from a catalog file: it yields to
// a live host allowed to serve its name.
func (e *Entry) Preloaded() bool { return e.Source().GetOrigin() == tooldexv1.Origin_ORIGIN_CATALOG }

// Idempotent reports the tool's idempotent annotation.
func (e *Entry) Idempotent() bool { return e.tool.GetAnnotations().GetIdempotent() }

// HasSchema reports whether the tool has an input schema.
func (e *Entry) HasSchema() bool { return e.hasSchema }

// OneLine returns the description's first line as Search shows it (cut at
// a word boundary to at most OneLineMax bytes, "…" after a cut one).
func (e *Entry) OneLine() string { return e.oneLine }

// Params returns the parameter summary Search shows (ParamSummary).
func (e *Entry) Params() string { return e.params }

func (e *Entry) makeViews() {
	e.views.once.Do(func() {
		if s := e.inputSchema(); s != nil {
			e.views.json = SchemaJSON(s)
		}
		bare := proto.CloneOf(e.tool)
		bare.InputSchema = nil
		if e.wired {
			bare.ProtoReflect().SetUnknown(bare.ProtoReflect().GetUnknown()[:e.own])
		}
		js := proto.CloneOf(bare)
		js.InputSchemaJson = e.views.json
		e.views.bare, e.views.js = bare, js
	})
}

// SchemaJSON returns the input schema as compact JSON (keys sorted), "" when
// the tool has none. Made once, on first use.
func (e *Entry) SchemaJSON() string {
	e.makeViews()
	return e.views.json
}

// JSONTool returns the tool with its input schema as input_schema_json
// (SCHEMA_VIEW_JSON) instead of input_schema. Made once; shared.
func (e *Entry) JSONTool() *tooldexv1.Tool {
	e.makeViews()
	return e.views.js
}

// BareTool returns the tool without its input schema (SCHEMA_VIEW_NONE).
// Made once; shared.
func (e *Entry) BareTool() *tooldexv1.Tool {
	e.makeViews()
	return e.views.bare
}

// FastChecker returns the schema's fast-path checker (schema.Fast), made
// on first use; nil when the tool has no schema or it is not simple enough.
// Most tools are searched, few executed: no tool pays for one before its
// first call.
func (e *Entry) FastChecker() *schema.Fast {
	e.check.fastOnce.Do(func() {
		if s := e.inputSchema(); s != nil {
			e.check.fast = schema.NewFast(s.AsMap())
		}
	})
	return e.check.fast
}

// Validate validates instance (decoded JSON) against the input schema,
// compiled on first use (a compiled validator costs many times the
// schema's size, and registration only needed to know that it compiles),
// within schema.Compiled's work budget; it stops when ctx is done.
func (e *Entry) Validate(ctx context.Context, instance any) error {
	e.check.once.Do(func() {
		s := e.inputSchema()
		if s == nil {
			e.check.err = fmt.Errorf("tool %q has no input schema", e.Name())
			return
		}
		e.check.sch, e.check.err = schema.New(s.AsMap(), schema.DefaultLimits)
	})
	if e.check.err != nil {
		return e.check.err
	}
	return e.check.sch.Validate(ctx, instance)
}

// SameDefinition reports whether two entries define the same tool,
// whoever registered them: every field but source and loading is equal.
func (e *Entry) SameDefinition(o *Entry) bool {
	a, b := e.tool.ProtoReflect(), o.tool.ProtoReflect()
	fields := a.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Name() == "source" || fd.Name() == "loading" {
			continue
		}
		if a.Has(fd) != b.Has(fd) || a.Has(fd) && !a.Get(fd).Equal(b.Get(fd)) {
			return false
		}
	}
	return bytes.Equal(a.GetUnknown(), b.GetUnknown())
}

// Equal reports whether two entries hold the same tool, source and loading
// included.
func (e *Entry) Equal(o *Entry) bool { return proto.Equal(e.tool, o.tool) }

// OneLineMax bounds the first line of a description as Search shows it.
const OneLineMax = 160

// ellipsis follows a cut first line.
const ellipsis = "…"

// oneLine returns the first line of description s, cut at a word boundary
// to at most OneLineMax bytes and then followed by "…".
func oneLine(s string) string {
	line := strings.TrimSpace(s)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	if len(line) <= OneLineMax {
		return line
	}
	cutLine, _ := textcut.Prefix(line, OneLineMax)
	c := len(cutLine)
	if i := strings.LastIndexByte(line[:c], ' '); i > OneLineMax/2 {
		c = i
	}
	return strings.TrimRightFunc(line[:c], unicode.IsSpace) + ellipsis
}

// DefaultSchemaJSON is what a tool without an input schema takes.
const DefaultSchemaJSON = `{"type":"object"}`

// SchemaJSON renders a schema as compact JSON (encoding/json's: keys
// sorted, HTML characters escaped). Registration refuses the only values
// JSON cannot hold (numbers that are not finite); a schema holding one
// anyway renders as the default.
func SchemaJSON(s *structpb.Struct) string {
	if s == nil {
		return DefaultSchemaJSON
	}
	b, err := json.Marshal(s.AsMap())
	if err != nil {
		return DefaultSchemaJSON
	}
	return string(b)
}
