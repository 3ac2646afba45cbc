// Command lodo chooses a setting by leave-one-dataset-out: given the JSON
// output of `tooldex-dev eval --json` for each development dataset, run with
// the same list of settings (rows named key@value, e.g. semantic@0.2 from
// --semantic-ratio 0.1,0.2,...), it picks for each dataset the value that
// maximises the mean NDCG@10 over the other datasets and reports, per
// dataset, the lexical baseline, the in-sample best and the held-out
// (LODO) figure.
//
//	go run ./bench/lodo -row semantic run-livemcpbench.json run-metatool.json ...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	row := flag.String("row", "semantic", "rows named ROW@VALUE are the settings")
	base := flag.String("base", "hybrid", "baseline row")
	metric := flag.String("metric", "NDCG@10", "metric to maximise")
	flag.Parse()
	if flag.NArg() < 2 {
		log.Fatal("lodo: want two or more eval --json files")
	}
	type ds struct {
		name string
		base float64
		by   map[float64]float64
	}
	var sets []ds
	var values []float64
	for i, p := range flag.Args() {
		b, err := os.ReadFile(p)
		if err != nil {
			log.Fatal(err)
		}
		var out map[string]json.RawMessage
		if err := json.Unmarshal(b, &out); err != nil {
			log.Fatalf("%s: %v", p, err)
		}
		d := ds{name: strings.TrimSuffix(filepath.Base(p), ".json"), by: map[float64]float64{}}
		get := func(k string) float64 {
			var m map[string]float64
			if err := json.Unmarshal(out[k], &m); err != nil {
				log.Fatalf("%s: row %s: %v", p, k, err)
			}
			return m[*metric]
		}
		d.base = get(*base)
		var vals []float64
		for k := range out {
			if v, ok := strings.CutPrefix(k, *row+"@"); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					d.by[f] = get(k)
					vals = append(vals, f)
				}
			}
		}
		sort.Float64s(vals)
		if i == 0 {
			values = vals
		} else if fmt.Sprint(vals) != fmt.Sprint(values) {
			log.Fatalf("%s: settings %v, the first file has %v", p, vals, values)
		}
		sets = append(sets, d)
	}
	fmt.Printf("| dataset | %s | in-sample best (%s) | LODO (%s chosen on the others) |\n|---|---|---|---|\n", *base, *row, *row)
	var sumBase, sumIn, sumLODO float64
	for i, d := range sets {
		bestIn, bestInV := math.Inf(-1), 0.0
		for _, v := range values {
			if d.by[v] > bestIn {
				bestIn, bestInV = d.by[v], v
			}
		}
		bestMean, bestV := math.Inf(-1), 0.0
		for _, v := range values {
			var s float64
			for j, o := range sets {
				if j != i {
					s += o.by[v]
				}
			}
			if s > bestMean {
				bestMean, bestV = s, v
			}
		}
		fmt.Printf("| %s | %.1f | %.1f (%g) | %.1f (%g) |\n", d.name, d.base, bestIn, bestInV, d.by[bestV], bestV)
		sumBase += d.base
		sumIn += bestIn
		sumLODO += d.by[bestV]
	}
	n := float64(len(sets))
	bestAll, bestAllV := math.Inf(-1), 0.0
	for _, v := range values {
		var s float64
		for _, o := range sets {
			s += o.by[v]
		}
		if s > bestAll {
			bestAll, bestAllV = s, v
		}
	}
	fmt.Printf("| mean | %.1f | %.1f | %.1f |\n\nBest on all datasets together: %s@%g (mean %.1f).\n", sumBase/n, sumIn/n, sumLODO/n, *row, bestAllV, bestAll/n)
}
