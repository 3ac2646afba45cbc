package semantic

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"

	"github.com/tooldex/tooldex/internal/semantic/static"
	"github.com/tooldex/tooldex/internal/semantic/uselite"
)

// Mode chooses the embedder of dense retrieval.
type Mode string

// The modes: no dense retrieval, the embedded static model (package
// static), the embedded sentence encoder (package uselite), or an
// external embeddings server (Client).
const (
	ModeOff      Mode = "off"
	ModeStatic   Mode = "static"
	ModeFull     Mode = "full"
	ModeExternal Mode = "external"
)

// DefaultMode is the server's and eval's default (docs/BENCHMARKS.md has
// the measurements behind it).
const DefaultMode = ModeStatic

// ParseMode parses a --semantic value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeOff, ModeStatic, ModeFull, ModeExternal:
		return m, nil
	}
	return "", fmt.Errorf("semantic: mode %q: want off, static, full or external", s)
}

// DefaultRatio is a mode's dense share of the fused score, chosen by
// leave-one-dataset-out on six tool-retrieval datasets (docs/BENCHMARKS.md):
// for each dataset, the ratio best on the other five (every fold chose
// 0.1 for the static model; five of six chose 0.25 for the full one, one
// 0.1). An external model keeps the share measured with a sentence
// encoder behind the embeddings API (0.2).
func DefaultRatio(m Mode) float64 {
	switch m {
	case ModeStatic:
		return 0.1
	case ModeFull:
		return 0.25
	}
	return 0.2
}

// MinSimilarity is the floor of StoreConfig.MinSimilarity for a mode: the
// cosine under which a tool the lexical ranking did not find stays out
// of a fused ranking. Unrelated texts score about 0 with the static model
// and up to 0.35 with the full one, related ones 0.5 and up with both
// ("make the picture bigger" and an image-resizing tool: 0.56 and 0.66);
// an external model's scale is unknown (0: no floor).
func MinSimilarity(m Mode) float64 {
	switch m {
	case ModeStatic:
		return 0.3
	case ModeFull:
		return 0.4
	}
	return 0
}

// Local returns an embedded model's embedder; the mode must be static or
// full.
func Local(m Mode) (Embedder, error) {
	switch m {
	case ModeStatic:
		return static.Load()
	case ModeFull:
		return uselite.Load()
	}
	return nil, fmt.Errorf("semantic: %s is not an embedded model", m)
}

// CacheName is a name for an embedded model's vectors that changes when
// its embedded files do (it holds their digest), for caches keyed by
// model; "" when the mode is not an embedded model. The digest hashes the
// model's files, so only what keeps a cache asks for it.
func CacheName(m Mode) string {
	switch m {
	case ModeStatic:
		return "static-" + static.Digest()
	case ModeFull:
		return "uselite-" + uselite.Digest()
	}
	return ""
}

// ExternalCacheName is CacheName for an external embedder: the model's
// name (characters other than letters, digits, '.', '-' and '_' as '_',
// at most 60) and a digest of the URL and the model, so that two servers'
// models of one name keep apart. The name stays when the server's model
// changes behind it: delete the cache then.
func ExternalCacheName(url, model string) string {
	safe := []rune(strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '_') {
			return r
		}
		return '_'
	}, model))
	h := sha256.Sum256([]byte(url + "\x00" + model))
	return "external-" + string(safe[:min(len(safe), 60)]) + "-" + hex.EncodeToString(h[:6])
}
