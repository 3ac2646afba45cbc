package schema

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/tooldex/tooldex/internal/textcut"
	"google.golang.org/protobuf/types/known/structpb"
)

// Limits bound what a registered schema may hold and how much work
// validating one call's parameters may take. The zero value of a field
// means its default (DefaultLimits).
type Limits struct {
	// MaxEnum bounds the values of one enum.
	MaxEnum int
	// MaxPatternBytes bounds one pattern (pattern, patternProperties).
	MaxPatternBytes int
	// MaxPatternInsts bounds one pattern's compiled program: Go's regexp
	// runs in time linear in the input but proportional to the program,
	// and a short pattern (a{1000}{1000} is refused by Go, but a{999} 20
	// times is not) can compile to a large one.
	MaxPatternInsts int
	// MaxNodes bounds the subschemas of a compiled schema.
	MaxNodes int
	// WorkBudget bounds the validation work of one call, in units of one
	// instance value checked against one subschema or enum value, or one
	// byte of a string run through one pattern instruction. Parameters
	// whose bound exceeds it are refused before any is spent
	// (ErrTooMuchWork).
	WorkBudget int64
	// MaxViolations bounds the violations reported for one call; the rest
	// are counted.
	MaxViolations int
}

// DefaultLimits are the limits in force when a field is zero.
var DefaultLimits = Limits{
	MaxEnum:         2048,
	MaxPatternBytes: 1024,
	MaxPatternInsts: 4096,
	MaxNodes:        10000,
	WorkBudget:      8 << 20,
	MaxViolations:   20,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxEnum <= 0 {
		l.MaxEnum = d.MaxEnum
	}
	if l.MaxPatternBytes <= 0 {
		l.MaxPatternBytes = d.MaxPatternBytes
	}
	if l.MaxPatternInsts <= 0 {
		l.MaxPatternInsts = d.MaxPatternInsts
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = d.MaxNodes
	}
	if l.WorkBudget <= 0 {
		l.WorkBudget = d.WorkBudget
	}
	if l.MaxViolations <= 0 {
		l.MaxViolations = d.MaxViolations
	}
	return l
}

// Errors of parameter checks; test with errors.Is.
var (
	// ErrTooMuchWork: validating the parameters could take more than the
	// work budget.
	ErrTooMuchWork = errors.New("validating the parameters would take too much work")
	// ErrBadParams: the parameters hold a value JSON cannot (NaN, an
	// infinity), invalid UTF-8, or nest too deeply.
	ErrBadParams = errors.New("parameters hold a value a tool cannot receive")
)

// patternEngine returns the regexp engine of a compiler bounded by l:
// patterns longer than MaxPatternBytes or compiling to more than
// MaxPatternInsts instructions are refused when the schema compiles.
func patternEngine(l Limits) jsonschema.RegexpEngine {
	return func(s string) (jsonschema.Regexp, error) {
		if _, err := patternInsts(s, l); err != nil {
			return nil, err
		}
		return regexp.Compile(s)
	}
}

// patternInsts returns the size of s's compiled program, or why s is
// refused.
func patternInsts(s string, l Limits) (int, error) {
	if len(s) > l.MaxPatternBytes {
		return 0, fmt.Errorf("pattern is %d bytes, at most %d", len(s), l.MaxPatternBytes)
	}
	re, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		return 0, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, err
	}
	if n := len(prog.Inst); n > l.MaxPatternInsts {
		return 0, fmt.Errorf("pattern %.40q compiles to %d instructions, at most %d (simplify its repetitions)", s, n, l.MaxPatternInsts)
	}
	return len(prog.Inst), nil
}

// cost is what a compiled schema costs to validate against, per value.
type cost struct {
	nodes   int   // distinct subschemas
	perNode int64 // work per instance value: subschemas + enum values
	perByte int64 // work per string byte: pattern instructions + 1
}

// inPlace returns the subschemas that apply to the same instance as s
// (a cycle among them never ends).
func inPlace(s *jsonschema.Schema) []*jsonschema.Schema {
	out := make([]*jsonschema.Schema, 0, 4)
	add := func(x *jsonschema.Schema) {
		if x != nil {
			out = append(out, x)
		}
	}
	add(s.Ref)
	add(s.RecursiveRef)
	if s.DynamicRef != nil {
		add(s.DynamicRef.Ref)
	}
	add(s.Not)
	add(s.If)
	add(s.Then)
	add(s.Else)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, x := range s.DependentSchemas {
		add(x)
	}
	for _, d := range s.Dependencies {
		if x, ok := d.(*jsonschema.Schema); ok {
			add(x)
		}
	}
	return out
}

// children returns the subschemas that apply to s's instance's members.
func children(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(x any) {
		if x, ok := x.(*jsonschema.Schema); ok && x != nil {
			out = append(out, x)
		}
	}
	add(s.PropertyNames)
	for _, x := range s.Properties {
		add(x)
	}
	for _, x := range s.PatternProperties {
		add(x)
	}
	add(s.AdditionalProperties)
	add(s.UnevaluatedProperties)
	add(s.Contains)
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		add(it)
	case []*jsonschema.Schema:
		for _, x := range it {
			add(x)
		}
	}
	add(s.AdditionalItems)
	for _, x := range s.PrefixItems {
		add(x)
	}
	add(s.Items2020)
	add(s.UnevaluatedItems)
	add(s.ContentSchema)
	return out
}

// measure walks every subschema of root once: it refuses a cycle of
// references that never moves into the instance ($ref to itself, or
// through allOf, anyOf, not…), which the library would accept and then
// fail every call on, and enums and schemas past l; it returns the
// schema's cost.
func measure(root *jsonschema.Schema, l Limits) (cost, error) {
	c := cost{perByte: 1}
	seen := map[*jsonschema.Schema]bool{root: true}
	queue := []*jsonschema.Schema{root}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		c.nodes++
		if c.nodes > l.MaxNodes {
			return c, fmt.Errorf("has more than %d subschemas", l.MaxNodes)
		}
		c.perNode++
		if s.Enum != nil {
			if n := len(s.Enum.Values); n > l.MaxEnum {
				return c, fmt.Errorf("%s: enum has %d values, at most %d", s.Location, n, l.MaxEnum)
			}
			c.perNode += int64(len(s.Enum.Values))
		}
		if s.Pattern != nil {
			n, err := patternInsts(s.Pattern.String(), l)
			if err != nil {
				return c, err
			}
			c.perByte += int64(n)
		}
		for re := range s.PatternProperties {
			n, err := patternInsts(re.String(), l)
			if err != nil {
				return c, err
			}
			c.perByte += int64(n)
		}
		for _, x := range append(inPlace(s), children(s)...) {
			if !seen[x] {
				seen[x] = true
				queue = append(queue, x)
			}
		}
	}
	// In-place edges only: members are other instances, so a path through
	// them that comes back (a tree schema) is no cycle.
	const (
		white = iota
		grey  // on the path being walked
		black // no cycle from here
	)
	color := make(map[*jsonschema.Schema]int, len(seen))
	var visit func(s *jsonschema.Schema) error
	visit = func(s *jsonschema.Schema) error {
		switch color[s] {
		case grey:
			return fmt.Errorf("$ref cycle: %s refers back to itself without descending into a property or item, so every call would fail", s.Location)
		case black:
			return nil
		}
		color[s] = grey
		for _, x := range inPlace(s) {
			if err := visit(x); err != nil {
				return err
			}
		}
		color[s] = black
		return nil
	}
	for s := range seen {
		if err := visit(s); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Compiled is a checked, compiled input schema with the cost of validating
// against it. Create it with New; its methods are safe for concurrent use.
type Compiled struct {
	sch  *jsonschema.Schema
	fast *Fast
	cost cost
	lim  Limits
}

// New checks doc against lim (zero fields: DefaultLimits) as Check does
// and compiles it, with its fast path. Do it before taking any lock:
// compiling a large schema takes milliseconds.
func New(doc map[string]any, lim Limits) (*Compiled, error) {
	lim = lim.withDefaults()
	if err := checkDoc(doc, lim); err != nil {
		return nil, err
	}
	sch, err := compile(doc, lim)
	if err != nil {
		return nil, err
	}
	c, err := measure(sch, lim)
	if err != nil {
		return nil, err
	}
	return &Compiled{sch: sch, fast: NewFast(doc), cost: c, lim: lim}, nil
}

// Schema returns the compiled schema.
func (c *Compiled) Schema() *jsonschema.Schema { return c.sch }

// Size describes decoded parameters (Measure).
type Size struct {
	// Nodes counts values (objects, arrays and scalars), StringBytes the
	// bytes of strings and object keys.
	Nodes, StringBytes int64
	Depth              int
}

// Measure walks decoded parameters (a JSON value as encoding/json or
// structpb's AsMap decode it): it returns their size, or an error wrapping
// ErrBadParams naming the first value no tool can receive: a number JSON
// cannot hold (NaN, infinities), a string or key that is not UTF-8, or
// nesting deeper than MaxDepth.
func Measure(v any) (Size, error) {
	var sz Size
	if b := measure1(v, 1, &sz); b != nil {
		// The path was collected leaf first.
		slices.Reverse(b.path)
		return sz, fmt.Errorf("%w: %s %s", ErrBadParams, jsonPath(b.path), b.why)
	}
	return sz, nil
}

// badValue is what Measure found wrong, and where (built on the way
// back up, so a walk that finds nothing builds no path).
type badValue struct {
	path []string
	why  string
}

func measure1(v any, depth int, sz *Size) *badValue {
	sz.Nodes++
	if depth > MaxDepth {
		return &badValue{why: fmt.Sprintf("nests more than %d levels deep", MaxDepth)}
	}
	sz.Depth = max(sz.Depth, depth)
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &badValue{why: fmt.Sprintf("is %v, which JSON cannot represent", v)}
		}
	case string:
		sz.StringBytes += int64(len(v))
		if !utf8.ValidString(v) {
			return &badValue{why: "is not valid UTF-8"}
		}
	case map[string]any:
		for k, e := range v {
			sz.StringBytes += int64(len(k))
			if !utf8.ValidString(k) {
				return &badValue{why: "has a key that is not valid UTF-8"}
			}
			if b := measure1(e, depth+1, sz); b != nil {
				b.path = append(b.path, k)
				return b
			}
		}
	case []any:
		for i, e := range v {
			if b := measure1(e, depth+1, sz); b != nil {
				b.path = append(b.path, strconv.Itoa(i))
				return b
			}
		}
	}
	return nil
}

// MeasureStruct is Measure for parameters that came as a Struct, read in
// place (no AsMap). Call it on every Execute's Struct params, with or
// without a schema: a Struct can hold NaN and infinities, which AsMap
// turns into the strings "NaN", "Infinity" and "-Infinity" (so they pass
// a string enum, and Measure after AsMap cannot see them) while the host
// receives numbers JSON cannot hold. Otherwise it reports what
// Measure(st.AsMap()) does.
func MeasureStruct(st *structpb.Struct) (Size, error) {
	var sz Size
	if b := measureFields(st.GetFields(), 1, &sz); b != nil {
		slices.Reverse(b.path)
		return sz, fmt.Errorf("%w: %s %s", ErrBadParams, jsonPath(b.path), b.why)
	}
	return sz, nil
}

func measureFields(fields map[string]*structpb.Value, depth int, sz *Size) *badValue {
	sz.Nodes++
	if depth > MaxDepth {
		return &badValue{why: fmt.Sprintf("nests more than %d levels deep", MaxDepth)}
	}
	sz.Depth = max(sz.Depth, depth)
	for k, e := range fields {
		sz.StringBytes += int64(len(k))
		if !utf8.ValidString(k) {
			return &badValue{why: "has a key that is not valid UTF-8"}
		}
		if b := measureValue(e, depth+1, sz); b != nil {
			b.path = append(b.path, k)
			return b
		}
	}
	return nil
}

func measureValue(v *structpb.Value, depth int, sz *Size) *badValue {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StructValue:
		return measureFields(k.StructValue.GetFields(), depth, sz)
	case *structpb.Value_ListValue:
		sz.Nodes++
		if depth > MaxDepth {
			return &badValue{why: fmt.Sprintf("nests more than %d levels deep", MaxDepth)}
		}
		sz.Depth = max(sz.Depth, depth)
		for i, e := range k.ListValue.GetValues() {
			if b := measureValue(e, depth+1, sz); b != nil {
				b.path = append(b.path, strconv.Itoa(i))
				return b
			}
		}
		return nil
	case *structpb.Value_NumberValue:
		sz.Nodes++
		if f := k.NumberValue; math.IsNaN(f) || math.IsInf(f, 0) {
			return &badValue{why: fmt.Sprintf("is %v, which JSON cannot represent", f)}
		}
	case *structpb.Value_StringValue:
		sz.Nodes++
		sz.StringBytes += int64(len(k.StringValue))
		if !utf8.ValidString(k.StringValue) {
			return &badValue{why: "is not valid UTF-8"}
		}
	default:
		sz.Nodes++
	}
	if depth > MaxDepth {
		return &badValue{why: fmt.Sprintf("nests more than %d levels deep", MaxDepth)}
	}
	sz.Depth = max(sz.Depth, depth)
	return nil
}

// Work returns the bound on the work of validating parameters of size sz
// against c, in WorkBudget's units.
func (c *Compiled) Work(sz Size) int64 {
	return sat(sat(sz.Nodes, c.cost.perNode), 1) + sat(sz.StringBytes, c.cost.perByte)
}

// sat multiplies without overflow.
func sat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// ParamsError lists how parameters fail their schema: at most
// Limits.MaxViolations violations, sorted by path, of Total.
type ParamsError struct {
	Violations []Violation
	Total      int
}

func (e *ParamsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "params do not match the tool's input schema (%d violations)", e.Total)
	for i, v := range e.Violations {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(v.Path + ": " + v.Description)
	}
	if n := e.Total - len(e.Violations); n > 0 {
		fmt.Fprintf(&b, "; and %d more", n)
	}
	return b.String()
}

// Validate validates decoded parameters against c, within the work
// budget: cheap checks first (Measure, the budget, the fast path), then
// the full validator. Errors wrap ErrBadParams or ErrTooMuchWork, are a
// *ParamsError (violations, truncated), or are ctx's error: a caller who
// left is not worked for.
func (c *Compiled) Validate(ctx context.Context, instance any) error {
	sz, err := Measure(instance)
	if err != nil {
		return err
	}
	if w := c.Work(sz); w > c.lim.WorkBudget {
		return fmt.Errorf("%w: %d values and %d string bytes against this schema bound %d units of work, at most %d; send smaller parameters", ErrTooMuchWork, sz.Nodes, sz.StringBytes, w, c.lim.WorkBudget)
	}
	if c.fast != nil && c.fast.Valid(instance) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.sch.Validate(instance); err != nil {
		all := violations(err)
		n := min(len(all), c.lim.MaxViolations)
		vs := make([]Violation, n)
		for i := range n {
			vs[i] = all[i].render()
		}
		return &ParamsError{Violations: vs, Total: len(all)}
	}
	return nil
}

// leaf is a violation not yet rendered: rendering an enum's violation
// writes the whole enum, so only the ones reported are.
type leaf struct {
	path string
	kind jsonschema.ErrorKind
}

// render describes l; an enum of more than maxEnumShown values is
// summarised.
func (l leaf) render() Violation {
	const maxEnumShown = 10
	if e, ok := l.kind.(*kind.Enum); ok && len(e.Want) > maxEnumShown {
		return Violation{Path: l.path, Description: fmt.Sprintf("value must be one of the %d values of the enum (the first: %s)", len(e.Want), short(e.Want[:3]))}
	}
	d := l.kind.LocalizedString(printer)
	if c, cut := textcut.Prefix(d, 512); cut {
		d = c + "…"
	}
	return Violation{Path: l.path, Description: d}
}

func short(vs []any) string {
	s := ""
	for i, v := range vs {
		if i > 0 {
			s += ", "
		}
		t := fmt.Sprintf("%q", fmt.Sprint(v))
		if len(t) > 40 {
			t = t[:40] + "…"
		}
		s += t
	}
	return s
}
