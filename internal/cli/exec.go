package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// cmdExec runs a tool: tooldex exec TOOL [--params JSON | --params @file].
func cmdExec(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("exec", e, &c)
	params := fs.String("params", "{}", "parameters as a JSON object, or @file to read them from a file (@- for stdin)")
	caller := fs.String("caller", e.getenv("TOOLDEX_CALLER"), "caller identity for permission rules (env TOOLDEX_CALLER)")
	approval := fs.String("approval", "", "approval token from an earlier 'approval required' answer")
	names, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(names) != 1 {
		return errors.New("exec: name one tool: tooldex exec TOOL --params '{...}'")
	}
	name := names[0]
	text := *params
	if name, ok := strings.CutPrefix(text, "@"); ok {
		var data []byte
		var err error
		if name == "-" {
			data, err = io.ReadAll(e.stdin)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return fmt.Errorf("exec: --params: %w", err)
		}
		text = string(data)
	}
	if !json.Valid([]byte(text)) {
		return errors.New("exec: --params is not valid JSON")
	}
	client, ctx, done, err := dial(ctx, &c)
	if err != nil {
		return err
	}
	defer done()
	resp, err := client.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: name, ParamsJson: text, Caller: *caller, ApprovalToken: *approval, SessionId: "cli"})
	if status.Code(err) == codes.NotFound {
		if s := suggest(ctx, client, name); len(s) > 0 {
			return fmt.Errorf("%w; did you mean %s?", rpcError("exec", err), strings.Join(s, ", "))
		}
	}
	if err != nil {
		return rpcError("exec", err)
	}
	if c.json {
		return printJSON(e.stdout, resp)
	}
	if a := resp.GetApprovalRequired(); a != nil {
		fmt.Fprintf(e.stdout, "approval required for %s (%s): %s\nrun again with --approval %s\n", a.GetToolName(), a.GetRule(), a.GetParamsSummary(), a.GetApprovalToken())
		return nil
	}
	for _, block := range resp.GetContent() {
		switch k := block.GetKind().(type) {
		case *tooldexv1.Content_Text:
			fmt.Fprintln(e.stdout, k.Text)
		case *tooldexv1.Content_Json:
			b, _ := json.MarshalIndent(k.Json.AsInterface(), "", "  ")
			fmt.Fprintln(e.stdout, string(b))
		case *tooldexv1.Content_JsonText:
			var b bytes.Buffer
			if json.Indent(&b, []byte(k.JsonText), "", "  ") != nil {
				b.Reset()
				b.WriteString(k.JsonText)
			}
			fmt.Fprintln(e.stdout, b.String())
		case *tooldexv1.Content_Image:
			fmt.Fprintf(e.stdout, "[image %s, %d bytes]\n", k.Image.GetMimeType(), len(k.Image.GetData()))
		case *tooldexv1.Content_Resource:
			fmt.Fprintf(e.stdout, "[resource %s]\n%s\n", k.Resource.GetUri(), k.Resource.GetText())
		}
	}
	if resp.GetIsError() {
		return fmt.Errorf("exec: %s reported an error", resp.GetToolName())
	}
	return nil
}

// cmdHosts lists connected tool hosts.
func cmdHosts(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("hosts", e, &c)
	if err := fs.Parse(args); err != nil {
		return err
	}
	client, ctx, done, err := dial(ctx, &c)
	if err != nil {
		return err
	}
	defer done()
	req := &tooldexv1.ListHostsRequest{}
	hosts, err := allPages(func(token string) ([]*tooldexv1.HostInfo, string, error) {
		req.PageToken = token
		page, err := client.ListHosts(ctx, req)
		return page.GetHosts(), page.GetNextPageToken(), err
	})
	if err != nil {
		return rpcError("hosts", err)
	}
	resp := &tooldexv1.ListHostsResponse{Hosts: hosts}
	if c.json {
		return printJSON(e.stdout, resp)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSESSION\tVERSION\tSLOTS\tIN FLIGHT\tDONE\tTOOLS")
	for _, h := range resp.GetHosts() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", h.GetHostId(), h.GetSessionId(), h.GetVersion(), h.GetSlots(), h.GetInFlight(), h.GetCompleted(), strings.Join(h.GetTools(), ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%d host(s)\n", len(resp.GetHosts()))
	return err
}

// maxSuggestions is how many names "did you mean" offers.
const maxSuggestions = 3

// suggest returns registered names close to name, for a "did you mean"
// after NOT_FOUND: the tools a search for it finds and those sharing its
// first letters, closest spelling first; a name more than a third of its
// length away from every one gets nothing. Errors give no suggestions.
func suggest(ctx context.Context, client tooldexv1.DiscoveryServiceClient, name string) []string {
	var cands []string
	if resp, err := client.Search(ctx, &tooldexv1.SearchRequest{Query: name, MaxResults: 10, SchemaView: tooldexv1.SchemaView_SCHEMA_VIEW_NONE}); err == nil {
		for _, r := range resp.GetResults() {
			cands = append(cands, r.GetTool().GetName())
		}
	}
	if prefix := []rune(name); len(prefix) >= 2 {
		if resp, err := client.ListTools(ctx, &tooldexv1.ListToolsRequest{NamePrefix: string(prefix[:2])}); err == nil {
			for _, t := range resp.GetTools() {
				cands = append(cands, t.GetName())
			}
		}
	}
	return closest(name, cands, maxSuggestions)
}

// closest returns up to n distinct candidates within a third of name's
// length (at least 2) in edits, case aside, nearest first, ties by name.
func closest(name string, cands []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	limit := max(2, utf8.RuneCountInString(name)/3)
	seen := make(map[string]bool)
	var out []scored
	for _, c := range cands {
		if seen[c] || c == name {
			continue
		}
		seen[c] = true
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d <= limit {
			out = append(out, scored{c, d})
		}
	}
	slices.SortFunc(out, func(a, b scored) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.name, b.name)) })
	names := make([]string, 0, min(n, len(out)))
	for _, s := range out[:min(n, len(out))] {
		names = append(names, s.name)
	}
	return names
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
