package service

import (
	"encoding/base64"
)

// Pages of ListTools and ListHosts.
const (
	defaultPageSize = 1000
	maxPageSize     = 10000
	maxPageToken    = 1024
)

// pageOf validates page_size and page_token and returns the size and the
// key the page starts after ("" for the first page). A token is the last
// key of the previous page, base64url-encoded: listings are sorted by key.
func pageOf(size int32, token string) (int, string, error) {
	ve := &ValidationError{}
	n := int(size)
	switch {
	case n < 0:
		ve.add("page_size", "is %d; use 0 for the default of %d", n, defaultPageSize)
	case n == 0:
		n = defaultPageSize
	case n > maxPageSize:
		n = maxPageSize
	}
	var after []byte
	if len(token) > maxPageToken {
		ve.add("page_token", "is %d bytes, at most %d: pass the next_page_token of the previous page", len(token), maxPageToken)
	} else if b, err := base64.RawURLEncoding.DecodeString(token); err != nil {
		ve.add("page_token", "is not a next_page_token: %v", err)
	} else {
		after = b
	}
	return n, string(after), ve.err()
}

// pageToken is the token of the page after the one ending at key.
func pageToken(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// page returns the items of sorted whose key follows after, at most n, and
// the next page's token ("" when none follows).
func page[T any](sorted []T, key func(T) string, after string, n int) ([]T, string) {
	i := 0
	if after != "" {
		for i < len(sorted) && key(sorted[i]) <= after {
			i++
		}
	}
	rest := sorted[i:]
	if len(rest) <= n {
		return rest, ""
	}
	return rest[:n], pageToken(key(rest[n-1]))
}
