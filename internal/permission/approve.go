package permission

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"time"
)

// Errors from Approver.Check.
var (
	// ErrBadToken is a token that is malformed, was not made with this
	// key, or was made for another tool, caller or parameters.
	ErrBadToken = errors.New("permission: bad approval token")
	// ErrExpiredToken is a genuine token past its expiry.
	ErrExpiredToken = errors.New("permission: approval token expired")
)

// defaultTTL is how long a token lasts when NewApprover is given no TTL.
const defaultTTL = 10 * time.Minute

// macLabel starts every MAC input, so that the key cannot be used to forge
// anything but approval tokens of this format.
const macLabel = "tooldex permission approval v1\x00"

const (
	expiryLen = 8
	rawLen    = expiryLen + sha256.Size
)

var tokenEncoding = base64.RawURLEncoding.Strict()

// tokenLen is the length of every token; checking it first also rejects
// tokens with '\r' or '\n', which the base64 decoder would skip.
var tokenLen = tokenEncoding.EncodedLen(rawLen)

// Approver issues and checks approval tokens: HMAC-SHA256 tags binding a
// tool, a caller, the call's parameters and an expiry time. It may be used
// from several goroutines at once.
type Approver struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// NewApprover returns an Approver with the given HMAC key (copied), token
// lifetime and clock. An empty key means 32 random bytes from crypto/rand;
// a ttl of zero or less means 10 minutes; a nil now means
// time.Now.
func NewApprover(key []byte, ttl time.Duration, now func() time.Time) *Approver {
	if len(key) == 0 {
		key = make([]byte, 32)
		rand.Read(key) // never fails (crypto/rand crashes the program instead)
	} else {
		key = append([]byte(nil), key...)
	}
	if ttl <= 0 {
		ttl = defaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Approver{key: key, ttl: ttl, now: now}
}

// Token returns a token approving the call of tool by caller with params
// (the canonical JSON of the call's parameters, see CanonicalJSON) until
// the approver's TTL from now, to the second. The token is
// base64url(expiry || mac) without padding; see the package documentation.
func (a *Approver) Token(tool, caller string, params []byte) string {
	var raw [rawLen]byte
	binary.BigEndian.PutUint64(raw[:expiryLen], uint64(a.now().Add(a.ttl).Unix()))
	a.mac(raw[expiryLen:expiryLen], tool, caller, params, raw[:expiryLen])
	return tokenEncoding.EncodeToString(raw[:])
}

// Check returns nil if token came from Token(tool, caller, params) of an
// Approver with the same key and has not expired. Otherwise it returns
// ErrBadToken (malformed, or made for another key, tool, caller or
// parameters) or ErrExpiredToken (genuine but expired). The MAC is
// compared in constant time.
func (a *Approver) Check(token, tool, caller string, params []byte) error {
	if len(token) != tokenLen {
		return ErrBadToken
	}
	raw, err := tokenEncoding.DecodeString(token)
	if err != nil || len(raw) != rawLen {
		return ErrBadToken
	}
	expiry := raw[:expiryLen]
	var buf [sha256.Size]byte
	if !hmac.Equal(raw[expiryLen:], a.mac(buf[:0], tool, caller, params, expiry)) {
		return ErrBadToken
	}
	if !a.now().Before(time.Unix(int64(binary.BigEndian.Uint64(expiry)), 0)) {
		return ErrExpiredToken
	}
	return nil
}

// mac appends to dst the HMAC-SHA256 of the label, the length-prefixed tool
// and caller, sha256(params) and the 8-byte expiry.
func (a *Approver) mac(dst []byte, tool, caller string, params, expiry []byte) []byte {
	h := hmac.New(sha256.New, a.key)
	h.Write([]byte(macLabel))
	writeString(h, tool)
	writeString(h, caller)
	sum := sha256.Sum256(params)
	h.Write(sum[:])
	h.Write(expiry)
	return h.Sum(dst)
}

// writeString writes s with its length in front, so that the boundary
// between fields is unambiguous.
func writeString(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}
