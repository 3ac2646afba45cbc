package auth

import (
	"context"
	"testing"

	"github.com/tooldex/tooldex/auth/authtest"
)

// BenchmarkAuthenticate is the cost of one Authenticate: a tokens-file
// token, a cached JWT, and no credentials on an anonymous authenticator.
//
//	go test -run '^$' -bench Authenticate ./auth/
func BenchmarkAuthenticate(b *testing.B) {
	iss := authtest.NewIssuer(b)
	a, err := New(context.Background(), Config{Anonymous: true})
	if err != nil {
		b.Fatal(err)
	}
	path := authtest.Write(b, b.TempDir(), "tokens.json", []byte(goodTokensFile()))
	t, err := New(context.Background(), Config{TokensFile: path, JWKSURL: iss.JWKSURL(), Audience: "tooldex"})
	if err != nil {
		b.Fatal(err)
	}
	jwt := iss.Mint(b, map[string]any{"sub": "alice", "aud": "tooldex", "scope": "search execute"})
	for _, c := range []struct {
		name  string
		a     *Authenticator
		token string
	}{{"anonymous", a, ""}, {"token", t, aliceToken}, {"jwt", t, jwt}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			if _, err := c.a.Authenticate(ctx, c.token, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.a.Authenticate(ctx, c.token, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
