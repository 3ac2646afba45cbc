package demohost

import (
	"math"
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	// Variables, not constants: Go evaluates constant expressions exactly.
	pi, e, tenth, fifth := math.Pi, math.E, 0.1, 0.2
	tests := []struct {
		expr    string
		want    float64
		wantErr string // a substring; "" for success
	}{
		{expr: "1 + 2", want: 3},
		{expr: "2 + 3 * 4", want: 14},
		{expr: "(2 + 3) * 4", want: 20},
		{expr: "10 - 4 - 3", want: 3},
		{expr: "100 / 10 / 5", want: 2},
		{expr: "7 % 3", want: 1},
		{expr: "-7 % 3", want: -1},
		{expr: "2 ^ 10", want: 1024},
		{expr: "2 ^ 3 ^ 2", want: 512},
		{expr: "-2 ^ 2", want: -4},
		{expr: "2 ^ -1", want: 0.5},
		{expr: "--3", want: 3},
		{expr: "+4", want: 4},
		{expr: "1.5e3 + .5", want: 1500.5},
		{expr: "2E-2", want: 0.02},
		{expr: "3.", want: 3},
		{expr: "sqrt(16) + abs(-2)", want: 6},
		{expr: "round(2.5) + floor(-1.5) + ceil(1.2)", want: 3 - 2 + 2},
		{expr: "min(3, 1, 2) * max(4, 9)", want: 9},
		{expr: "max(1)", want: 1},
		{expr: "PI", want: math.Pi},
		{expr: "2 * pi * e", want: 2 * pi * e},
		{expr: "Sqrt(  4 )", want: 2},
		{expr: " \t1\n+1 ", want: 2},
		{expr: "0.1 + 0.2", want: tenth + fifth},
		{expr: "-0", want: 0},
		{expr: strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), want: 1},

		{expr: "", wantErr: "empty expression"},
		{expr: "   ", wantErr: "empty expression"},
		{expr: "1 +", wantErr: "unexpected end of expression at position 4"},
		{expr: "1 / 0", wantErr: "division by zero at position 3"},
		{expr: "1 % (2 - 2)", wantErr: "modulo by zero at position 3"},
		{expr: "(1 + 2", wantErr: "missing ) at position 7 (to close the ( at position 1; found end of expression)"},
		{expr: "1 + 2)", wantErr: "unexpected ')' at position 6"},
		{expr: "2 $ 3", wantErr: "unexpected '$' at position 3"},
		{expr: "é + 1", wantErr: "unexpected 'é' at position 1"},
		{expr: "é é", wantErr: "at position 1"},
		{expr: "1 + é", wantErr: "unexpected 'é' at position 5"},
		{expr: "foo(1)", wantErr: `unknown function "foo" at position 1`},
		{expr: "x + 1", wantErr: `unknown name "x"`},
		{expr: "sqrt", wantErr: "sqrt needs arguments"},
		{expr: "sqrt()", wantErr: "sqrt needs an argument"},
		{expr: "sqrt(1, 2)", wantErr: "wrong number of arguments to sqrt at position 1 (it takes 1, got 2)"},
		{expr: "max(1 2)", wantErr: "expected , or )"},
		{expr: "sqrt(-4)", wantErr: "square root of a negative number"},
		{expr: "10 ^ 400", wantErr: "not a finite number"},
		{expr: "1e308 * 10", wantErr: "not a finite number"},
		{expr: "1e999", wantErr: "out of range"},
		{expr: "2e", wantErr: "unexpected 'e' at position 2"},
		{expr: ".", wantErr: "a number needs digits"},
		{expr: "1..2", wantErr: "at position 3"},
		{expr: "(-1) ^ 0.5", wantErr: "not a finite number"},
		{expr: strings.Repeat("(", 101) + "1" + strings.Repeat(")", 101), wantErr: "nests more than 100 levels deep at position 101"},
		{expr: strings.Repeat("-", 101) + "1", wantErr: "nests more than 100 levels"},
		{expr: strings.Repeat("2^", 101) + "1", wantErr: "nests more than 100 levels"},
		{expr: strings.Repeat("1+", 500) + "1", wantErr: "1001 characters long"},
	}
	for _, tt := range tests {
		name := tt.expr
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		t.Run(name, func(t *testing.T) {
			got, err := evaluate(tt.expr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("evaluate(%q) = %v, %v, want error containing %q", tt.expr, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("evaluate(%q) error = %v, want %v", tt.expr, err, tt.want)
			}
			if got != tt.want || (got == 0 && math.Signbit(got)) {
				t.Errorf("evaluate(%q) = %v, want %v", tt.expr, got, tt.want)
			}
		})
	}
}

func TestCalculateHandler(t *testing.T) {
	tests := []struct {
		name     string
		params   map[string]any
		wantText string
		wantErr  string
	}{
		{name: "value", params: map[string]any{"expression": "0.1 + 0.2"}, wantText: "0.3"},
		{name: "large", params: map[string]any{"expression": "2^64"}, wantText: "1.84467440737096e+19"},
		{name: "error", params: map[string]any{"expression": "1/0"}, wantErr: "division by zero at position 2"},
		{name: "missing", params: nil, wantErr: "empty expression"},
		{name: "wrong type", params: map[string]any{"expression": 12.0}, wantErr: "must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, calculate, tt.params)
			if !checkOutcome(t, res, tt.wantErr) {
				return
			}
			if got := res.Structured["text"]; got != tt.wantText {
				t.Errorf("text = %v, want %s", got, tt.wantText)
			}
			if _, ok := res.Structured["value"].(float64); !ok {
				t.Errorf("value = %#v, want a number", res.Structured["value"])
			}
		})
	}
}

func FuzzCalculate(f *testing.F) {
	for _, seed := range []string{
		"1 + 2 * 3", "(1+2)*3", "-2^2", "2^3^2", "sqrt(16) + abs(-2)", "min(1,2,3)", "max(1)",
		"1.5e3 + .5", "pi * e", "1 / 0", "10 % 0", "((((1))))", "1e999", "2e", "é", "round(-0.5)",
		"floor(ceil(1.2))", "1 +", "sqrt(-1)", "10^400", "--------1", "2^2^2^2^2",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := evaluate(expr)
		if err != nil {
			if v != 0 {
				t.Errorf("evaluate(%q) = %v with error %v, want 0", expr, v, err)
			}
			if err.Error() == "" {
				t.Errorf("evaluate(%q): empty error message", expr)
			}
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("evaluate(%q) = %v, want a finite number", expr, v)
		}
	})
}
