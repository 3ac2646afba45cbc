package static

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// Digest is a short hash of the embedded model file: caches of its vectors
// key on it, so a new model.bin never reads an old model's vectors.
var Digest = sync.OnceValue(func() string { return DigestOf(modelBin) })

// DigestOf is the short hash of a model file's bytes (Digest's, for a
// file other than the embedded one).
func DigestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}
