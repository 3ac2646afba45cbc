// Package textcut cuts text to a byte budget without splitting a UTF-8
// sequence: the one helper for every place that bounds a string.
package textcut

import "unicode/utf8"

// Prefix returns the longest prefix of s that is at most n bytes long and
// does not end inside a UTF-8 sequence, and whether it cut anything.
func Prefix(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	if n <= 0 {
		return "", true
	}
	c := n
	for c > 0 && !utf8.RuneStart(s[c]) {
		c--
	}
	return s[:c], true
}
