package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// signingAlgs are the JWS algorithms accepted: asymmetric ones only.
var signingAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

const (
	maxJWKSBytes = 1 << 20
	jwksMaxAge   = time.Hour
)

// keySet is an oidc.KeySet backed by a JWKS URL: keys are cached, a key id
// not in the cache refreshes them at most once per minInterval, and a set
// older than jwksMaxAge is refetched on next use.
type keySet struct {
	url         string
	client      *http.Client
	minInterval time.Duration

	mu      sync.RWMutex
	keys    []jose.JSONWebKey
	fetched time.Time // last fetch attempt
	loaded  bool      // keys came from a successful fetch

	fetchMu sync.Mutex // one fetch at a time
}

// VerifySignature implements oidc.KeySet.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, signingAlgs)
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("want exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	keys, stale := k.find(kid)
	if len(keys) == 0 || stale {
		if err := k.refresh(ctx, stale); err != nil && len(keys) == 0 {
			return nil, err
		}
		keys, _ = k.find(kid)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no key with id %q in the key set", kid)
	}
	for i := range keys {
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload, nil
		}
	}
	return nil, errors.New("signature does not verify")
}

// find returns the cached keys with id kid (all keys when kid is empty),
// and whether the set is older than jwksMaxAge.
func (k *keySet) find(kid string) ([]jose.JSONWebKey, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	var out []jose.JSONWebKey
	for _, key := range k.keys {
		if kid == "" || key.KeyID == kid {
			out = append(out, key)
		}
	}
	return out, k.loaded && time.Since(k.fetched) > jwksMaxAge
}

// refresh refetches the set unless it was fetched less than minInterval ago
// (force: the set is stale, refetch whatever the interval).
func (k *keySet) refresh(ctx context.Context, force bool) error {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	k.mu.RLock()
	recent := !k.fetched.IsZero() && time.Since(k.fetched) < k.minInterval
	k.mu.RUnlock()
	if recent && !force {
		return errors.New("unknown key id; the key set was refreshed moments ago")
	}
	keys, err := k.fetch(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fetched = time.Now()
	if err != nil {
		return fmt.Errorf("fetching the key set %s: %w", k.url, err)
	}
	k.keys, k.loaded = keys, true
	return nil
}

func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("key set larger than %d bytes", maxJWKSBytes)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, err
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if err := key.UnmarshalJSON(raw); err != nil {
			continue // a key type or algorithm this verifier does not take
		}
		if !key.Valid() || !key.IsPublic() || (key.Use != "" && key.Use != "sig") {
			continue
		}
		keys = append(keys, key)
	}
	return keys, nil
}
