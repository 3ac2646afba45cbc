// Package auth establishes who calls tooldex: it turns a bearer token or a
// verified client certificate into a Principal (name, tenant, scopes, host
// name patterns, groups), and gives clients the gRPC dial options that
// present such credentials.
//
// # Credential sources
//
// An Authenticator is built from a Config naming any of three sources:
//
//   - a static tokens file (Config.TokensFile, JSON, see ParseTokens): each
//     entry gives a token, or better the hex SHA-256 of one so the file
//     holds no secret, with its principal, tenant, scopes, groups and, for
//     principals with the host scope only, host_patterns. Entries with
//     neither token nor sha256 describe certificate principals. The file is
//     reloaded by Watch when it changes and on SIGHUP; a file that fails to
//     load leaves the previous one in force.
//   - JWTs signed by an OIDC issuer (Config.Issuer, found by discovery) or by
//     the keys of a JWKS URL (Config.JWKSURL), with their iss (when an
//     issuer is configured), aud (Config.Audience, required), exp and nbf
//     checked by github.com/coreos/go-oidc. Keys are cached; a token signed
//     by an unknown key id refreshes the set, at most once per
//     Config.KeyRefreshInterval, and the set is refetched when older than an
//     hour. The principal, tenant, scopes, groups and host patterns come from
//     the claims named in Config.Claims (defaults: sub, tenant, scope — a
//     space-separated string or an array —, groups, host_patterns); scope
//     values that are not tooldex scopes are ignored.
//   - client certificates verified by the TLS layer against a client CA
//     (Config.ClientCA): the principal is the leaf certificate's SPIFFE URI
//     SAN (spiffe://...), else its subject CN; its tenant, scopes and host
//     patterns come from the tokens file's certificate entry of that name,
//     and a certificate without an entry is authenticated with no scope.
//
// When a request carries a bearer token, the token decides, whatever the
// certificate: a bad token is refused, never replaced by the certificate's
// principal. A request without a token is the certificate's principal when
// it presented a verified one. A request with neither is refused, unless
// Config.Anonymous is set (allowed only when no source is configured: the
// server sets it for a loopback listener), when it is the Anonymous
// principal, which holds every scope.
//
// Verified JWTs are cached by the SHA-256 of the token (a bounded LRU whose
// entries live no longer than the token), and tokens-file and internal
// tokens are looked up by their SHA-256, so a token's check costs a hash and
// a map lookup and leaks nothing through timing.
//
// # Scopes
//
// A principal holds the scopes listed for it, nothing more: admin does not
// imply the others. Has reports whether it holds one; MayServe whether a
// host principal may serve a tool name.
//
// # Clients
//
// ClientConfig (filled by RegisterFlags, or by ClientConfigFromEnv from
// TOOLDEX_TOKEN, TOOLDEX_TOKEN_FILE, TOOLDEX_CA, TOOLDEX_CERT, TOOLDEX_KEY,
// TOOLDEX_TLS_SERVER_NAME, TOOLDEX_TLS and TOOLDEX_INSECURE_TOKEN) makes the
// dial options of every tooldex client: TLS when asked or when a CA, client
// certificate or server name is given, and the token as
// "authorization: Bearer <token>" on every call. Without TLS a token is sent
// only to a loopback address (the call fails otherwise), unless
// ClientConfig.Insecure says the plaintext hop is trusted (a TLS-terminating
// proxy or mesh).
package auth
