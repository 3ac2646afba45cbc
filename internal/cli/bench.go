package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // the codec rawCodec wraps
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// cmdBench measures a deployment: tooldex bench search [--concurrency N]
// [--duration D] [--schema struct|json|none] [--interleave S] [QUERY...]
// runs Search (with that schema view) in a loop from N callers and
// prints latency percentiles and throughput, next to the same load of gRPC
// health checks on the same server (the floor: the cost of a call that does
// nothing).
//
// bench memory, which measures the service in-process, is tooldex-dev's
// (internal/devcli).
func cmdBench(ctx context.Context, e env, args []string) error {
	if len(args) == 0 || args[0] != "search" {
		return errors.New("bench: usage: tooldex bench search [--concurrency N] [--duration D] [--schema struct|json|none] [QUERY...] (bench memory is go run ./cmd/tooldex-dev bench memory)")
	}
	var c common
	fs := newFlags("bench search", e, &c)
	conc := fs.Int("concurrency", 1, "concurrent callers")
	dur := fs.Duration("duration", 5*time.Second, "how long each measurement runs")
	floor := fs.Bool("floor", true, "also measure gRPC health checks on the same server")
	withSearch := fs.Bool("search", true, "measure Search (false: the floor alone, e.g. for its CPU per call)")
	decode := fs.Bool("decode", true, "decode Search responses (false: take them as bytes, to leave the client's decoding out of a shared machine's CPU)")
	schema := schemaViewFlag(fs)
	cpuprofile := fs.String("cpuprofile", "", "write the client's CPU profile of the whole run here")
	slice := fs.Duration("interleave", 0, "alternate Search and the floor in slices this long until each has run --duration (0: one after the other); on a shared, noisy machine both then see the same conditions")
	words, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	view, err := parseSchemaView("bench", *schema)
	if err != nil {
		return err
	}
	if *conc < 1 || *dur <= 0 || *slice < 0 {
		return errors.New("bench: --concurrency and --duration must be positive, --interleave not negative")
	}
	queries := []string{strings.Join(words, " ")}
	if queries[0] == "" {
		queries = []string{"slack send message", "read a file", "create github issue", "schedule cron job", "time zone", "calculate expression"}
	}
	conn, err := connect(&c)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer conn.Close()
	search := tooldexv1.NewDiscoveryServiceClient(conn)
	health := healthpb.NewHealthClient(conn)
	runs := []struct {
		name string
		call func(ctx context.Context, i int) error
	}{{"search", func(ctx context.Context, i int) error {
		req := &tooldexv1.SearchRequest{Query: queries[i%len(queries)], SchemaView: view}
		if !*decode {
			var reply rawReply
			return conn.Invoke(ctx, tooldexv1.DiscoveryService_Search_FullMethodName, req, &reply, grpc.ForceCodecV2(rawCodec{encoding.GetCodecV2("proto")}))
		}
		_, err := search.Search(ctx, req)
		return err
	}}}
	if !*withSearch {
		runs = runs[:0]
	}
	if *floor || !*withSearch {
		runs = append(runs, struct {
			name string
			call func(ctx context.Context, i int) error
		}{"health (floor)", func(ctx context.Context, i int) error {
			_, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
			return err
		}})
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	mode := "one after the other"
	if *slice > 0 {
		mode = fmt.Sprintf("interleaved in %s slices", *slice)
	}
	fmt.Fprintf(e.stdout, "%s, %d caller(s), %s each (%s), schema view %s\n", c.addr, *conc, *dur, mode, *schema)
	fmt.Fprintf(e.stdout, "%-15s %10s %10s %10s %10s %10s %8s\n", "call", "calls", "QPS", "p50", "p90", "p99", "errors")
	type result struct {
		lat  []time.Duration
		errs int
		took time.Duration // wall time spent running this call
	}
	results := make([]result, len(runs))
	if *slice == 0 {
		for i, r := range runs {
			start := time.Now()
			results[i].lat, results[i].errs = load(ctx, *conc, *dur, r.call)
			results[i].took = time.Since(start)
		}
	} else {
		// Each slice ends when its callers have finished their last call
		// (none is cancelled mid-flight); each call's wall time counts the
		// drain.
		seq := make([]int, len(runs))
		for results[0].took < *dur && ctx.Err() == nil {
			for i, r := range runs {
				start := time.Now()
				lat, errs, next := slicedLoad(ctx, *conc, *slice, seq[i], r.call)
				results[i].took += time.Since(start)
				results[i].lat = append(results[i].lat, lat...)
				results[i].errs += errs
				seq[i] = next
			}
		}
	}
	for i, r := range runs {
		lat, errs := results[i].lat, results[i].errs
		if len(lat) == 0 {
			return fmt.Errorf("bench: every %s call failed (%d errors)", r.name, errs)
		}
		slices.Sort(lat)
		pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		fmt.Fprintf(e.stdout, "%-15s %10d %10.0f %10s %10s %10s %8d\n", r.name, len(lat), float64(len(lat))/results[i].took.Seconds(),
			pct(0.50).Round(time.Microsecond), pct(0.90).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), errs)
	}
	return nil
}

// slicedLoad runs call from conc goroutines, each starting calls until d
// has passed and finishing the one in flight; call numbers start at seq.
// It returns every successful call's latency, the failures and the next
// call number.
func slicedLoad(ctx context.Context, conc int, d time.Duration, seq int, call func(context.Context, int) error) ([]time.Duration, int, int) {
	end := time.Now().Add(d)
	var mu sync.Mutex
	var all []time.Duration
	errs, n := 0, 0
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			var mine []time.Duration
			bad, i := 0, seq+w
			for ctx.Err() == nil && time.Now().Before(end) {
				start := time.Now()
				if err := call(ctx, i); err != nil {
					if ctx.Err() == nil {
						bad++
					}
				} else {
					mine = append(mine, time.Since(start))
				}
				i += conc
			}
			mu.Lock()
			all = append(all, mine...)
			errs += bad
			n = max(n, i)
			mu.Unlock()
		})
	}
	wg.Wait()
	return all, errs, n
}

// rawReply is a response kept as its bytes.
type rawReply []byte

// rawCodec is the proto codec, except that it leaves a rawReply undecoded.
type rawCodec struct{ encoding.CodecV2 }

func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*rawReply); ok {
		*r = data.Materialize()
		return nil
	}
	return c.CodecV2.Unmarshal(data, v)
}

// load runs call from conc goroutines for d and returns the latency of
// every successful call and the number of failures.
func load(ctx context.Context, conc int, d time.Duration, call func(context.Context, int) error) ([]time.Duration, int) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var all []time.Duration
	errs := 0
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			var mine []time.Duration
			bad := 0
			for i := w; ctx.Err() == nil; i += conc {
				start := time.Now()
				if err := call(ctx, i); err != nil {
					if ctx.Err() == nil && status.Code(err) != codes.DeadlineExceeded && status.Code(err) != codes.Canceled {
						bad++
					}
					continue
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			all = append(all, mine...)
			errs += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	return all, errs
}
