package permission

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxStringRunes is how much of each string value Summary shows.
const maxStringRunes = 40

// ellipsis marks text that Summary cut.
const ellipsis = "…"

// Summary describes a call's parameters in one short line for the user who
// is asked to approve it, e.g. `max_bytes=100, path="/etc/hosts"`.
//
// Keys come in sorted order, separated by ", ". Keys other than plain names
// (letters, digits, '_', '-', '.') are quoted. Strings are quoted Go-style
// (newlines, control and format characters escaped) and cut to 40 runes
// with "…"; numbers, booleans and null are written as in JSON; a nested
// object is written as {N keys} and an array as [N items] (or {} and [] if
// empty), without their contents. If the whole line is longer than max
// runes it is cut to max-1 runes followed by "…"; max <= 0 means no limit.
// No parameters give "".
func Summary(params map[string]any, max int) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(params)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(summaryKey(k))
		b.WriteByte('=')
		b.WriteString(summaryValue(params[k]))
	}
	return cut(b.String(), max)
}

// cut shortens s to at most max runes, the last of them "…"; max <= 0
// leaves s alone.
func cut(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + ellipsis
		}
		n++
	}
	return s // not reached: s has more than max runes
}

func summaryKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.') {
			return strconv.Quote(k)
		}
	}
	return k
}

func summaryValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(cut(v, maxStringRunes))
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case json.Number:
		return cut(v.String(), maxStringRunes)
	case map[string]any:
		return count("{", len(v), "key", "}")
	case []any:
		return count("[", len(v), "item", "]")
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return strconv.Quote(cut(rv.String(), maxStringRunes))
	case reflect.Bool:
		return strconv.FormatBool(rv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 32)
	case reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 64)
	case reflect.Map:
		return count("{", rv.Len(), "key", "}")
	case reflect.Slice, reflect.Array:
		return count("[", rv.Len(), "item", "]")
	}
	// Anything else (structs, pointers, complex numbers, ...): fmt's
	// formatting, escaped and cut.
	q := strconv.Quote(cut(fmt.Sprint(v), maxStringRunes))
	return q[1 : len(q)-1]
}

// count writes "{3 keys}", "[1 item]", "{}".
func count(open string, n int, noun, closing string) string {
	switch n {
	case 0:
		return open + closing
	case 1:
		return open + "1 " + noun + closing
	}
	return open + strconv.Itoa(n) + " " + noun + "s" + closing
}

// CanonicalJSON encodes a call's parameters for Approver.Token and
// Approver.Check: encoding/json of the map, whose keys (in nested maps
// too) it sorts, so equal parameters give equal bytes. A nil map encodes
// as {} like an empty one. Strings are encoded as encoding/json does, so
// invalid UTF-8 becomes U+FFFD: strings that differ only in invalid bytes
// share their tokens. A map that encoding/json cannot encode (a NaN or
// infinite float, a channel, a cycle, ...) gives a byte 0 followed by 32
// fresh random bytes: never valid JSON and never the same twice, so no
// token approves such parameters.
func CanonicalJSON(params map[string]any) []byte {
	if params == nil {
		return []byte("{}")
	}
	data, err := json.Marshal(params)
	if err != nil {
		data = make([]byte, 33)
		rand.Read(data[1:]) // never fails (crypto/rand crashes the program instead)
	}
	return data
}
