package demohost

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tooldex/tooldex/toolhost"
)

const (
	// maxExprLen is the longest expression calculate takes, in characters.
	maxExprLen = 1000
	// maxDepth is how deeply an expression may nest: parentheses, function
	// calls, unary signs and powers each add a level.
	maxDepth = 100
)

// calculate is the handler of calculate.
func calculate(_ context.Context, call *toolhost.Call) (*toolhost.Result, error) {
	expr, err := stringParam(call.Params, "expression", "")
	if err != nil {
		return toolhost.Errorf("%v", err), nil
	}
	v, err := evaluate(expr)
	if err != nil {
		return toolhost.Errorf("cannot evaluate %q: %v", expr, err), nil
	}
	return toolhost.JSON(map[string]any{
		"expression": expr,
		"value":      v,
		"text":       formatNumber(v),
	})
}

// formatNumber formats v with 15 significant digits, so that 0.1+0.2 reads
// 0.3.
func formatNumber(v float64) string {
	return strconv.FormatFloat(v, 'g', 15, 64)
}

// calcError is an evaluation error at a position (1-based, in characters;
// 0 for none), with an optional hint.
type calcError struct {
	pos  int
	msg  string
	hint string
}

func (e *calcError) Error() string {
	s := e.msg
	if e.pos > 0 {
		s = fmt.Sprintf("%s at position %d", s, e.pos)
	}
	if e.hint != "" {
		s += " (" + e.hint + ")"
	}
	return s
}

// evaluate parses and evaluates an arithmetic expression:
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = primary [ "^" unary ]          (right-associative)
//	primary = number | name | name "(" expr { "," expr } ")" | "(" expr ")"
//
// so -2^2 is -4 and 2^3^2 is 512. Every intermediate value must be finite.
func evaluate(expr string) (float64, error) {
	if n := utf8.RuneCountInString(expr); n > maxExprLen {
		return 0, &calcError{msg: fmt.Sprintf("the expression is %d characters long, more than the %d allowed", n, maxExprLen)}
	}
	p := &parser{src: expr}
	p.skipSpace()
	if p.pos == len(p.src) {
		return 0, &calcError{msg: "empty expression"}
	}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	p.skipSpace()
	if p.pos < len(p.src) {
		return 0, p.errorf(p.pos, "unexpected %s", p.describe(p.pos))
	}
	if v == 0 {
		v = 0 // no -0
	}
	return v, nil
}

type parser struct {
	src   string
	pos   int // byte offset
	depth int
}

// errorf makes an error at byte offset off.
func (p *parser) errorf(off int, format string, args ...any) error {
	return &calcError{pos: utf8.RuneCountInString(p.src[:off]) + 1, msg: fmt.Sprintf(format, args...)}
}

// errorHint is errorf with a hint.
func (p *parser) errorHint(off int, hint, format string, args ...any) error {
	err := p.errorf(off, format, args...).(*calcError)
	err.hint = hint
	return err
}

// describe names what is at byte offset off, for errors.
func (p *parser) describe(off int) string {
	if off >= len(p.src) {
		return "end of expression"
	}
	r, _ := utf8.DecodeRuneInString(p.src[off:])
	return strconv.QuoteRune(r)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (p *parser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// enter adds a level of nesting at byte offset off.
func (p *parser) enter(off int) error {
	p.depth++
	if p.depth > maxDepth {
		return p.errorf(off, "the expression nests more than %d levels deep", maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// finite checks an operation's result.
func (p *parser) finite(v float64, off int, op string) (float64, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, p.errorf(off, "%s gives a result that is not a finite number", op)
	}
	return v, nil
}

func (p *parser) expr() (float64, error) {
	left, err := p.term()
	if err != nil {
		return 0, err
	}
	for {
		op := p.peek()
		if op != '+' && op != '-' {
			return left, nil
		}
		off := p.pos
		p.pos++
		right, err := p.term()
		if err != nil {
			return 0, err
		}
		if op == '+' {
			left = left + right
		} else {
			left = left - right
		}
		if left, err = p.finite(left, off, string(op)); err != nil {
			return 0, err
		}
	}
}

func (p *parser) term() (float64, error) {
	left, err := p.unary()
	if err != nil {
		return 0, err
	}
	for {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' {
			return left, nil
		}
		off := p.pos
		p.pos++
		right, err := p.unary()
		if err != nil {
			return 0, err
		}
		switch op {
		case '*':
			left *= right
		case '/':
			if right == 0 {
				return 0, p.errorf(off, "division by zero")
			}
			left /= right
		case '%':
			if right == 0 {
				return 0, p.errorf(off, "modulo by zero")
			}
			left = math.Mod(left, right)
		}
		if left, err = p.finite(left, off, string(op)); err != nil {
			return 0, err
		}
	}
}

func (p *parser) unary() (float64, error) {
	op := p.peek()
	if op != '-' && op != '+' {
		return p.power()
	}
	off := p.pos
	p.pos++
	if err := p.enter(off); err != nil {
		return 0, err
	}
	defer p.leave()
	v, err := p.unary()
	if err != nil {
		return 0, err
	}
	if op == '-' {
		v = -v
	}
	return v, nil
}

func (p *parser) power() (float64, error) {
	base, err := p.primary()
	if err != nil {
		return 0, err
	}
	if p.peek() != '^' {
		return base, nil
	}
	off := p.pos
	p.pos++
	if err := p.enter(off); err != nil {
		return 0, err
	}
	defer p.leave()
	exp, err := p.unary()
	if err != nil {
		return 0, err
	}
	return p.finite(math.Pow(base, exp), off, "^")
}

func (p *parser) primary() (float64, error) {
	c := p.peek()
	off := p.pos
	switch {
	case c == 0:
		return 0, p.errorf(off, "unexpected end of expression")
	case c == '(':
		p.pos++
		if err := p.enter(off); err != nil {
			return 0, err
		}
		defer p.leave()
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, p.errorHint(p.pos, fmt.Sprintf("to close the ( at position %d; found %s", utf8.RuneCountInString(p.src[:off])+1, p.describe(p.pos)), "missing )")
		}
		p.pos++
		return v, nil
	case isDigit(c) || c == '.':
		return p.number()
	case isLetter(c):
		return p.name()
	default:
		return 0, p.errorf(off, "unexpected %s", p.describe(off))
	}
}

// number scans digits [. digits] [e [+-] digits].
func (p *parser) number() (float64, error) {
	start := p.pos
	digits := 0
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
		digits++
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
			digits++
		}
	}
	if digits == 0 {
		return 0, p.errorf(start, "a number needs digits")
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		i := p.pos + 1
		if i < len(p.src) && (p.src[i] == '+' || p.src[i] == '-') {
			i++
		}
		if i < len(p.src) && isDigit(p.src[i]) {
			for i < len(p.src) && isDigit(p.src[i]) {
				i++
			}
			p.pos = i
		}
	}
	v, err := strconv.ParseFloat(p.src[start:p.pos], 64)
	if err != nil {
		return 0, p.errorf(start, "number %s is out of range", p.src[start:p.pos])
	}
	return v, nil
}

// functionArity returns the arity of a function calculate knows (-1: one
// or more) and whether it knows it.
func functionArity(name string) (int, bool) {
	switch name {
	case "sqrt", "abs", "round", "floor", "ceil":
		return 1, true
	case "min", "max":
		return -1, true
	}
	return 0, false
}

func (p *parser) name() (float64, error) {
	start := p.pos
	for p.pos < len(p.src) && (isLetter(p.src[p.pos]) || isDigit(p.src[p.pos])) {
		p.pos++
	}
	word := p.src[start:p.pos]
	name := strings.ToLower(word)
	if p.peek() != '(' {
		switch name {
		case "pi":
			return math.Pi, nil
		case "e":
			return math.E, nil
		}
		if _, ok := functionArity(name); ok {
			return 0, p.errorHint(p.pos, "e.g. "+name+"(2)", "%s needs arguments in parentheses", name)
		}
		return 0, p.errorHint(start, "constants: pi, e; functions: sqrt, abs, round, floor, ceil, min, max", "unknown name %q", word)
	}
	arity, ok := functionArity(name)
	if !ok {
		return 0, p.errorHint(start, "functions: sqrt, abs, round, floor, ceil, min, max", "unknown function %q", word)
	}
	open := p.pos
	p.pos++
	if err := p.enter(open); err != nil {
		return 0, err
	}
	defer p.leave()
	var args []float64
	if p.peek() == ')' {
		return 0, p.errorf(p.pos, "%s needs an argument", name)
	}
	for {
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		args = append(args, v)
		switch p.peek() {
		case ',':
			p.pos++
			continue
		case ')':
			p.pos++
		default:
			return 0, p.errorf(p.pos, "expected , or ) in the arguments of %s, found %s", name, p.describe(p.pos))
		}
		break
	}
	if arity > 0 && len(args) != arity {
		return 0, p.errorHint(start, fmt.Sprintf("it takes %d, got %d", arity, len(args)), "wrong number of arguments to %s", name)
	}
	x := args[0]
	switch name {
	case "sqrt":
		if x < 0 {
			return 0, p.errorf(start, "square root of a negative number (%s)", formatNumber(x))
		}
		return math.Sqrt(x), nil
	case "abs":
		return math.Abs(x), nil
	case "round":
		return math.Round(x), nil
	case "floor":
		return math.Floor(x), nil
	case "ceil":
		return math.Ceil(x), nil
	case "min":
		for _, a := range args[1:] {
			x = math.Min(x, a)
		}
		return x, nil
	default: // max
		for _, a := range args[1:] {
			x = math.Max(x, a)
		}
		return x, nil
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
