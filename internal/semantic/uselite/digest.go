package uselite

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// Digest is a short hash of the embedded weights and vocabulary: caches of
// the model's vectors key on it, so new weights never read old vectors.
var Digest = sync.OnceValue(func() string {
	h := sha256.New()
	h.Write(modelBin)
	h.Write(vocabTxt)
	return hex.EncodeToString(h.Sum(nil)[:6])
})
