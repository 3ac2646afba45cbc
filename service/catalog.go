package service

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/schema"
)

// How the catalog holds a tool.
//
// A google.protobuf.Struct tree costs several times the schema's JSON on the
// heap, and marshalling it again for every search result was most of a
// Search call's CPU. So the catalog keeps a tool's input_schema as the
// field's protobuf wire bytes (tag, length, the schema Struct marshalled
// deterministically), and responses carry a "light" tool: every field as
// registered except input_schema, whose wire bytes are the message's
// unknown fields. Marshalling a light tool writes those bytes back
// verbatim, so what goes on the wire decodes to exactly the registered tool
// (input_schema then follows loading in the byte order, which protobuf
// decoders accept: fields may come in any order). proto.Equal compares
// unknown fields byte for byte, so two light tools are equal when their
// registered definitions are (the Struct's map keys are sorted by the
// deterministic marshal).
//
// An entry does not keep a light tool either: a generated message is about
// 180 bytes of fields and internal state per tool, most of them empty.
// It keeps the fields every tool has (name, description, source, loading,
// the wire bytes) in its own 64-byte struct and one block, the rarely set
// ones in a Tool of their own (extra, nil for most tools), what is made
// after registration for few tools (host set, schema JSON, validator) in
// a state of its own (nil for most tools), and builds light tools per
// response (entry.lightInto; a response's tools in one allocation).
//
// In-process callers of the RPC methods get full tools (full); the gRPC
// handlers registered by RegisterDiscoveryService send light tools as they
// are.

// entry is one registered tool. Its fields are set by makeEntry and never
// modified afterwards, but for data, which a compaction may point at a
// copy of the same bytes (arena.go); what is made later (the host set, the
// schema's JSON, the validator) lives in its state. It is 64 bytes: the
// fields every tool has, a pointer to one block holding its texts and
// bytes, and lengths into it.
type entry struct {
	name string
	// data is the entry's block: the description (descLen bytes), the
	// parameter summary's recipe (sumLen bytes, see summary.go), then the light
	// tool's unknown fields (wireLen bytes): those the tool was registered
	// with, then input_schema's wire bytes. One block (see makeEntry),
	// usually packed into a chunk of the server's arena (arena.go), which
	// may move it (the only field written after makeEntry); nil when all
	// three are empty.
	data atomic.Pointer[byte]
	// source is interned (Server.sources).
	source *tooldexv1.ToolSource
	// extra holds the fields few tools set: search_hint, always_load,
	// annotations, aliases, and an input schema that could not be encoded
	// (see encodeSchema). It is nil when the tool sets none of them and
	// has no unknown fields of its own (so the unknown fields are the
	// schema's bytes alone).
	extra *tooldexv1.Tool
	// state is made by the first use of what it holds (entry.st); nil
	// for most tools.
	state atomic.Pointer[entryState]
	// sumLen and wireLen are the lengths of the summary's recipe and the
	// unknown fields, descLen the description's; lineOff and lineLen place the
	// description's first line (oneLine) in it. Registration caps
	// descriptions at MaxDescription bytes, which 16 bits hold.
	sumLen, wireLen           uint32
	descLen, lineOff, lineLen uint16
	// loading is the tool's tooldexv1.Loading (entry.load).
	loading uint8
	flags   entryFlags
}

// entryFlags are an entry's yes-or-no facts.
type entryFlags uint8

const (
	// flagLineCut says the description's first line was cut (rendered with
	// "…" after it).
	flagLineCut entryFlags = 1 << iota
	// flagHasSchema says the tool has an input schema: Execute validates
	// parameters against it.
	flagHasSchema
	// flagSummaryText says the block holds the parameter summary as text,
	// not as a recipe: the tool's schema could not be encoded (see
	// encodeSchema), so there are no stored bytes to read names from.
	flagSummaryText
)

func (e *entry) lineCut() bool   { return e.flags&flagLineCut != 0 }
func (e *entry) hasSchema() bool { return e.flags&flagHasSchema != 0 }

// entryState is what an entry makes after registration, for few tools.
type entryState struct {
	// hosts are the host sessions serving the tool, under Server.mu. A
	// tool a host registered (source origin HOST) leaves the catalog with
	// its last host; one a frontend or catalog registered stays.
	hosts map[string]bool
	// schemaText is the input schema as compact JSON ("" when the tool has
	// none), for select: and Discover text and for the JSON schema view
	// (SCHEMA_VIEW_JSON, view.go). It is rendered from the stored wire
	// bytes the first time one of them lists the tool, then kept: only
	// tools that are asked for pay for a copy, and a replaced tool is a
	// new entry, so the copy goes with the old one.
	schemaText atomic.Pointer[string]
	// check is the compiled validator and the fast-path checker, made by
	// the tool's first Execute (entry.checker).
	check lazySchema
}

// Entry offsets into the description are 16 bits: this fails to compile
// if registration accepts longer descriptions.
const _ = uint16(MaxDescription)

// An entry fits a 64-byte size class: this fails to compile if it grows
// past it.
var _ [64 - unsafe.Sizeof(entry{})]byte

// st returns the entry's state, making it on first use.
func (e *entry) st() *entryState {
	if p := e.state.Load(); p != nil {
		return p
	}
	p := &entryState{}
	if e.state.CompareAndSwap(nil, p) {
		return p
	}
	return e.state.Load()
}

// hosts returns the host sessions serving the tool (nil when none). The
// caller holds Server.mu.
func (e *entry) hosts() map[string]bool {
	if p := e.state.Load(); p != nil {
		return p.hosts
	}
	return nil
}

// takeHosts gives e the host sessions serving old, the entry it replaces.
// The caller holds Server.mu.
func (e *entry) takeHosts(old *entry) {
	if h := old.hosts(); h != nil {
		e.st().hosts = h
	}
}

// load returns the tool's loading.
func (e *entry) load() tooldexv1.Loading { return tooldexv1.Loading(e.loading) }

func (e *entry) description() string { return unsafe.String(e.data.Load(), int(e.descLen)) }

// blockLen is the length of the entry's block (see entry.data).
func (e *entry) blockLen() int { return int(e.descLen) + int(e.sumLen) + int(e.wireLen) }

// block returns the entry's block.
func (e *entry) block() []byte {
	p := e.data.Load()
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, e.blockLen())
}

// hasParams reports whether the tool's parameter summary is not empty.
func (e *entry) hasParams() bool { return e.sumLen > 0 }

// paramsSize estimates the parameter summary's length (for a buffer's
// capacity): a recipe's item of 3 or 4 bytes renders as a name, a type and
// up to 16 bytes more.
func (e *entry) paramsSize() int {
	if e.flags&flagSummaryText != 0 {
		return int(e.sumLen)
	}
	return 8 * int(e.sumLen)
}

// appendParams appends the parameter summary rendered for Search
// (ParamSummary) to b.
func (e *entry) appendParams(b []byte) []byte {
	if e.sumLen == 0 {
		return b
	}
	block := e.block()
	sum := int(e.descLen) + int(e.sumLen)
	if e.flags&flagSummaryText != 0 {
		return append(b, block[e.descLen:sum]...)
	}
	return appendSummary(b, block[e.descLen:sum], block[sum:])
}

// wire returns the light tool's unknown fields (see entry.data). Its
// capacity is its length, and it ends the block, so an append to it (proto
// never does one on a message it marshals) reallocates instead of writing
// past it.
func (e *entry) wire() []byte {
	if e.wireLen == 0 {
		return nil
	}
	return e.block()[int(e.descLen)+int(e.sumLen):]
}

func (e *entry) searchHint() string { return e.extra.GetSearchHint() }
func (e *entry) aliases() []string  { return e.extra.GetAliases() }
func (e *entry) idempotent() bool   { return e.extra.GetAnnotations().GetIdempotent() }

// hostOwned reports whether the tool came from a tool host.
func (e *entry) hostOwned() bool { return e.source.GetOrigin() == tooldexv1.Origin_ORIGIN_HOST }

// lineText is the description's first line as Search shows it, without
// the "…" of a cut one (see oneLineSpan).
func (e *entry) lineText() string { return e.description()[e.lineOff : e.lineOff+e.lineLen] }

// oneLineLen bounds the length of the first line as Search shows it.
func (e *entry) oneLineLen() int { return int(e.lineLen) + len(ellipsis) }

// appendOneLine appends the description's first line as Search shows it.
func (e *entry) appendOneLine(b []byte) []byte {
	b = append(b, e.lineText()...)
	if e.lineCut() {
		b = append(b, ellipsis...)
	}
	return b
}

// oneLine returns the description's first line as oneLine renders it.
func (e *entry) oneLine() string {
	if e.lineCut() {
		return e.lineText() + ellipsis
	}
	return e.lineText()
}

// lightInto sets t, a zero Tool, to the entry's light tool (see above);
// withSchema false leaves input_schema out. t shares the entry's strings,
// messages and bytes: it is only to be marshalled or copied.
func (e *entry) lightInto(t *tooldexv1.Tool, withSchema bool) {
	t.Name = e.name
	t.Description = e.description()
	t.Source = e.source
	t.Loading = e.load()
	if x := e.extra; x != nil {
		t.SearchHint = x.SearchHint
		t.AlwaysLoad = x.AlwaysLoad
		t.Annotations = x.Annotations
		t.Aliases = x.Aliases
		setMCPFields(t, x, false)
		if withSchema {
			t.InputSchema = x.InputSchema
		}
	}
	u := e.wire()
	if !withSchema && len(u) > 0 {
		u = nil
		if e.extra != nil { // the tool's own unknown fields may come first
			u = withoutSchema(e.wire())
		}
	}
	if len(u) > 0 {
		t.ProtoReflect().SetUnknown(u)
	}
}

// light returns the entry's light tool (see lightInto).
func (e *entry) light() *tooldexv1.Tool {
	t := &tooldexv1.Tool{}
	e.lightInto(t, true)
	return t
}

// full returns the tool as registered, with its input schema as a Struct.
// The caller owns the result.
func (e *entry) full() *tooldexv1.Tool {
	return fullTool(e.light())
}

// inputSchema decodes the entry's input schema; nil when it has none.
func (e *entry) inputSchema() *structpb.Struct {
	if s := e.extra.GetInputSchema(); s != nil {
		return s // kept as a Struct (see encodeSchema)
	}
	return decodeSchema(e.name, e.wire())
}

// schemaJSON returns the tool's input schema as compact JSON, rendered
// once; "" when the tool has none.
func (e *entry) schemaJSON() string {
	st := e.st()
	if p := st.schemaText.Load(); p != nil {
		return *p
	}
	var js string
	if s := e.inputSchema(); s != nil {
		js = schemaJSON(s)
	}
	st.schemaText.Store(&js)
	return js
}

// sameDefinition reports whether two entries define the same tool,
// whoever registered them (source and loading aside).
func (e *entry) sameDefinition(o *entry) bool {
	return e.name == o.name && e.description() == o.description() && string(e.wire()) == string(o.wire()) &&
		proto.Equal(e.extraOrZero(), o.extraOrZero())
}

// equal reports whether two entries hold the same light tool.
func (e *entry) equal(o *entry) bool {
	return e.sameDefinition(o) && e.loading == o.loading && proto.Equal(e.source, o.source)
}

var zeroTool = &tooldexv1.Tool{}

func (e *entry) extraOrZero() *tooldexv1.Tool {
	if e.extra == nil {
		return zeroTool
	}
	return e.extra
}

// inputSchemaField is Tool.input_schema's field number.
const inputSchemaField = 4

// prepared is what registration derives from a valid tool before building
// its entry (prepareTool): the work that makes garbage, done for a whole
// batch before anything the catalog keeps is allocated (buildEntry), so
// that kept objects are not interleaved with the garbage (resident memory,
// docs/BENCHMARKS.md).
type prepared struct {
	// paramText is the index's parameter text (index.ParamText).
	paramText string
	// summary is the parameter summary for Search: its recipe
	// (appendRecipe), or its text (ParamSummary) when the schema could not
	// be encoded (summaryText).
	summary     string
	summaryText bool
	// wireFrom and wireTo place input_schema's wire bytes in the buffer
	// prepareTool appended them to; wireFrom == wireTo when the tool has
	// no schema or it cannot be encoded (see encodeSchema).
	wireFrom, wireTo int
	// hasSchema says the tool has an input schema.
	hasSchema bool
}

// wire returns input_schema's wire bytes in buf (nil when none).
func (p *prepared) wire(buf []byte) []byte {
	if p.wireFrom == p.wireTo {
		return nil
	}
	return buf[p.wireFrom:p.wireTo]
}

// prepareTool prepares a valid tool; doc is its input schema decoded (nil
// when it has none). The schema's wire bytes are appended to buf, a
// scratch buffer (one per batch).
func prepareTool(t *tooldexv1.Tool, doc map[string]any, buf []byte) (prepared, []byte) {
	var p prepared
	s := t.GetInputSchema()
	if s == nil {
		return p, buf
	}
	p.hasSchema = true
	if doc == nil {
		doc = s.AsMap()
	}
	p.paramText = index.ParamText(doc)
	p.wireFrom = len(buf)
	buf = encodeSchema(buf, s)
	p.wireTo = len(buf)
	if w := p.wire(buf); w != nil {
		_, _, n := protowire.ConsumeTag(w)
		_, m := protowire.ConsumeVarint(w[n:])
		p.summary = string(appendRecipe(nil, w[n+m:]))
	} else {
		p.summary, p.summaryText = ParamSummary(s), true
	}
	return p, buf
}

// encodeSchema appends input_schema's wire bytes (tag, length, the Struct
// marshalled deterministically) to buf, or nothing for a schema that cannot
// be encoded (invalid UTF-8 in a string, which only an in-process caller
// can send: gRPC refuses such messages): the catalog keeps that one as a
// Struct.
func encodeSchema(buf []byte, s *structpb.Struct) []byte {
	opts := proto.MarshalOptions{Deterministic: true}
	n := opts.Size(s)
	start := len(buf)
	buf = protowire.AppendTag(buf, inputSchemaField, protowire.BytesType)
	buf = protowire.AppendVarint(buf, uint64(n))
	body := len(buf)
	buf, err := opts.MarshalAppend(buf, s)
	if err != nil || len(buf)-body != n {
		return buf[:start]
	}
	return buf
}

// makeEntry allocates the catalog entry of a valid tool t from what
// prepareTool derived into buf. It allocates only what the entry keeps; t
// is not kept, nor is anything of it shared but strings of rarely set
// fields (search hint, aliases).
func makeEntry(a *blockArena, t *tooldexv1.Tool, p prepared, buf []byte, src *tooldexv1.ToolSource, loading tooldexv1.Loading) *entry {
	wire := p.wire(buf)
	desc := t.GetDescription()
	unknown := t.ProtoReflect().GetUnknown()
	e := &entry{
		name:    strings.Clone(t.GetName()), // not the request's: it sits among garbage
		source:  src,
		loading: uint8(loading),
		descLen: uint16(len(desc)),
		sumLen:  uint32(len(p.summary)),
		wireLen: uint32(len(unknown) + len(wire)),
	}
	var cut bool
	e.lineOff, e.lineLen, cut = oneLineSpan(desc)
	if cut {
		e.flags |= flagLineCut
	}
	if p.hasSchema {
		e.flags |= flagHasSchema
	}
	if p.summaryText {
		e.flags |= flagSummaryText
	}
	// The description, the summary and the unknown fields in one block
	// from the arena: they live and die together. The text part is read as
	// a string (unsafe.String): nothing writes to the block after this
	// function.
	if n := len(desc) + len(p.summary) + int(e.wireLen); n > 0 {
		block := a.alloc(n)[:0]
		block = append(block, desc...)
		block = append(block, p.summary...)
		block = append(block, unknown...)
		block = append(block, wire...)
		e.data.Store(&block[0])
	}
	if t.GetSearchHint() != "" || t.GetAlwaysLoad() || t.GetAnnotations() != nil || len(t.GetAliases()) > 0 ||
		len(unknown) > 0 || p.hasSchema && wire == nil || hasMCPFields(t) {
		x := &tooldexv1.Tool{
			SearchHint:  t.GetSearchHint(),
			AlwaysLoad:  t.GetAlwaysLoad(),
			Annotations: cloneOrNil(t.GetAnnotations()),
			Aliases:     slices.Clone(t.GetAliases()),
		}
		if len(x.Aliases) == 0 {
			x.Aliases = nil
		}
		setMCPFields(x, t, true)
		if p.hasSchema && wire == nil {
			x.InputSchema = proto.CloneOf(t.GetInputSchema())
		}
		e.extra = x
	}
	return e
}

func cloneOrNil[M proto.Message](m M) M {
	if m.ProtoReflect().IsValid() {
		return proto.CloneOf(m)
	}
	return m
}

// indexDoc is what the index needs of an entry; paramText is its input
// schema's parameter text (index.ParamText).
func (e *entry) indexDoc(paramText string) index.Doc {
	return index.Doc{
		Name:        e.name,
		Aliases:     e.aliases(),
		Description: e.description(),
		SearchHint:  e.searchHint(),
		Params:      paramText,
		Core:        e.load() == tooldexv1.Loading_LOADING_CORE,
	}
}

func fullTool(light *tooldexv1.Tool) *tooldexv1.Tool {
	t := proto.CloneOf(light)
	if t.InputSchema == nil {
		t.InputSchema = decodeSchema(light.GetName(), light.ProtoReflect().GetUnknown())
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

// decodeSchema decodes the input schema in a light tool's unknown fields;
// nil when there is none.
func decodeSchema(name string, raw []byte) *structpb.Struct {
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
				panic(fmt.Sprintf("tooldex: decode stored schema of %q: %v", name, err)) // it was encoded here
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

// source returns the stored source of a tool registered with src (nil
// when absent) by origin: origin (with id, when not empty) replaces an
// unset origin, and a host's always. Sources without unknown fields are
// shared; src is not kept (a new one is made when none is shared yet).
func (ss *sources) source(src *tooldexv1.ToolSource, origin tooldexv1.Origin, id string) *tooldexv1.ToolSource {
	o, sid := src.GetOrigin(), src.GetId()
	set := o == tooldexv1.Origin_ORIGIN_UNSPECIFIED || origin == tooldexv1.Origin_ORIGIN_HOST
	if set {
		o = origin
		if id != "" {
			sid = id
		}
	}
	if len(src.ProtoReflect().GetUnknown()) > 0 {
		c := proto.CloneOf(src)
		c.Origin, c.Id = o, sid
		return c
	}
	if src == nil && !set {
		return nil
	}
	k := sourceKey{o, sid}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if v := ss.m[k]; v != nil {
		return v
	}
	v := &tooldexv1.ToolSource{Origin: o, Id: strings.Clone(sid)}
	if ss.m == nil {
		ss.m = make(map[sourceKey]*tooldexv1.ToolSource)
	}
	if len(ss.m) < 4096 { // a bound: sources are few, ids should not be
		ss.m[sourceKey{o, v.Id}] = v
	}
	return v
}

// lazySchema is a tool's input schema compiled, and its fast-path checker,
// made on first use. Registration compiles every schema once to reject
// invalid ones, then drops the result: a compiled validator costs many
// times the schema's size, and Execute only needs it for schemas the fast
// path (schema.Fast) does not handle or for parameters the fast path does
// not accept.
type lazySchema struct {
	once sync.Once
	sch  *jsonschema.Schema
	err  error

	// fast is the fast-path checker (nil unless the schema is simple),
	// built by the first Execute: most tools are searched, few executed.
	fastOnce sync.Once
	fast     *schema.Fast
}

// checker returns the entry's lazySchema; the entry must have a schema.
func (e *entry) checker() *lazySchema { return &e.st().check }

// fastChecker returns the schema's fast-path checker, building it on first
// use; nil when the schema is not simple enough for one.
func (l *lazySchema) fastChecker(e *entry) *schema.Fast {
	l.fastOnce.Do(func() {
		if s := e.inputSchema(); s != nil {
			l.fast = schema.NewFast(s.AsMap())
		}
	})
	return l.fast
}

// Validate validates instance against e's schema, compiling it first if
// this is its first use.
func (l *lazySchema) Validate(e *entry, instance any) error {
	l.once.Do(func() {
		s := e.inputSchema()
		if s == nil {
			l.err = fmt.Errorf("tool %q: stored input schema is missing", e.name)
			return
		}
		l.sch, l.err = schema.Compile(s.AsMap())
	})
	if l.err != nil {
		return l.err
	}
	return l.sch.Validate(instance)
}
