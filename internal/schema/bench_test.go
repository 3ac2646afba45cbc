package schema

import (
	"context"
	"errors"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// renderAll is the validation path before the bounds: the library, then
// every failing leaf rendered (each enum violation writes the whole enum).
func renderAll(sch *jsonschema.Schema, v any) int {
	err := sch.Validate(v)
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return 0
	}
	n := 0
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			n += len(e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(verr)
	return n
}

// BenchmarkEnumViolations: the row, 2,000-value enum, invalid
// items (4,000: the most the work budget lets through), before and after.
func BenchmarkEnumViolations(b *testing.B) {
	doc := decode(b, enumSchema(2000))
	c, err := New(doc, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	v := items(4000, false)
	b.Run("render-every-leaf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			renderAll(c.Schema(), v)
		}
	})
	b.Run("Compiled.Validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = c.Validate(context.Background(), v)
		}
	})
	big := items(100000, true)
	b.Run("100k-valid-items/library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = c.Schema().Validate(big)
		}
	})
	b.Run("100k-valid-items/Compiled.Validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = c.Validate(context.Background(), big)
		}
	})
}
