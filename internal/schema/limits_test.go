package schema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// enumSchema is an object whose property "items" is an array of strings
// from an n-value enum.
func enumSchema(n int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf("%q", fmt.Sprintf("value-%05d", i))
	}
	return `{"type":"object","properties":{"items":{"type":"array","items":{"type":"string","enum":[` + strings.Join(vals, ",") + `]}}}}`
}

func TestNewBounds(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string // substring of the error; "" means accepted
	}{
		{"plain", `{"type":"object","properties":{"a":{"type":"string"}}}`, ""},
		{"enum at the limit", enumSchema(DefaultLimits.MaxEnum), ""},
		{"enum past the limit", enumSchema(DefaultLimits.MaxEnum + 1), "enum has 2049 values, at most 2048"},
		{"short pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"^[a-z]{1,64}$"}}}`, ""},
		{"long pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"` + strings.Repeat("a", 1025) + `"}}}`, "pattern is 1025 bytes, at most 1024"},
		{"complex pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"` + strings.Repeat("(a|b){999}", 5) + `"}}}`, "instructions, at most 4096"},
		{"complex patternProperties", `{"type":"object","patternProperties":{"` + strings.Repeat("x{999}", 5) + `":{}}}`, "instructions, at most 4096"},
		{"self ref", `{"$ref":"#"}`, "$ref cycle"},
		{"ref pair", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "$ref cycle"},
		{"allOf cycle", `{"type":"object","allOf":[{"$ref":"#"}]}`, "$ref cycle"},
		{"anyOf cycle via defs", `{"type":"object","$defs":{"n":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/n"}]}},"properties":{"x":{"$ref":"#/$defs/n"}}}`, "$ref cycle"},
		{"tree is no cycle", `{"type":"object","$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"properties":{"root":{"$ref":"#/$defs/node"}}}`, ""},
		{"recursion through a property", `{"type":"object","properties":{"x":{"$ref":"#"}}}`, ""},
		{"shared subschema", `{"type":"object","$defs":{"s":{"type":"string"}},"allOf":[{"$ref":"#/$defs/s"},{"properties":{"a":{"$ref":"#/$defs/s"}}}]}`, ""},
	}
	for _, tt := range tests {
		_, err := New(decode(t, tt.schema), Limits{})
		var got string
		if err != nil {
			got = err.Error()
		}
		if tt.want == "" && err != nil || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: New = %v, want %q", tt.name, err, tt.want)
		}
		// Check says the same.
		if cerr := Check(decode(t, tt.schema)); (cerr == nil) != (err == nil) {
			t.Errorf("%s: Check = %v, New = %v", tt.name, cerr, err)
		}
	}
}

func TestNewTooManyNodes(t *testing.T) {
	var props []string
	for i := range 50 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"string"}`, i))
	}
	doc := decode(t, `{"type":"object","properties":{`+strings.Join(props, ",")+`}}`)
	if _, err := New(doc, Limits{MaxNodes: 50}); err == nil || !strings.Contains(err.Error(), "more than 50 subschemas") {
		t.Errorf("51 subschemas, MaxNodes 50: err = %v", err)
	}
	if _, err := New(doc, Limits{MaxNodes: 51}); err != nil {
		t.Errorf("51 subschemas, MaxNodes 51: err = %v", err)
	}
}

// items returns {"items": [n values]}, value-00000… when valid, else
// "bogus-…".
func items(n int, valid bool) map[string]any {
	vs := make([]any, n)
	for i := range vs {
		if valid {
			vs[i] = fmt.Sprintf("value-%05d", i%100)
		} else {
			vs[i] = fmt.Sprintf("bogus-%05d", i)
		}
	}
	return map[string]any{"items": vs}
}

// TestValidateBudget reproduces the rows: 8,000 invalid items
// against a 2,000-value enum (the server grew 713 MB) and 100,000 valid
// items against a large enum (34 s of CPU).
func TestValidateBudget(t *testing.T) {
	c, err := New(decode(t, enumSchema(2000)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Few invalid items: reported, truncated, counted.
	err = c.Validate(ctx, items(1000, false))
	var perr *ParamsError
	if !errors.As(err, &perr) {
		t.Fatalf("1,000 invalid items: err = %v, want a *ParamsError", err)
	}
	if got, want := len(perr.Violations), DefaultLimits.MaxViolations; got != want {
		t.Errorf("violations = %d, want %d", got, want)
	}
	if perr.Total != 1000 {
		t.Errorf("Total = %d, want 1000", perr.Total)
	}
	for _, v := range perr.Violations {
		if len(v.Description) > 200 {
			t.Errorf("violation %s renders %d bytes: %.80s…", v.Path, len(v.Description), v.Description)
		}
	}
	if vs := Violations(err); len(vs) != DefaultLimits.MaxViolations+1 || !strings.Contains(vs[len(vs)-1].Description, "980 more") {
		t.Errorf("Violations: %d, last %+v", len(vs), vs[len(vs)-1])
	}

	// Memory per invalid call stays bounded (the 713 MB).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_ = c.Validate(ctx, items(1000, false))
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 20<<20 {
		t.Errorf("one invalid call allocated %d bytes, want under 20 MiB", alloc)
	}

	// Past the budget: refused before the validator runs.
	for _, n := range []int{8000, 100000} {
		for _, valid := range []bool{true, false} {
			err := c.Validate(ctx, items(n, valid))
			if !errors.Is(err, ErrTooMuchWork) {
				t.Errorf("%d items (valid %v): err = %v, want ErrTooMuchWork", n, valid, err)
			}
		}
	}
	if err := c.Validate(ctx, items(1000, true)); err != nil {
		t.Errorf("1,000 valid items: %v", err)
	}
}

func TestValidateCanceled(t *testing.T) {
	c, err := New(decode(t, enumSchema(10)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Validate(ctx, items(3, false)); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err = %v, want context.Canceled", err)
	}
}

func TestMeasure(t *testing.T) {
	deep := any("x")
	for range MaxDepth {
		deep = []any{deep}
	}
	tests := []struct {
		name string
		give any
		want error
		size Size
	}{
		{"object", map[string]any{"ab": "cde", "n": 1.5}, nil, Size{Nodes: 3, StringBytes: 6, Depth: 2}},
		{"NaN", map[string]any{"n": math.NaN()}, ErrBadParams, Size{}},
		{"infinity", map[string]any{"n": []any{math.Inf(-1)}}, ErrBadParams, Size{}},
		{"bad UTF-8 value", map[string]any{"s": "a\xffb"}, ErrBadParams, Size{}},
		{"bad UTF-8 key", map[string]any{"\xfe": "x"}, ErrBadParams, Size{}},
		{"too deep", map[string]any{"d": deep}, ErrBadParams, Size{}},
	}
	for _, tt := range tests {
		got, err := Measure(tt.give)
		if !errors.Is(err, tt.want) || tt.want == nil && err != nil {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
			continue
		}
		if tt.want == nil && got != tt.size {
			t.Errorf("%s: size = %+v, want %+v", tt.name, got, tt.size)
		}
	}
}

// TestValidateNonFinite: numbers JSON cannot hold are refused whatever
// the schema says (a string enum let them through as "NaN").
func TestValidateNonFinite(t *testing.T) {
	c, err := New(decode(t, `{"type":"object","properties":{"u":{"enum":["NaN","Infinity"]}}}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		if err := c.Validate(context.Background(), map[string]any{"u": v}); !errors.Is(err, ErrBadParams) {
			t.Errorf("u = %v: err = %v, want ErrBadParams", v, err)
		}
	}
}

// FuzzNewValidate: whatever schema and parameters, New and Validate
// return (no panic, no endless loop), report at most MaxViolations
// violations, and a schema New accepts compiles with Compile.
func FuzzNewValidate(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string","pattern":"^a+$"}}}`, `{"a":"aaa"}`)
	f.Add(`{"$ref":"#"}`, `{}`)
	f.Add(`{"type":"object","properties":{"x":{"$ref":"#"}}}`, `{"x":{"x":{}}}`)
	f.Add(`{"type":"object","allOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"}]}}}`, `{}`)
	f.Add(enumSchema(5), `{"items":["value-00001","nope",1]}`)
	f.Add(`{"type":"object","patternProperties":{"(a{99}){9}":{"type":"integer"}}}`, `{"aaa":1}`)
	f.Fuzz(func(t *testing.T, schemaJSON, paramsJSON string) {
		var doc map[string]any
		if json.Unmarshal([]byte(schemaJSON), &doc) != nil {
			return
		}
		c, err := New(doc, Limits{WorkBudget: 1 << 16})
		if err != nil {
			return
		}
		if _, err := Compile(doc); err != nil {
			t.Fatalf("New accepted %s, Compile refuses it: %v", schemaJSON, err)
		}
		var v any
		if json.Unmarshal([]byte(paramsJSON), &v) != nil {
			return
		}
		err = c.Validate(context.Background(), v)
		var perr *ParamsError
		if errors.As(err, &perr) && (len(perr.Violations) > DefaultLimits.MaxViolations || perr.Total < len(perr.Violations)) {
			t.Fatalf("%d violations of %d reported", len(perr.Violations), perr.Total)
		}
	})
}

// FuzzPatternBound: a pattern the engine accepts compiles to at most
// MaxPatternInsts instructions and is at most MaxPatternBytes long.
func FuzzPatternBound(f *testing.F) {
	for _, s := range []string{`^[a-z]+$`, `(a|b){999}`, `x{999}x{999}`, strings.Repeat("a", 2000), `(?i)\pL{3,9}`} {
		f.Add(s)
	}
	l := DefaultLimits
	engine := patternEngine(l)
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := engine(s); err != nil {
			return
		}
		n, err := patternInsts(s, l)
		if err != nil || n > l.MaxPatternInsts || len(s) > l.MaxPatternBytes {
			t.Fatalf("accepted %q: %d instructions, err %v", s, n, err)
		}
	})
}

func TestMeasureNamesThePath(t *testing.T) {
	_, err := Measure(map[string]any{"a": []any{"x", map[string]any{"b": math.NaN()}}})
	if err == nil || !strings.Contains(err.Error(), "params.a[1].b is NaN") {
		t.Errorf("err = %v, want it to name params.a[1].b", err)
	}
}

// TestValidateSimpleAllocatesNothing: the bounds cost a valid call of a
// simple schema no allocation (the fast path's point).
func TestValidateSimpleAllocatesNothing(t *testing.T) {
	c, err := New(decode(t, `{"type":"object","properties":{"zone":{"type":"string"},"n":{"type":"integer"}},"required":["zone"]}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"zone": "Asia/Tokyo", "n": 3.0}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		if err := c.Validate(ctx, params); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Validate allocates %v times per call, want 0", n)
	}
}

// FuzzMeasureStruct: MeasureStruct(st) agrees with Measure(st.AsMap()),
// except that it sees NaN and infinities, which AsMap turns into the
// strings "NaN", "Infinity" and "-Infinity" (so a string enum let them
// pass and the host got numbers).
func FuzzMeasureStruct(f *testing.F) {
	f.Add(`{"a":[1,"x",{"b":true}],"c":null}`, 0.0)
	f.Add(`{"a":{"b":{"c":[[[]]]}}}`, math.Inf(1))
	f.Fuzz(func(t *testing.T, js string, x float64) {
		var m map[string]any
		if json.Unmarshal([]byte(js), &m) != nil || m == nil {
			return
		}
		st, err := structpb.NewStruct(m)
		if err != nil {
			return
		}
		st.Fields["x"] = structpb.NewNumberValue(x)
		got, gerr := MeasureStruct(st)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if !errors.Is(gerr, ErrBadParams) {
				t.Fatalf("x = %v: MeasureStruct = %v, want ErrBadParams", x, gerr)
			}
			return
		}
		want, werr := Measure(st.AsMap())
		if (gerr == nil) != (werr == nil) || gerr == nil && got != want {
			t.Fatalf("MeasureStruct = %+v, %v; Measure(AsMap) = %+v, %v", got, gerr, want, werr)
		}
	})
}
