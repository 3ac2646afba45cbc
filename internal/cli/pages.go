package cli

import "errors"

// errPageLoop is a server handing back a page token it gave before.
var errPageLoop = errors.New("the server repeated a page token")

// allPages calls fetch with each page token in turn, from the first page
// (token "") until a page has no next token, and returns every page's items
// in order. A token seen before ends it with errPageLoop rather than
// looping for ever.
func allPages[T any](fetch func(token string) (items []T, next string, err error)) ([]T, error) {
	var all []T
	seen := make(map[string]bool)
	token := ""
	for {
		items, next, err := fetch(token)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, errPageLoop
		}
		seen[next] = true
		token = next
	}
}
