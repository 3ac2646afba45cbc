package limit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	tests := []struct {
		name string
		js   string
		want error // nil, or the type's zero value
	}{
		{"small", `{"a":[1,2,"x"],"b":{"c":null}}`, nil},
		{"at the value bound", `[` + strings.TrimSuffix(strings.Repeat("0,", MaxParamsValues-1), ",") + `]`, nil},
		{"past the value bound", `[` + strings.TrimSuffix(strings.Repeat("0,", MaxParamsValues), ",") + `]`, &CountError{}},
		{"3 MiB of zeros", `{"a":[` + strings.TrimSuffix(strings.Repeat("0,", 3<<19), ",") + `]}`, &CountError{}},
		{"at the depth bound", strings.Repeat("[", MaxParamsDepth) + strings.Repeat("]", MaxParamsDepth), nil},
		{"past the depth bound", strings.Repeat("[", MaxParamsDepth+1) + strings.Repeat("]", MaxParamsDepth+1), &DepthError{}},
		{"brackets in strings", `{"a":"[[[[{{{{\"]]]"}`, nil},
		{"too long", `"` + strings.Repeat("x", MaxParamsBytes) + `"`, &SizeError{}},
	}
	for _, tt := range tests {
		err := CheckJSON("params_json", tt.js)
		switch want := tt.want.(type) {
		case nil:
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
		case *CountError:
			if !errors.As(err, &want) || !errors.Is(err, ErrTooLarge) {
				t.Errorf("%s: %v, want a CountError", tt.name, err)
			}
		case *DepthError:
			if !errors.As(err, &want) {
				t.Errorf("%s: %v, want a DepthError", tt.name, err)
			}
		case *SizeError:
			if !errors.As(err, &want) {
				t.Errorf("%s: %v, want a SizeError", tt.name, err)
			}
		}
	}
}

// FuzzCheckJSON: for valid JSON, CheckJSON never undercounts: text it
// accepts decodes to at most MaxParamsValues values, MaxParamsDepth deep.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2,3]`, `{"a":"\"[{"}`, `[[[]]]`, `"x"`, `[true,false,null,-1.5e3]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		var v any
		if json.Unmarshal([]byte(js), &v) != nil || CheckJSON("p", js) != nil {
			return
		}
		n, d := countValues(v, 1)
		if n > MaxParamsValues || d > MaxParamsDepth+1 {
			t.Fatalf("accepted %q: %d values, depth %d", js, n, d)
		}
	})
}

func countValues(v any, depth int) (n, maxDepth int) {
	n, maxDepth = 1, depth
	var elems []any
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			elems = append(elems, e)
		}
	case []any:
		elems = v
	default:
		return 1, depth - 1
	}
	for _, e := range elems {
		en, ed := countValues(e, depth+1)
		n += en
		maxDepth = max(maxDepth, ed)
	}
	return n, maxDepth
}
