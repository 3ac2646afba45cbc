package service

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
)

// How the catalog holds a tool.
//
// A google.protobuf.Struct tree costs several times the schema's JSON on the
// heap, and marshalling it again for every search result was most of a
// Search call's CPU. So an entry keeps its tool "light": every field as
// registered except input_schema, which is kept as the field's protobuf
// wire bytes (tag, length, the schema Struct marshalled deterministically)
// in the message's unknown fields. Marshalling a light tool writes those
// bytes back verbatim, so what goes on the wire decodes to exactly the
// registered tool (input_schema then follows loading in the byte order,
// which protobuf decoders accept: fields may come in any order). proto.Equal
// compares unknown fields byte for byte, so two light tools are equal when
// their registered definitions are (the Struct's map keys are sorted by the
// deterministic marshal).
//
// In-process callers of the RPC methods get full tools (full); the gRPC
// handlers registered by RegisterDiscoveryService send light tools as they
// are.

// entry is one registered tool.
type entry struct {
	tool   *tooldexv1.Tool // light (see above), with source and loading set; never mutated
	schema *lazySchema     // nil when the tool has no input schema
	// The tool's model-facing text, rendered once at registration rather
	// than on every search: its description's first line and its
	// parameter summary.
	oneLine, params string
	// schemaText is the input schema as compact JSON ("" when the tool has
	// none), for select: and Discover text and for the JSON schema view
	// (SCHEMA_VIEW_JSON, view.go). It is rendered from the stored wire
	// bytes the first time one of them lists the tool, then kept: only
	// tools that are asked for pay for a copy, and a replaced tool is a
	// new entry, so the copy goes with the old one.
	schemaText atomic.Pointer[string]
	// doc is what the index needs, kept from registration until put.
	doc *index.Doc
	// hosts are the host sessions serving the tool. A tool a host
	// registered (source origin HOST) leaves the catalog with its last
	// host; one a frontend or catalog registered stays.
	hosts map[string]bool
}

// hostOwned reports whether the tool came from a tool host.
func (e *entry) hostOwned() bool {
	return e.tool.GetSource().GetOrigin() == tooldexv1.Origin_ORIGIN_HOST
}

// inputSchemaField is Tool.input_schema's field number.
const inputSchemaField = 4

// lightCopy returns a light copy of t (t is not modified): every field but
// input_schema copied, and the schema encoded from t's Struct, which is
// read, not cloned (registering a catalog made a garbage Struct tree per
// tool otherwise). Unknown fields t carries are kept, before the schema's.
// A schema that cannot be encoded (invalid UTF-8 in a string, which only an
// in-process caller can send: gRPC refuses such messages) is kept as a
// Struct.
func lightCopy(t *tooldexv1.Tool) *tooldexv1.Tool {
	s := t.GetInputSchema()
	if s == nil {
		return proto.CloneOf(t)
	}
	opts := proto.MarshalOptions{Deterministic: true}
	n := opts.Size(s)
	unknown := t.ProtoReflect().GetUnknown()
	raw := make([]byte, 0, len(unknown)+protowire.SizeTag(inputSchemaField)+protowire.SizeBytes(n)) // exactly: it is kept
	raw = append(raw, unknown...)
	raw = protowire.AppendTag(raw, inputSchemaField, protowire.BytesType)
	raw = protowire.AppendVarint(raw, uint64(n))
	raw, err := opts.MarshalAppend(raw, s)
	if err != nil || len(raw) != cap(raw) {
		return proto.CloneOf(t)
	}
	c := &tooldexv1.Tool{}
	dst := c.ProtoReflect()
	t.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Number() == inputSchemaField:
		case fd.IsList():
			l := dst.Mutable(fd).List()
			for i := range v.List().Len() {
				l.Append(cloneValue(fd, v.List().Get(i)))
			}
		case fd.IsMap():
			m := dst.Mutable(fd).Map()
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				m.Set(k, cloneValue(fd.MapValue(), mv))
				return true
			})
		default:
			dst.Set(fd, cloneValue(fd, v))
		}
		return true
	})
	dst.SetUnknown(protoreflect.RawFields(raw))
	return c
}

// cloneValue deep-copies a singular value of field fd (messages are
// cloned; scalars and strings are immutable).
func cloneValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	if fd.Message() != nil {
		return protoreflect.ValueOfMessage(proto.Clone(v.Message().Interface()).ProtoReflect())
	}
	return v
}

// schemaJSON returns the tool's input schema as compact JSON, rendered
// once; "" when the tool has none.
func (e *entry) schemaJSON() string {
	if p := e.schemaText.Load(); p != nil {
		return *p
	}
	var js string
	if s := inputSchema(e.tool); s != nil {
		js = schemaJSON(s)
	}
	e.schemaText.Store(&js)
	return js
}

// lightTool returns a light copy of t (see lightCopy).
func lightTool(t *tooldexv1.Tool) *tooldexv1.Tool { return lightCopy(t) }

// sources interns tool sources: most tools of a catalog share one, and a
// stored tool's source is never modified.
type sources struct {
	mu sync.Mutex
	m  map[sourceKey]*tooldexv1.ToolSource
}

type sourceKey struct {
	origin tooldexv1.Origin
	id     string
}

// intern returns the shared source equal to src (nil for nil). src must
// not be modified afterwards, nor the result.
func (ss *sources) intern(src *tooldexv1.ToolSource) *tooldexv1.ToolSource {
	if src == nil || len(src.ProtoReflect().GetUnknown()) > 0 {
		return src
	}
	k := sourceKey{src.GetOrigin(), src.GetId()}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if v := ss.m[k]; v != nil {
		return v
	}
	if ss.m == nil {
		ss.m = make(map[sourceKey]*tooldexv1.ToolSource)
	}
	if len(ss.m) < 4096 { // a bound: sources are few, ids should not be
		ss.m[k] = src
	}
	return src
}

// full returns the tool as registered, with its input schema as a Struct.
// The caller owns the result.
func (e *entry) full() *tooldexv1.Tool {
	return fullTool(e.tool)
}

func fullTool(light *tooldexv1.Tool) *tooldexv1.Tool {
	t := proto.CloneOf(light)
	if t.InputSchema == nil {
		t.InputSchema = inputSchema(light)
	}
	t.ProtoReflect().SetUnknown(withoutSchema(light.ProtoReflect().GetUnknown()))
	return t
}

// withoutSchema returns unknown fields without input_schema's (nil when
// nothing is left).
func withoutSchema(raw protoreflect.RawFields) protoreflect.RawFields {
	var out protoreflect.RawFields
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return out
		}
		m := protowire.ConsumeFieldValue(num, typ, raw[n:])
		if m < 0 {
			return out
		}
		if num != inputSchemaField {
			out = append(out, raw[:n+m]...)
		}
		raw = raw[n+m:]
	}
	return out
}

// inputSchema decodes a light tool's input schema; nil when it has none.
func inputSchema(light *tooldexv1.Tool) *structpb.Struct {
	if s := light.GetInputSchema(); s != nil {
		return s // kept as a Struct (see lightTool)
	}
	raw := light.ProtoReflect().GetUnknown()
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			break
		}
		raw = raw[n:]
		if num == inputSchemaField && typ == protowire.BytesType {
			b, m := protowire.ConsumeBytes(raw)
			if m < 0 {
				break
			}
			s := &structpb.Struct{}
			if err := proto.Unmarshal(b, s); err != nil {
				panic(fmt.Sprintf("tooldex: decode stored schema of %q: %v", light.GetName(), err)) // it was encoded here
			}
			return s
		}
		m := protowire.ConsumeFieldValue(num, typ, raw)
		if m < 0 {
			break
		}
		raw = raw[m:]
	}
	return nil
}

// lazySchema is a tool's input schema, compiled on first use. Registration
// compiles every schema once to reject invalid ones, then drops the result:
// a compiled validator costs many times the schema's size, and Execute only
// needs it for schemas the fast path (fastcheck.go) does not handle or for
// parameters the fast path does not accept.
type lazySchema struct {
	tool *tooldexv1.Tool // light
	once sync.Once
	sch  *jsonschema.Schema
	err  error

	// fast is the fast-path checker (nil unless the schema is simple),
	// built by the first Execute: most tools are searched, few executed.
	fastOnce sync.Once
	fast     *fastCheck
}

// fastChecker returns the schema's fast-path checker, building it on first
// use; nil when the schema is not simple enough for one.
func (l *lazySchema) fastChecker() *fastCheck {
	l.fastOnce.Do(func() {
		if s := inputSchema(l.tool); s != nil {
			l.fast = newFastCheck(s.AsMap())
		}
	})
	return l.fast
}

// Validate validates instance against the schema, compiling it first if
// this is its first use.
func (l *lazySchema) Validate(instance any) error {
	l.once.Do(func() {
		s := inputSchema(l.tool)
		if s == nil {
			l.err = fmt.Errorf("tool %q: stored input schema is missing", l.tool.GetName())
			return
		}
		l.sch, l.err = compileSchema(s.AsMap())
	})
	if l.err != nil {
		return l.err
	}
	return l.sch.Validate(instance)
}

// docOf converts a tool to what the index needs; schema is its input
// schema decoded (nil when it has none).
func docOf(t *tooldexv1.Tool, schema map[string]any) index.Doc {
	var params string
	if schema != nil {
		params = index.ParamText(schema)
	}
	return index.Doc{
		Name:        t.GetName(),
		Aliases:     t.GetAliases(),
		Description: t.GetDescription(),
		SearchHint:  t.GetSearchHint(),
		Params:      params,
		Core:        t.GetLoading() == tooldexv1.Loading_LOADING_CORE,
	}
}
