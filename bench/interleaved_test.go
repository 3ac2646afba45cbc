package bench

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// BenchmarkExecuteInterleaved measures the same three setups as
// BenchmarkExecute, all running at once, in short alternating slices:
// every round gives each setup sliceDur of one caller and sliceDur of 64
// callers, in a rotating order. Latencies are pooled per setup over all
// rounds, so slow drift of a shared machine (other jobs starting and
// stopping) falls on every setup alike instead of on whichever ran during
// it. It reports each setup's p50 and the tooldex / relay ratios; each
// invocation runs once, whatever -benchtime says (rounds: env
// TOOLDEX_BENCH_ROUNDS, default 15).
//
//	go test -run '^$' -bench ExecuteInterleaved -count=3 ./bench/
func BenchmarkExecuteInterleaved(b *testing.B) {
	const sliceDur = 150 * time.Millisecond
	rounds := 15
	if v, err := strconv.Atoi(os.Getenv("TOOLDEX_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	type setup struct {
		name    string
		client  tooldexv1.DiscoveryServiceClient
		c1, c64 []time.Duration
		r1, r64 []float64 // per-round p50s
	}
	starts := []struct {
		name  string
		start func(b *testing.B) (addr string, stop func())
	}{{"direct", startDirect}, {"relay", startRelay}, {"tooldex", startTooldex}}
	setups := make([]*setup, len(starts))
	for i, s := range starts {
		addr, stop := s.start(b)
		b.Cleanup(stop)
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		client := tooldexv1.NewDiscoveryServiceClient(conn)
		if err := call(b.Context(), client); err != nil {
			b.Fatalf("%s: %v", s.name, err)
		}
		warmUp(b.Context(), client)
		setups[i] = &setup{name: s.name, client: client}
	}
	for b.Loop() {
		for r := range rounds {
			for k := range setups {
				s := setups[(r+k)%len(setups)]
				lat, err := runSlice(b.Context(), s.client, 1, sliceDur)
				if err != nil {
					b.Fatalf("%s: %v", s.name, err)
				}
				s.c1 = append(s.c1, lat...)
				s.r1 = append(s.r1, p50(lat))
				lat, err = runSlice(b.Context(), s.client, concurrency, sliceDur)
				if err != nil {
					b.Fatalf("%s: %v", s.name, err)
				}
				s.c64 = append(s.c64, lat...)
				s.r64 = append(s.r64, p50(lat))
			}
		}
	}
	byName := make(map[string]*setup)
	for _, s := range setups {
		byName[s.name] = s
		b.ReportMetric(p50(s.c1), s.name+"-c1-p50-µs")
		b.ReportMetric(p50(s.c64), s.name+"-c64-p50-µs")
	}
	relay, td := byName["relay"], byName["tooldex"]
	b.ReportMetric(p50(td.c1)/p50(relay.c1), "ratio-c1")
	b.ReportMetric(p50(td.c64)/p50(relay.c64), "ratio-c64")
	b.ReportMetric(medianRatio(td.r1, relay.r1), "round-ratio-c1")
	b.ReportMetric(medianRatio(td.r64, relay.r64), "round-ratio-c64")
}

// runSlice runs calls from callers goroutines for d and returns their
// latencies.
func runSlice(ctx context.Context, client tooldexv1.DiscoveryServiceClient, callers int, d time.Duration) ([]time.Duration, error) {
	end := time.Now().Add(d) // calls are never cut short: each caller stops after it
	var (
		mu       sync.Mutex
		all      []time.Duration
		firstErr error
		wg       sync.WaitGroup
	)
	for range callers {
		wg.Go(func() {
			var lat []time.Duration
			var err error
			for start := time.Now(); start.Before(end); start = time.Now() {
				if err = call(ctx, client); err != nil {
					break
				}
				lat = append(lat, time.Since(start))
			}
			mu.Lock()
			all = append(all, lat...)
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return all, firstErr
}

// p50 returns the median of lat in microseconds (lat is sorted in place).
func p50(lat []time.Duration) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return float64(lat[len(lat)/2]) / float64(time.Microsecond)
}

// medianRatio is the median over rounds of a[i] / b[i].
func medianRatio(a, b []float64) float64 {
	r := make([]float64, 0, len(a))
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			r = append(r, a[i]/b[i])
		}
	}
	if len(r) == 0 {
		return 0
	}
	slices.Sort(r)
	return r[len(r)/2]
}
