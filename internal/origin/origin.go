// Package origin parses and matches browser origins (scheme://host[:port])
// for the HTTP listeners that check the Origin header: the MCP façade and
// the server's web listener.
package origin

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Normalize is o as origins are compared: trimmed, lower case, without a
// trailing slash.
func Normalize(o string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/")
}

// ParseList splits a comma-separated list of origins, each
// scheme://host[:port] with scheme http or https, into normalised form.
// "*" and "null" are refused: the listeners' calls carry credentials, so
// each origin must be named.
func ParseList(list string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(list, ",") {
		o = Normalize(o)
		if o == "" {
			continue
		}
		if o == "*" || o == "null" {
			return nil, fmt.Errorf("%q is refused: calls carry credentials, list each origin", o)
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || o != u.Scheme+"://"+u.Host || !validHost(u.Hostname()) {
			return nil, fmt.Errorf("%q is not an origin (scheme://host[:port], scheme http or https)", o)
		}
		out = append(out, o)
	}
	return out, nil
}

// Set is a set of allowed origins.
type Set map[string]bool

// NewSet makes the set of origins (normalised here).
func NewSet(origins []string) Set {
	s := make(Set, len(origins))
	for _, o := range origins {
		s[Normalize(o)] = true
	}
	return s
}

// Has reports whether the Origin header value o is in the set.
func (s Set) Has(o string) bool { return s[Normalize(o)] }

// validHost reports whether h is an IP address or a DNS name (letters,
// digits, hyphens and dots).
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
