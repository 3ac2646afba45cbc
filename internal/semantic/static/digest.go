package static

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// Digest is a short hash of the embedded model file: caches of its vectors
// key on it, so a new model.bin never reads an old model's vectors.
var Digest = sync.OnceValue(func() string {
	sum := sha256.Sum256(modelBin)
	return hex.EncodeToString(sum[:6])
})
