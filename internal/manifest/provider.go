package manifest

import (
	"fmt"
	"strings"
)

// Provider is a model provider whose tool format Build renders.
type Provider string

// The providers.
const (
	Anthropic Provider = "anthropic"
	OpenAI    Provider = "openai"
	Gemini    Provider = "gemini"
	Grok      Provider = "grok"
)

// Providers lists the valid providers in the order ParseProvider names them.
var providers = []Provider{Anthropic, OpenAI, Gemini, Grok}

// ParseProvider parses a provider name, ignoring case and surrounding
// spaces.
func ParseProvider(s string) (Provider, error) {
	p := Provider(strings.ToLower(strings.TrimSpace(s)))
	if p.valid() {
		return p, nil
	}
	names := make([]string, len(providers))
	for i, v := range providers {
		names[i] = string(v)
	}
	return "", fmt.Errorf("unknown provider %q: want one of %s", s, strings.Join(names, ", "))
}

func (p Provider) valid() bool {
	switch p {
	case Anthropic, OpenAI, Gemini, Grok:
		return true
	}
	return false
}

// geminiPrefix is what ProviderName puts before a name Gemini would refuse
// (one starting with a digit or '-'). Registered names never contain '.',
// so a prefixed name never equals a registered one.
const geminiPrefix = "t."

// ProviderName returns the name a provider is sent for a registered tool
// name. Only Gemini changes names: a name that starts with a digit or '-'
// gets the prefix "t.". Every other name, and every name for the other
// providers, is returned unchanged; so is an already mapped name, which
// starts with 't'.
func ProviderName(p Provider, name string) string {
	if p == Gemini && name != "" && needsGeminiPrefix(name[0]) {
		return geminiPrefix + name
	}
	return name
}

// ToolName reverses ProviderName: it returns the registered tool name for a
// name the provider used. Names ProviderName would not produce are returned
// unchanged.
func ToolName(p Provider, providerName string) string {
	if p == Gemini && len(providerName) > len(geminiPrefix) &&
		strings.HasPrefix(providerName, geminiPrefix) && needsGeminiPrefix(providerName[len(geminiPrefix)]) {
		return providerName[len(geminiPrefix):]
	}
	return providerName
}

func needsGeminiPrefix(c byte) bool {
	return c == '-' || ('0' <= c && c <= '9')
}
