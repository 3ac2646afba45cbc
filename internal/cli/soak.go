package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolhost"
)

// soakCounts are what a soak run saw, per kind of traffic.
type soakCounts struct {
	answered, refused, lost atomic.Int64
	mu                      sync.Mutex
	lostWhy                 map[string]int
}

func (c *soakCounts) add(err error, refusals ...codes.Code) {
	code := status.Code(err)
	switch {
	case err == nil:
		c.answered.Add(1)
	case code == codes.ResourceExhausted || containsCode(refusals, code):
		c.refused.Add(1)
	default:
		c.lost.Add(1)
		c.mu.Lock()
		if c.lostWhy == nil {
			c.lostWhy = make(map[string]int)
		}
		msg := status.Convert(err).Message()
		c.lostWhy[code.String()+": "+msg[:min(len(msg), 120)]]++
		c.mu.Unlock()
	}
}

func containsCode(cs []codes.Code, c codes.Code) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// cmdSoak runs mixed good and abusive traffic against a server on this
// machine for --duration and prints, per kind, what was answered, refused
// (the right refusal for abusive input, or RESOURCE_EXHAUSTED) and lost
// (any other error: must be none). It serves a tool of its own
// (soak_echo) through a host it runs.
func cmdSoak(ctx context.Context, e env, args []string) error {
	var c common
	fs := newFlags("soak", e, &c)
	dur := fs.Duration("duration", 30*time.Second, "how long to run (at most 10m)")
	good := fs.Int("good", 8, "well-behaved callers (Search, Prefetch, Execute)")
	bad := fs.Int("abusive", 4, "abusive callers (oversized and invalid input, unknown tools, floods)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dur <= 0 || *dur > 10*time.Minute || *good < 1 || *bad < 0 || *good+*bad > 256 {
		return errors.New("soak: --duration in (0, 10m], --good in [1, 256], --abusive not negative")
	}
	if err := loopbackOnly(c.addr); err != nil {
		return err
	}
	conn, err := connect(&c)
	if err != nil {
		return fmt.Errorf("soak: %w", err)
	}
	defer conn.Close()
	client := tooldexv1.NewDiscoveryServiceClient(conn)

	// Our own host, so Execute has something to run.
	host := toolhost.New(toolhost.Config{Addr: c.addr, HostID: "soak", Version: "soak", Slots: 64})
	if err := host.Handle(&tooldexv1.Tool{Name: "soak_echo", Description: "Echo for the soak test.",
		InputSchema: mustStruct(map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}),
	}, func(context.Context, *toolhost.Call) (*toolhost.Result, error) { return toolhost.Text("ok"), nil }); err != nil {
		return err
	}
	hostCtx, stopHost := context.WithCancel(ctx)
	hostDone := make(chan error, 1)
	go func() { hostDone <- host.Run(hostCtx) }()
	defer func() { stopHost(); <-hostDone }()
	readyCtx, cancelReady := context.WithTimeout(ctx, 10*time.Second)
	err = host.WaitReady(readyCtx)
	cancelReady()
	if err != nil {
		return fmt.Errorf("soak: the soak host did not connect: %w", err)
	}

	runCtx, cancel := context.WithTimeout(ctx, *dur)
	defer cancel()
	var goodCounts, badCounts soakCounts
	abuses := soakAbuses()
	perAbuse := make([]soakCounts, len(abuses))
	call := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 10*time.Second)
	}
	var wg sync.WaitGroup
	for i := range *good {
		wg.Go(func() {
			for n := 0; runCtx.Err() == nil; n++ {
				cctx, ccancel := call()
				var err error
				switch (i + n) % 3 {
				case 0:
					_, err = client.Search(cctx, &tooldexv1.SearchRequest{Query: "echo soak"})
				case 1:
					_, err = client.Prefetch(cctx, &tooldexv1.PrefetchRequest{Message: "echo something for the soak", SessionId: "soak-" + strconv.Itoa(i)})
				default:
					_, err = client.Execute(cctx, &tooldexv1.ExecuteRequest{ToolName: "soak_echo", ParamsJson: `{"n":` + strconv.Itoa(n) + `}`})
				}
				ccancel()
				goodCounts.add(err)
			}
		})
	}
	for i := range *bad {
		wg.Go(func() {
			for n := 0; runCtx.Err() == nil; n++ {
				k := (i + n) % len(abuses)
				a := abuses[k]
				cctx, ccancel := call()
				err := a.run(cctx, client)
				ccancel()
				badCounts.add(err, a.refusals...)
				perAbuse[k].add(err, a.refusals...)
			}
		})
	}
	wg.Wait()
	for _, r := range []struct {
		name string
		c    *soakCounts
	}{{"good", &goodCounts}, {"abusive", &badCounts}} {
		fmt.Fprintf(e.stdout, "%-8s answered %d, refused %d, lost %d\n", r.name, r.c.answered.Load(), r.c.refused.Load(), r.c.lost.Load())
		for why, n := range r.c.lostWhy {
			fmt.Fprintf(e.stdout, "  lost %d: %s\n", n, why)
		}
	}
	for k, a := range abuses {
		c := &perAbuse[k]
		fmt.Fprintf(e.stdout, "  %-28s answered %d, refused %d, lost %d\n", a.name, c.answered.Load(), c.refused.Load(), c.lost.Load())
	}
	if n := goodCounts.lost.Load() + badCounts.lost.Load(); n > 0 {
		return fmt.Errorf("soak: %d calls lost", n)
	}
	return nil
}

// soakAbuse is one kind of abusive request and the codes that refuse it
// rightly.
type soakAbuse struct {
	name     string
	refusals []codes.Code
	run      func(ctx context.Context, c tooldexv1.DiscoveryServiceClient) error
}

func soakAbuses() []soakAbuse {
	enum := make([]any, 2000)
	for i := range enum {
		enum[i] = "value-" + strconv.Itoa(i)
	}
	bogus := make([]any, 8000)
	for i := range bogus {
		bogus[i] = "bogus-" + strconv.Itoa(i)
	}
	items, _ := structpb.NewStruct(map[string]any{"n": bogus})
	// 12 MiB: past what the SDK host took before, within the server's
	// message limit; delivered or refused as too large, never failing
	// another call.
	huge, _ := structpb.NewStruct(map[string]any{"s": strings.Repeat("x", 12<<20)})
	zeros := `{"n":[` + strings.TrimSuffix(strings.Repeat("0,", 3<<19), ",") + `]}`
	loaded := make([]string, 1001)
	for i := range loaded {
		loaded[i] = strconv.Itoa(i)
	}
	inv := []codes.Code{codes.InvalidArgument}
	return []soakAbuse{
		{"unknown tool", []codes.Code{codes.NotFound}, func(ctx context.Context, c tooldexv1.DiscoveryServiceClient) error {
			_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "no_such_tool_" + strconv.FormatInt(time.Now().UnixNano(), 36)})
			return err
		}},
		{"invalid items", inv, func(ctx context.Context, c tooldexv1.DiscoveryServiceClient) error {
			_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "soak_echo", Params: items})
			return err
		}},
		{"params too large for a host", inv, func(ctx context.Context, c tooldexv1.DiscoveryServiceClient) error {
			_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "soak_echo", ParamsJson: zeros})
			return err
		}},
		{"huge params", append(inv, codes.ResourceExhausted), func(ctx context.Context, c tooldexv1.DiscoveryServiceClient) error {
			_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "soak_echo", Params: huge})
			return err
		}},
		{"$ref cycle", inv, func(ctx context.Context, c tooldexv1.DiscoveryServiceClient) error {
			_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{ValidateOnly: true, Tools: []*tooldexv1.Tool{{Name: "soak_cycle", InputSchema: mustStruct(map[string]any{"$ref": "#"})}}})
			return err
		}},
		{"long enum", inv, func(ctx context.Context, c tooldexv1.DiscoveryServiceClient) error {
			long := append(append([]any(nil), enum...), enum...)
			_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{ValidateOnly: true, Tools: []*tooldexv1.Tool{{Name: "soak_enum", InputSchema: mustStruct(map[string]any{"type": "object", "properties": map[string]any{"e": map[string]any{"enum": long}}})}}})
			return err
		}},
		{"prefetch flood", inv, func(ctx context.Context, c tooldexv1.DiscoveryServiceClient) error {
			_, err := c.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: "x", SessionId: strings.Repeat("s", 257), Loaded: loaded})
			return err
		}},
		{"long query", inv, func(ctx context.Context, c tooldexv1.DiscoveryServiceClient) error {
			_, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: strings.Repeat("q ", 5000)})
			return err
		}},
	}
}

func mustStruct(m map[string]any) *structpb.Struct {
	st, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return st
}

// loopbackOnly refuses an address that is not on this machine: soak
// sends abusive traffic.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("soak: --addr %q: %w", addr, err)
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return fmt.Errorf("soak: --addr %q: %w", addr, err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("soak: --addr %q resolves to %s: soak runs against a server on this machine only (loopback)", addr, ip)
		}
	}
	return nil
}
