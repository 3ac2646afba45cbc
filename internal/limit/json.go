package limit

import "fmt"

// MaxParamsValues bounds the JSON values (objects, arrays, strings,
// numbers, literals) of a call's params_json: decoded, each costs far more
// than its text (3 MiB of "0," became 1.5 million values and hundreds of
// MB), so the count is checked before decoding.
const MaxParamsValues = 100000

// MaxParamsDepth bounds how deeply params nest objects and arrays.
const MaxParamsDepth = 128

// CheckJSON scans JSON text without decoding or allocating and reports,
// as a *SizeError on field (matching ErrTooLarge), text longer than
// MaxParamsBytes, more than MaxParamsValues values, or nesting deeper than
// MaxParamsDepth. It does not check that the text is JSON: the decoder
// does, after. Call it on params_json before decoding it.
func CheckJSON(field, js string) error {
	if len(js) > MaxParamsBytes {
		return &SizeError{Field: field, Size: len(js), Limit: MaxParamsBytes}
	}
	values, depth := 0, 0
	inValue := false // inside a number or literal
	for i := 0; i < len(js); i++ {
		c := js[i]
		switch c {
		case '"':
			values++
			inValue = false
			for i++; i < len(js) && js[i] != '"'; i++ {
				if js[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			values++
			inValue = false
			if depth++; depth > MaxParamsDepth {
				return &DepthError{Field: field, Limit: MaxParamsDepth}
			}
		case '}', ']':
			inValue = false
			depth--
		case ',', ':', ' ', '\t', '\n', '\r':
			inValue = false
		default:
			if !inValue {
				values++
				inValue = true
			}
		}
		if values > MaxParamsValues {
			return &CountError{Field: field, Limit: MaxParamsValues}
		}
	}
	return nil
}

// CountError: too many values; it matches ErrTooLarge.
type CountError struct {
	Field string
	Limit int
}

func (e *CountError) Error() string {
	return fmt.Sprintf("%s holds more than %d JSON values", e.Field, e.Limit)
}

// Unwrap makes a CountError match ErrTooLarge.
func (e *CountError) Unwrap() error { return ErrTooLarge }

// DepthError: nesting too deep; it matches ErrTooLarge.
type DepthError struct {
	Field string
	Limit int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("%s nests objects and arrays more than %d levels deep", e.Field, e.Limit)
}

// Unwrap makes a DepthError match ErrTooLarge.
func (e *DepthError) Unwrap() error { return ErrTooLarge }
