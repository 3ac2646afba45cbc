package cli

import (
	"errors"
	"slices"
	"testing"
)

func TestAllPages(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		pages   map[string][]int  // token -> items
		next    map[string]string // token -> next token
		fail    string            // the token whose fetch fails
		want    []int
		wantErr error
	}{
		{name: "one page", pages: map[string][]int{"": {1, 2}}, want: []int{1, 2}},
		{name: "three pages", pages: map[string][]int{"": {1}, "a": {2, 3}, "b": {4}}, next: map[string]string{"": "a", "a": "b"}, want: []int{1, 2, 3, 4}},
		{name: "empty", pages: map[string][]int{}, want: nil},
		{name: "error on the second page", pages: map[string][]int{"": {1}}, next: map[string]string{"": "a"}, fail: "a", wantErr: boom},
		{name: "a token repeated", pages: map[string][]int{"": {1}, "a": {2}}, next: map[string]string{"": "a", "a": "a"}, wantErr: errPageLoop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			got, err := allPages(func(token string) ([]int, string, error) {
				asked = append(asked, token)
				if tt.fail != "" && token == tt.fail {
					return nil, "", boom
				}
				return tt.pages[token], tt.next[token], nil
			})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v (asked %q)", err, tt.wantErr, asked)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
