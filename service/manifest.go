package service

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/manifest"
)

// GetManifest renders the initial tool set for a provider: the caller's
// visible core tools, the two entry tools and the deferred names.
func (s *Server) GetManifest(ctx context.Context, req *tooldexv1.GetManifestRequest) (*tooldexv1.GetManifestResponse, error) {
	resp, err := s.getManifest(ctx, req)
	return resp, s.toStatus(err)
}

func (s *Server) getManifest(ctx context.Context, req *tooldexv1.GetManifestRequest) (*tooldexv1.GetManifestResponse, error) {
	ve := &ValidationError{}
	p, err := manifest.ParseProvider(req.GetProvider())
	if err != nil {
		ve.add("provider", "%v", err)
	}
	switch req.GetOpenaiApi() {
	case "", "chat", "responses":
	default:
		ve.add("openai_api", "is %q; use chat or responses", req.GetOpenaiApi())
	}
	if err := ve.err(); err != nil {
		return nil, err
	}
	sub, err := subject(ctx, req.GetCaller())
	if err != nil {
		return nil, err
	}
	visible := s.visible(sub)
	entry := make(map[string]bool)
	for _, t := range manifest.EntryTools() {
		entry[t.GetName()] = true
	}
	var core, deferred []*tooldexv1.Tool
	for _, e := range s.cat.List(principalOf(ctx).Tenant, "", tooldexv1.Loading_LOADING_UNSPECIFIED) {
		if name := e.Name(); entry[name] || visible != nil && !visible(name) {
			continue // the entry tools are the manifest's own definitions
		}
		switch e.Loading() {
		case tooldexv1.Loading_LOADING_CORE:
			core = append(core, e.Tool())
		case tooldexv1.Loading_LOADING_DEFERRED:
			deferred = append(deferred, e.Tool())
		}
	}
	m, err := manifest.Build(core, deferred, manifest.Options{
		Provider: p, ToolReference: req.GetToolReference(), OpenAIAPI: req.GetOpenaiApi(), Strict: req.GetStrict(),
	})
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	resp := &tooldexv1.GetManifestResponse{
		Provider:           string(p),
		ToolsJson:          string(m.ToolsJSON),
		DeferredToolNames:  m.DeferredNames,
		DeferredToolsBlock: m.DeferredBlock,
		SystemPrompt:       m.SystemPrompt,
		Fingerprint:        m.Fingerprint,
	}
	for _, mp := range m.Mappings {
		resp.NameMappings = append(resp.NameMappings, &tooldexv1.NameMapping{ProviderName: mp.ProviderName, ToolName: mp.ToolName})
	}
	return resp, nil
}

// searchContent renders search or discover results as tool-result content
// for the provider the request names ("" renders none).
func searchContent(provider string, toolReference bool, results []*tooldexv1.SearchResult, text string) (string, error) {
	if provider == "" {
		return "", nil
	}
	p, err := manifest.ParseProvider(provider)
	if err != nil {
		return "", badRequest(err.Error(), []Violation{{Field: "provider", Description: err.Error()}})
	}
	names := make([]string, len(results))
	for i, r := range results {
		names[i] = manifest.ProviderName(p, r.GetTool().GetName())
	}
	b, err := manifest.SearchContent(p, toolReference, names, text)
	if err != nil {
		return "", fmt.Errorf("search content: %w", err)
	}
	return string(b), nil
}

// providers are the providers whose mapped names Execute accepts.
var providers = []manifest.Provider{"anthropic", "openai", "gemini", "grok"}

// unmapName returns the registered names a provider-mapped name may stand
// for (none when no provider maps it).
func unmapName(name string) []string {
	var out []string
	for _, p := range providers {
		if n := manifest.ToolName(p, name); n != name && n != "" && !slices.Contains(out, n) && !strings.EqualFold(n, name) {
			out = append(out, n)
		}
	}
	return out
}
