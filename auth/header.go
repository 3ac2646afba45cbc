package auth

import "strings"

// ParseAuthorization returns the token of an "Authorization: Bearer <token>"
// value. The scheme is case-insensitive and separated from the token by
// spaces; the token must be 1 to MaxTokenLen printable ASCII characters
// without spaces. Any other value is an ErrUnauthenticated.
func ParseAuthorization(v string) (string, error) {
	scheme, tok, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", unauthenticated(`authorization must be "Bearer <token>"`)
	}
	tok = strings.TrimLeft(tok, " ")
	tok = strings.TrimRight(tok, " ")
	if tok == "" {
		return "", unauthenticated("empty bearer token")
	}
	if len(tok) > MaxTokenLen {
		return "", unauthenticated("bearer token longer than %d bytes", MaxTokenLen)
	}
	if !validToken(tok) {
		return "", unauthenticated("bearer token has characters other than printable ASCII")
	}
	return tok, nil
}
