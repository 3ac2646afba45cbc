package e2e

import (
	"strings"
	"testing"
	"time"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/semantic/semantictest"
)

// TestSemanticRanking runs the server with --embedder-url against an
// embeddings server on loopback: a search that shares no word with a tool
// finds it, and when the embedder fails the lexical ranking still answers.
func TestSemanticRanking(t *testing.T) {
	model := &semantictest.Concepts{}
	emb := semantictest.Serve(model)
	defer emb.Close()
	s := startServer(t, "--demo-host=false", "--embedder-url", emb.URL+"/v1", "--embedder-model", "concepts", "--semantic-timeout", "2s")
	c := s.conn(t)
	_, err := c.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{
		{Name: "mcp__wx__get_outlook", Description: "Returns the temperature outlook for a place."},
		{Name: "mcp__post__send_mail", Description: "Deliver a message to an inbox."},
		{Name: "mcp__fs__read_document", Description: "Reads a document from disk."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	search := func(q string) []string {
		t.Helper()
		resp, err := c.Search(t.Context(), &tooldexv1.SearchRequest{Query: q})
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		var names []string
		for _, r := range resp.GetResults() {
			names = append(names, r.GetTool().GetName())
		}
		return names
	}
	// Tools are embedded in the background: wait for the dense match.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := search("weather in Paris")
		if len(got) > 0 && got[0] == "mcp__wx__get_outlook" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Search(weather in Paris) = %v, want mcp__wx__get_outlook first\nserver log:\n%s", got, s.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := search("email my boss"); len(got) == 0 || got[0] != "mcp__post__send_mail" {
		t.Errorf("Search(email my boss) = %v, want mcp__post__send_mail first", got)
	}

	model.Down.Store(true)
	if got := search("read a document"); len(got) == 0 || got[0] != "mcp__fs__read_document" {
		t.Errorf("embedder down: Search(read a document) = %v, want the lexical match", got)
	}
	// The server's log reaches us through a pipe: wait for the line.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(s.logs(), "embedding the query failed"); {
		if time.Now().After(deadline) {
			t.Fatalf("embedder down: no warning logged:\n%s", s.logs())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
