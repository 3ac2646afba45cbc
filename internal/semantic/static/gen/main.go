// Command gen distils the static model (package static) from Universal
// Sentence Encoder lite (package uselite) by the Model2Vec method and
// writes internal/semantic/static/model.bin:
//
//	apt-cache dumpavail > packages.txt    # Debian's package descriptions: the word list
//	go run ./internal/semantic/static/gen -corpus packages.txt -out internal/semantic/static/model.bin
//
// Every SentencePiece piece (alone) and every frequent corpus word that is
// not a single piece go through the teacher; the vectors are centred and
// reduced by PCA to -dim dimensions, then weighted by SIF, a/(a+p), with
// p a piece's unigram probability (its vocabulary score) or a word's
// corpus frequency. The corpus is read for its "Description:" lines (any
// other text file works with -all-lines).
//
// With -fit N the distilled rows are then fitted, Tokenlearn-style, to
// the teacher's vectors of N package descriptions of -fit-corpus (the
// "Description:" or "Description-en:" line and its continuation lines,
// deduplicated, cut at the teacher's 128 tokens, the N whose FNV-1a hash
// is smallest; dumpavail has only one-line summaries, a Translation-en
// file the long descriptions): each target is the
// teacher's unit vector centred and projected as the rows were, then
// normalised; a text's prediction is the sum of its rows (as the model
// embeds at run time) over the distilled model's norm for that text. The
// rows V minimise Σ‖pred − target‖² + λ·d̄·‖V − V0‖² (V0 the distilled
// rows, d̄ the mean diagonal of the normal equations, λ = -fit-lambda),
// solved by conjugate gradients with a diagonal preconditioner.
// -fit-mode weights keeps the rows' directions and fits one weight per
// unit instead (w minimising the same sum, ridge λ·d̄·‖w − 1‖²): a SIF
// weighting re-derived from the descriptions. -fit-centre centres the
// targets on their own mean rather than the units'. -cache keeps the
// teacher's vectors in a file, so that a rerun costs no teacher time. The
// output depends only on the corpora and the flags.
//
// -fit-mode contrastive trains the rows for retrieval instead, on
// (query, document) pairs of -fit-corpus, a Translation-en file: a
// package's one-line summary (its Description-en line; dumpavail's
// Description line is the same text) is the query, its long description
// (the continuation lines, as semantic.ToolText cuts a tool's text) the
// document; packages sharing a summary or a long description keep the
// first in the order of their names' FNV-1a hashes, whose first -ct-held
// share is held out. The loss is in-batch InfoNCE: each query's softmax
// over -ct-temp × the cosines to the -ct-batch documents of its batch
// (and each document's over the queries, unless -ct-one-way), a text's
// vector being the normalised sum of the rows Model.Rows gives for it,
// as at run time. Its gradient, derived by hand, reaches only the rows a
// batch uses; to it is added a pull toward the distilled rows V0,
// -ct-lambda × ‖V − V0‖²/r̄² over those rows (r̄² the distilled rows' mean
// squared norm), and Adam takes a step of -ct-lr × the distilled rows'
// root-mean-square entry. -ct-epochs passes, batches shuffled with
// -ct-seed; -fit N > 0 keeps the first N training pairs; -ct-names query
// (or doc) puts the package name's words before the summary (or the long
// description); -ct-disjoint trains each query on the units its document
// lacks only (what the lexical ranking cannot match); -ct-weights keeps
// the distilled directions and trains one weight w per row instead (a
// retrieval-learnt SIF weighting; pull λ(w − 1)², step -ct-lr). The
// held-out pairs' recall@1 (each summary against every held-out long
// description) is logged before and after. -ct-datasets trains on the
// (query, relevant tool) pairs of tool-retrieval datasets instead (folders
// of tools.jsonl and queries.jsonl, as eval reads them; a tool's text as
// the run time embeds it), pairs that share their query or their tool not
// being each other's negatives, the first -ct-held share of the queries
// (by their FNV-1a hash) held out; -ct-hard N adds to each batch, per
// pair, its query's N best lexical candidates that are not relevant as
// further negatives (each query's softmax over all of them). The output
// depends only on the corpora and the flags (-workers only splits the
// batch's sums):
//
//	apt-get update -o Acquire::Languages=en
//	/usr/lib/apt/apt-helper cat-file /var/lib/apt/lists/*_debian_dists_bookworm_main_i18n_Translation-en.lz4 > translation-en.txt
//	go run ./internal/semantic/static/gen -corpus packages.txt -fit-mode contrastive -fit-corpus translation-en.txt -out model-ct.bin
//
// tooldex-dev eval --static-model FILE measures a model file without
// rebuilding the binary around it.
//
// No fitted model measured better than the plain distillation by
// leave-one-dataset-out (docs/BENCHMARKS.md, "Static model fitted on
// Debian descriptions"), nor any contrastively trained one (rows: a far
// better retriever alone, not in the fused ranking; -ct-weights: a gain
// of the size of its seed-to-seed swing; "Static model trained
// contrastively on Debian pairs"), nor any trained on the datasets' own
// pairs, held out by leave-one-dataset-out ("Session 13"), so model.bin is
// made without -fit or -fit-mode contrastive.
package main

import (
	"bufio"
	"errors"
	"flag"
	"log"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/tooldex/tooldex/internal/semantic/static"
	"github.com/tooldex/tooldex/internal/semantic/uselite"
)

// config is the command's flags.
type config struct {
	corpus, out, cache string
	fitCorpus          string
	allLines           bool
	dim, nWords        int
	minCount           int
	sif                float64
	fit, fitHeld       int
	fitLambda          float64
	fitIters, workers  int
	fitCentre          bool
	fitMode            string
	fitSummaries       bool
	ct                 ctConfig
}

func main() {
	var c config
	flag.StringVar(&c.corpus, "corpus", "", "word-list corpus (apt-cache dumpavail output)")
	flag.BoolVar(&c.allLines, "all-lines", false, "read every line of the corpus, not only Description: lines")
	flag.StringVar(&c.out, "out", "internal/semantic/static/model.bin", "model file to write")
	flag.IntVar(&c.dim, "dim", 256, "dimensions after PCA")
	flag.IntVar(&c.nWords, "words", 16000, "most frequent corpus words to add (those not a single piece)")
	flag.IntVar(&c.minCount, "min-count", 3, "fewest occurrences of an added word")
	flag.Float64Var(&c.sif, "sif", 1e-5, "SIF coefficient a in a/(a+p) (chosen by leave-one-dataset-out among 1e-3, 1e-4, 1e-5)")
	flag.IntVar(&c.fit, "fit", 0, "fit the rows to the teacher's vectors of this many corpus descriptions (0: no fit); with -fit-mode contrastive, the most training pairs (0: all)")
	flag.StringVar(&c.fitCorpus, "fit-corpus", "", "descriptions to fit on (default -corpus): apt-cache dumpavail output (one-line summaries) or a Translation-en file (long descriptions)")
	flag.IntVar(&c.fitHeld, "fit-held", 1000, "further descriptions kept out of the fit, to report its held-out cosine")
	flag.Float64Var(&c.fitLambda, "fit-lambda", 1, "ridge toward the distilled rows, relative to the normal equations' mean diagonal")
	flag.BoolVar(&c.fitCentre, "fit-centre", false, "centre the targets on their own mean (that of the fitted descriptions), not the units'")
	flag.StringVar(&c.fitMode, "fit-mode", "rows", "what the fit changes: rows (every unit's vector) or weights (one weight per unit, the directions kept); contrastive: train the rows for retrieval on -fit-corpus's (summary, long description) pairs")
	flag.Float64Var(&c.ct.temp, "ct-temp", 20, "contrastive: the temperature multiplying the cosines")
	flag.IntVar(&c.ct.batch, "ct-batch", 512, "contrastive: pairs per batch (each pair's negatives are the batch's others)")
	flag.IntVar(&c.ct.epochs, "ct-epochs", 3, "contrastive: passes over the training pairs")
	flag.Float64Var(&c.ct.lr, "ct-lr", 0.05, "contrastive: Adam's step, relative to the distilled rows' root-mean-square entry")
	flag.Float64Var(&c.ct.lambda, "ct-lambda", 0.01, "contrastive: pull toward the distilled rows, λ·‖V − V0‖²/r̄² over a batch's rows (r̄² their mean squared norm)")
	flag.Float64Var(&c.ct.held, "ct-held", 0.02, "contrastive: share of the pairs held out, to report recall@1")
	flag.StringVar(&c.ct.names, "ct-names", "", "contrastive: the package name's words before the summary (query) or before the long description (doc); empty: none")
	flag.BoolVar(&c.ct.oneWay, "ct-one-way", false, "contrastive: the queries' softmax only (default: symmetric, the documents' too)")
	flag.BoolVar(&c.ct.disjoint, "ct-disjoint", false, "contrastive: train each query on the units its document lacks only (what the lexical ranking cannot match)")
	flag.BoolVar(&c.ct.weights, "ct-weights", false, "contrastive: train one weight per row, the distilled directions kept (pull λ(w − 1)², step -ct-lr)")
	flag.Uint64Var(&c.ct.seed, "ct-seed", 1, "contrastive: seed of the batches' shuffle")
	flag.IntVar(&c.ct.hard, "ct-hard", 0, "contrastive, with -ct-datasets: hard negatives per pair, its query's best lexical candidates that are not relevant (0: in-batch negatives only)")
	flag.Func("ct-datasets", "contrastive: comma-separated tool-retrieval dataset folders (tools.jsonl, queries.jsonl) whose (query, relevant tool) pairs are trained on, instead of -fit-corpus's", func(v string) error {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				c.ct.datasets = append(c.ct.datasets, d)
			}
		}
		return nil
	})
	flag.BoolVar(&c.fitSummaries, "fit-summaries", false, "fit on the descriptions' first lines (the packages' one-line summaries) only")
	flag.IntVar(&c.fitIters, "fit-iters", 100, "most conjugate-gradient iterations")
	flag.StringVar(&c.cache, "cache", "", "file caching the teacher's vectors (empty: none)")
	flag.IntVar(&c.workers, "workers", runtime.NumCPU(), "goroutines running the teacher and the fit (the output does not depend on it)")
	flag.Parse()
	if err := run(c); err != nil {
		log.Fatal(err)
	}
}

func run(c config) error {
	teacher, err := uselite.Load()
	if err != nil {
		return err
	}
	tc, err := openCache(c.cache, teacher, c.workers)
	if err != nil {
		return err
	}
	tok := teacher.Tokenizer()
	counts := map[string]int{}
	total := 0
	if c.corpus != "" {
		err := eachLine(c.corpus, func(line string) {
			if !c.allLines {
				d, ok := strings.CutPrefix(line, "Description:")
				if !ok {
					return
				}
				line = d
			}
			static.Words(line, func(w string) { counts[w]++; total++ })
		})
		if err != nil {
			return err
		}
	}
	type wc struct {
		w string
		n int
	}
	var ranked []wc
	for w, n := range counts {
		if n >= c.minCount && len(w) >= 2 && len(w) <= 255 {
			ranked = append(ranked, wc{w, n})
		}
	}
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].n != ranked[j].n {
			return ranked[i].n > ranked[j].n
		}
		return ranked[i].w < ranked[j].w
	})
	var words []string
	var wordP []float64
	for _, r := range ranked {
		if len(words) == c.nWords {
			break
		}
		if len(tok.Encode(nil, r.w)) == 1 {
			continue // the piece's own vector is the word's
		}
		words = append(words, r.w)
		wordP = append(wordP, float64(r.n)/float64(total))
	}
	pieces := tok.Size()
	n := pieces + len(words)
	log.Printf("%d corpus words (%d distinct); %d pieces and %d words through the teacher", total, len(counts), pieces, len(words))
	start := time.Now()
	units := make([]item, n)
	prob := make([]float64, n)
	for i := range n {
		if i < pieces {
			units[i] = item{ids: []int32{int32(i)}}
			prob[i] = math.Exp(tok.Score(i))
		} else {
			units[i] = item{text: words[i-pieces]}
			prob[i] = wordP[i-pieces]
		}
	}
	X, err := tc.vectors(units)
	if err != nil {
		return err
	}
	log.Printf("teacher: %d units in %v", n, time.Since(start).Round(time.Second))
	fit := X[reserved:]
	d := len(X[0])
	mean := make([]float64, d)
	for _, x := range fit {
		for j := range x {
			mean[j] += x[j]
		}
	}
	for j := range mean {
		mean[j] /= float64(len(fit))
	}
	cov := make([][]float64, d)
	for i := range cov {
		cov[i] = make([]float64, d)
	}
	cv := make([]float64, d)
	for _, x := range fit {
		for j := range x {
			cv[j] = x[j] - mean[j]
		}
		for a := range d {
			ca, row := cv[a], cov[a]
			for b := a; b < d; b++ {
				row[b] += ca * cv[b]
			}
		}
	}
	for a := range d {
		for b := a; b < d; b++ {
			cov[a][b] /= float64(len(fit))
			cov[b][a] = cov[a][b]
		}
	}
	vals, vecs := jacobi(cov)
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return vals[order[i]] > vals[order[j]] })
	var kept, all float64
	for i, o := range order {
		all += vals[o]
		if i < c.dim {
			kept += vals[o]
		}
	}
	log.Printf("PCA: %d of %d dimensions keep %.1f%% of the variance", c.dim, d, 100*kept/all)
	// project returns x centred and reduced to dim dimensions.
	project := func(x []float64) []float64 {
		p := make([]float64, c.dim)
		for k := range c.dim {
			col := order[k]
			var s float64
			for j := range d {
				s += (x[j] - mean[j]) * vecs[j][col]
			}
			p[k] = s
		}
		return p
	}
	rows := make([][]float64, n)
	for i := range n {
		rows[i] = make([]float64, c.dim)
		if i < reserved {
			continue
		}
		w := c.sif / (c.sif + prob[i])
		for k, x := range project(X[i]) {
			rows[i][k] = x * w
		}
	}
	if c.fitMode == "contrastive" {
		if c.fitCorpus == "" && len(c.ct.datasets) == 0 {
			return errors.New("-fit-mode contrastive needs -fit-corpus (a Translation-en file) or -ct-datasets")
		}
		if rows, err = fitContrastive(c, pieces, words, rows); err != nil {
			return err
		}
	} else if c.fit > 0 {
		if c.fitCorpus == "" {
			c.fitCorpus = c.corpus
		}
		if c.fitCorpus == "" {
			return errors.New("-fit needs -fit-corpus or -corpus")
		}
		if rows, err = fitRows(c, tc, tok, pieces, words, rows, project); err != nil {
			return err
		}
	}
	outVecs := make([][]float32, n)
	for i, r := range rows {
		outVecs[i] = make([]float32, c.dim)
		for k, x := range r {
			outVecs[i][k] = float32(x)
		}
	}
	b, err := static.Encode(c.dim, pieces, words, outVecs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.out, b, 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s: %d bytes in %v", c.out, len(b), time.Since(start).Round(time.Second))
	return nil
}

// reserved is the count of the tokenizer's reserved ids (unknown, <s>,
// ...): they carry no meaning, so their rows are zero and no fit moves
// them.
const reserved = 6

// eachLine calls f with each line of the file at path.
func eachLine(path string, f func(string)) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f(sc.Text())
	}
	return sc.Err()
}
