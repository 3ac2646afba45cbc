package devcli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/eval"
	"github.com/tooldex/tooldex/internal/semantic"
	"github.com/tooldex/tooldex/service"
)

// benchMemory measures, in this process, the memory the service holds for
// a large catalog: the tools of every DIR/*/tools.jsonl (names mapped to
// legal ones as the evaluation does), replicated under distinct names
// <name>_r<round> up to N tools, registered through RegisterTools in
// batches. It reports resident memory (VmRSS) and Go heap grown by the
// catalog, after runtime.GC and debug.FreeOSMemory, next to the catalog's
// size as JSON (each registered tool's {"name", "description",
// "input_schema"} object), and, from a separate build of the index alone
// with the same tools, the index's share.
func benchMemory(ctx context.Context, e env, args []string) error {
	fs := newFlags("bench memory", e)
	n := fs.Int("tools", 100000, "tools to register")
	dir := fs.String("datasets", "../shared/datasets", "directory of <dataset>/tools.jsonl files")
	memprofile := fs.String("memprofile", "", "write a heap profile here after registering")
	writeCatalog := fs.String("write-catalog", "", "only write the N tools to this JSONL file (for the server's --catalog) and exit")
	semMode := fs.String("semantic", "off", "dense retrieval of the service: off, static or full (an embedded model): with one, every tool's vector is computed (the time is reported) before memory is measured")
	jsonView := fs.Bool("json-view", false, "then select every tool once with schema_view JSON and measure again: what the schema JSON kept per tool adds when every tool has been asked for")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, skipped, err := memoryCorpus(ctx, *dir)
	if err != nil {
		return err
	}
	if *n < 1 {
		return errors.New("bench memory: --tools must be positive")
	}
	tool := func(i int) (*tooldexv1.Tool, int) {
		b := base[i%len(base)]
		suffix := "_r" + strconv.Itoa(i/len(base))
		name := b.tool.GetName()
		if len(name)+len(suffix) > 64 {
			name = name[:64-len(suffix)]
		}
		name += suffix
		// A copy of the description, as a request decoded from the wire
		// would have (the schema is re-encoded by the service anyway).
		t := &tooldexv1.Tool{Name: name, Description: strings.Clone(b.tool.GetDescription()), InputSchema: b.tool.GetInputSchema()}
		return t, b.jsonSize - len(b.tool.GetName()) + len(name)
	}
	fmt.Fprintf(e.stdout, "%d tools replicated from %d dataset tools in %s (%d skipped: rejected by RegisterTools)\n", *n, len(base), *dir, skipped)
	if *writeCatalog != "" {
		return writeMemoryCatalog(e.stdout, *writeCatalog, *n, tool)
	}

	// The service.
	rss0, heap0 := memNow()
	var beforeReg runtime.MemStats
	runtime.ReadMemStats(&beforeReg)
	start := time.Now()
	mode, err := semantic.ParseMode(*semMode)
	if err != nil || mode == semantic.ModeExternal {
		return fmt.Errorf("bench memory: --semantic %q: want off, static or full", *semMode)
	}
	var store *semantic.Store
	if mode != semantic.ModeOff {
		emb, err := semantic.Local(mode)
		if err != nil {
			return err
		}
		store = semantic.NewStore(semantic.StoreConfig{Embedder: emb, Batch: 256})
	}
	svc := service.New(service.Config{Semantic: store})
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- svc.Run(runCtx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			stopRun()
			<-runDone
		}
	}
	defer stop()
	jsonBytes := 0
	for lo := 0; lo < *n; lo += catalog.MaxBatch {
		batch := make([]*tooldexv1.Tool, 0, catalog.MaxBatch)
		for i := lo; i < min(lo+catalog.MaxBatch, *n); i++ {
			t, size := tool(i)
			batch = append(batch, t)
			jsonBytes += size
		}
		if _, err := svc.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: batch}); err != nil {
			return fmt.Errorf("bench memory: register: %w", err)
		}
	}
	took := time.Since(start)
	if store != nil {
		for store.Stats().Pending > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		st := store.Stats()
		fmt.Fprintf(e.stdout, "%d tool vectors of %d dimensions (%s) %v after registering\n", st.Embedded, st.Dimensions, mode, time.Since(start).Round(time.Millisecond))
	}
	rss1, heap1 := memNow()
	var afterReg runtime.MemStats
	runtime.ReadMemStats(&afterReg)
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			return err
		}
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	var rssView, heapView int64
	if *jsonView {
		// Every tool once in the JSON view: each entry then keeps its
		// schema's JSON (rendered on first request).
		var names []string
		size := 0
		selectAll := func() error {
			resp, err := svc.Search(ctx, &tooldexv1.SearchRequest{Query: "select:" + strings.Join(names, ","), SchemaView: tooldexv1.SchemaView_SCHEMA_VIEW_JSON})
			if err != nil {
				return fmt.Errorf("bench memory: select: %w", err)
			}
			if len(resp.GetResults()) != len(names) {
				return fmt.Errorf("bench memory: select of %d tools found %d", len(names), len(resp.GetResults()))
			}
			names, size = names[:0], 0
			return nil
		}
		for i := range *n {
			t, _ := tool(i)
			if size+len(t.GetName())+1 > index.MaxQueryBytes-len("select:") || len(names) == 256 {
				if err := selectAll(); err != nil {
					return err
				}
			}
			names = append(names, t.GetName())
			size += len(t.GetName()) + 1
		}
		if err := selectAll(); err != nil {
			return err
		}
		rssView, heapView = memNow()
	}
	runtime.KeepAlive(svc)
	stop()
	store = nil
	svc = nil //nolint:ineffassign,wastedassign // dropped before the next measurement

	// The index alone, for its share.
	rssIx0, heapIx0 := memNow()
	ix := index.New(index.Config{})
	for i := range *n {
		t, _ := tool(i)
		ix.Upsert(index.Doc{Name: t.GetName(), Description: t.GetDescription(), Params: index.ParamText(t.GetInputSchema().AsMap())})
	}
	rssIx1, heapIx1 := memNow()
	runtime.KeepAlive(ix)
	// The corpus too: tool (its last use is above) holds it, and freed
	// during the index's build it would come off the index's share (and
	// onto "the rest") by its own size, about 25 MB.
	runtime.KeepAlive(base)

	mb := func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
	per := func(b int64) string { return fmt.Sprintf("%d B/tool", b/int64(*n)) }
	ratio := func(b int64) string { return fmt.Sprintf("%.2fx", float64(b)/float64(jsonBytes)) }
	fmt.Fprintf(e.stdout, "registered in %s\n", took.Round(time.Millisecond))
	fmt.Fprintf(e.stdout, "%-28s %10s %14s %8s\n", "", "total", "per tool", "of JSON")
	row := func(name string, b int64) {
		fmt.Fprintf(e.stdout, "%-28s %10s %14s %8s\n", name, mb(b), per(b), ratio(b))
	}
	row("catalog as JSON", int64(jsonBytes))
	row("RSS grown (service)", rss1-rss0)
	row("Go heap grown (service)", heap1-heap0)
	row("  index (built alone)", heapIx1-heapIx0)
	row("  index (alone), RSS grown", rssIx1-rssIx0)
	row("  the rest (service)", (heap1-heap0)-(heapIx1-heapIx0))
	row("process RSS", rss1)
	if *jsonView {
		fmt.Fprintln(e.stdout, "after selecting every tool once with schema view JSON:")
		row("  RSS grown (service)", rssView-rss0)
		row("  Go heap grown (service)", heapView-heap0)
		row("  of which the schema JSON", heapView-heap1)
	}
	runtimeRow := func(when string, ms *runtime.MemStats) {
		fmt.Fprintf(e.stdout, "runtime %s: heap in use %s (live %s), heap retained %s, GC metadata %s, stacks %s\n", when,
			mb(int64(ms.HeapInuse)), mb(int64(ms.HeapAlloc)), mb(int64(ms.HeapSys-ms.HeapReleased)), mb(int64(ms.GCSys)), mb(int64(ms.StackSys)))
	}
	// In use but not live: free slots in spans that also hold live
	// objects (fragmentation), which stay resident.
	runtimeRow("before the service", &beforeReg)
	runtimeRow("with the service", &afterReg)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtimeRow("with the index alone", &ms)
	return nil
}

// writeMemoryCatalog writes tools 0 … n-1 as tooldex JSONL.
func writeMemoryCatalog(stdout io.Writer, path string, n int, tool func(int) (*tooldexv1.Tool, int)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	size := 0
	for i := range n {
		t, sz := tool(i)
		line, err := json.Marshal(struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"input_schema,omitempty"`
		}{t.GetName(), t.GetDescription(), t.GetInputSchema().AsMap()})
		if err != nil {
			f.Close()
			return err
		}
		w.Write(line) //nolint:errcheck // Flush reports write errors
		w.WriteByte('\n')
		size += sz
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d tools, %d bytes of tool JSON\n", path, n, size)
	return nil
}

type memTool struct {
	tool     *tooldexv1.Tool
	jsonSize int // of {"name","description","input_schema"}
}

// memoryCorpus loads every dir/*/tools.jsonl with legal, distinct names and
// keeps the tools RegisterTools accepts (validated one by one on a scratch
// service).
func memoryCorpus(ctx context.Context, dir string) ([]memTool, int, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "tools.jsonl"))
	if len(paths) == 0 {
		return nil, 0, fmt.Errorf("bench memory: no %s/*/tools.jsonl", dir)
	}
	scratch := service.New(service.Config{})
	taken := make(map[string]bool)
	var out []memTool
	skipped := 0
	for _, p := range paths {
		ds, err := eval.Load(p, filepath.Join(filepath.Dir(p), "queries.jsonl"))
		if err != nil {
			return nil, 0, fmt.Errorf("bench memory: %w", err)
		}
		for _, dt := range ds.Tools {
			// Distinct across datasets too; room for the _r<round> suffix.
			name := dt.Name[:min(len(dt.Name), 56)]
			for k := 2; taken[name]; k++ {
				suffix := "_" + strconv.Itoa(k)
				name = dt.Name[:min(len(dt.Name), 56-len(suffix))] + suffix
			}
			t := &tooldexv1.Tool{Name: name, Description: dt.Description}
			if dt.InputSchema != nil {
				if t.InputSchema, err = structpb.NewStruct(dt.InputSchema); err != nil {
					skipped++
					continue
				}
			}
			if _, err := scratch.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{t}, ValidateOnly: true}); err != nil {
				skipped++
				continue
			}
			js, err := json.Marshal(struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				InputSchema map[string]any `json:"input_schema,omitempty"`
			}{name, dt.Description, dt.InputSchema})
			if err != nil {
				return nil, 0, err
			}
			taken[name] = true
			out = append(out, memTool{t, len(js)})
		}
	}
	return out, skipped, nil
}

// memNow returns the process's resident memory and live Go heap after a
// full collection that returns freed memory to the OS.
func memNow() (rss, heap int64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return vmRSS(), int64(ms.HeapAlloc)
}

// vmRSS reads VmRSS from /proc/self/status (0 where there is none).
func vmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
