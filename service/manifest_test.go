package service

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

func manifestServer(t *testing.T) *Server {
	t.Helper()
	s := New(Config{})
	tools := []*tooldexv1.Tool{
		{Name: "Read", Description: "Read a file."},
		{Name: "Bash", Description: "Run a shell command."},
		{Name: "mcp__slack__send_message", Description: "Send a message to a Slack channel."},
		{Name: "2fa_generate", Description: "Generate a two-factor code."},
	}
	if _, err := s.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGetManifestIsStableAndComplete(t *testing.T) {
	s := manifestServer(t)
	for _, provider := range []string{"anthropic", "openai", "gemini", "grok"} {
		t.Run(provider, func(t *testing.T) {
			req := &tooldexv1.GetManifestRequest{Provider: provider}
			a, err := s.GetManifest(t.Context(), req)
			if err != nil {
				t.Fatalf("GetManifest(%s) = %v", provider, err)
			}
			b, _ := s.GetManifest(t.Context(), req)
			if a.GetToolsJson() != b.GetToolsJson() || a.GetFingerprint() != b.GetFingerprint() {
				t.Errorf("GetManifest(%s) differs between two calls on the same catalog", provider)
			}
			if !json.Valid([]byte(a.GetToolsJson())) {
				t.Fatalf("tools_json is not JSON: %s", a.GetToolsJson())
			}
			for _, want := range []string{"Read", "Bash", "ToolSearch", "ExecuteTool"} {
				if !strings.Contains(a.GetToolsJson(), `"`+want+`"`) {
					t.Errorf("tools_json lacks %s", want)
				}
			}
			if strings.Contains(a.GetToolsJson(), "send_message") {
				t.Error("tools_json holds a deferred tool's definition")
			}
			if len(a.GetDeferredToolNames()) != 2 || !strings.Contains(a.GetDeferredToolsBlock(), "mcp__slack__send_message") {
				t.Errorf("deferred names = %v, block %q; want the two deferred tools", a.GetDeferredToolNames(), a.GetDeferredToolsBlock())
			}
			if !strings.Contains(a.GetSystemPrompt(), "ToolSearch") {
				t.Errorf("system prompt does not teach ToolSearch: %q", a.GetSystemPrompt())
			}
		})
	}
	// Deferred tools coming and going change only the names block.
	before, _ := s.GetManifest(t.Context(), &tooldexv1.GetManifestRequest{Provider: "openai"})
	if _, err := s.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "mcp__github__create_issue", Description: "Create an issue."}}}); err != nil {
		t.Fatal(err)
	}
	after, _ := s.GetManifest(t.Context(), &tooldexv1.GetManifestRequest{Provider: "openai"})
	if before.GetToolsJson() != after.GetToolsJson() {
		t.Error("adding a deferred tool changed tools_json (the cached prefix)")
	}
	if before.GetDeferredToolsBlock() == after.GetDeferredToolsBlock() {
		t.Error("adding a deferred tool did not change the deferred names block")
	}
}

func TestGetManifestRejectsUnknownProvider(t *testing.T) {
	s := manifestServer(t)
	_, err := s.GetManifest(t.Context(), &tooldexv1.GetManifestRequest{Provider: "palm"})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("GetManifest(palm) code = %v, want InvalidArgument", status.Code(err))
	}
}

func TestSearchContentPerProvider(t *testing.T) {
	s := manifestServer(t)
	ref, err := s.Search(t.Context(), &tooldexv1.SearchRequest{Query: "slack send", Provider: "anthropic", ToolReference: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ref.GetContentJson(), `"tool_reference"`) || !strings.Contains(ref.GetContentJson(), "mcp__slack__send_message") {
		t.Errorf("anthropic tool_reference content = %s", ref.GetContentJson())
	}
	text, _ := s.Search(t.Context(), &tooldexv1.SearchRequest{Query: "slack send", Provider: "openai"})
	if strings.Contains(text.GetContentJson(), "tool_reference") || !strings.Contains(text.GetContentJson(), `"text"`) {
		t.Errorf("openai content = %s, want text blocks", text.GetContentJson())
	}
	none, _ := s.Search(t.Context(), &tooldexv1.SearchRequest{Query: "slack send"})
	if none.GetContentJson() != "" {
		t.Errorf("content without a provider = %q, want empty", none.GetContentJson())
	}
}

func TestExecuteAcceptsGeminiMappedName(t *testing.T) {
	s := manifestServer(t)
	m, err := s.GetManifest(t.Context(), &tooldexv1.GetManifestRequest{Provider: "gemini"})
	if err != nil {
		t.Fatal(err)
	}
	var mapped string
	for _, nm := range m.GetNameMappings() {
		if nm.GetToolName() == "2fa_generate" {
			mapped = nm.GetProviderName()
		}
	}
	if mapped == "" || mapped == "2fa_generate" {
		t.Fatalf("gemini mappings = %v, want one for 2fa_generate", m.GetNameMappings())
	}
	if e := s.lookup(auth.DefaultTenant, mapped); e == nil || e.Name() != "2fa_generate" {
		t.Errorf("lookup(%q) = %v, want 2fa_generate", mapped, e)
	}
}
