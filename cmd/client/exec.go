package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// cmdExec runs a tool: tooldex exec TOOL [--params JSON | --params @file].
func cmdExec(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("exec", e, &c)
	params := fs.String("params", "{}", "parameters as a JSON object, or @file to read them from a file (@- for stdin)")
	caller := fs.String("caller", e.getenv("TOOLDEX_CALLER"), "caller identity for permission rules (env TOOLDEX_CALLER)")
	approval := fs.String("approval", "", "approval token from an earlier 'approval required' answer")
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		// Allow the tool name before the flags: tooldex exec calculate --params '{...}'.
		args = append(args[1:], args[0])
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("exec: name one tool: tooldex exec TOOL --params '{...}'")
	}
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
	resp, err := client.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: fs.Arg(0), ParamsJson: text, Caller: *caller, ApprovalToken: *approval, SessionId: "cli"})
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
	resp, err := client.ListHosts(ctx, &tooldexv1.ListHostsRequest{})
	if err != nil {
		return rpcError("hosts", err)
	}
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
