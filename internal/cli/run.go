package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/dialtarget"
	"github.com/tooldex/tooldex/internal/toolfile"
)

const usage = `usage: tooldex [--addr HOST:PORT] COMMAND [args] [flags]

Flags may come before or after arguments; "--" ends them (tooldex search -- -x).

commands:
  register FILE...        register tools from files (- reads stdin)
  search QUERY...         search deferred tools
  discover TASK...        rank tools for a task, with schemas
  list                    list registered tools
  unregister NAME...      remove tools
  exec TOOL --params JSON run a tool on a connected host (--params @file reads a file)
  hosts                   list connected tool hosts
  bench search [QUERY]    load a server with Search calls: latency percentiles and QPS, next to health checks
  soak                    mixed good and abusive traffic against a local server: answered, refused, lost (must be none)
  repl                    interactive console: tool hints as you type, /search, /discover, /exec (alias: chat)

Run 'tooldex COMMAND -h' for a command's flags. The developer commands eval and
bench memory, which run the server's packages in-process, are tooldex-dev's
(go run ./cmd/tooldex-dev -h).`

// common are the flags every server command has.
type common struct {
	addr    string
	json    bool
	timeout time.Duration
	creds   auth.ClientConfig // --token, --token-file, --tls-* (env TOOLDEX_TOKEN, TOOLDEX_CA, ...)
}

func (c *common) register(fs *flag.FlagSet, getenv func(string) string) {
	addr := getenv("TOOLDEX_ADDR")
	if addr == "" {
		addr = "localhost:50051"
	}
	fs.StringVar(&c.addr, "addr", addr, "server address (env TOOLDEX_ADDR); several replicas comma-separated, or a dns:/// name")
	fs.BoolVar(&c.json, "json", false, "print the response as JSON")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "deadline for the call")
	c.creds.RegisterFlags(fs, getenv)
}

// env carries what commands need from the process.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
}

// Main runs the command line (args without the program's name) and returns
// the exit status: 0 on success and for -h, 1 after printing an error on
// one line to stderr.
func Main(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := run(ctx, args, getenv, stdin, stdout)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "tooldex:", err)
	return 1
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	e := env{getenv: getenv, stdin: stdin, stdout: stdout}
	// The common flags may come before the command (tooldex --addr H:P
	// search ...): they are handed to the command with its own.
	var lead []string
	if len(args) > 0 && strings.HasPrefix(args[0], "-") && !isHelp(args[0]) {
		var c common
		fs := newFlags("", e, &c)
		fs.Usage = func() { fmt.Fprintln(e.stdout, usage) }
		if err := fs.Parse(args); err != nil {
			return err
		}
		n := len(args) - len(fs.Args())
		lead, args = args[:n:n], fs.Args()
	}
	if len(args) == 0 {
		return errors.New(usage)
	}
	cmd, args := args[0], slices.Concat(lead, args[1:])
	switch cmd {
	case "register":
		return cmdRegister(ctx, e, args)
	case "search":
		return cmdSearch(ctx, e, args)
	case "discover":
		return cmdDiscover(ctx, e, args)
	case "list":
		return cmdList(ctx, e, args)
	case "unregister":
		return cmdUnregister(ctx, e, args)
	case "exec":
		return cmdExec(ctx, e, args)
	case "hosts":
		return cmdHosts(ctx, e, args)
	case "bench":
		return cmdBench(ctx, e, args)
	case "soak":
		return cmdSoak(ctx, e, args)
	case "repl", "chat":
		return cmdREPL(ctx, e, args)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	if cmd == "eval" { // bench memory: cmdBench says the same
		return errors.New("eval runs the server's packages in-process: it is a developer command (go run ./cmd/tooldex-dev eval)")
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// parseArgs parses fs's flags wherever they are among args (tooldex search
// slack send --max 3) and returns the other arguments, in order. "--" ends
// the flags: what follows it is an argument even when it starts with "-".
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlags returns a command's flag set with the common flags.
func newFlags(name string, e env, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet("tooldex "+name, flag.ContinueOnError)
	fs.SetOutput(e.stdout)
	if c != nil {
		c.register(fs, e.getenv)
	}
	return fs
}

// dial connects to the server and returns a client and a context with the
// command's deadline.
func dial(ctx context.Context, c *common) (tooldexv1.DiscoveryServiceClient, context.Context, func(), error) {
	conn, err := connect(c)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	return tooldexv1.NewDiscoveryServiceClient(conn), ctx, func() { cancel(); conn.Close() }, nil
}

// connect opens the connection every command uses; dialOptions says how.
func connect(c *common) (*grpc.ClientConn, error) {
	opts, err := dialOptions(c)
	if err != nil {
		return nil, err
	}
	target, extra := dialtarget.Of(c.addr) // several replicas: the first that answers
	conn, err := grpc.NewClient(target, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", c.addr, err)
	}
	return conn, nil
}

// dialOptions are the options of every connection to the server: the one
// place for transport credentials (TLS and the bearer token of c.creds).
func dialOptions(c *common) ([]grpc.DialOption, error) {
	opts, err := c.creds.DialOptions()
	if err != nil {
		return nil, err
	}
	return append(opts, grpc.WithChainUnaryInterceptor(notRunningHint(c.addr))), nil
}

// notRunningHint turns "connection refused" into a question a newcomer can
// act on: is the server running at addr?
func notRunningHint(addr string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable && strings.Contains(st.Message(), "connection refused") {
			return status.Errorf(codes.Unavailable, "no server at %s: is the server running at %s? (start one with: go run ./cmd/server)", addr, addr)
		}
		return err
	}
}

// rpcError renders a gRPC error as one line, field violations included.
func rpcError(op string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", op, err)
	}
	msg := fmt.Sprintf("%s: %s: %s", op, st.Code(), st.Message())
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 && !strings.Contains(st.Message(), br.GetFieldViolations()[0].GetDescription()) {
			for _, v := range br.GetFieldViolations() {
				msg += fmt.Sprintf(" [%s: %s]", v.GetField(), v.GetDescription())
			}
		}
	}
	return errors.New(msg)
}

func printJSON(w io.Writer, m proto.Message) error {
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  ", EmitUnpopulated: false}.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func cmdRegister(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("register", e, &c)
	validate := fs.Bool("validate-only", false, "check the tools, register nothing")
	files, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("register: name at least one file")
	}
	var tools []*tooldexv1.Tool
	for _, path := range files {
		var ts []*tooldexv1.Tool
		var err error
		if path == "-" {
			data, rerr := io.ReadAll(e.stdin)
			if rerr != nil {
				return fmt.Errorf("register: stdin: %w", rerr)
			}
			ts, err = toolfile.Parse("stdin", data)
		} else {
			ts, err = toolfile.ReadFile(path)
		}
		if err != nil {
			return fmt.Errorf("register: %w", err)
		}
		tools = append(tools, ts...)
	}
	client, ctx, done, err := dial(ctx, &c)
	if err != nil {
		return err
	}
	defer done()
	resp, err := client.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: tools, ValidateOnly: *validate})
	if err != nil {
		return rpcError("register", err)
	}
	if c.json {
		return printJSON(e.stdout, resp)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tOUTCOME\tLOADING")
	for _, r := range resp.GetResults() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.GetName(), enumName(r.GetOutcome().String(), "REGISTER_OUTCOME_"), enumName(r.GetLoading().String(), "LOADING_"))
	}
	return tw.Flush()
}

func cmdSearch(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("search", e, &c)
	max := fs.Int("max", 0, "maximum results (0: server default of 5)")
	text := fs.Bool("text", false, "print the model-facing text instead of a table")
	schema := schemaViewFlag(fs)
	words, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	view, err := parseSchemaView("search", *schema)
	if err != nil {
		return err
	}
	query := strings.Join(words, " ")
	client, ctx, done, err := dial(ctx, &c)
	if err != nil {
		return err
	}
	defer done()
	resp, err := client.Search(ctx, &tooldexv1.SearchRequest{Query: query, MaxResults: int32(*max), SchemaView: view})
	if err != nil {
		return rpcError("search", err)
	}
	switch {
	case c.json:
		return printJSON(e.stdout, resp)
	case *text:
		_, err := fmt.Fprint(e.stdout, resp.GetText())
		return err
	}
	if err := printResults(e.stdout, resp.GetResults()); err != nil {
		return err
	}
	if al := resp.GetAlreadyLoaded(); len(al) > 0 {
		fmt.Fprintf(e.stdout, "already loaded (core): %s\n", strings.Join(al, ", "))
	}
	if nf := resp.GetNotFound(); len(nf) > 0 {
		fmt.Fprintf(e.stdout, "not found: %s\n", strings.Join(nf, ", "))
	}
	fmt.Fprintf(e.stdout, "%d result(s), %d deferred tools searched\n", len(resp.GetResults()), resp.GetTotalDeferredTools())
	return nil
}

func cmdDiscover(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("discover", e, &c)
	max := fs.Int("max", 0, "maximum results (0: server default of 5)")
	schema := schemaViewFlag(fs)
	words, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	view, err := parseSchemaView("discover", *schema)
	if err != nil {
		return err
	}
	client, ctx, done, err := dial(ctx, &c)
	if err != nil {
		return err
	}
	defer done()
	resp, err := client.Discover(ctx, &tooldexv1.DiscoverRequest{Query: strings.Join(words, " "), MaxResults: int32(*max), SchemaView: view})
	if err != nil {
		return rpcError("discover", err)
	}
	if c.json {
		return printJSON(e.stdout, resp)
	}
	_, err = fmt.Fprint(e.stdout, resp.GetText())
	return err
}

func printResults(w io.Writer, results []*tooldexv1.SearchResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tNAME\tSCORE\tKEYWORD\tTFIDF\tMATCH\tDESCRIPTION")
	for i, r := range results {
		fmt.Fprintf(tw, "%d\t%s\t%.3f\t%.3f\t%.3f\t%s\t%s\n", i+1, r.GetTool().GetName(), r.GetScore(),
			r.GetKeywordScore(), r.GetTfidfScore(), enumName(r.GetMatch().String(), "MATCH_KIND_"), cut(r.GetTool().GetDescription(), 60))
	}
	return tw.Flush()
}

func cmdList(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("list", e, &c)
	prefix := fs.String("prefix", "", "only names with this prefix")
	loading := fs.String("loading", "", "only core, deferred or excluded tools")
	if err := fs.Parse(args); err != nil {
		return err
	}
	req := &tooldexv1.ListToolsRequest{NamePrefix: *prefix}
	if *loading != "" {
		v, ok := tooldexv1.Loading_value["LOADING_"+strings.ToUpper(*loading)]
		if !ok {
			return fmt.Errorf("list: --loading must be core, deferred or excluded, not %q", *loading)
		}
		req.Loading = tooldexv1.Loading(v)
	}
	client, ctx, done, err := dial(ctx, &c)
	if err != nil {
		return err
	}
	defer done()
	tools, err := allPages(func(token string) ([]*tooldexv1.Tool, string, error) {
		req.PageToken = token
		page, err := client.ListTools(ctx, req)
		return page.GetTools(), page.GetNextPageToken(), err
	})
	if err != nil {
		return rpcError("list", err)
	}
	resp := &tooldexv1.ListToolsResponse{Tools: tools}
	if c.json {
		return printJSON(e.stdout, resp)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLOADING\tSOURCE\tDESCRIPTION")
	for _, t := range resp.GetTools() {
		src := enumName(t.GetSource().GetOrigin().String(), "ORIGIN_")
		if id := t.GetSource().GetId(); id != "" {
			src += ":" + id
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.GetName(), enumName(t.GetLoading().String(), "LOADING_"), src, cut(t.GetDescription(), 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%d tool(s)\n", len(resp.GetTools()))
	return err
}

func cmdUnregister(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("unregister", e, &c)
	names, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return errors.New("unregister: name at least one tool")
	}
	client, ctx, done, err := dial(ctx, &c)
	if err != nil {
		return err
	}
	defer done()
	resp, err := client.UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: names})
	if err != nil {
		return rpcError("unregister", err)
	}
	if c.json {
		return printJSON(e.stdout, resp)
	}
	fmt.Fprintf(e.stdout, "removed %d: %s\n", len(resp.GetRemoved()), strings.Join(resp.GetRemoved(), ", "))
	if nf := resp.GetNotFound(); len(nf) > 0 {
		fmt.Fprintf(e.stdout, "not found: %s\n", strings.Join(nf, ", "))
	}
	return nil
}

// schemaViewFlag adds --schema, how results carry input schemas, to a
// command's flags.
func schemaViewFlag(fs *flag.FlagSet) *string {
	return fs.String("schema", "struct", "how results carry input schemas: struct (google.protobuf.Struct), json (JSON text in input_schema_json) or none")
}

// parseSchemaView maps --schema to the request's schema_view.
func parseSchemaView(cmd, s string) (tooldexv1.SchemaView, error) {
	if v, ok := tooldexv1.SchemaView_value["SCHEMA_VIEW_"+strings.ToUpper(s)]; ok && s != "" && !strings.EqualFold(s, "unspecified") {
		return tooldexv1.SchemaView(v), nil
	}
	return 0, fmt.Errorf("%s: --schema must be struct, json or none, not %q", cmd, s)
}

func enumName(s, prefix string) string { return strings.ToLower(strings.TrimPrefix(s, prefix)) }

// cut returns the first line of s, at most n runes.
func cut(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
