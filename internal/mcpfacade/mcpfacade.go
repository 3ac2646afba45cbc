// Package mcpfacade serves tooldex as an MCP server: a DiscoveryService
// client behind two MCP tools, ToolSearch (Search, or Discover for
// "discover:" queries) and ExecuteTool (Execute), built on the official Go
// SDK (github.com/modelcontextprotocol/go-sdk/mcp).
//
// Errors a model can act on (invalid params, unknown tools, denied or
// unavailable calls) come back as tool results with IsError set, carrying
// the gRPC status message; only internal failures are protocol errors.
// A call a permission rule says to "ask" about is never approved by the
// model: when the MCP client supports elicitation the user is asked there,
// otherwise the result is an error saying the user must approve, and the
// approval token never reaches the model.
//
// # Authorization
//
// Over HTTP (HTTPHandler) the façade is an OAuth 2.0 resource server as the
// MCP authorization spec asks: it validates bearer tokens with an
// auth.Authenticator built from the same configuration as the tooldex
// server (tokens file, OIDC issuer or JWKS URL and audience), answers 401
// with WWW-Authenticate: Bearer resource_metadata="..." without a valid
// one, serves its protected-resource metadata (RFC 9728) naming the OIDC
// issuer as authorization server, and refuses browser origins other than
// loopback and allowed ones (403).
//
// It calls tooldex with the user's own token: each Search, Discover and
// Execute made for an MCP request carries that request's bearer token, which
// the tooldex server verifies again (cached, so at the cost of a hash). The
// façade and the server are one resource with one audience, so this is not
// the token passthrough the spec forbids (a token for another resource sent
// on): the server sees the user as its principal, so the user's tenant,
// scopes and permission rules apply, and the façade holds no credential of
// its own that could act for anyone else (acting through an act-as
// principal would make every user as strong as the façade if it were
// confused). The façade's own credentials (auth.ClientConfig) serve stdio
// and unauthenticated loopback use.
package mcpfacade

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/manifest"
	"github.com/tooldex/tooldex/internal/mcpconv"
)

// Options configures the MCP server.
type Options struct {
	// Caller is the identity sent with Search, Discover, Execute and
	// GetManifest, matched by tooldex's permission rules.
	Caller string
	// PassThrough also exposes the core tools of GetManifest (provider
	// "anthropic") as MCP tools, each forwarding to Execute by name.
	PassThrough bool
	// Name and Version of the MCP implementation; "tooldex" and "dev" when
	// empty.
	Name, Version string
	// Logger for the facade and the SDK; nil discards.
	Logger *slog.Logger
	// ManifestTimeout bounds the GetManifest call PassThrough makes in New;
	// 0 means 10s.
	ManifestTimeout time.Duration
}

// Instructions is the InitializeResult instructions text: the system-prompt
// guidance for a model using the server.
const Instructions = `Most tools are not loaded: they are deferred, and found with ToolSearch. Before you tell the user that a capability is missing, search for it with ToolSearch (keywords, "discover:<task>", "select:Name1,Name2" or "mcp__<server>"). Then call the tool you found with ExecuteTool {"tool_name": "<name>", "params": {...}}, with params matching the schema ToolSearch returned (use "select:<name>" to get a full schema). Call the tools in your tool list directly. If a call needs the user's approval, ask the user; never try to approve it yourself.`

// New returns an MCP server exposing client as ToolSearch and ExecuteTool
// (and, with opts.PassThrough, the core tools). With PassThrough a failed
// GetManifest is logged and the server runs without the core tools; use
// AddCoreTools to handle that error yourself.
func New(client tooldexv1.DiscoveryServiceClient, opts Options) *mcp.Server {
	f := &facade{client: client, opts: opts, log: opts.Logger}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	name, version := opts.Name, opts.Version
	if name == "" {
		name = "tooldex"
	}
	if version == "" {
		version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: name, Title: "tooldex tool discovery", Version: version},
		&mcp.ServerOptions{Instructions: Instructions, Logger: opts.Logger})
	entry := manifest.EntryTools()
	s.AddTool(mcpconv.ToTool(entry[0]), f.search)
	s.AddTool(mcpconv.ToTool(entry[1]), f.execute)
	if opts.PassThrough {
		timeout := opts.ManifestTimeout
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		n, err := AddCoreTools(ctx, s, client, opts)
		cancel()
		if err != nil {
			f.log.Warn("mcpfacade: core tools not exposed", "error", err)
		} else {
			f.log.Info("mcpfacade: core tools exposed", "tools", n)
		}
	}
	return s
}

// AddCoreTools adds the core tools of client's GetManifest (provider
// "anthropic", opts.Caller) to s, each forwarding to Execute under its
// name; ToolSearch and ExecuteTool are skipped. It returns how many it
// added.
func AddCoreTools(ctx context.Context, s *mcp.Server, client tooldexv1.DiscoveryServiceClient, opts Options) (int, error) {
	m, err := client.GetManifest(ctx, &tooldexv1.GetManifestRequest{Provider: "anthropic", Caller: opts.Caller})
	if err != nil {
		return 0, fmt.Errorf("GetManifest: %w", err)
	}
	var tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal([]byte(m.GetToolsJson()), &tools); err != nil {
		return 0, fmt.Errorf("GetManifest tools_json: %w", err)
	}
	f := &facade{client: client, opts: opts, log: opts.Logger}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	// The manifest says which core tools the caller has; ListTools has
	// their full definitions (title, icons, output schema, _meta,
	// annotations), which MCP clients get as the tools' own.
	full := make(map[string]*tooldexv1.Tool)
	if lr, err := client.ListTools(ctx, &tooldexv1.ListToolsRequest{Loading: tooldexv1.Loading_LOADING_CORE}); err != nil {
		f.log.Warn("mcpfacade: ListTools failed: core tools get only their name, description and input schema", "error", err)
	} else {
		for _, t := range lr.GetTools() {
			full[t.GetName()] = t
		}
	}
	n := 0
	for _, t := range tools {
		if t.Name == "" || t.Name == manifest.ToolSearchName || t.Name == manifest.ExecuteToolName {
			continue // ToolSearch, ExecuteTool, and server-side tools without a name
		}
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema["type"] != "object" {
			schema = map[string]any{"type": "object"} // MCP needs an object schema
		}
		name := t.Name
		mt := &mcp.Tool{Name: name, Description: t.Description, InputSchema: schema}
		if ft := full[name]; ft != nil {
			mt = mcpconv.ToTool(ft)
			if m, _ := mt.InputSchema.(map[string]any); m["type"] != "object" {
				mt.InputSchema = schema // MCP needs an object schema
			}
		}
		err := addTool(s, mt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, problem := args(req.Params.Arguments)
			if problem != "" {
				return inputError(name, problem, "an object matching the tool's input schema"), nil
			}
			params, err := json.Marshal(a)
			if err != nil {
				return nil, err
			}
			return f.call(ctx, req, name, string(params))
		})
		if err != nil {
			f.log.Warn("mcpfacade: core tool not exposed", "tool", name, "error", err)
			continue
		}
		n++
	}
	return n, nil
}

// addTool is s.AddTool, which panics on a tool it cannot serve (a schema
// the SDK refuses): a registered tool must not take the façade down.
func addTool(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	s.AddTool(t, h)
	return nil
}

// facade holds what the tool handlers share.
type facade struct {
	client tooldexv1.DiscoveryServiceClient
	opts   Options
	log    *slog.Logger
}

const (
	searchExpected  = `{"query": "<query>", "max_results": <1-100, optional>}`
	executeExpected = `{"tool_name": "<name>", "params": {...}} (params {} when the tool takes none)`
)

func (f *facade) search(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx = forwardToken(ctx, req)
	a, problem := args(req.Params.Arguments)
	if problem != "" {
		return inputError(manifest.ToolSearchName, problem, searchExpected), nil
	}
	query, ok, problem := stringArg(a, "query")
	if problem == "" && (!ok || strings.TrimSpace(query) == "") {
		problem = `"query" is required, e.g. {"query": "slack send"} or {"query": "select:Name1,Name2"}`
	}
	if problem != "" {
		return inputError(manifest.ToolSearchName, problem, searchExpected), nil
	}
	maxResults, _, problem := intArg(a, "max_results", 1, 100)
	if problem != "" {
		return inputError(manifest.ToolSearchName, problem, searchExpected), nil
	}
	limit := int32(maxResults)
	query = strings.TrimSpace(query)
	if task, ok := cutPrefixFold(query, "discover:"); ok {
		resp, err := f.client.Discover(ctx, &tooldexv1.DiscoverRequest{Query: strings.TrimSpace(task), MaxResults: limit, Caller: f.opts.Caller})
		if err != nil {
			return f.rpcError("Discover", err)
		}
		return textResult(resp.GetText()), nil
	}
	resp, err := f.client.Search(ctx, &tooldexv1.SearchRequest{Query: query, MaxResults: limit, Caller: f.opts.Caller})
	if err != nil {
		return f.rpcError("Search", err)
	}
	return textResult(resp.GetText()), nil
}

// cutPrefixFold is strings.CutPrefix, ignoring ASCII case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func (f *facade) execute(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, problem := args(req.Params.Arguments)
	if problem != "" {
		return inputError(manifest.ExecuteToolName, problem, executeExpected), nil
	}
	name, ok, problem := stringArg(a, "tool_name")
	if problem == "" && (!ok || strings.TrimSpace(name) == "") {
		problem = `"tool_name" is required: find the tool with ToolSearch first`
	}
	if problem != "" {
		return inputError(manifest.ExecuteToolName, problem, executeExpected), nil
	}
	params, ok, problem := objectArg(a, "params")
	if problem == "" && !ok {
		problem = `"params" is required: pass {} when the tool takes no parameters`
	}
	if problem != "" {
		return inputError(manifest.ExecuteToolName, problem, executeExpected), nil
	}
	return f.call(ctx, req, strings.TrimSpace(name), params)
}

// call runs Execute for tool name with its parameters as JSON text (so
// 64-bit integers stay exact) and maps the answer to an MCP result.
func (f *facade) call(ctx context.Context, req *mcp.CallToolRequest, name, paramsJSON string) (*mcp.CallToolResult, error) {
	ctx = forwardToken(ctx, req)
	ereq := &tooldexv1.ExecuteRequest{ToolName: name, ParamsJson: paramsJSON, Caller: f.opts.Caller}
	if req != nil && req.Session != nil {
		ereq.SessionId = req.Session.ID()
	}
	resp, err := f.exec(ctx, req, ereq)
	if err != nil {
		return f.rpcError("Execute", err)
	}
	if ar := resp.GetApprovalRequired(); ar != nil {
		token, res := f.approve(ctx, req, ar)
		if res != nil {
			return res, nil
		}
		ereq.ApprovalToken = token
		if resp, err = f.exec(ctx, req, ereq); err != nil {
			return f.rpcError("Execute", err)
		}
		if resp.GetApprovalRequired() != nil {
			return toolError(approvalText(resp.GetApprovalRequired())), nil
		}
	}
	return result(resp), nil
}

// approvalKey is the id of the approval elicitation in a multi round-trip
// tool call (SEP-2322).
const approvalKey = "tooldex_approval"

// approve gets the user's approval of a call through MCP elicitation, sent
// as an input request of the tool call (the SDK elicits directly for
// clients older than multi round-trip requests). It returns the approval
// token, or the tool result to answer with. The token never leaves the
// facade: on the retry the call is approved again, and the user's answer
// decides whether its fresh token is used.
func (f *facade) approve(_ context.Context, req *mcp.CallToolRequest, ar *tooldexv1.ApprovalRequest) (string, *mcp.CallToolResult) {
	if req != nil && req.Params != nil {
		if r, ok := req.Params.InputResponses[approvalKey].(*mcp.ElicitResult); ok {
			if r.Action == "accept" {
				return ar.GetApprovalToken(), nil
			}
			f.log.Info("mcpfacade: user did not approve", "tool", ar.GetToolName(), "action", r.Action)
			return "", toolError(fmt.Sprintf("The user did not approve calling %s (%s): it did not run. Do not retry it unless the user asks you to.", ar.GetToolName(), r.Action))
		}
	}
	if req == nil || req.Session == nil {
		return "", toolError(approvalText(ar))
	}
	if ip := req.Session.InitializeParams(); ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return "", toolError(approvalText(ar))
	}
	msg := fmt.Sprintf("Allow the tool %s to run?", ar.GetToolName())
	if s := ar.GetParamsSummary(); s != "" {
		msg += "\nParameters: " + s
	}
	if r := ar.GetRule(); r != "" {
		msg += "\nRule: " + r
	}
	return "", &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{approvalKey: &mcp.ElicitParams{
		Mode:            "form",
		Message:         msg,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}}}
}

// approvalText explains an approval request to the model, without the
// token: the model must not approve its own calls.
func approvalText(ar *tooldexv1.ApprovalRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Not run: calling %s needs the user's approval", ar.GetToolName())
	if r := ar.GetRule(); r != "" {
		fmt.Fprintf(&b, " (rule: %s)", r)
	}
	b.WriteString(".")
	if s := ar.GetParamsSummary(); s != "" {
		fmt.Fprintf(&b, " Parameters: %s.", s)
	}
	b.WriteString(" You cannot approve it yourself: tell the user what you want to run and why, and ask them to approve it (or to change the permission rules), then try again.")
	return b.String()
}

// result maps an ExecuteResponse to an MCP tool result: every content
// block as the host sent it (annotations and _meta too), structured
// content and isError.
func result(resp *tooldexv1.ExecuteResponse) *mcp.CallToolResult {
	return mcpconv.ToResult(resp.GetContent(), resp.GetStructuredContent(), resp.GetIsError())
}

// rpcError maps a gRPC error: internal failures are protocol errors,
// everything else a tool error the model can act on.
func (f *facade) rpcError(rpc string, err error) (*mcp.CallToolResult, error) {
	st, ok := status.FromError(err)
	if !ok {
		return nil, fmt.Errorf("tooldex %s: %w", rpc, err)
	}
	switch st.Code() {
	case codes.Internal, codes.DataLoss, codes.Unimplemented, codes.Unknown:
		f.log.Error("mcpfacade: tooldex call failed", "rpc", rpc, "code", st.Code().String(), "error", st.Message())
		return nil, fmt.Errorf("tooldex %s: %s: %s", rpc, st.Code(), st.Message())
	case codes.NotFound:
		msg := st.Message()
		if !strings.Contains(strings.ToLower(msg), "search") {
			msg += "; find tools with ToolSearch first"
		}
		return toolError(msg), nil
	case codes.Unavailable:
		return toolError("tooldex is unavailable: " + st.Message() + ". Try again later."), nil
	case codes.Canceled:
		return toolError("cancelled: " + st.Message()), nil
	}
	return toolError(st.Message()), nil
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
